"""The record every metric estimator returns (SPEC §4: "every metric value carries …").

Pure: no Django import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: How the value was graded: human only, judge only, prediction-powered (judge corrected by
#: a human sample), or automatic (computed from run data).
GradingMode = Literal["H", "J", "PPI", "A"]

#: Fewer graded outputs than this and the gate uses the human-only interval, showing the PPI
#: interval beside it (SPEC §5.2, small samples).
MIN_OUTPUTS_FOR_PPI_GATE = 100


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with its confidence interval, in the metric's scale."""

    point: float
    lo: float
    hi: float


@dataclass(frozen=True, slots=True)
class MetricEstimate:
    """One metric's value with its uncertainty and how it was obtained.

    ``point``, ``lo`` and ``hi`` are in the catalogue's scale (percentages 0–100 for
    ``scale: percent`` metrics); ``None`` when there is no evidence (then ``reason`` says
    why). ``n`` counts units (sentences, cited chunks, key elements, tasks …), ``n_clusters``
    the outputs or tasks they sit in. ``estimator`` names the method in words a reviewer
    can check ("PPI++ ratio, λ = 0.62, stratified by run", "Korn–Graubard (n_eff 212.4 …)",
    "Clopper–Pearson"). ``human_only`` and ``judge_only`` are shown beside a PPI value, on the
    same valid basis as the gated interval. ``estimand`` says what the value estimates (the
    frozen task set's outputs, or future tasks like them) and whether a finite-population
    correction was applied, for the decision page.
    """

    metric_id: str
    point: float | None
    lo: float | None
    hi: float | None
    confidence: float
    n: int
    n_clusters: int
    mode: GradingMode
    estimator: str
    kappa: float | None = None
    under_sampled: bool = False
    planned_n: int | None = None
    human_only: Interval | None = None
    judge_only: Interval | None = None
    reason: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    estimand: str = ""

    @property
    def has_value(self) -> bool:
        return self.point is not None and self.lo is not None and self.hi is not None
