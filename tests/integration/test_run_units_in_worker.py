"""A prefork Celery worker starts its pool of splitting processes and stores the right units.

A real worker (``--pool=prefork``, one child, the filesystem broker) executes a run against
the fake provider with long answers. Billiard's children are daemonic and carry a key the
standard library refuses: the child must still start its splitting processes
(runs/segment_pool.py, started at worker start by runs/tasks.py), the log must show no
fallback, and the run completes with the units of each output exactly those that splitting
it here gives. Needs PostgreSQL (the worker and the test share the test database).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from django.db import connection
from test_run_worker_kill import world
from workers import ROOT, celery_worker_command, producer, stop_workers, worker_environment

from demo.testing.fakellm import FakeLLMServer
from runs.models import Output, RunStatus, Unit
from runs.segment import build_units
from runs.services.runs import run_create, run_start

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def answer(request: dict) -> str:
    """A memo paragraph citing the first source, then a list: about 700 characters."""
    content = str(request["messages"][-1]["content"])
    chunk = content.split("[", 1)[1].split("]", 1)[0] if "[" in content else "none"
    return (
        f"Revenue was $203.9 million in FY2024, up approx. 6.1% y/y [{chunk}]. "
        f"Net leverage was 2.4x against a covenant of 3.5x [{chunk}]. "
        "Kestrel Logistics Group Ltd. has 35% of revenue from its top three customers. "
        "Liquidity is adequate.\n\n"
        f"- Interest cover: 3.5x [{chunk}].\n- Capex: $12.0 million.\n- Headroom: ample.\n\n"
        "The facility is recommended for approval subject to the usual conditions. " * 3
    )


def descendants(pid: int) -> list[str]:
    """Return the command lines of every process descended from ``pid`` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            stack.append(child)
            try:
                found.append(
                    (Path("/proc") / str(child) / "cmdline").read_text().replace("\0", " ")
                )
            except OSError:
                continue
    return found


def test_a_prefork_worker_starts_its_splitting_pool_and_stores_the_same_units(tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("the worker process shares the test database: needs PostgreSQL")
    var_dir = tmp_path / "var"
    client = producer(var_dir, None)
    env = worker_environment(var_dir, None)
    env["SEGMENT_PROCESSES"] = "2"
    log = tmp_path / "worker.log"
    with FakeLLMServer(responder=answer, latency=0.05) as server:
        actor, use_case, sigma = world(server)
        run = run_create(
            actor=actor,
            use_case=use_case,
            configuration=sigma,
            task_set=use_case.task_sets.get(),
            split="graded",
            repeats=2,
            concurrency=8,
        )
        worker = subprocess.Popen(
            celery_worker_command("--pool=prefork", "--concurrency=1"),
            cwd=ROOT,
            env=env,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
        )
        try:
            for pks in run_start(actor=actor, run=run, enqueue=False):
                client.send_task("runs.run_execute_chunk", args=[run.pk, pks])
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                run.refresh_from_db()
                if run.status != RunStatus.RUNNING:
                    break
                time.sleep(0.1)
            pool = [c for c in descendants(worker.pid) if "forkserver" in c]
        finally:
            stop_workers([worker])
    text = log.read_text()
    assert run.status == RunStatus.COMPLETED, text[-3000:]
    assert run.items_done == 40 and run.items_failed == 0
    assert pool, "the worker's child started no splitting processes"
    assert "splitting here" not in text and "Traceback" not in text, text[-3000:]
    outputs = Output.objects.filter(run=run).select_related("task")
    assert all(len(o.text) > 600 for o in outputs)
    for output in outputs:
        expected = sorted(
            (u.kind, u.key, u.position, u.text, u.ref_id, u.sentence_position)
            for u in build_units(
                output.text,
                key_element_ids=list(
                    output.task.key_elements.order_by("pk").values_list("element_id", flat=True)
                ),
                guidance_item_ids=list(
                    output.task.guidance_items.order_by("pk").values_list("item_id", flat=True)
                ),
            )
        )
        stored = sorted(
            Unit.objects.filter(output=output).values_list(
                "kind", "key", "position", "text", "ref_id", "sentence_position"
            )
        )
        assert stored == expected
