"""A judging survives a Celery worker killed mid-judging: resumed, every unit scored once.

A real worker (``--pool=solo``) on Redis judges a run of imported outputs with the LLM judge
against the fake provider (300 ms a call, two calls in flight); the test SIGKILLs it once some
scores are written, starts a new worker and delivers the judging's message again (as Redis
does once the killed worker's message is past its visibility timeout). The judging resumes:
it calls the judge only for the outputs left unscored, and every unit ends with every
criterion of its kind exactly once. Needs PostgreSQL (the worker and the test share the test
database) and Redis.
"""

from __future__ import annotations

import io
import json
import os
import signal

import pytest
from django.db import connection
from django.db.models import Count
from test_run_worker_kill import EXAMPLES, TASKS, world
from workers import fresh_producer, start_worker, stop_workers, wait_for

from demo.testing.fakellm import FakeLLMServer
from runs.judges.rubric import QUESTIONS_BY_KIND, REPLY_SECTIONS
from runs.models import JudgeScore, Judging, JudgingStatus, Output, Unit
from runs.services.judging import run_judge_start
from runs.services.outputs import output_import

# A shared machine may give each checkout its own Redis database (8 is also the judge bench's).
REDIS_URL = os.environ.get("EV_TEST_REDIS_JUDGE_KILL_URL", "redis://127.0.0.1:6379/8")

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def every_unit_passes(request: dict) -> dict:
    units = json.loads(request["messages"][1]["content"])["units"]
    return {
        section: [
            {"key": unit["key"], **{q.name: q.labels[0] for q in QUESTIONS_BY_KIND[kind]}}
            for unit in units[section]
        ]
        for kind, section in REPLY_SECTIONS.items()
    }


def imported_run(actor, sigma):
    first = {}
    for line in (EXAMPLES / "outputs-gemini-2-5.jsonl").read_text().splitlines():
        record = json.loads(line)
        first.setdefault(record["task_id"], {**record, "repeat": 0})
    tasks = sigma.use_case.task_sets.get().tasks.filter(split="graded")
    records = [first[task.external_id] for task in tasks]
    return output_import(
        actor=actor,
        use_case=sigma.use_case,
        configuration=sigma,
        task_set=sigma.use_case.task_sets.get(),
        split="graded",
        repeats=1,
        fileobj=io.BytesIO("\n".join(map(json.dumps, records)).encode()),
        filename="outputs.jsonl",
    )


def test_a_worker_killed_mid_judging_resumes_and_scores_every_unit_once(tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("the worker process shares the test database: needs PostgreSQL")
    client = fresh_producer(REDIS_URL)
    log = tmp_path / "worker.log"
    with FakeLLMServer(responder=every_unit_passes, latency=0.3) as server:
        actor, _use_case, sigma = world(server)
        run = imported_run(actor, sigma)
        judging = run_judge_start(
            actor=actor,
            run=run,
            kind="llm",
            purpose="informational",
            model_ref="openai/judge-model",
            api_base=server.base_url,
            concurrency=2,
            enqueue=False,
        )
        scores = JudgeScore.objects.filter(judge=judging.judge)
        client.send_task("runs.run_judge", args=[judging.pk])
        worker = start_worker(tmp_path / "var", log, REDIS_URL)
        try:
            wait_for(scores.exists, 60)
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)
            scored = set(scores.values_list("unit__output_id", flat=True))
            calls_before = server.calls
            judging.refresh_from_db()
            assert judging.status == JudgingStatus.RUNNING, log.read_text()[-3000:]
            assert 0 < len(scored) < TASKS, log.read_text()[-3000:]

            worker = start_worker(tmp_path / "var", log, REDIS_URL)
            client.send_task("runs.run_judge", args=[judging.pk])  # the redelivery
            wait_for(
                lambda: Judging.objects.get(pk=judging.pk).status == JudgingStatus.COMPLETED, 120
            )
        finally:
            stop_workers([worker])
    judging.refresh_from_db()
    assert judging.status == JudgingStatus.COMPLETED, log.read_text()[-3000:]
    assert judging.outputs_total == judging.outputs_done == TASKS
    # Resumed: the scored outputs were skipped, only the others judged (one call each).
    assert judging.outputs_judged == TASKS - len(scored)
    assert server.calls - calls_before == TASKS - len(scored)
    expected = {kind: sum(len(q.criteria) for q in qs) for kind, qs in QUESTIONS_BY_KIND.items()}
    units = Unit.objects.filter(output__run=run).annotate(n=Count("judge_scores"))
    assert units.count() > TASKS
    assert all(unit.n == expected[unit.kind] for unit in units)
    assert scores.count() == sum(expected[unit.kind] for unit in units)
    assert Output.objects.filter(run=run).count() == TASKS
