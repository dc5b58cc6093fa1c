"""The Celery application; configuration comes from Django settings (``CELERY_*``).

A worker imports the model clients (litellm with its offline cost map, aiohttp, redis's
asyncio client) when it starts — in the parent before the pool forks, so every child has
them, and again in each child for pools that do not fork — never on the clock of a run's
first chunk (litellm alone takes seconds to import). Each child also starts its pool of
sentence-splitting processes then (runs/tasks.py).
"""

import importlib
import os

from celery import Celery
from celery.signals import worker_init, worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "enterpriseval.settings")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

app = Celery("enterpriseval")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

MODEL_CLIENT_MODULES = ("litellm", "aiohttp", "redis.asyncio")


@worker_init.connect
@worker_process_init.connect
def import_model_clients(**_: object) -> None:
    """Import the model clients now, not in a run's first chunk."""
    for name in MODEL_CLIENT_MODULES:
        importlib.import_module(name)
