"""Inter-rater agreement per rubric field, metric gate eligibility and judge calibration.

Pure: no Django import (numpy, :mod:`enterpriseval.stats` and :mod:`grading.rubric` only).

A *unit* here is one ``(artefact, unit_key)`` pair and its *raters* are the session's
graders. For each rubric field the ratings form a units × raters matrix with missing cells
(a grader not assigned to the artefact, or not asked the field); :func:`rating_matrix`
builds it once, as integer positions on the field's scale, and every statistic reads it.

Which statistic (SPEC §5.1): **Cohen's κ** when exactly two graders rated the field and
every unit carries both their ratings; otherwise (a third grader, rotating pairs, or a
missing rating such as ``supported`` after one grader said "not assertive")
**Krippendorff's α** at the field's level of measurement. Both respect that level: κ is
unweighted on nominal fields and quadratic-weighted on ordinal ones (Cohen 1968), ordinal α
ranks the values in :data:`ORDINAL_ORDER`.

The bootstrap resamples *artefacts* with replacement (the artefact is the sampling unit,
SPEC §5.2) and keeps every unit of a drawn artefact; the interval is the percentile
interval at the charter's confidence. A resample on which the statistic is undefined (one
category only, fewer than two pairable units) is dropped and counted, never imputed.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from enterpriseval.stats import cluster_mean_ci, cohens_kappa, krippendorff_alpha
from grading.rubric import FIELDS, FIELDS_BY_NAME, criterion_scores

COHEN_KAPPA = "cohen_kappa"
KRIPPENDORFF_ALPHA = "krippendorff_alpha"
DEFAULT_RESAMPLES = 1000

#: Ordinal fields' values from lowest to highest ("partially" sits between "not" and
#: "fully"); nominal fields keep the rubric's order, which carries no meaning.
ORDINAL_ORDER: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "supported": ("not", "partially", "fully"),
        "citation": ("not", "lenient", "strict"),
        "severity": ("low", "medium", "high"),
        "value_add": ("0", "1", "2"),
    }
)

#: The rubric fields each human-graded catalogue metric (SPEC §4) is computed from: a
#: metric enters the gate only if every one of them reaches the κ target (SPEC §5.1).
#: ``value_add`` and ``severity`` feed no gated metric (value-add is informational).
METRIC_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "hallucination_rate": ("assertive", "supported"),
        "irrelevance_rate": ("relevant",),
        "citation_precision_lenient": ("citation",),
        "citation_precision_strict": ("citation",),
        "citation_recall": ("assertive", "supported", "citation"),
        "key_element_capture": ("key_element",),
        "guidance_precision": ("guidance",),
        "guidance_recall": ("guidance",),
    }
)

#: The judge's stored criteria (``runs.judges.rubric.CRITERIA``) that a human label maps to
#: through :func:`grading.rubric.criterion_scores`.
JUDGE_CRITERIA: tuple[str, ...] = (
    "assertive",
    "supported",
    "relevant",
    "citation_strict",
    "citation_lenient",
    "key_element_captured",
    "flagged",
)

Codes = NDArray[np.float64]
Statistic = Callable[[Codes], float]


def field_scale(field_name: str) -> tuple[str, ...]:
    """Return the field's values in scale order (lowest first for ordinal fields)."""
    spec = FIELDS_BY_NAME.get(field_name)
    if spec is None:
        raise ValueError(
            f"field: {field_name!r} is not a rubric field ({', '.join(FIELDS_BY_NAME)})"
        )
    return ORDINAL_ORDER.get(field_name, spec.values) if spec.level == "ordinal" else spec.values


@dataclass(frozen=True, slots=True)
class UnitRatings:
    """Every grader's label on one field of one unit, and the unit's final value.

    ``ratings`` maps a grader to their label (``None``: the grader was not asked); graders
    not assigned to the artefact are simply absent. ``final`` is the agreed or adjudicated
    value, ``None`` while a disagreement awaits its adjudicator.
    """

    artefact: int
    unit_key: str
    field: str
    ratings: Mapping[Hashable, str | None]
    final: str | None = None


