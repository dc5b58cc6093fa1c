"""A run survives a Celery worker killed mid-run: exactly N × K outputs, none twice.

A real worker on Redis executes a run against the fake provider at 300 ms a call; the test
SIGKILLs it once some outputs exist, starts a new worker, resumes the run (``run_start``
enqueues the chunks that still lack outputs, beside the messages still queued; on Redis, the
product's way, it pushes the pieces that still lack outputs and enqueues new runners) and checks
that every (task, repeat) pair has exactly one output and the counters agree. Needs
PostgreSQL (the worker and the test share the test database) and Redis.
"""

from __future__ import annotations

import json
import os
import signal

import pytest
import yaml
from celery import Celery
from django.contrib.auth import get_user_model
from django.db import connection
from workers import ROOT, fresh_producer, start_worker, stop_workers, wait_for

from charters.models import Role, Task
from charters.services.configurations import configuration_upload
from charters.services.task_sets import task_set_import
from charters.services.use_cases import membership_grant, use_case_create
from demo.testing.fakellm import FakeLLMServer
from runs.models import Output, Run, RunStatus
from runs.services.runs import run_create, run_start

EXAMPLES = ROOT / "examples" / "credit_memo"
# A shared machine may give each checkout its own Redis database.
REDIS_URL = os.environ.get("EV_TEST_REDIS_KILL_URL", "redis://127.0.0.1:6379/14")
TASKS = 20
REPEATS = 2

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def world(server: FakeLLMServer):
    users = {
        name: get_user_model().objects.create_user(username=name, password="pw")
        for name in ("owner", "model_owner")
    }
    use_case = use_case_create(
        actor=users["owner"],
        key="KILL-TEST",
        name="Worker kill",
        business_outcome="Nothing lost.",
        value_hypothesis="Nothing duplicated.",
        autonomy=1,
        consequence=3,
    )
    membership_grant(
        actor=users["owner"], use_case=use_case, user=users["model_owner"], role=Role.MODEL_OWNER
    )
    document = yaml.safe_load((EXAMPLES / "sigma-gemini-2.5.yaml").read_text())
    document["model"] = {"provider": "openai_compatible", "id": "fake", "api_base": server.base_url}
    document["prompts"]["user_template"] = "{input}\n\nSources:\n{sources}\n"
    sigma = configuration_upload(
        actor=users["model_owner"], use_case=use_case, name="fake", content=json.dumps(document)
    )
    lines = (EXAMPLES / "tasks.jsonl").read_text().splitlines()
    graded = [line for line in lines if json.loads(line)["split"] == "graded"][:TASKS]
    task_set_import(
        actor=users["owner"],
        use_case=use_case,
        name="kill",
        fileobj=__import__("io").BytesIO("\n".join(graded).encode()),
        filename="tasks.jsonl",
    )
    return users["model_owner"], use_case, sigma


def graded_run(server: FakeLLMServer, *, repeats: int, concurrency: int) -> tuple:
    """Return the model owner and a new run over the world's graded split."""
    actor, use_case, sigma = world(server)
    return actor, run_create(
        actor=actor,
        use_case=use_case,
        configuration=sigma,
        task_set=sigma.use_case.task_sets.get(),
        split="graded",
        repeats=repeats,
        concurrency=concurrency,
    )


def enqueue(producer: Celery, run: Run, chunks: list[list[int]]) -> None:
    for pks in chunks:
        producer.send_task("runs.run_execute_chunk", args=[run.pk, pks])


def starter(mode: str, client: Celery, monkeypatch, settings):
    """Return how the test starts (and resumes) a run: fixed chunks sent by the test, or the
    product's pieces in Redis with runners sent to the broker (runs.pieces)."""
    if mode == "chunks":
        return lambda actor, run: enqueue(
            client, run, run_start(actor=actor, run=run, chunk_tasks=4, enqueue=False)
        )
    settings.RUN_SLOTS_REDIS_URL = REDIS_URL
    monkeypatch.setattr(
        "runs.tasks.run_execute_chunk_task.delay",
        lambda *args: client.send_task("runs.run_execute_chunk", args=list(args)),
    )
    return lambda actor, run: run_start(actor=actor, run=run)


@pytest.mark.parametrize("mode", ["chunks", "pieces"])
def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(
    tmp_path, mode, monkeypatch, settings
):
    if connection.vendor != "postgresql":
        pytest.skip("the worker process shares the test database: needs PostgreSQL")
    client = fresh_producer(REDIS_URL)
    start = starter(mode, client, monkeypatch, settings)
    log = tmp_path / "worker.log"
    with FakeLLMServer(latency=0.3) as server:
        actor, run = graded_run(server, repeats=REPEATS, concurrency=2)
        start(actor, run)
        worker = start_worker(tmp_path / "var", log, REDIS_URL)
        try:
            wait_for(lambda: Output.objects.filter(run=run).count() >= 6, 60)
            written_before_kill = Output.objects.filter(run=run).count()
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)
            assert 0 < written_before_kill < TASKS * REPEATS, log.read_text()[-3000:]

            worker = start_worker(tmp_path / "var", log, REDIS_URL)
            start(actor, run)  # resumed: what still lacks an output
            wait_for(lambda: Run.objects.get(pk=run.pk).status != RunStatus.RUNNING, 120)
        finally:
            stop_workers([worker])
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED, log.read_text()[-3000:]
    outputs = Output.objects.filter(run=run)
    pairs = list(outputs.values_list("task_id", "repeat_index"))
    assert len(pairs) == len(set(pairs)) == TASKS * REPEATS
    tasks = set(Task.objects.filter(task_set=run.task_set).values_list("pk", flat=True))
    assert set(pairs) == {(pk, r) for pk in tasks for r in range(REPEATS)}
    assert run.items_done == TASKS * REPEATS and run.items_failed == 0
    # the chunk in flight at the kill was called again: more calls than outputs, same outputs
    assert server.calls >= TASKS * REPEATS
