from django.apps import AppConfig


class GradingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "grading"

    def ready(self) -> None:
        from audit.evidence import register
        from grading.evidence_checks import assignment_submit_check

        register("assignment.submit", assignment_submit_check)
