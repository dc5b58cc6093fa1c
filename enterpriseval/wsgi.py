"""WSGI entry point (gunicorn ``enterpriseval.wsgi``)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "enterpriseval.settings")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

application = get_wsgi_application()
