"""A run on a Redis broker: its tasks cut into pieces in Redis and taken by a few runners as
their calls need them (runs.pieces, runs.services.runs._PieceFeed).

The runners run here, one after another, in this process (the worker's path is
tests/integration/test_run_slots.py); Redis database 11 by default.
"""

from __future__ import annotations

import os
import threading
from decimal import Decimal

import pytest
import redis
from django.db import connection
from test_run_service import GRADED, create, fake_sigma, graded_pks, reply

from audit.models import AuditEntry
from demo.testing.fakellm import FakeLLMServer
from runs.executor import BudgetGuard, WorkItem, execute
from runs.models import Output, RunStatus
from runs.pieces import PieceQueue, run_pieces_key
from runs.services.runs import PIECE_ITEMS, run_execute_chunk, run_start

REDIS_URL = os.environ.get("EV_TEST_REDIS_PIECES_URL", "redis://127.0.0.1:6379/11")


@pytest.fixture
def server():
    with FakeLLMServer(responder=reply) as fake:
        yield fake


@pytest.fixture(autouse=True)
def on_redis(settings):
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    settings.RUN_SLOTS_REDIS_URL = REDIS_URL
    yield client
    client.flushdb()
    client.close()


def queue_of(run) -> PieceQueue:
    return PieceQueue(url=REDIS_URL, key=run_pieces_key(run.pk, connection.settings_dict["NAME"]))


def start(world, run, monkeypatch, django_capture_on_commit_callbacks) -> tuple[list, list]:
    """Start ``run`` on Redis; return its pieces and the runners it enqueued (not run)."""
    runners: list[tuple] = []
    monkeypatch.setattr(
        "runs.tasks.run_execute_chunk_task.delay", lambda *args: runners.append(args)
    )
    with django_capture_on_commit_callbacks(execute=True):
        pieces = run_start(actor=world.model_owner, run=run)
    return pieces, runners


def test_a_run_on_redis_is_cut_into_pieces_that_a_few_runners_take(
    runs_world, server, monkeypatch, django_capture_on_commit_callbacks, on_redis
):
    run = create(runs_world, fake_sigma(runs_world, server), repeats=2, concurrency=8)
    pieces, runners = start(runs_world, run, monkeypatch, django_capture_on_commit_callbacks)
    # 8 items a piece: 4 tasks × 2 repeats; 65 tasks = 16 pieces of 4 and one of 1, in order.
    assert PIECE_ITEMS == 8
    assert [len(p) for p in pieces] == [4] * 16 + [1]
    assert [pk for piece in pieces for pk in piece] == graded_pks(runs_world)
    # Runners: as many as chunks of 4 × concurrency items would be (130 / 32 → 5), at least 2.
    assert len(runners) == 5 and len({r[2] for r in runners}) == 5
    assert all(r[:2] == (run.pk, []) for r in runners)
    assert on_redis.llen(queue_of(run).todo) == 17
    entry = AuditEntry.objects.get(action="run.start")
    assert entry.payload["chunks"] == 17 and entry.payload["runners"] == 5


def test_runners_write_every_item_once_and_leave_nothing_in_redis(
    runs_world, server, monkeypatch, django_capture_on_commit_callbacks, on_redis
):
    run = create(runs_world, fake_sigma(runs_world, server), repeats=2, concurrency=8)
    _, runners = start(runs_world, run, monkeypatch, django_capture_on_commit_callbacks)
    first = run_execute_chunk(run_id=run.pk, task_pks=[], runner=runners[0][2])
    # One runner alone takes every piece: nothing waits for the others.
    assert (first.written, first.failed, first.status) == (2 * GRADED, 0, RunStatus.COMPLETED)
    assert server.calls == 2 * GRADED and server.max_in_flight <= 8
    later = run_execute_chunk(run_id=run.pk, task_pks=[], runner=runners[1][2])
    assert later.written == 0 and server.calls == 2 * GRADED
    pairs = list(Output.objects.filter(run=run).values_list("task_id", "repeat_index"))
    assert sorted(pairs) == sorted((pk, r) for pk in graded_pks(runs_world) for r in range(2))
    run.refresh_from_db()
    assert run.items_done == 2 * GRADED and run.status == RunStatus.COMPLETED
    # the run's list is empty and each runner's own list is gone; the lease is given back
    assert on_redis.keys(f"{queue_of(run).key}*") == []


