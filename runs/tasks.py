"""Celery tasks of the runs app (thin: each calls one service)."""

from __future__ import annotations

from celery import shared_task

from runs.services.judging import run_judge_execute
from runs.services.runs import run_execute_chunk


@shared_task(name="runs.run_execute_chunk", acks_late=True, reject_on_worker_lost=True)
def run_execute_chunk_task(run_id: int, task_pks: list[int]) -> dict[str, object]:
    """Execute one chunk of a run; idempotent, so a redelivered message writes nothing twice."""
    result = run_execute_chunk(run_id=run_id, task_pks=task_pks)
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
