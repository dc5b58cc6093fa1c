"""Decision-page plots as SVG: the Efficacy Index with its band, the value interval, and the
confusion matrix of a structured judgement.

Same conventions as :mod:`gates.plots` (those of :mod:`enterpriseval.plotting`, and the same
colours), which holds the threshold-band and ν-profile plots the page shows beside these.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter

from enterpriseval.plotting import BOUND, ESTIMATE, INK, figure_svg
from gates.algorithm import GateResult
from gates.plots import SCALE
from gates.value_model import ValueEstimate

BAND = "#d2e3fc"
GEOMETRIC = "#9334e6"


def ei_band_svg(result: GateResult) -> str:
    """Plot EI and EI_G on the ν scale over the weight-sensitivity band (SPEC §6.2).

    Raises
    ------
    ValueError
        If the result has no EI (a gated metric without an estimate leaves it uncomputed).
    """
    if result.ei is None or result.ei_g is None:
        raise ValueError("result: EI was not computed (a gated metric has no estimate)")
    figure = Figure(figsize=(7.0, 1.5))
    axis = figure.subplots()
    band = "no weight-sensitivity band"
    if result.ei_band is not None:
        low, high = result.ei_band
        axis.axvspan(low, high, ymin=0.25, ymax=0.75, color=BAND, linewidth=0)
        axis.plot([low, high], [0, 0], "|", color=ESTIMATE, markersize=14)
        band = f"weight-sensitivity band [{low:.2f}, {high:.2f}]"
    axis.axvline(0, color=BOUND, linewidth=1)
    axis.axvline(1, color="#188038", linewidth=1)
    axis.plot([result.ei], [0], "o", color=ESTIMATE, markersize=7)
    axis.plot([result.ei_g], [0], "D", color=GEOMETRIC, markersize=6)
    axis.set_xlim(-1.05, result.nu_max + 0.1)
    return _one_line_svg(
        figure,
        axis,
        xlabel="ν scale  (0 = every metric at θout, 1 = at θin)",
        title=f"EI {result.ei:.2f} (●), EI_G {result.ei_g:.2f} (◆) and the {band}",
    )


def value_interval_svg(value: ValueEstimate) -> str:
    """Plot V_annual's point value and Monte Carlo interval, labelled observed or estimated."""
    figure = Figure(figsize=(7.0, 1.4))
    axis = figure.subplots()
    points = [value.lo, value.hi, value.point, 0.0]
    pad = max((max(points) - min(points)) * 0.1, 1.0)
    left, right = min(points) - pad, max(points) + pad
    if right > 0:
        axis.axvspan(max(left, 0.0), right, color=SCALE, alpha=0.35, linewidth=0)
    axis.axvline(0, color=BOUND, linewidth=1)
    axis.plot([value.lo, value.hi], [0, 0], color=INK, linewidth=1.6, solid_capstyle="butt")
    axis.plot([value.lo, value.hi], [0, 0], "|", color=INK, markersize=12)
    axis.plot([value.point], [0], "o", color=ESTIMATE, markersize=7)
    axis.set_xlim(left, right)
    axis.xaxis.set_major_formatter(FuncFormatter(lambda x, _position: f"{x:,.0f}"))
    unit = f"{value.currency} per year" if value.currency else "per year"
    return _one_line_svg(
        figure,
        axis,
        xlabel=f"V_annual, {unit} (shaded: above break-even)",
        title=(
            f"V_annual ({value.label}): point {value.amount(value.point)} (●) with its "
            f"{value.level:.0%} interval [{value.amount(value.lo)}, {value.amount(value.hi)}]"
        ),
    )


def _one_line_svg(figure: Figure, axis: Axes, *, xlabel: str, title: str) -> str:
    """Label a plot drawn along one horizontal line at y = 0 and return it as SVG."""
    axis.set_ylim(-1, 1)
    axis.set_yticks([])
    axis.tick_params(axis="x", labelsize=7)
    axis.set_xlabel(xlabel, fontsize=8)
    axis.set_title(title, fontsize=8.5, loc="left")
    for spine in ("top", "right", "left"):
        axis.spines[spine].set_visible(False)
    return figure_svg(figure)


def confusion_matrix_svg(
    labels: Sequence[str], columns: Sequence[str], counts: Sequence[Sequence[int]]
) -> str:
    """Plot the confusion matrix of a structured judgement: gold rows, given-label columns.

    ``counts[g][p]`` counts tasks with gold ``labels[g]`` that were given ``columns[p]``;
    the last column is the unknown label (SPEC §4.1). Cells show their counts; the diagonal
    (correct) is outlined.

    Raises
    ------
    ValueError
        If ``counts`` is not len(labels) × len(columns).
    """
    matrix = np.asarray(counts, dtype=float)
    if matrix.shape != (len(labels), len(columns)):
        raise ValueError(
            f"counts: expected {len(labels)} × {len(columns)} cells, got shape {matrix.shape}"
        )
    size = max(len(columns), 2)
    figure = Figure(figsize=(1.2 + 1.1 * size, 1.0 + 0.55 * len(labels)))
    axis = figure.subplots()
    top = matrix.max() if matrix.size and matrix.max() > 0 else 1.0
    axis.imshow(matrix / top, cmap="Blues", vmin=0, vmax=1.25, aspect="auto")
    for row in range(matrix.shape[0]):
        for column in range(matrix.shape[1]):
            value = int(matrix[row, column])
            dark = matrix[row, column] / top > 0.6
            axis.text(
                column,
                row,
                str(value),
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark else INK,
            )
            if row == column:
                axis.add_patch(
                    Rectangle(
                        (column - 0.5, row - 0.5), 1, 1, fill=False, edgecolor=INK, linewidth=1.2
                    )
                )
    axis.set_xticks(range(len(columns)), [_wrapped(c) for c in columns], fontsize=7)
    axis.set_yticks(range(len(labels)), [_wrapped(label) for label in labels], fontsize=7)
    axis.set_xlabel("label given (first repeat)", fontsize=8)
    axis.set_ylabel("gold label", fontsize=8)
    correct = int(np.trace(matrix[:, : len(labels)]))
    total = int(matrix.sum())
    axis.set_title(
        f"Confusion matrix: {correct} of {total} tasks correct (outlined diagonal)",
        fontsize=8.5,
        loc="left",
    )
    return figure_svg(figure)


def _wrapped(label: str, width: int = 14) -> str:
    return "\n".join(textwrap.wrap(label, width)) or label
