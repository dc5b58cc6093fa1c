"""The Celery application; configuration comes from Django settings (``CELERY_*``)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "enterpriseval.settings")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

app = Celery("enterpriseval")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
