"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "enterpriseval.settings")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

application = get_asgi_application()
