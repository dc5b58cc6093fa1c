"""How an executed run is cut and written: chunk sizes against its concurrency, the calls one
process keeps in flight, and a fixed number of queries per written batch whatever its size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from django.db import connection
from django.test.utils import CaptureQueriesContext

from charters.services.configurations import configuration_upload
from demo.testing.fakellm import FakeLLMServer
from runs.executor import load_litellm
from runs.models import Output, Run
from runs.services.runs import (
    CHUNK_ITEMS_PER_SLOT,
    chunk_size,
    run_create,
    run_execute_chunk,
    run_start,
)

SIGMA_FILE = (
    Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "sigma-gemini-2.5.yaml"
)
GRADED = 65  # graded tasks in examples/credit_memo/tasks.jsonl


@pytest.fixture(autouse=True, scope="module")
def _cost_map_loaded():
    load_litellm()


@pytest.fixture
def server():
    with FakeLLMServer(latency=0.05) as fake:
        yield fake


def sigma(world, server):
    document = yaml.safe_load(SIGMA_FILE.read_text())
    document["model"] = {
        "provider": "openai_compatible",
        "id": "fake-model",
        "api_base": server.base_url,
        "parameters": {"timeout_seconds": 5},
    }
    document["prompts"]["user_template"] = "Task {task_id}: {input}\n\nSources:\n{sources}\n"
    return configuration_upload(
        actor=world.model_owner,
        use_case=world.use_case,
        name="fake-sigma",
        content=json.dumps(document),
        filename="sigma.json",
    )


def create(world, configuration, **options) -> Run:
    return run_create(
        actor=world.model_owner,
        use_case=world.use_case,
        configuration=configuration,
        task_set=world.task_set,
        split="graded",
        **options,
    )


@pytest.mark.parametrize(
    ("chunk_tasks", "repeats", "concurrency", "tasks"),
    [
        (50, 1, 8, 50),  # 50 items already reach 4 × 8
        (50, 1, 64, 256),  # 4 × 64 items
        (50, 3, 64, 86),  # 86 tasks × 3 repeats = 258 items ≥ 256
        (4, 2, 2, 4),  # the worker-kill test's chunks stay as they were
        (5, 2, 8, 16),
    ],
)
def test_a_chunk_holds_at_least_four_times_the_runs_concurrency_in_items(
    chunk_tasks, repeats, concurrency, tasks
):
    assert chunk_size(chunk_tasks=chunk_tasks, repeats=repeats, concurrency=concurrency) == tasks
    assert tasks * repeats >= CHUNK_ITEMS_PER_SLOT * concurrency
    assert tasks == chunk_tasks or (tasks - 1) * repeats < CHUNK_ITEMS_PER_SLOT * concurrency


def test_starting_a_run_cuts_chunks_no_smaller_than_its_concurrency_needs(
    runs_world, server, django_capture_on_commit_callbacks
):
    run = create(runs_world, sigma(runs_world, server), repeats=2, concurrency=8)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        chunks = run_start(actor=runs_world.model_owner, run=run, chunk_tasks=5)
    # 5 tasks × 2 repeats = 10 items < 4 × 8: each chunk is raised to 16 tasks (32 items),
    # the first ones ramp up by quarters (staggered: 65 tasks = 4 + 8 + 12 + 16 + 16 + 9);
    # the smallest, 4 tasks × 2 repeats, still holds the run's concurrency of 8.
    assert [len(c) for c in chunks] == [4, 8, 12, 16, 16, 9]
    assert len(callbacks) == 6
    assert [pk for chunk in chunks for pk in chunk] == [t.pk for t in runs_world.tasks("graded")]


def test_two_chunks_or_fewer_are_not_staggered(
    runs_world, server, django_capture_on_commit_callbacks
):
    run = create(runs_world, sigma(runs_world, server), repeats=1, concurrency=8)
    with django_capture_on_commit_callbacks(execute=False):
        chunks = run_start(actor=runs_world.model_owner, run=run, chunk_tasks=40)
    assert [len(c) for c in chunks] == [40, 25]


def test_one_chunk_keeps_the_runs_concurrency_in_flight(runs_world, server):
    server.latency = 0.3  # calls long enough to overlap on a busy machine
    run = create(runs_world, sigma(runs_world, server), repeats=1, concurrency=12)
    tasks = [t.pk for t in runs_world.tasks("graded")]
    result = run_execute_chunk(run_id=run.pk, task_pks=tasks[:48])
    assert result.written == 48
    assert server.max_in_flight == 12


def test_a_process_keeps_no_more_calls_in_flight_than_its_setting(runs_world, server, settings):
    settings.RUN_PROCESS_MAX_IN_FLIGHT = 5
    server.latency = 0.3
    run = create(runs_world, sigma(runs_world, server), repeats=1, concurrency=12)
    tasks = [t.pk for t in runs_world.tasks("graded")]
    result = run_execute_chunk(run_id=run.pk, task_pks=tasks[:30])
    assert result.written == 30
    assert server.max_in_flight == 5


def queries_of_chunk(world, configuration, items: int, repeats: int = 1) -> int:
    run = create(world, configuration, repeats=repeats, concurrency=8)
    tasks = [t.pk for t in world.tasks("graded")][: items // repeats]
    with CaptureQueriesContext(connection) as queries:
        result = run_execute_chunk(run_id=run.pk, task_pks=tasks)
    assert result.written == items
    run.refresh_from_db()
    assert run.items_done == items
    assert Output.objects.filter(run=run).count() == items
    return len(queries.captured_queries)


def test_a_batch_of_results_is_written_in_the_same_number_of_queries_whatever_its_size(
    runs_world, server, monkeypatch
):
    monkeypatch.setattr("runs.services.runs.WRITE_BATCH", 64)
    # Batches by size only: a loaded machine would otherwise flush a part batch after 1 s.
    monkeypatch.setattr("runs.services.runs.WRITE_WAIT_S", None)
    configuration = sigma(runs_world, server)
    # A first chunk warms what later ones read once (the stage the use case is in, ...).
    queries_of_chunk(runs_world, configuration, 2)
    small = queries_of_chunk(runs_world, configuration, 8)
    large = queries_of_chunk(runs_world, configuration, 56)
    # Both chunks write one batch: 7 times the outputs, not one query more (on SQLite a
    # multi-row INSERT may be split by the parameter limit: at most one more per table).
    assert large - small <= (2 if connection.vendor == "sqlite" else 0)
    assert large < 56


def test_results_are_written_in_batches_each_of_a_fixed_number_of_queries(
    runs_world, server, monkeypatch
):
    monkeypatch.setattr("runs.services.runs.WRITE_BATCH", 32)
    # Batches by size only: CI once flushed a part batch after WRITE_WAIT_S (1 s) on a loaded
    # runner, which added a batch's queries (61 − 31 ≠ 2 × 10).
    monkeypatch.setattr("runs.services.runs.WRITE_WAIT_S", None)
    configuration = sigma(runs_world, server)
    queries_of_chunk(runs_world, configuration, 2)
    one, two, four = (queries_of_chunk(runs_world, configuration, n, 2) for n in (32, 64, 128))
    per_batch = two - one
    # Every further batch of 32 results costs the same queries, far fewer than its results.
    assert four - two == 2 * per_batch
    assert 0 < per_batch <= 16
