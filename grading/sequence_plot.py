"""The plot of a gated metric's confidence sequence narrowing grade by grade (SPEC §5.5).

Pure: no Django import. For owners and reviewers on the session page; never for graders.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from matplotlib.figure import Figure

from enterpriseval.plotting import BOUND, ESTIMATE, INK, figure_svg

THRESHOLD = "#5f6368"


def sequence_svg(metric_id: str, entry: Mapping[str, Any]) -> str:
    """Return an SVG of the metric's estimate and bounds per grade, with θout and θin."""
    lower, upper, estimate = entry["lower"], entry["upper"], entry["estimate"]
    grades = list(range(1, len(lower) + 1))
    figure = Figure(figsize=(6.0, 2.8))
    axes = figure.add_subplot()
    axes.fill_between(grades, lower, upper, color=ESTIMATE, alpha=0.15, step="post", lw=0)
    axes.step(grades, lower, where="post", color=BOUND, lw=1.2, label="confidence sequence")
    axes.step(grades, upper, where="post", color=BOUND, lw=1.2)
    axes.plot(grades, estimate, color=ESTIMATE, lw=1.0, label="estimate")
    for name, value, style in (("θout", entry["theta_out"], "--"), ("θin", entry["theta_in"], ":")):
        axes.axhline(value, color=THRESHOLD, ls=style, lw=1.0)
        axes.annotate(
            f"{name} {value:g}", (1, value), xytext=(2, 2), textcoords="offset points", color=INK
        )
    axes.set_xlabel("grades (outputs with a final value, in draw order)", color=INK)
    axes.set_ylabel(metric_id, color=INK)
    low = min(min(lower), entry["theta_out"], entry["theta_in"])
    high = max(max(upper), entry["theta_out"], entry["theta_in"])
    pad = (high - low) * 0.05 or 1.0
    axes.set_ylim(low - pad, high + pad)
    axes.legend(loc="best", fontsize=8, frameon=False)
    return figure_svg(figure)
