from django.apps import AppConfig


class EnterpriseValConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "enterpriseval"
    verbose_name = "EnterpriseVal"

    def ready(self) -> None:
        # Tasks enqueued from web processes must use the project's Celery app and config.
        from enterpriseval.celery import app  # noqa: F401
