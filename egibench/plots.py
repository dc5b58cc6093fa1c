"""Roster plots as SVG: the M1–M6 heatmap, grouped bars per bucket, radar of the top models.

Same conventions as the decision plots (:mod:`enterpriseval.plotting`): matplotlib's object
API (``Figure``), never pyplot, SVG through :func:`enterpriseval.plotting.figure_svg`. No
Django import. A missing score is never drawn as 0: the heatmap draws a grey hatched cell
labelled "missing", the bars a grey × on the axis, the radar leaves a gap.

Every drawn score carries an SVG id (``cell-<row>-<bucket>``, ``missing-<row>-<bucket>``,
``bar-<row>-<bucket>``, ``missing-bar-<row>-<bucket>``, ``radar-<row>``) so the number of
models and buckets drawn can be checked from the SVG itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from egibench.aggregate import BUCKETS
from enterpriseval.plotting import INK, figure_svg

MISSING_FACE = "#e8eaed"
MISSING_EDGE = "#9aa0a6"
# Hot cells weak, cool cells strong, as seed 000 Figure 2.
HEAT = "RdYlBu"
SERIES = "tab20"
RADAR_TOP = 5
SHORT_NAMES = {
    "M1": "Outcome",
    "M2": "Tools",
    "M3": "Planning",
    "M4": "Retrieval",
    "M5": "Safety",
    "M6": "Engineering",
}


@dataclass(frozen=True)
class RosterRow:
    """One model of the roster: its label, EGI (None when unknown) and M1–M6 scores."""

    label: str
    egi: float | None
    partial: bool
    scores: Mapping[str, float | None]


def _short(bucket: str) -> str:
    return f"{bucket}\n{SHORT_NAMES[bucket]}"


def _label(row: RosterRow) -> str:
    egi = "EGI n/a" if row.egi is None else f"EGI {row.egi:.2f}"
    return f"{row.label} ({egi}{', partial' if row.partial else ''})"


def heatmap_svg(rows: Sequence[RosterRow]) -> str:
    """Plot the M1–M6 matrix, one row per model in the given order; missing cells hatched.

    Raises
    ------
    ValueError
        If ``rows`` is empty.
    """
    if not rows:
        raise ValueError("rows: no model to plot")
    cmap = colormaps[HEAT]
    norm = Normalize(vmin=0, vmax=100)
    figure = Figure(figsize=(7.5, 0.42 * len(rows) + 1.3))
    axis = figure.subplots()
    for index, row in enumerate(rows):
        for column, bucket in enumerate(BUCKETS):
            score = row.scores.get(bucket)
            if score is None:
                cell = Rectangle(
                    (column, index),
                    1,
                    1,
                    facecolor=MISSING_FACE,
                    edgecolor=MISSING_EDGE,
                    hatch="///",
                    linewidth=0.5,
                )
                cell.set_gid(f"missing-{index}-{bucket}")
                text, colour = "missing", "#5f6368"
            else:
                cell = Rectangle((column, index), 1, 1, facecolor=cmap(norm(score)), linewidth=0)
                cell.set_gid(f"cell-{index}-{bucket}")
                text, colour = f"{score:.2f}", INK
            axis.add_patch(cell)
            axis.text(column + 0.5, index + 0.5, text, ha="center", va="center", fontsize=7)
            axis.texts[-1].set_color(colour)
    axis.set_xlim(0, len(BUCKETS))
    axis.set_ylim(len(rows), 0)
    axis.set_xticks([i + 0.5 for i in range(len(BUCKETS))])
    axis.set_xticklabels([_short(b) for b in BUCKETS], fontsize=7.5)
    axis.xaxis.tick_top()
    axis.set_yticks([i + 0.5 for i in range(len(rows))])
    axis.set_yticklabels([_label(row) for row in rows], fontsize=7.5)
    axis.tick_params(length=0)
    for spine in axis.spines.values():
        spine.set_visible(False)
    colourbar = figure.colorbar(
        ScalarMappable(norm=norm, cmap=cmap), ax=axis, fraction=0.04, pad=0.02
    )
    colourbar.ax.tick_params(labelsize=7)
    colourbar.set_label("score (0–100); hatched grey = missing, not 0", fontsize=7.5)
    return figure_svg(figure)


def grouped_bars_svg(rows: Sequence[RosterRow]) -> str:
    """Plot one cluster per bucket with one bar per model; a missing score is a grey ×.

    Raises
    ------
    ValueError
        If ``rows`` is empty.
    """
    if not rows:
        raise ValueError("rows: no model to plot")
    colours = colormaps[SERIES]
    figure = Figure(figsize=(7.5, 3.6))
    axis = figure.subplots()
    width = 0.84 / len(rows)
    for index, row in enumerate(rows):
        colour = colours(index % colours.N)
        offset = -0.42 + width * (index + 0.5)
        labelled = False
        for column, bucket in enumerate(BUCKETS):
            score = row.scores.get(bucket)
            x = column + offset
            if score is None:
                (marker,) = axis.plot([x], [1.5], "x", color=MISSING_EDGE, markersize=3.5)
                marker.set_gid(f"missing-bar-{index}-{bucket}")
                continue
            bars = axis.bar(
                [x],
                [score],
                width=width * 0.92,
                color=colour,
                label=None if labelled else _label(row),
            )
            labelled = True
            bars.patches[0].set_gid(f"bar-{index}-{bucket}")
        if not labelled:
            axis.bar([0], [0], width=0, color=colour, label=_label(row) + " — no scores")
    axis.set_xticks(range(len(BUCKETS)))
    axis.set_xticklabels([_short(b) for b in BUCKETS], fontsize=7.5)
    axis.set_ylim(0, 100)
    axis.set_ylabel("score (0–100)", fontsize=8)
    axis.tick_params(axis="y", labelsize=7)
    axis.set_title("Each bucket a cluster, models by EGI; grey × = missing (not 0)", fontsize=8.5)
    axis.legend(
        fontsize=6.5,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncol=2,
        frameon=False,
    )
    for spine in ("top", "right"):
        axis.spines[spine].set_visible(False)
    return figure_svg(figure)


def radar_rows(rows: Sequence[RosterRow], *, top: int = RADAR_TOP) -> list[RosterRow]:
    """Return the ``top`` models by EGI among those with a full (non-partial) EGI."""
    eligible = [row for row in rows if row.egi is not None and not row.partial]
    eligible.sort(key=lambda row: (-(row.egi or 0.0), row.label))
    return eligible[:top]


def radar_svg(rows: Sequence[RosterRow]) -> str:
    """Plot each model's M1–M6 profile on a radar; a missing score breaks the outline.

    Raises
    ------
    ValueError
        If ``rows`` is empty.
    """
    if not rows:
        raise ValueError("rows: no model to plot")
    colours = colormaps[SERIES]
    figure = Figure(figsize=(6.0, 5.2))
    axis = figure.add_subplot(projection="polar")
    angles = [2 * math.pi * k / len(BUCKETS) for k in range(len(BUCKETS))]
    for index, row in enumerate(rows):
        colour = colours(index % colours.N)
        values = [row.scores.get(bucket) for bucket in BUCKETS]
        present = [(a, v) for a, v in zip(angles, values, strict=True) if v is not None]
        missing = [b for b, v in zip(BUCKETS, values, strict=True) if v is None]
        label = _label(row) + (f"; missing {', '.join(missing)}" if missing else "")
        (points,) = axis.plot(
            [a for a, _ in present],
            [v for _, v in present],
            "o",
            color=colour,
            markersize=4,
            label=label,
        )
        points.set_gid(f"radar-{index}")
        for k in range(len(BUCKETS)):
            nxt = (k + 1) % len(BUCKETS)
            first, second = values[k], values[nxt]
            if first is None or second is None:
                continue
            end = angles[nxt] if nxt else 2 * math.pi
            axis.plot([angles[k], end], [first, second], color=colour, linewidth=1.4)
        if not missing:
            closed = [*angles, 2 * math.pi]
            axis.fill(closed, [*values, values[0]], color=colour, alpha=0.08)
    axis.set_xticks(angles)
    axis.set_xticklabels([_short(b) for b in BUCKETS], fontsize=7.5)
    axis.set_ylim(0, 100)
    axis.set_yticks([25, 50, 75, 100])
    axis.tick_params(axis="y", labelsize=6.5)
    axis.legend(
        fontsize=6.5,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.08),
        ncol=1,
        frameon=False,
    )
    return figure_svg(figure)
