"""Decision plots as SVG: each metric against its θout/θin band, and the ν profile.

Drawn with the conventions of :mod:`enterpriseval.plotting` (matplotlib's object API, never
pyplot; SVG with real text).
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from enterpriseval.plotting import BOUND, ESTIMATE, INK, figure_svg
from gates.algorithm import GateResult, MetricResult

REJECT = "#f4c7c3"
CONDITIONAL = "#fce8b2"
SCALE = "#b7e1cd"


def _axis_limits(metric: MetricResult) -> tuple[float, float]:
    points = [metric.theta_out, metric.theta_in]
    if metric.estimate is not None:
        points.append(metric.estimate)
    if metric.ci is not None:
        points.extend(metric.ci)
    low, high = min(points), max(points)
    pad = max((high - low) * 0.25, 1.0)
    low, high = low - pad, high + pad
    if min(points) >= 0:
        low = max(low, 0.0)
    if min(points) >= 0 and max(points) <= 100:
        high = min(high, 100.0)  # a percentage never reads beyond 100
    return low, high


def threshold_bands_svg(result: GateResult) -> str:
    """Plot each metric's estimate and CI over its Reject / Conditional / Scale zones."""
    metrics = result.metrics
    figure = Figure(figsize=(7.0, 0.75 * len(metrics) + 0.6))
    axes = figure.subplots(len(metrics), 1, squeeze=False)[:, 0]
    for axis, metric in zip(axes, metrics, strict=True):
        low, high = _axis_limits(metric)
        first, second = sorted((metric.theta_out, metric.theta_in))
        if metric.direction == "higher":
            zones = [(low, first, REJECT), (first, second, CONDITIONAL), (second, high, SCALE)]
        else:
            zones = [(low, first, SCALE), (first, second, CONDITIONAL), (second, high, REJECT)]
        for start, stop, colour in zones:
            axis.axvspan(start, stop, color=colour, linewidth=0)
        if metric.estimate is not None:
            if metric.ci is not None:
                axis.plot(metric.ci, [0, 0], color=INK, linewidth=1.6, solid_capstyle="butt")
                axis.plot(metric.ci, [0, 0], "|", color=INK, markersize=10)
            axis.plot([metric.estimate], [0], "o", color=ESTIMATE, markersize=6)
            if result.mode == "conservative" and metric.value_used is not None:
                axis.plot([metric.value_used], [0], "D", color=BOUND, markersize=5)
        axis.set_xlim(low, high)
        axis.set_ylim(-1, 1)
        axis.set_yticks([])
        axis.set_ylabel(
            f"{metric.label or metric.id}\n({'↑' if metric.direction == 'higher' else '↓'})",
            rotation=0,
            ha="right",
            va="center",
            fontsize=7.5,
        )
        axis.tick_params(axis="x", labelsize=7)
        for spine in ("top", "right", "left"):
            axis.spines[spine].set_visible(False)
    axes[0].set_title(
        "Estimate (●) with CI, conservative bound (◆) against Reject / Conditional / Scale zones",
        fontsize=8.5,
        loc="left",
    )
    figure.subplots_adjust(hspace=0.9)
    return figure_svg(figure)


def nu_profile_svg(results: Sequence[GateResult]) -> str:
    """Plot ν per metric, one bar per gate result (e.g. conservative and point mode)."""
    metrics = results[0].metrics
    figure = Figure(figsize=(7.0, 0.28 * len(metrics) * len(results) + 1.0))
    axis = figure.subplots()
    height = 0.8 / len(results)
    colours = ["#1a73e8", "#9aa0a6", "#34a853"]
    nu_max = results[0].nu_max
    for index, result in enumerate(results):
        positions = [i + index * height for i in range(len(metrics))]
        values = [m.nu if m.nu is not None else 0.0 for m in result.metrics]
        axis.barh(
            positions,
            values,
            height=height * 0.9,
            color=colours[index % len(colours)],
            label=f"{result.mode} (EI {result.ei:.2f})" if result.ei is not None else result.mode,
        )
    axis.axvline(0, color=BOUND, linewidth=1, linestyle="-")
    axis.axvline(1, color="#188038", linewidth=1, linestyle="-")
    axis.axvline(nu_max, color=INK, linewidth=0.8, linestyle="--")
    axis.set_yticks([i + height * (len(results) - 1) / 2 for i in range(len(metrics))])
    axis.set_yticklabels([m.label or m.id for m in metrics], fontsize=7.5)
    axis.invert_yaxis()
    axis.set_xlim(-1.05, nu_max + 0.1)
    axis.set_xlabel("ν  (0 = θout, 1 = θin, dashed = ν_max)", fontsize=8)
    axis.tick_params(axis="x", labelsize=7)
    axis.legend(
        fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.22),
        ncol=len(results),
        frameon=False,
    )
    for spine in ("top", "right"):
        axis.spines[spine].set_visible(False)
    return figure_svg(figure)
