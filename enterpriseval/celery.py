"""The Celery application; configuration comes from Django settings (``CELERY_*``).

A worker imports the model clients (litellm with its offline cost map, aiohttp, redis's
asyncio client) when it starts — in the parent before the pool forks, so every child has
them, and again in each child for pools that do not fork — never on the clock of a run's
first chunk (litellm alone takes seconds to import). Each child also starts its pool of
sentence-splitting processes (runs/segment_pool.py) then.
"""

import importlib
import os
import threading
from multiprocessing import process as mp_process

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


@worker_process_init.connect
def start_segmenter(**_: object) -> None:
    """Start this worker process's sentence-splitting processes now, not in a run's chunk.

    In a thread: the child must report ready within ``worker_proc_alive_timeout`` (4 s).
    """
    from runs.services.outputs import segmenter_from_settings

    # A prefork child's multiprocessing state is billiard's: a daemonic process, which may
    # not start children, with a key type the standard library refuses to send to its
    # forkserver. The splitting processes outlive nothing (they exit when their parent's
    # pipes close), so the child's state is made one the standard library accepts.
    config = mp_process.current_process()._config  # type: ignore[attr-defined]
    config["daemon"] = False
    config["authkey"] = mp_process.AuthenticationString(bytes(config["authkey"]))
    config.setdefault("semprefix", "/mp")
    threading.Thread(
        target=segmenter_from_settings().warm, name="segmenter-warm", daemon=True
    ).start()
