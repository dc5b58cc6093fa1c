from django.apps import AppConfig


class ScorecardsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "scorecards"

    def ready(self) -> None:
        from audit.evidence import register
        from scorecards.evidence_checks import scorecard_sign_off_check

        register("scorecard.sign_off", scorecard_sign_off_check)

        from charters.signals import configuration_registered, deviation_recorded
        from scorecards.receivers import on_configuration_registered, on_deviation_recorded

        configuration_registered.connect(
            on_configuration_registered, dispatch_uid="scorecards.reevaluation.configuration"
        )
        deviation_recorded.connect(
            on_deviation_recorded, dispatch_uid="scorecards.reevaluation.deviation"
        )
