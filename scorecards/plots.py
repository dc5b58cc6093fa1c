"""Scorecard plots beside the decision's (:mod:`gates.plots`, :mod:`gates.plots_decision`).

pass^k by k: the chance that all of k independent repeats of a task succeed, with its
interval, for each k the run's repeats allow (SPEC §4 reliability). Same conventions as the
gates plots (:mod:`enterpriseval.plotting`): matplotlib's object API, never pyplot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from matplotlib.figure import Figure

from enterpriseval.plotting import ESTIMATE, INK, figure_svg


def pass_k_svg(pass_k: Mapping[str, Mapping[str, Any]], *, k_max: int) -> str:
    """Plot pass^k with its interval against k (only the k with a value are drawn).

    Raises
    ------
    ValueError
        If no k has a value.
    """
    rows = sorted(
        (int(k), row) for k, row in pass_k.items() if row and row.get("point") is not None
    )
    if not rows:
        raise ValueError("pass_k: no k has a value")
    ks = [k for k, _row in rows]
    points = [float(row["point"]) for _k, row in rows]
    figure = Figure(figsize=(7.0, 2.4))
    axis = figure.subplots()
    for k, row in rows:
        if row.get("ci") is not None:
            low, high = (float(x) for x in row["ci"])
            axis.plot([k, k], [low, high], color=INK, linewidth=1.4)
            axis.plot([k, k], [low, high], "_", color=INK, markersize=10)
    axis.plot(ks, points, "o-", color=ESTIMATE, markersize=6, linewidth=1)
    top = 100.0 if max(points) > 1.0 else 1.0  # percentages or proportions
    axis.set_ylim(0.0, top * 1.05)
    axis.set_xticks(ks)
    axis.set_xlim(0.5, max(max(ks), k_max) + 0.5)
    axis.set_xlabel("k (all of k repeats succeed)", fontsize=8)
    axis.set_ylabel("pass^k", fontsize=8)
    axis.tick_params(labelsize=7)
    axis.set_title(
        f"pass^k by k (K = {k_max} repeats; ● estimate, bars = interval)", fontsize=8.5, loc="left"
    )
    for spine in ("top", "right"):
        axis.spines[spine].set_visible(False)
    return figure_svg(figure)