@dataclass(frozen=True)
class RatingMatrix:
    """One field's ratings as positions on its scale: units × raters, NaN where missing."""

    field: str
    scale: tuple[str, ...]
    raters: tuple[Hashable, ...]
    codes: Codes  # shape (n_units, n_raters)
    clusters: NDArray[np.intp]  # artefact index of each unit, 0..n_artefacts − 1
    artefacts: tuple[int, ...]

    @property
    def ratings_per_unit(self) -> NDArray[np.intp]:
        counts: NDArray[np.intp] = np.count_nonzero(~np.isnan(self.codes), axis=1)
        return counts


def rating_matrix(rows: Iterable[UnitRatings], field_name: str) -> RatingMatrix:
    """Return the units × raters matrix of ``field_name`` from the rows of that field.

    Units without any rating are left out. Raters and artefacts are numbered in order of
    first appearance; the matrix is filled with one fancy-indexed assignment.
    """
    scale = field_scale(field_name)
    position = {value: float(i) for i, value in enumerate(scale)}
    raters: dict[Hashable, int] = {}
    artefacts: dict[int, int] = {}
    unit_index: list[int] = []
    rater_index: list[int] = []
    codes: list[float] = []
    clusters: list[int] = []
    for row in rows:
        if row.field != field_name:
            continue
        rated = [(rater, label) for rater, label in row.ratings.items() if label is not None]
        if not rated:
            continue
        unit = len(clusters)
        clusters.append(artefacts.setdefault(row.artefact, len(artefacts)))
        for rater, label in rated:
            if label not in position:
                raise ValueError(
                    f"rows: {field_name} of unit {row.unit_key} is {label!r}, not one of "
                    f"{', '.join(scale)}"
                )
            unit_index.append(unit)
            rater_index.append(raters.setdefault(rater, len(raters)))
            codes.append(position[label])
    matrix = np.full((len(clusters), len(raters)), np.nan)
    matrix[np.asarray(unit_index, dtype=np.intp), np.asarray(rater_index, dtype=np.intp)] = codes
    return RatingMatrix(
        field=field_name,
        scale=scale,
        raters=tuple(raters),
        codes=matrix,
        clusters=np.asarray(clusters, dtype=np.intp),
        artefacts=tuple(artefacts),
    )


def agreement_statistic(matrix: RatingMatrix) -> str:
    """Return which statistic fits: Cohen's κ or Krippendorff's α (see the module notes)."""
    complete_pairs = matrix.codes.shape[1] == 2 and bool(np.all(matrix.ratings_per_unit == 2))
    return COHEN_KAPPA if complete_pairs else KRIPPENDORFF_ALPHA


@dataclass(frozen=True)
class FieldAgreement:
    """The agreement of one rubric field, with its artefact-bootstrap interval."""

    field: str
    level: str
    statistic: str
    weights: str | None
    point: float
    lo: float
    hi: float
    confidence: float
    n_units: int  # units with at least two ratings
    n_artefacts: int
    n_raters: int
    percent_agreement: float  # 0–100
    n_resamples: int  # resamples with a defined statistic
    n_degenerate: int  # resamples dropped because the statistic was undefined

    @property
    def symbol(self) -> str:
        return "κ" if self.statistic == COHEN_KAPPA else "α"

    @property
    def label(self) -> str:
        if self.statistic == COHEN_KAPPA:
            return "Cohen's κ" + (" (quadratic weights)" if self.weights else "")
        return f"Krippendorff's α ({self.level})"

    @property
    def defined(self) -> bool:
        return math.isfinite(self.point)

    @property
    def has_interval(self) -> bool:
        return math.isfinite(self.lo) and math.isfinite(self.hi)

    def passes(self, target: float) -> bool:
        """Return whether the point estimate reaches ``target`` (undefined never does)."""
        return self.defined and self.point >= target


def _statistic(statistic: str, level: str, n_values: int) -> tuple[Statistic, str | None]:
    domain = np.arange(n_values, dtype=np.float64)
    ordinal = level == "ordinal"
    if statistic == COHEN_KAPPA:
        weights: Literal["quadratic"] | None = "quadratic" if ordinal else None

        def kappa(codes: Codes) -> float:
            # Cohen (1960); quadratic weights on ordinal fields (Cohen 1968)
            return cohens_kappa(codes[:, 0], codes[:, 1], weights=weights, categories=domain)

        return kappa, weights

    def alpha(codes: Codes) -> float:
        # Krippendorff (2011): raters × units, NaN missing
        return krippendorff_alpha(
            codes.T, level="ordinal" if ordinal else "nominal", value_domain=domain
        )

    return alpha, None


