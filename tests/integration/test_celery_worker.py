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
