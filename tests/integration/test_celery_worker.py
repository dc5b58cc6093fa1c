"""A real Celery worker process renders a decision report, on each broker the product supports."""

import os
import signal
import subprocess
import time

import pytest
from pypdf import PdfReader
from workers import ROOT, celery_worker_command, producer, worker_environment

EXAMPLE = ROOT / "examples" / "credit_memo" / "llama-4.yaml"
# A shared machine may give each checkout its own Redis database.
REDIS_URL = os.environ.get("EV_TEST_REDIS_WORKER_URL", "redis://127.0.0.1:6379/15")

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("broker_url", [None, REDIS_URL], ids=["filesystem", "redis"])
def test_a_worker_renders_a_decision_report_sent_through_the_broker(tmp_path, broker_url):
    var_dir = tmp_path / "var"
    output = tmp_path / "report.pdf"
    worker = subprocess.Popen(
        celery_worker_command("--concurrency=1", "--pool=solo"),
        cwd=ROOT,
        env=worker_environment(var_dir, broker_url, database=False),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        client = producer(var_dir, broker_url)
        client.send_task(
            "gates.decision_report_render",
            args=[str(EXAMPLE), str(output), "Worker-rendered decision"],
        )
        deadline = time.monotonic() + 90
        while not output.exists() and time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.2)
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            log, _ = worker.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            log, _ = worker.communicate()
    assert output.exists(), log[-3000:]
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(output).pages).split())
    assert "Worker-rendered decision" in text
    assert "Scale" in text
    assert "succeeded" in log
    assert not (ROOT / "control").exists(), "the filesystem broker wrote outside var/"


def descendants(pid: int) -> set[int]:
    """Return the process ids below ``pid`` (children, grandchildren, …), read from /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    return {pid for pid in pids if os.path.exists(f"/proc/{pid}") and not _zombie(pid)}


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_stopped_worker_leaves_no_sentence_splitting_process_behind(tmp_path):
    """Each prefork child starts its splitting processes (and their fork server) at start-up;
    a warm shutdown stops them all (runs/tasks.py), not only the worker's own processes."""
    var_dir = tmp_path / "var"
    worker = subprocess.Popen(
        celery_worker_command("--concurrency=2"),
        cwd=ROOT,
        env={**worker_environment(var_dir, None, database=False), "SEGMENT_PROCESSES": "2"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # two children, each with a fork server and two splitting processes: 8 or more
        deadline = time.monotonic() + 120
        while len(tree := descendants(worker.pid)) < 8 and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(1.0)
        tree = descendants(worker.pid)
        assert len(tree) >= 8, tree
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(60)
    deadline = time.monotonic() + 20
    while alive(tree) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = alive(tree)
    for pid in left:  # do not leak them into the rest of the suite
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{len(left)} of {len(tree)} processes outlived the worker"
