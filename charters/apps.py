from django.apps import AppConfig


class ChartersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "charters"

    def ready(self) -> None:
        from audit.evidence import register
        from charters.evidence_checks import charter_freeze_check, configuration_freeze_check

        register("configuration.freeze", configuration_freeze_check)
        register("charter.freeze", charter_freeze_check)