def percent_agreement(codes: Codes) -> float:
    """Return the mean share of agreeing rater pairs over units with ≥ 2 ratings, in %.

    For two raters this is the share of units on which they gave the same label. NaN when
    no unit has two ratings.
    """
    rated = ~np.isnan(codes)
    per_unit = rated.sum(axis=1)
    keep = per_unit >= 2
    if not keep.any():
        return math.nan
    sub = codes[keep]
    n_values = int(np.nanmax(sub)) + 1
    unit_of = np.nonzero(~np.isnan(sub))[0]
    value_of = sub[~np.isnan(sub)].astype(np.intp)
    counts = np.bincount(unit_of * n_values + value_of, minlength=len(sub) * n_values)
    counts = counts.reshape(len(sub), n_values)  # n_uc
    m = per_unit[keep]
    agreeing = (counts * (counts - 1)).sum(axis=1)  # ordered pairs with the same label
    return float(100.0 * np.mean(agreeing / (m * (m - 1))))


def cluster_bootstrap(
    codes: Codes,
    clusters: NDArray[np.intp],
    statistic: Statistic,
    *,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[NDArray[np.float64], int]:
    """Return the defined values of the statistic on artefact resamples, and how many were not.

    Each resample draws G artefacts with replacement and keeps every unit of each draw
    (a unit of an artefact drawn twice appears twice). The draws and the per-unit
    multiplicities are computed for all resamples at once.
    """
    n_clusters = int(clusters.max()) + 1
    draws = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
    offsets = np.arange(n_resamples, dtype=np.intp)[:, np.newaxis] * n_clusters
    drawn = np.bincount((draws + offsets).ravel(), minlength=n_resamples * n_clusters)
    multiplicity = drawn.reshape(n_resamples, n_clusters)[:, clusters]  # (B, n_units)
    units = np.arange(len(clusters))
    values = np.fromiter(
        (statistic(codes[np.repeat(units, times)]) for times in multiplicity),
        dtype=np.float64,
        count=n_resamples,
    )
    finite = np.isfinite(values)
    return values[finite], int(n_resamples - finite.sum())


def field_agreement(
    matrix: RatingMatrix,
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | int = 0,
) -> FieldAgreement:
    """Return the field's agreement (κ or α), percent agreement and bootstrap interval.

    Parameters
    ----------
    matrix : RatingMatrix
        From :func:`rating_matrix`.
    confidence : float
        Two-sided confidence of the percentile interval, in (0, 1).
    n_resamples : int
        Bootstrap resamples B (of artefacts).
    rng : numpy.random.Generator or int
        The generator, or a seed for one; the same seed gives the same interval.

    Notes
    -----
    Only units with at least two ratings enter the statistic (α ignores the others by
    construction) and the bootstrap. With fewer than two such artefacts, or an undefined
    point estimate, there is no interval (NaN). The percentile interval is
    ``quantile(θ*, (1 − c)/2)`` to ``quantile(θ*, (1 + c)/2)`` over the defined resamples
    θ* (Efron and Tibshirani 1993, §13.3), with numpy's linear quantile.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be ≥ 1, got {n_resamples!r}")
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    level = FIELDS_BY_NAME[matrix.field].level
    statistic = agreement_statistic(matrix)
    compute, weights = _statistic(statistic, level, len(matrix.scale))
    pairable = matrix.ratings_per_unit >= 2
    codes = matrix.codes[pairable]
    _, clusters = np.unique(matrix.clusters[pairable], return_inverse=True)
    clusters = clusters.astype(np.intp)
    n_artefacts = int(clusters.max()) + 1 if len(clusters) else 0
    point = compute(codes) if len(codes) else math.nan
    lo = hi = math.nan
    resampled = degenerate = 0
    if math.isfinite(point) and n_artefacts >= 2:
        values, degenerate = cluster_bootstrap(
            codes, clusters, compute, n_resamples=n_resamples, rng=generator
        )
        resampled = len(values)
        if resampled:
            tail = (1.0 - confidence) / 2.0
            lo, hi = (float(q) for q in np.quantile(values, [tail, 1.0 - tail]))
    return FieldAgreement(
        field=matrix.field,
        level=level,
        statistic=statistic,
        weights=weights,
        point=float(point),
        lo=lo,
        hi=hi,
        confidence=confidence,
        n_units=len(codes),
        n_artefacts=n_artefacts,
        n_raters=int(np.count_nonzero((~np.isnan(codes)).any(axis=0))) if len(codes) else 0,
        percent_agreement=percent_agreement(codes),
        n_resamples=resampled,
        n_degenerate=degenerate,
    )


def session_agreement(
    rows: Sequence[UnitRatings],
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, FieldAgreement]:
    """Return the agreement of every rubric field, in rubric order.

    Each field gets its own generator spawned from ``seed`` in rubric order, so one
    field's interval does not depend on how many units another field has.
    """
    streams = np.random.SeedSequence(seed).spawn(len(FIELDS))
    return {
        spec.name: field_agreement(
            rating_matrix(rows, spec.name),
            confidence=confidence,
            n_resamples=n_resamples,
            rng=np.random.default_rng(stream),
        )
        for spec, stream in zip(FIELDS, streams, strict=True)
    }


@dataclass(frozen=True)
class Eligibility:
    """Whether a human-graded metric may enter the gate, and which fields block it."""

    metric_id: str
    fields: tuple[str, ...]
    eligible: bool
    blocking_fields: tuple[str, ...]
    reasons: tuple[str, ...]

    @property
    def reason(self) -> str:
        if self.eligible:
            return "every field reaches the κ target"
        return "rubric needs revision: " + "; ".join(self.reasons)


def metric_eligibility(
    agreements: Mapping[str, FieldAgreement],
    kappa_target: float,
    metric_ids: Iterable[str] | None = None,
) -> dict[str, Eligibility]:
    """Return, per metric, whether every rubric field it depends on reaches ``kappa_target``.

    SPEC §5.1: a human-graded metric enters the gate only if its fields reach the κ target;
    otherwise the rubric, not the system, needs revision. The point estimate decides (the
    interval is shown beside it). A field with undefined agreement blocks. ``metric_ids``
    defaults to every metric of :data:`METRIC_FIELDS`; ids not in it are skipped.
    """
    ids = list(METRIC_FIELDS if metric_ids is None else metric_ids)
    result: dict[str, Eligibility] = {}
    for metric_id in ids:
        fields = METRIC_FIELDS.get(metric_id)
        if fields is None:
            continue
        blocking: list[str] = []
        reasons: list[str] = []
        for name in fields:
            agreement = agreements.get(name)
            if agreement is None or not agreement.defined:
                blocking.append(name)
                units = agreement.n_units if agreement is not None else 0
                reasons.append(f"{name} agreement undefined ({units} units with two ratings)")
            elif not agreement.passes(kappa_target):
                blocking.append(name)
                reasons.append(
                    f"{name} {agreement.symbol} = {agreement.point:.2f} < {kappa_target:.2f}"
                )
        result[metric_id] = Eligibility(
            metric_id, fields, not blocking, tuple(blocking), tuple(reasons)
        )
    return result


@dataclass
class GraderFieldStats:
    """One grader's labels on one field and how often they match the final value."""

    field: str
    label_counts: dict[str, int] = dataclasses.field(default_factory=dict)
    n_with_final: int = 0
    n_agree_final: int = 0

    @property
    def n_ratings(self) -> int:
        return sum(self.label_counts.values())

    def rate(self, label: str) -> float:
        """Return the share of this grader's ratings that are ``label`` (NaN if none)."""
        total = self.n_ratings
        return self.label_counts.get(label, 0) / total if total else math.nan

    @property
    def label_rates(self) -> dict[str, float]:
        return {label: self.rate(label) for label in field_scale(self.field)}

    @property
    def agreement_with_final(self) -> float:
        return self.n_agree_final / self.n_with_final if self.n_with_final else math.nan


def grader_statistics(
    rows: Iterable[UnitRatings],
) -> dict[Hashable, dict[str, GraderFieldStats]]:
    """Return, per grader and field, label counts and agreement with the final value.

    Agreement with the final value counts units the grader rated whose final value is
    known (agreed, or adjudicated); units still awaiting adjudication are left out, so
    before adjudication the share is computed on agreed units only and overstates it.
    """
    stats: dict[Hashable, dict[str, GraderFieldStats]] = defaultdict(dict)
    for row in rows:
        for rater, label in row.ratings.items():
            if label is None:
                continue
            entry = stats[rater].setdefault(row.field, GraderFieldStats(row.field))
            entry.label_counts[label] = entry.label_counts.get(label, 0) + 1
            if row.final is not None:
                entry.n_with_final += 1
                entry.n_agree_final += int(label == row.final)
    return dict(stats)


CriterionKey = tuple[int, str, str]  # (artefact, unit_key, criterion)


def human_criterion_scores(rows: Iterable[UnitRatings]) -> dict[CriterionKey, float]:
    """Return the judge criteria the final human labels imply, per (artefact, unit, criterion)."""
    scores: dict[CriterionKey, float] = {}
    for row in rows:
        if row.final is None:
            continue
        for criterion, score in criterion_scores(row.field, row.final).items():
            if criterion in JUDGE_CRITERIA:
                scores[(row.artefact, row.unit_key, criterion)] = score
    return scores


@dataclass(frozen=True)
class CalibrationRow:
    """Judge against human on one criterion: κ, agreement and bias = mean(f − h) with its CI."""

    criterion: str
    n_units: int
    n_artefacts: int
    kappa: float
    percent_agreement: float  # 0–100
    judge_rate: float  # mean f
    human_rate: float  # mean h
    bias: float  # mean(f − h)
    bias_lo: float
    bias_hi: float
    confidence: float

    @property
    def kappa_defined(self) -> bool:
        return math.isfinite(self.kappa)

    @property
    def has_interval(self) -> bool:
        return math.isfinite(self.bias_lo) and math.isfinite(self.bias_hi)


def judge_calibration(
    judge: Mapping[CriterionKey, float],
    human: Mapping[CriterionKey, float],
    *,
    confidence: float = 0.95,
) -> list[CalibrationRow]:
    """Return one row per judge criterion on the units both the judge and humans scored.

    SPEC §5.2: calibration is κ between judge f and human h on the labeled set, and the
    bias mean(f − h). κ uses the categories [0, 1]; the bias interval is cluster-robust by
    artefact (:func:`enterpriseval.stats.cluster_mean_ci`, CR1 with a t quantile), NaN
    with fewer than two artefacts.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    paired: dict[str, list[tuple[int, float, float]]] = defaultdict(list)
    for key in sorted(human.keys() & judge.keys(), key=lambda k: (k[0], k[1], k[2])):
        artefact, _unit_key, criterion = key
        paired[criterion].append((artefact, judge[key], human[key]))
    rows: list[CalibrationRow] = []
    for criterion in JUDGE_CRITERIA:
        triples = paired.get(criterion, [])
        if not triples:
            rows.append(_empty_calibration(criterion, confidence))
            continue
        table = np.asarray(triples, dtype=np.float64)
        clusters, f, h = table[:, 0].astype(np.intp), table[:, 1], table[:, 2]
        difference = f - h  # SPEC §5.2: bias = mean(f − h)
        n_artefacts = len(np.unique(clusters))
        lo = hi = math.nan
        if n_artefacts >= 2:
            estimate = cluster_mean_ci(difference, clusters, alpha=1.0 - confidence)
            lo, hi = estimate.lo, estimate.hi
        rows.append(
            CalibrationRow(
                criterion=criterion,
                n_units=len(f),
                n_artefacts=n_artefacts,
                kappa=cohens_kappa(f, h, categories=[0.0, 1.0]),
                percent_agreement=float(100.0 * np.mean(f == h)),
                judge_rate=float(f.mean()),
                human_rate=float(h.mean()),
                bias=float(difference.mean()),
                bias_lo=lo,
                bias_hi=hi,
                confidence=confidence,
            )
        )
    return rows


def _empty_calibration(criterion: str, confidence: float) -> CalibrationRow:
    nan = math.nan
    return CalibrationRow(criterion, 0, 0, nan, nan, nan, nan, nan, nan, nan, confidence)
