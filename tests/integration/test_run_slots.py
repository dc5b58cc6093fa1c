"""A run's concurrency holds across worker processes: the lease in Redis, and two real workers.

Redis database 12 (the other integration suites use 14 and 15). The two-worker test needs
PostgreSQL: the workers and the test share the test database.
"""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from django.db import connection
from test_run_worker_kill import graded_run
from workers import fresh_producer, start_worker, stop_workers, wait_for

from demo.testing.fakellm import FakeLLMServer
from runs.executor import BudgetGuard, OpenAICompatibleClient, WorkItem, execute
from runs.models import Output, Run, RunStatus
from runs.pieces import run_pieces_key
from runs.services.runs import run_start
from runs.slots import RedisSlots, run_slots_key

# A shared machine may give each checkout its own Redis database.
REDIS_URL = os.environ.get("EV_TEST_REDIS_SLOTS_URL", "redis://127.0.0.1:6379/12")

pytestmark = pytest.mark.integration


@pytest.fixture
def redis_db():
    return fresh_producer(REDIS_URL)


def run_chunk(server: FakeLLMServer, key: str, limit: int, calls: int) -> int:
    """Execute ``calls`` calls at a local concurrency of ``limit`` under the shared lease."""
    client = OpenAICompatibleClient(api_base=server.base_url, model="fake", concurrency=limit)
    delivered: list[object] = []
    messages = [{"role": "user", "content": "hello"}]
    execute(
        [WorkItem(i, 0, messages) for i in range(calls)],
        client=client,
        concurrency=limit,
        timeout_s=10,
        budget=BudgetGuard(),
        on_batch=delivered.extend,
        slots=lambda: RedisSlots(url=REDIS_URL, key=key, limit=limit, poll_s=0.01),
    )
    return len(delivered)


def test_two_executors_sharing_a_lease_never_exceed_its_limit(redis_db):
    from concurrent.futures import ThreadPoolExecutor

    with (
        FakeLLMServer(latency=0.05) as server,
        ThreadPoolExecutor(2) as pool,
    ):
        jobs = [pool.submit(run_chunk, server, "test:lease", 6, 60) for _ in range(2)]
        assert [job.result(timeout=120) for job in jobs] == [60, 60]
        # Each wanted 6 in flight; together they held 6, and used them all.
        assert server.max_in_flight == 6
        assert server.calls == 120
    client = redis_db.connection_for_write().default_channel.client
    assert client.hlen("test:lease") == 0  # every slot given back


def test_a_holder_that_dies_loses_its_slots_when_its_lease_expires(redis_db):
    async def scenario() -> tuple[int, int, int]:
        dead = RedisSlots(url=REDIS_URL, key="test:expiry", limit=4, ttl_s=0.5)
        await dead.__aenter__()
        assert dead._manager is not None
        dead._manager.cancel()  # killed: no renewal, no release
        async with RedisSlots(url=REDIS_URL, key="test:expiry", limit=4, ttl_s=0.5) as alive:
            at_first = alive.granted
            await asyncio.sleep(0.8)
            await alive.acquire()  # asks again: the dead lease has expired
            alive.release()
            later = alive.granted
        await dead._redis.aclose()
        return dead.granted, at_first, later

    dead, at_first, later = asyncio.run(scenario())
    # the dead lease expired: the call waiting got its slot (one: only one call wanted it)
    assert (dead, at_first, later) == (4, 0, 1)


def test_processes_wanting_all_the_slots_share_them_fairly_and_never_exceed_the_limit(redis_db):
    """Max–min fair shares of 8 slots: 4 + 4 for two holders wanting 8 each; 2 + 3 + 3 once a
    third asks (water-filling in holder order: ⌊8/3⌋ = 2, then ⌊6/2⌋ = 3, then the 3 left).
    The holder that came first gives back what is over its share as its calls end."""

    async def scenario() -> tuple[list[dict[str, int]], int]:
        holders: dict[str, RedisSlots] = {}
        most = 0
        seen: list[dict[str, int]] = []
        stop = asyncio.Event()

        async def holder(name: str, calls: int, start: float) -> None:
            await asyncio.sleep(start)
            slots = RedisSlots(url=REDIS_URL, key="test:fair", limit=8, poll_s=0.01)
            async with slots:
                holders[name] = slots

                async def caller() -> None:
                    for _ in range(calls):
                        await slots.acquire()
                        await asyncio.sleep(0.05)
                        slots.release()

                await asyncio.gather(*(caller() for _ in range(8)))
                del holders[name]

        async def sample() -> None:
            nonlocal most
            while not stop.is_set():
                most = max(most, sum(h.in_use for h in holders.values()))
                await asyncio.sleep(0.001)

        async def snapshot(at: float) -> None:
            await asyncio.sleep(at)
            seen.append({name: h.in_use for name, h in holders.items()})

        sampler = asyncio.create_task(sample())
        await asyncio.gather(
            holder("a", 60, 0.0),
            holder("b", 60, 0.3),
            holder("c", 30, 1.3),
            snapshot(1.0),
            snapshot(2.0),
        )
        stop.set()
        await sampler
        return seen, most

    seen, most = asyncio.run(scenario())
    assert seen[0] == {"a": 4, "b": 4}
    assert sorted(seen[1].values()) == [2, 3, 3]
    assert most == 8
    client = redis_db.connection_for_write().default_channel.client
    assert client.hlen("test:fair") == 0 and client.hlen("test:fair:wants") == 0


