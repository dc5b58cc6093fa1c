from django.apps import AppConfig


class GatesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "gates"

    def ready(self) -> None:
        from audit.evidence import register
        from gates.evidence_checks import decision_record_check

        register("decision.record", decision_record_check)
