from django.apps import AppConfig


class ScorecardsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "scorecards"
