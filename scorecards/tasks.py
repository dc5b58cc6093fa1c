"""Celery tasks of the scorecards app (thin: each calls one service)."""

from __future__ import annotations

import datetime as dt

from celery import shared_task

from scorecards.reevaluation import reevaluation_notify, review_dates_check


@shared_task(name="scorecards.review_dates_check")
def review_dates_check_task(today: str | None = None) -> int:
    """Flag the final scorecards whose next review date passed (run daily by beat)."""
    return review_dates_check(today=dt.date.fromisoformat(today) if today else None)


@shared_task(name="scorecards.reevaluation_notify", acks_late=True, reject_on_worker_lost=True)
def reevaluation_notify_task(flag_ids: list[int]) -> int:
    """E-mail the owners about these re-evaluation flags; a flag already notified is skipped."""
    return reevaluation_notify(flag_ids=flag_ids)