def test_a_runner_delivered_again_calls_only_what_its_pieces_still_lack(
    runs_world, server, monkeypatch, django_capture_on_commit_callbacks, on_redis
):
    run = create(runs_world, fake_sigma(runs_world, server), repeats=2, concurrency=8)
    start(runs_world, run, monkeypatch, django_capture_on_commit_callbacks)
    queue = queue_of(run)
    # A runner took three pieces (12 tasks, 24 items) and died after writing the first two
    # tasks of them; another runner took every other piece and finished.
    taken = queue.take("lost", 3)
    assert [len(p) for p in taken] == [4, 4, 4]
    run_execute_chunk(run_id=run.pk, task_pks=taken[0][:2])
    rest = run_execute_chunk(run_id=run.pk, task_pks=[], runner="other")
    assert rest.written == 2 * (GRADED - 12) and rest.status == RunStatus.RUNNING
    calls = server.calls
    again = run_execute_chunk(run_id=run.pk, task_pks=[], runner="lost")
    assert (again.written, again.skipped) == (20, 4)
    assert server.calls - calls == 20  # nothing written is called again
    assert again.status == RunStatus.COMPLETED
    assert Output.objects.filter(run=run).count() == 2 * GRADED
    assert on_redis.keys(f"{queue.key}*") == []
    queue.close()


def test_the_budget_stops_every_runner_and_says_what_was_not_run(
    runs_world, server, monkeypatch, django_capture_on_commit_callbacks, on_redis
):
    sigma = fake_sigma(runs_world, server, model_id="gpt-4o-mini", name="priced-sigma")
    run = create(runs_world, sigma, repeats=1, concurrency=2, cost_budget_usd="0.00005")
    _, runners = start(runs_world, run, monkeypatch, django_capture_on_commit_callbacks)
    result = run_execute_chunk(run_id=run.pk, task_pks=[], runner=runners[0][2])
    run.refresh_from_db()
    written = Output.objects.filter(run=run).count()
    assert run.status == RunStatus.BUDGET_EXHAUSTED == result.status
    assert written == run.items_done < GRADED and run.cost_usd >= Decimal("0.00005")
    # the items never taken are counted with those taken but not called
    assert result.not_started == GRADED - written
    assert f"{GRADED - written} item(s) not run" in run.stop_reason
    later = run_execute_chunk(run_id=run.pk, task_pks=[], runner=runners[1][2])
    assert later.written == 0 and Output.objects.filter(run=run).count() == written


def test_a_feed_reads_in_the_thread_that_called_the_executor():
    """A feed's reads (the database) run in the caller's thread, never in the event loop's."""
    caller = threading.get_ident()
    seen: list[int] = []

    class Feed:
        def __init__(self) -> None:
            self.items = [WorkItem(i, 0, [{"role": "user", "content": "hi"}]) for i in range(5)]

        async def take(self, in_caller):
            return await in_caller(self.read)

        def read(self):
            seen.append(threading.get_ident())
            return self.items.pop() if self.items else None

        def left(self) -> int:
            return len(self.items)

    class Client:
        async def complete(self, messages):
            from runs.executor import Completion

            return Completion("ok", 1, 1, None)

        async def aclose(self) -> None:
            return None

    delivered: list = []
    summary = execute(
        Feed(),
        client=Client(),
        concurrency=3,
        timeout_s=5,
        budget=BudgetGuard(),
        on_batch=delivered.extend,
    )
    assert len(delivered) == 5 and summary.not_started == 0
    assert seen and set(seen) == {caller}
