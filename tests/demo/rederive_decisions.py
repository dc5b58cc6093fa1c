"""Re-derive a recorded decision of the demo independently of the product's estimators.

Issue 16's acceptance: from the demo's evidence — the session's final labels as the
``grades_export --final --provenance --as demo-reviewer`` file writes them, and each output's
units from the database — recompute every gated metric's point and conservative bound with
statsmodels and scipy only, then each status and the decision, and compare them with the
stored decision.

The method, written from SPEC §4, §5.2, §5.3 and §6.1 rather than from the product's code:

- a pooled rate (hallucination, irrelevance, citation precision, guidance precision/recall)
  is the share of units over the completely graded outputs; its variance is the
  cluster-robust one of statsmodels ``OLS(indicator, 1).fit(cov_type="cluster")`` with the
  output as the cluster (one row per unit of the metric's denominator); key-element capture,
  a mean of per-output shares, is the same fit with one row per output;
- the bound is Korn–Graubard's: Clopper–Pearson, statsmodels ``proportion_confint(method=
  "beta")``, at the effective sample size n* = min(n, p̂(1 − p̂)/v̂)·(z/t_{G−1})² (design
  effect floored at 1; n the units, G the outputs) and count n*·p̂;
- status by SPEC §6.1 on the conservative bound with strict inequalities; the decision is
  the worst status, or Undetermined when a metric's human labels are not eligible.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from gates.models import Decision
from runs.models import OutputStatus, Unit

#: What each gated metric counts in a completely graded output's final labels: the unit
#: kind of its rows, whether a unit is in the denominator, and whether it is in the numerator.
POOLED = {
    "hallucination_rate": (
        "sentence",
        lambda g: True,
        lambda g: g.get("assertive") == "Y" and g.get("supported") == "not",
    ),
    "irrelevance_rate": ("sentence", lambda g: True, lambda g: g.get("relevant") == "N"),
    "citation_precision_lenient": (
        "cited_chunk",
        lambda g: True,
        lambda g: g.get("citation") in ("strict", "lenient"),
    ),
    "guidance_precision": (
        "guidance_item",
        lambda g: g.get("guidance") in ("TP", "FP"),
        lambda g: g.get("guidance") == "TP",
    ),
    "guidance_recall": (
        "guidance_item",
        lambda g: g.get("guidance") in ("TP", "FN"),
        lambda g: g.get("guidance") == "TP",
    ),
}


@dataclass(frozen=True)
class Rederived:
    """One metric recomputed: point and interval in percent, units n and outputs G."""

    metric_id: str
    point: float
    lo: float
    hi: float
    n: int
    outputs: int


def final_lines(path: Any, run_id: int) -> list[dict[str, Any]]:
    """Return the export's lines of ``run_id``'s outputs graded completely (none disputed)."""
    lines = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
    mine = [line for line in lines if line["run"] == run_id and line["kind"] == "output"]
    assert len({line["stratum"] for line in mine}) == 1, "a uniform sample within the run"
    return [line for line in mine if line["complete"] and not line["disputed"]]


def output_units(decision: Decision) -> dict[tuple[str, int], dict[str, list[str]]]:
    """Return the unit keys of each succeeded output of the run, by (task id, repeat)."""
    run = decision.run
    units: dict[tuple[str, int], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    rows = Unit.objects.filter(
        output__run=run, output__status=OutputStatus.SUCCEEDED, output__task__split=run.split
    ).values_list("output__task__external_id", "output__repeat_index", "kind", "key")
    for task_id, repeat, kind, key in rows:
        units[(task_id, repeat)][kind].append(key)
    return units


def korn_graubard(
    point: float, variance: float, n: int, clusters: int, confidence: float
) -> tuple[float, float]:
    """Return Korn and Graubard's (1998) limits from statsmodels' Clopper–Pearson."""
    alpha = 1.0 - confidence
    scale = (stats.norm.ppf(1 - alpha / 2) / stats.t.ppf(1 - alpha / 2, clusters - 1)) ** 2
    spread = point * (1.0 - point)
    effective = min(n, spread / variance) if spread > 0 and variance > 0 else n
    n_star = effective * scale
    if point == 0.0:
        return 0.0, 1.0 - (alpha / 2) ** (1.0 / n_star)  # Clopper–Pearson at 0 successes
    if point == 1.0:
        return (alpha / 2) ** (1.0 / n_star), 1.0
    lo, hi = proportion_confint(n_star * point, n_star, alpha=alpha, method="beta")
    return float(lo), float(hi)


def _clustered(values: list[float], clusters: list[int], sampled: int) -> tuple[float, float]:
    """Return the mean of ``values`` and its cluster-robust (CR1) variance over ``sampled``.

    A graded output with no unit of the denominator (no flagged guidance item, no cited
    chunk) is still a sampled cluster, with a zero total: it counts in G, in the CR1 factor
    G/(G − 1) and in the G − 1 degrees of freedom. statsmodels sees no row of it, so its
    factor over the G' clusters with rows is replaced by the one over all G sampled.
    """
    y = np.asarray(values, dtype=float)
    groups = np.asarray(clusters)
    fit = sm.OLS(y, np.ones((y.size, 1))).fit(cov_type="cluster", cov_kwds={"groups": groups})
    seen = len(set(clusters))
    variance = float(fit.cov_params()[0, 0]) * (sampled / (sampled - 1)) / (seen / (seen - 1))
    return float(fit.params[0]), variance


def rederive(
    metric_id: str,
    lines: list[dict[str, Any]],
    units: Mapping[tuple[str, int], Mapping[str, list[str]]],
    confidence: float,
) -> Rederived:
    """Recompute ``metric_id`` over the completely graded outputs of ``lines``."""
    if metric_id == "key_element_capture":
        shares, outputs, n = [], [], 0
        for index, line in enumerate(lines):
            keys = units[(line["task_id"], line["repeat"])]["key_element"]
            captured = sum(line["grades"][k]["key_element"] == "present_correct" for k in keys)
            shares.append(captured / len(keys))
            outputs.append(index)
            n += len(keys)
        point, variance = _clustered(shares, outputs, len(lines))
    else:
        kind, in_denominator, in_numerator = POOLED[metric_id]
        indicators, outputs = [], []
        for index, line in enumerate(lines):
            for key in units[(line["task_id"], line["repeat"])][kind]:
                grades = line["grades"].get(key, {})
                if in_denominator(grades):
                    indicators.append(float(in_numerator(grades)))
                    outputs.append(index)
        point, variance = _clustered(indicators, outputs, len(lines))
        n = len(indicators)
    lo, hi = korn_graubard(point, variance, n, len(lines), confidence)
    return Rederived(metric_id, 100 * point, 100 * lo, 100 * hi, n, len(lines))


def status_of(value: float, direction: str, theta_out: float, theta_in: float) -> str:
    """Return SPEC §6.1's status of a conservative value (strict inequalities)."""
    sign = 1.0 if direction == "higher" else -1.0
    if sign * (value - theta_in) > 0:
        return "Scale"
    if sign * (value - theta_out) > 0:
        return "Conditional"
    return "Reject"


