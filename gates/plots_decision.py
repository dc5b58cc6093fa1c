"""Decision-page plots as SVG: the Efficacy Index with its band, and the value interval.

Same conventions as :mod:`gates.plots` (those of :mod:`enterpriseval.plotting`, and the same
colours), which holds the threshold-band and ν-profile plots the page shows beside these.
"""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from enterpriseval.plotting import BOUND, ESTIMATE, INK, figure_svg
from gates.algorithm import GateResult
from gates.plots import SCALE
from gates.value_model import ValueEstimate

BAND = "#d2e3fc"
GEOMETRIC = "#9334e6"


def ei_band_svg(result: GateResult) -> str:
    """Plot EI and EI_G on the ν scale over the weight-sensitivity range (SPEC §6.2).

    The range is EI under other weightings, not a confidence interval: it is written "low
    to high", never in brackets, and drawn as a band of weights, not of sampling error.

    Raises
    ------
    ValueError
        If the result has no EI (a gated metric without an estimate leaves it uncomputed).
    """
    if result.ei is None or result.ei_g is None:
        raise ValueError("result: EI was not computed (a gated metric has no estimate)")
    figure = Figure(figsize=(7.0, 1.5))
    axis = figure.subplots()
    band = "no weight-sensitivity range"
    if result.ei_band is not None:
        low, high = result.ei_band
        axis.axvspan(low, high, ymin=0.25, ymax=0.75, color=BAND, linewidth=0)
        axis.plot([low, high], [0, 0], "|", color=ESTIMATE, markersize=14)
        band = f"weight-sensitivity range {low:.2f} to {high:.2f} (weights, not a CI)"
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
