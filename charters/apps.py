from django.apps import AppConfig


class ChartersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "charters"

    def ready(self) -> None:
        from audit.evidence import register, register_state
        from charters.evidence_checks import (
            charter_freeze_check,
            configuration_freeze_check,
            memberships_check,
        )

        register("configuration.freeze", configuration_freeze_check)
        register("charter.freeze", charter_freeze_check)
        register_state("memberships", memberships_check)
