"""What the benches that go through a real Celery worker share (bench/cases_runs.py,
bench/cases_judge.py): the product's database and broker made afresh, the loopback model in its
own process, workers started and stopped, the CPU of a process tree, the load and the wall-time
line they print. The other benches on PostgreSQL recreate their database here too.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "credit_memo"


def product_prepare(*, database: str, redis: str) -> None:
    """Point this process at ``database`` and ``redis``, both emptied, migrated; print the load.

    The database is dropped and created; only ``redis``'s one database is flushed. Workers
    started afterwards inherit the environment.
    """
    os.environ.update(
        DJANGO_SETTINGS_MODULE="enterpriseval.settings",
        ENTERPRISEVAL_ENV="development",
        DATABASE_URL=database,
        CELERY_BROKER_URL=redis,
        CELERY_TASK_ALWAYS_EAGER="False",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    recreate_database(database)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    flush_redis(redis)
    print(f"load before: {uptime()}", flush=True)


def recreate_database(url: str) -> None:
    """Drop and create the PostgreSQL database of ``url``."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


def flush_redis(url: str) -> None:
    """Empty the one Redis database of ``url`` (never the server's other databases)."""
    import redis

    redis.Redis.from_url(url).flushdb()


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def bench_use_case(*, key: str, name: str) -> tuple[Any, Any, Any]:
    """Create an owner, a model owner and a use case ``key``; return the three."""
    from django.contrib.auth import get_user_model

    from charters.models import Role
    from charters.services.use_cases import membership_grant, use_case_create

    users = get_user_model()
    owner = users.objects.create_user(username="bench-owner", password="x")
    actor = users.objects.create_user(username="bench-model-owner", password="x")
    use_case = use_case_create(
        actor=owner,
        key=key,
        name=name,
        business_outcome="Throughput.",
        value_hypothesis="Near ideal.",
        autonomy=1,
        consequence=3,
    )
    membership_grant(actor=owner, use_case=use_case, user=actor, role=Role.MODEL_OWNER)
    return owner, actor, use_case


def graded_tasks() -> list[dict[str, Any]]:
    """Return the worked example's graded tasks (examples/credit_memo/tasks.jsonl)."""
    tasks = map(json.loads, (EXAMPLE / "tasks.jsonl").read_text().splitlines())
    return [task for task in tasks if task["split"] == "graded"]


@contextlib.contextmanager
def model_server(argv: list[str]) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Run the loopback model ``argv`` (it prints its base URL first and stops at the end of its
    input); yield the process and its base URL."""
    server = subprocess.Popen(
        argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        yield server, server.stdout.readline().strip()
    finally:
        server.stdin.close()
        server.wait(10)


def celery_worker_command(*options: str) -> list[str]:
    """Return the command of a Celery worker of the product with ``options`` (pool, concurrency,
    name), without heartbeats, gossip or mingling: it talks to the broker only."""
    return [
        str(Path(sys.executable).with_name("celery")),
        *("-A", "enterpriseval", "worker", "--loglevel=INFO", *options),
        *("--without-heartbeat", "--without-gossip", "--without-mingle"),
    ]


def start_worker(
    name: str, extra: dict[str, str], *, broker: str | None = None
) -> subprocess.Popen[bytes]:
    """Start ``celery worker --concurrency=2`` (as ``make worker``) logging to
    var/bench-worker-``name``.log, without this environment's ``RUN_*`` settings but with
    ``extra``; return once it logs " ready." (at most 180 s)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUN_")}
    if broker is not None:
        env["CELERY_BROKER_URL"] = broker
    env.update(extra)
    log = ROOT / "var" / f"bench-worker-{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    handle = log.open("w")
    worker = subprocess.Popen(
        celery_worker_command("--concurrency=2", "-n", f"bench-{name}@%h"),
        cwd=ROOT,
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 180
    while " ready." not in log.read_text() and time.monotonic() < deadline:
        if worker.poll() is not None:
            raise RuntimeError(f"worker {name} exited: {log.read_text()[-2000:]}")
        time.sleep(0.1)
    return worker


def stop(workers: list[subprocess.Popen[bytes]]) -> None:
    """Stop the workers (SIGTERM, killed after 60 s) and empty the list."""
    for worker in workers:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(60)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
    workers.clear()


def tree_cpu(roots: Iterable[int]) -> float:
    """Return the user + system CPU seconds so far of the processes ``roots`` and every process
    below them (Linux /proc)."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # exited meanwhile
            continue
        # proc(5): after the name, field 4 is the parent (index 1 here), 14–15 utime, stime.
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry.name)] = int(fields[1])
        ticks[int(entry.name)] = int(fields[11]) + int(fields[12])
    tops = set(roots)
    total = 0
    for pid, spent in ticks.items():
        ancestor = pid
        while ancestor > 1 and ancestor not in tops:
            ancestor = parents.get(ancestor, 0)
        if ancestor in tops:
            total += spent
    return total / os.sysconf("SC_CLK_TCK")


def walls_line(name: str, walls: list[float], ideal: float, note: str = "") -> str:
    """Return the line of wall times: median, range, ideal and the share of ideal (``note``
    closes its range's parenthesis)."""
    median = statistics.median(walls)
    return (
        f"{name:<72} median {median:6.2f} s (range {min(walls):.2f}–{max(walls):.2f}), "
        f"ideal {ideal:.2f} s, share of ideal {ideal / median:6.1%} "
        f"(range {ideal / max(walls):.1%}–{ideal / min(walls):.1%}{note})"
    )
