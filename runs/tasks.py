"""Celery tasks of the runs app (thin: each calls one service), and the worker's start-up."""

from __future__ import annotations

import threading
from multiprocessing import process as mp_process

from celery import shared_task
from celery.signals import worker_process_init, worker_process_shutdown, worker_shutdown

from runs.segment_pool import shutdown_pools
from runs.services.judging import run_judge_execute
from runs.services.outputs import segmenter_from_settings
from runs.services.runs import run_execute_chunk


@shared_task(name="runs.run_execute_chunk", acks_late=True, reject_on_worker_lost=True)
def run_execute_chunk_task(run_id: int, task_pks: list[int], runner: str = "") -> dict[str, object]:
    """Execute one chunk of a run, or with ``runner`` the run's pieces in Redis until none is
    left; idempotent, so a redelivered message writes nothing twice."""
    result = run_execute_chunk(run_id=run_id, task_pks=task_pks, runner=runner)
    return {
        "run": result.run_id,
        "written": result.written,
        "failed": result.failed,
        "skipped": result.skipped,
        "not_started": result.not_started,
        "status": result.status,
    }


@shared_task(name="runs.run_judge", acks_late=True, reject_on_worker_lost=True)
def run_judge_task(judging_id: int) -> dict[str, object]:
    """Judge a run; idempotent, so a redelivered message only judges what is left."""
    judging = run_judge_execute(judging_id=judging_id)
    return {
        "judging": judging.pk,
        "status": judging.status,
        "outputs_judged": judging.outputs_judged,
        "outputs_failed": judging.outputs_failed,
    }


@worker_process_init.connect
def start_segmenter(**_: object) -> None:
    """Start this worker process's sentence-splitting processes now, not in a run's chunk.

    In a thread: the child must report ready within ``worker_proc_alive_timeout`` (4 s).
    """
    # A prefork child's multiprocessing state is billiard's: a daemonic process, which may
    # not start children, with a key type the standard library refuses to send to its
    # forkserver. The splitting processes outlive nothing (they exit when their parent's
    # pipes close), so the child's state is made one the standard library accepts.
    config = mp_process.current_process()._config  # type: ignore[attr-defined]
    config["daemon"] = False
    config["authkey"] = mp_process.AuthenticationString(bytes(config["authkey"]))
    config.setdefault("semprefix", "/mp")
    threading.Thread(
        target=segmenter_from_settings().warm, name="segmenter-warm", daemon=True
    ).start()


@worker_process_shutdown.connect  # a prefork child
@worker_shutdown.connect  # the worker itself (a solo pool splits in it)
def stop_segmenter(**_: object) -> None:
    """Stop this worker process's sentence-splitting processes and their fork server.

    They do not stop by themselves: each splitting process holds the fork server's end of the
    pipe that tells it its parent is alive, so both outlive a stopped worker.
    """
    shutdown_pools()
    from multiprocessing import forkserver

    stop = getattr(forkserver._forkserver, "_stop", None)  # no public way (CPython 3.11)
    if stop is not None:
        stop()
