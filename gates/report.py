"""The decision report: HTML from a template, rendered to PDF by WeasyPrint."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.template.loader import render_to_string
from django.utils import timezone

from enterpriseval.plotting import svg_data_uri
from gates.algorithm import GateResult
from gates.plots import nu_profile_svg, threshold_bands_svg


@dataclass(frozen=True)
class DecisionReport:
    title: str
    conservative: GateResult
    point: GateResult
    about: dict[str, Any] = field(default_factory=dict)
    source_path: str = ""
    source_sha256: str = ""
    generated_at: datetime = field(default_factory=timezone.now)


def decision_report_html(report: DecisionReport) -> str:
    """Return the report as a standalone HTML document (all text escaped by the template)."""
    context = {
        "report": report,
        "primary": report.conservative,
        "illustration": report.point,
        "rows": zip(report.conservative.metrics, report.point.metrics, strict=True),
        "bands_plot": svg_data_uri(threshold_bands_svg(report.conservative)),
        "nu_plot": svg_data_uri(nu_profile_svg([report.conservative, report.point])),
    }
    return render_to_string("gates/decision_report.html", context)


def render_decision_pdf(report: DecisionReport, path: Path) -> Path:
    """Write the report as a PDF at ``path`` and return the path.

    The PDF is written beside ``path`` and moved into place, so a reader never sees a
    half-written file.
    """
    from weasyprint import HTML  # imported here: loading Pango costs time at start-up

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    HTML(string=decision_report_html(report)).write_pdf(partial)
    os.replace(partial, path)
    return path
