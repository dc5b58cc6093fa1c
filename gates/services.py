"""Writes of the gates app."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from gates.algorithm import gate_evaluate
from gates.decision_file import load_decision_file
from gates.report import DecisionReport, render_decision_pdf


def display_path(path: Path) -> str:
    """Return ``path`` relative to the project when it lies inside it."""
    base = Path(settings.BASE_DIR)
    return str(path.relative_to(base)) if path.is_relative_to(base) else str(path)


def decision_report_build(*, input_path: Path, title: str | None = None) -> DecisionReport:
    """Evaluate a decision input in conservative and point mode and assemble its report."""
    decision_file = load_decision_file(input_path)
    name = decision_file.about.get("model") or input_path.stem
    return DecisionReport(
        title=title or f"Gate decision — {name}",
        conservative=gate_evaluate(decision_file.gate_input, mode="conservative"),
        point=gate_evaluate(decision_file.gate_input, mode="point"),
        about=decision_file.about,
        source_path=display_path(decision_file.path),
        source_sha256=decision_file.sha256,
    )


def decision_report_write(
    *, input_path: Path, output_path: Path, title: str | None = None
) -> DecisionReport:
    """Render the decision report of a decision input to a PDF at ``output_path``."""
    report = decision_report_build(input_path=input_path, title=title)
    render_decision_pdf(report, output_path)
    return report
