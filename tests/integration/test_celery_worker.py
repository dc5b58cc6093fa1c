"""A real Celery worker process renders a decision report, on each broker the product supports."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from celery import Celery
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "credit_memo" / "llama-4.yaml"
REDIS_URL = "redis://127.0.0.1:6379/15"

pytestmark = pytest.mark.integration


def worker_environment(var_dir: Path, broker_url: str | None) -> dict[str, str]:
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
    return env


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


@pytest.mark.parametrize("broker_url", [None, REDIS_URL], ids=["filesystem", "redis"])
def test_a_worker_renders_a_decision_report_sent_through_the_broker(tmp_path, broker_url):
    var_dir = tmp_path / "var"
    output = tmp_path / "report.pdf"
    worker = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("celery")),
            "-A",
            "enterpriseval",
            "worker",
            "--loglevel=INFO",
            "--concurrency=1",
            "--pool=solo",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=worker_environment(var_dir, broker_url),
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