@pytest.mark.django_db(transaction=True)
def test_two_workers_on_redis_never_exceed_the_runs_concurrency(tmp_path, redis_db):
    if connection.vendor != "postgresql":
        pytest.skip("the worker processes share the test database: needs PostgreSQL")
    concurrency = 6
    logs = [tmp_path / "worker-a.log", tmp_path / "worker-b.log"]
    with FakeLLMServer(latency=0.1) as server:
        actor, run = graded_run(server, repeats=2, concurrency=concurrency)
        # Chunks of 12 tasks × 2 repeats (4 × the concurrency): two chunks, one per worker.
        chunks = run_start(actor=actor, run=run, chunk_tasks=12, enqueue=False)
        assert len(chunks) == 2
        workers = [
            # the lease on the default Redis: the broker
            start_worker(tmp_path / f"var{i}", log, REDIS_URL, unset=["RUN_SLOTS_REDIS_URL"])
            for i, log in enumerate(logs)
        ]
        try:
            ready_by = time.monotonic() + 120  # both workers listening before the chunks arrive
            while not all(" ready." in log.read_text() for log in logs):
                assert time.monotonic() < ready_by, "the workers did not start"
                time.sleep(0.2)
            for pks in chunks:
                redis_db.send_task("runs.run_execute_chunk", args=[run.pk, pks])
            wait_for(lambda: Run.objects.get(pk=run.pk).status != RunStatus.RUNNING, 120)
        finally:
            stop_workers(workers)
        text = "\n".join(log.read_text()[-2000:] for log in logs)
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED, text
        assert Output.objects.filter(run=run).count() == run.items_total == 40
        # Both workers executed a chunk at once, and together kept the run's limit.
        assert all("succeeded" in log.read_text() for log in logs), text
        assert server.max_in_flight == concurrency
    client = redis_db.connection_for_write().default_channel.client
    assert client.hlen(run_slots_key(run.pk, connection.settings_dict["NAME"])) == 0


@pytest.mark.django_db(transaction=True)
def test_two_workers_take_a_runs_pieces_until_none_is_left(
    tmp_path, redis_db, monkeypatch, settings
):
    """The product's path on Redis: ``run_start`` pushes the pieces and enqueues the runners."""
    if connection.vendor != "postgresql":
        pytest.skip("the worker processes share the test database: needs PostgreSQL")
    concurrency = 6
    settings.RUN_SLOTS_REDIS_URL = REDIS_URL
    monkeypatch.setattr(
        "runs.tasks.run_execute_chunk_task.delay",
        lambda *args: redis_db.send_task("runs.run_execute_chunk", args=list(args)),
    )
    logs = [tmp_path / "worker-a.log", tmp_path / "worker-b.log"]
    with FakeLLMServer(latency=0.1) as server:
        actor, run = graded_run(server, repeats=2, concurrency=concurrency)
        workers = [start_worker(tmp_path / f"var{i}", log, REDIS_URL) for i, log in enumerate(logs)]
        try:
            wait_for(lambda: all(" ready." in log.read_text() for log in logs), 120)
            pieces = run_start(actor=actor, run=run)
            wait_for(lambda: Run.objects.get(pk=run.pk).status != RunStatus.RUNNING, 120)
        finally:
            stop_workers(workers)
        text = "\n".join(log.read_text()[-2000:] for log in logs)
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED, text
        # 20 tasks × 2 repeats in pieces of 4 tasks (8 items); two runners (one per worker)
        assert [len(piece) for piece in pieces] == [4] * 5
        pairs = list(Output.objects.filter(run=run).values_list("task_id", "repeat_index"))
        assert len(pairs) == len(set(pairs)) == run.items_total == run.items_done == 40
        assert server.calls == 40  # no piece called twice
        assert server.max_in_flight <= concurrency
    client = redis_db.connection_for_write().default_channel.client
    name = connection.settings_dict["NAME"]
    assert client.hlen(run_slots_key(run.pk, name)) == 0  # the lease given back
    assert client.keys(f"{run_pieces_key(run.pk, name)}*") == []  # every list emptied