def conservative(rederived: Rederived, direction: str) -> float:
    """Return the bound on the gate's side: lower if higher is better, else upper."""
    return rederived.lo if direction == "higher" else rederived.hi


def assert_decision_rederived(decision: Decision, export_path: Any) -> list[Rederived]:
    """Assert that ``decision`` is what the independent computation gives; return it."""
    record = decision.record
    estimates = {e["metric_id"]: e for e in record["estimates"]}
    lines = final_lines(export_path, decision.run_id)
    units = output_units(decision)
    confidence = decision.charter.confidence
    found, statuses = [], []
    for metric in record["gate"]["metrics"]:
        stored = estimates[metric["id"]]
        assert stored["mode"] == "H", (metric["id"], "fewer than 100 graded outputs: human only")
        again = rederive(metric["id"], lines, units, confidence)
        found.append(again)
        assert (again.n, again.outputs) == (stored["n"], stored["n_clusters"]), metric["id"]
        for name in ("point", "lo", "hi"):
            assert abs(getattr(again, name) - stored[name]) < 1e-9, (metric["id"], name)
        assert abs(again.lo - metric["ci"][0]) < 1e-9 and abs(again.hi - metric["ci"][1]) < 1e-9
        used = conservative(again, metric["direction"])
        assert abs(used - metric["value_used"]) < 1e-9, metric["id"]
        status = status_of(used, metric["direction"], metric["theta_out"], metric["theta_in"])
        statuses.append(status)
        if metric["eligible"]:
            assert metric["status"] == status, metric["id"]
        else:
            assert metric["status"] == "Undetermined"
            assert any(
                reason.startswith(f"{metric['id']}:") and f"→ would be {status}, but not" in reason
                for reason in record["gate"]["reasons"]
            ), (metric["id"], status)
    worst = max(statuses, key=("Scale", "Conditional", "Reject").index)
    if all(metric["eligible"] for metric in record["gate"]["metrics"]):
        assert decision.status == worst
    else:
        assert decision.status == "Undetermined"
        reasons = record["gate"]["reasons"]
        metrics = record["gate"]["metrics"]
        rejected = [m["id"] for m, s in zip(metrics, statuses, strict=True) if s == "Reject"]
        if rejected:
            assert (
                f"{', '.join(rejected)} already Reject, so the decision cannot be better than "
                "Reject once every metric is determined"
            ) in reasons
        else:
            assert f"On the computed statuses alone the gate would read {worst}" in reasons
    return found
