from django.apps import AppConfig


class ChartersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "charters"
