from django.apps import AppConfig


class EgiBenchConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "egibench"
    verbose_name = "Benchmarks"  # the admin's heading before the app was renamed
