"""Real Celery workers for the integration tests: their environment, command, broker, stop.

A test names its own Redis database as the broker (or uses the filesystem broker under its
``var_dir``); a worker that shares the test's PostgreSQL database gets its URL. Workers are
started with the benches' command and stopped as the benches stop theirs (bench/workers.py).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from celery import Celery
from django.db import connection

from bench.workers import celery_worker_command, flush_redis
from bench.workers import stop as stop_workers

__all__ = [
    "ROOT",
    "celery_worker_command",
    "database_url",
    "fresh_producer",
    "producer",
    "start_worker",
    "stop_workers",
    "wait_for",
    "worker_environment",
]

ROOT = Path(__file__).resolve().parents[2]


def worker_environment(
    var_dir: Path, broker_url: str | None, *, database: bool = True
) -> dict[str, str]:
    """Return this environment without its Celery, Django and EnterpriseVal settings, pointed at
    ``broker_url`` (``None``: the development default, the filesystem broker under ``var_dir``)
    and, with ``database``, at the test database."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CELERY_", "DJANGO_SETTINGS_MODULE", "ENTERPRISEVAL_"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="enterpriseval.settings",
        ENTERPRISEVAL_ENV="development",
        ENTERPRISEVAL_VAR_DIR=str(var_dir),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    if broker_url:
        env["CELERY_BROKER_URL"] = broker_url
    if database:
        env["DATABASE_URL"] = database_url()
    return env


def database_url() -> str:
    """Return the URL of the test database (PostgreSQL), for a worker process to share it."""
    db = connection.settings_dict
    return (
        f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db['NAME']}"
    )


def start_worker(
    var_dir: Path, log: Path, broker_url: str, *, unset: Iterable[str] = ()
) -> subprocess.Popen[bytes]:
    """Start a ``--pool=solo`` worker on ``broker_url`` appending to ``log``, without the
    environment variables ``unset``."""
    env = worker_environment(var_dir, broker_url)
    for name in unset:
        env.pop(name, None)
    return subprocess.Popen(
        celery_worker_command("--pool=solo"),
        cwd=ROOT,
        env=env,
        stdout=log.open("a"),
        stderr=subprocess.STDOUT,
    )


def producer(var_dir: Path, broker_url: str | None) -> Celery:
    """Return a client app that sends to the same broker the worker reads."""
    if broker_url:
        return Celery(broker=broker_url, set_as_current=False)
    queue = var_dir / "celery" / "queue"
    control = var_dir / "celery" / "control"
    queue.mkdir(parents=True, exist_ok=True)
    control.mkdir(parents=True, exist_ok=True)
    app = Celery(broker="filesystem://", set_as_current=False)
    app.conf.broker_transport_options = {
        "data_folder_in": str(queue),
        "data_folder_out": str(queue),
        "control_folder": str(control),
        "store_processed": False,
    }
    return app


def fresh_producer(broker_url: str) -> Celery:
    """Empty the one Redis database of ``broker_url``; return a client app that sends to it."""
    flush_redis(broker_url)
    return Celery(broker=broker_url, set_as_current=False)


def wait_for(condition: Callable[[], object], seconds: float) -> None:
    """Return once ``condition()`` is true or ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
