"""Celery tasks of the gates app (thin: each calls one service)."""

from __future__ import annotations

from pathlib import Path

from celery import shared_task

from gates.services import decision_report_write


@shared_task(name="gates.decision_report_render")
def decision_report_render(input_path: str, output_path: str, title: str | None = None) -> str:
    """Render a decision report PDF; rendering the same input again overwrites the same file."""
    decision_report_write(input_path=Path(input_path), output_path=Path(output_path), title=title)
    return output_path
