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

from charters.catalogue import (
    AC1_RULE,
    AGREEMENT_RULES,
    BIAS_BOUND_RULE,
    KAPPA_RULE,
    AgreementCriterion,
    catalogue,
)
from enterpriseval.stats import (
    LabelErrorBound,
    cluster_mean_ci,
    cohens_kappa,
    krippendorff_alpha,
    label_error_bound,
)
from grading.rubric import FIELDS_BY_NAME, SCALED_FIELDS, criterion_scores

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

#: Prevalence (share of positive ratings, or of negative ones, whichever is rarer) below which
#: the pages explain the kappa paradox (SPEC §5.1).
LOW_PREVALENCE = 0.10


def metric_criteria(metric_id: str) -> tuple[AgreementCriterion, ...]:
    """Return the criteria the metric uses, from the catalogue (empty if none)."""
    metric = catalogue().get(metric_id)
    return metric.criteria if metric is not None else ()


#: The rubric fields each human-graded catalogue metric (SPEC §4) reads, derived from the
#: catalogue's criteria (``charters/catalogue.yaml``: adding a metric touches one place).
METRIC_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        metric.id: tuple(dict.fromkeys(c.field for c in metric.criteria))
        for metric in catalogue().values()
        if metric.criteria
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


def binary_cluster_bootstrap(
    codes: Codes,
    clusters: NDArray[np.intp],
    statistic: str,
    *,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[NDArray[np.float64], int]:
    """:func:`cluster_bootstrap` of κ or nominal α on 0/1 codes, for all resamples at once.

    The same artefact draws as :func:`cluster_bootstrap` (the generator is used identically),
    but each resample's statistic comes from tables that are linear in the artefacts'
    multiplicities: per artefact, the counts of its units' rating cells, so a resample's
    tables are one matrix product (resamples × artefacts) @ (artefacts × cells), and κ or α
    follows in closed form, with the same undefined cases as
    :func:`enterpriseval.stats.cohens_kappa` and :func:`enterpriseval.stats.krippendorff_alpha`.
    """
    n_clusters = int(clusters.max()) + 1
    draws = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
    offsets = np.arange(n_resamples, dtype=np.intp)[:, np.newaxis] * n_clusters
    drawn = np.bincount((draws + offsets).ravel(), minlength=n_resamples * n_clusters)
    multiplicity = drawn.reshape(n_resamples, n_clusters).astype(np.float64)  # (B, G)
    rated = ~np.isnan(codes)
    ones = np.where(rated, codes, 0.0).sum(axis=1)  # n_u1
    zeros = rated.sum(axis=1) - ones  # n_u0
    if statistic == COHEN_KAPPA:
        # Cohen (1960), nominal: the 2 × 2 table of (rater A, rater B) per resample.
        cell = (codes[:, 0] * 2 + codes[:, 1]).astype(np.intp)
        per_unit = np.zeros((len(codes), 4))
        per_unit[np.arange(len(codes)), cell] = 1.0
        table = multiplicity @ _by_cluster(per_unit, clusters, n_clusters)  # (B, 4)
        n = table.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = (table[:, 1] + table[:, 2]) / n  # Σ w·o, disagreements
            row0, row1 = (table[:, 0] + table[:, 1]) / n, (table[:, 2] + table[:, 3]) / n
            col0, col1 = (table[:, 0] + table[:, 2]) / n, (table[:, 1] + table[:, 3]) / n
            expected = row0 * col1 + row1 * col0  # Σ w·e, e_ck = o_c. o_.k
            values = 1.0 - observed / expected
        values[(n < 2) | (expected == 0.0)] = np.nan
    else:
        # Krippendorff (2011), nominal, two values: o_01 = Σ_u n_u0 n_u1 / (m_u − 1),
        # n_c = Σ_u n_uc, α = 1 − (n − 1)·o_01 / (n_0 n_1).
        pairs = rated.sum(axis=1)
        per_unit = np.column_stack((zeros * ones / (pairs - 1.0), zeros, ones, np.ones(len(codes))))
        table = multiplicity @ _by_cluster(per_unit, clusters, n_clusters)  # (B, 4)
        mismatch, n0, n1, units = table.T
        with np.errstate(invalid="ignore", divide="ignore"):
            values = 1.0 - (n0 + n1 - 1.0) * mismatch / (n0 * n1)
        values[(units < 2) | (n0 * n1 == 0.0)] = np.nan
    finite = np.isfinite(values)
    return values[finite], int(n_resamples - finite.sum())


def _by_cluster(
    per_unit: NDArray[np.float64], clusters: NDArray[np.intp], n_clusters: int
) -> NDArray[np.float64]:
    """Sum the rows of ``per_unit`` within each cluster: (units × cells) → (clusters × cells)."""
    totals = np.zeros((n_clusters, per_unit.shape[1]))
    np.add.at(totals, clusters, per_unit)
    return totals


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
    streams = np.random.SeedSequence(seed).spawn(len(SCALED_FIELDS))
    return {
        spec.name: field_agreement(
            rating_matrix(rows, spec.name),
            confidence=confidence,
            n_resamples=n_resamples,
            rng=np.random.default_rng(stream),
        )
        for spec, stream in zip(SCALED_FIELDS, streams, strict=True)
    }


# --------------------------------------------------------------------------- criteria


def criterion_codes(matrix: RatingMatrix, criterion: AgreementCriterion) -> Codes:
    """Return the field's ratings collapsed to the criterion: 1 positive, 0 not, NaN missing."""
    if matrix.field != criterion.field:
        raise ValueError(f"criterion: {criterion.name} reads {criterion.field}, not {matrix.field}")
    positive = np.asarray([value in criterion.positive for value in matrix.scale], dtype=bool)
    codes = np.full(matrix.codes.shape, np.nan)
    rated = ~np.isnan(matrix.codes)
    codes[rated] = positive[matrix.codes[rated].astype(np.intp)].astype(np.float64)
    return codes


@dataclass(frozen=True)
class BinaryProfile:
    """What a binary agreement figure hides: prevalence, positive/negative agreement, AC1."""

    prevalence: float  # share of positive ratings, 0–1
    positive_agreement: float  # PA, 0–1
    negative_agreement: float  # NA, 0–1
    ac1: float  # Gwet's AC1
    percent_agreement: float  # 0–100


def binary_profile(codes: Codes) -> BinaryProfile:
    """Return prevalence, positive and negative agreement and Gwet's AC1 of 0/1 ratings.

    Parameters
    ----------
    codes : ndarray
        Units × raters of 0/1, NaN where a rater did not rate the unit. Units with fewer
        than two ratings are ignored.

    Notes
    -----
    With r_u ratings on unit u of which r_u⁺ are positive (Uebersax 1982; Cicchetti and
    Feinstein 1990 for two raters, where PA = 2a/(2a + b + c))::

        PA = Σ r_u⁺(r_u⁺ − 1) / Σ r_u⁺(r_u − 1)
        NA = Σ r_u⁻(r_u⁻ − 1) / Σ r_u⁻(r_u − 1)

    Gwet's AC1 (Gwet 2008, Eq. 17 for q = 2 categories, with missing ratings)::

        p_a = mean_u Σ_k r_uk(r_uk − 1) / (r_u(r_u − 1))
        π_k = mean_u r_uk / r_u,   p_e = Σ_k π_k(1 − π_k) / (q − 1)
        AC1 = (p_a − p_e) / (1 − p_e)

    Prevalence is Σ r_u⁺ / Σ r_u. Undefined values (no pairable unit; PA with no positive
    rating) are NaN.
    """
    rated = ~np.isnan(codes)
    per_unit = rated.sum(axis=1)
    keep = per_unit >= 2
    nan = math.nan
    if not keep.any():
        return BinaryProfile(nan, nan, nan, nan, nan)
    r = per_unit[keep].astype(np.float64)
    pos = np.nansum(codes[keep], axis=1)
    neg = r - pos
    pa_den = float(np.sum(pos * (r - 1)))
    na_den = float(np.sum(neg * (r - 1)))
    positive_agreement = float(np.sum(pos * (pos - 1)) / pa_den) if pa_den else nan
    negative_agreement = float(np.sum(neg * (neg - 1)) / na_den) if na_den else nan
    observed = (pos * (pos - 1) + neg * (neg - 1)) / (r * (r - 1))
    p_a = float(observed.mean())  # Gwet 2008: p_a
    pi_pos = float(np.mean(pos / r))  # Gwet 2008: π_k, k = positive
    p_e = 2.0 * pi_pos * (1.0 - pi_pos)  # Σ_k π_k(1 − π_k)/(q − 1) with q = 2
    ac1 = (p_a - p_e) / (1.0 - p_e) if p_e < 1.0 else nan
    return BinaryProfile(
        prevalence=float(pos.sum() / r.sum()),
        positive_agreement=positive_agreement,
        negative_agreement=negative_agreement,
        ac1=float(ac1),
        percent_agreement=100.0 * p_a,
    )


@dataclass(frozen=True)
class CriterionAgreement:
    """Agreement on one criterion of one metric (κ or α on the collapsed 0/1 ratings)."""

    metric_id: str
    criterion: AgreementCriterion
    statistic: str
    point: float
    lo: float
    hi: float
    confidence: float
    n_units: int
    n_artefacts: int
    profile: BinaryProfile
    n_resamples: int
    n_degenerate: int

    @property
    def symbol(self) -> str:
        return "κ" if self.statistic == COHEN_KAPPA else "α"

    @property
    def label(self) -> str:
        return "Cohen's κ" if self.statistic == COHEN_KAPPA else "Krippendorff's α (nominal)"

    @property
    def defined(self) -> bool:
        return math.isfinite(self.point)

    @property
    def has_interval(self) -> bool:
        return math.isfinite(self.lo) and math.isfinite(self.hi)

    @property
    def prevalence_percent(self) -> float:
        return 100.0 * self.profile.prevalence

    @property
    def low_prevalence(self) -> bool:
        """Whether the rarer category is below :data:`LOW_PREVALENCE` (the kappa paradox)."""
        prevalence = self.profile.prevalence
        return math.isfinite(prevalence) and min(prevalence, 1 - prevalence) < LOW_PREVALENCE


def criterion_agreement(
    matrix: RatingMatrix,
    criterion: AgreementCriterion,
    *,
    metric_id: str,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | int = 0,
) -> CriterionAgreement:
    """Return κ (two complete raters) or nominal α on the criterion, with its profile.

    The interval is the artefact bootstrap of :func:`field_agreement`, on the collapsed
    ratings.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    binary = criterion_codes(matrix, criterion)
    pairable = np.count_nonzero(~np.isnan(binary), axis=1) >= 2
    codes = binary[pairable]
    _, clusters = np.unique(matrix.clusters[pairable], return_inverse=True)
    clusters = clusters.astype(np.intp)
    n_artefacts = int(clusters.max()) + 1 if len(clusters) else 0
    complete = codes.shape[1] == 2 and bool(np.all(~np.isnan(codes)))
    statistic = COHEN_KAPPA if complete else KRIPPENDORFF_ALPHA
    compute, _weights = _statistic(statistic, "nominal", 2)
    point = compute(codes) if len(codes) else math.nan
    lo = hi = math.nan
    resampled = degenerate = 0
    if math.isfinite(point) and n_artefacts >= 2:
        values, degenerate = binary_cluster_bootstrap(
            codes, clusters, statistic, n_resamples=n_resamples, rng=generator
        )
        resampled = len(values)
        if resampled:
            tail = (1.0 - confidence) / 2.0
            lo, hi = (float(q) for q in np.quantile(values, [tail, 1.0 - tail]))
    return CriterionAgreement(
        metric_id=metric_id,
        criterion=criterion,
        statistic=statistic,
        point=float(point),
        lo=lo,
        hi=hi,
        confidence=confidence,
        n_units=len(codes),
        n_artefacts=n_artefacts,
        profile=binary_profile(codes),
        n_resamples=resampled,
        n_degenerate=degenerate,
    )


def metric_agreements(
    rows: Sequence[UnitRatings],
    metric_ids: Iterable[str],
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, tuple[CriterionAgreement, ...]]:
    """Return, per metric with criteria, the agreement on each criterion it uses.

    Each (metric, criterion) gets its own generator spawned from ``seed`` in catalogue
    order, so a metric's interval does not depend on which other metrics are asked for.
    """
    wanted = set(metric_ids)
    ordered = [m for m in catalogue().values() if m.criteria]
    streams = iter(np.random.SeedSequence(seed).spawn(sum(len(m.criteria) for m in ordered)))
    matrices: dict[str, RatingMatrix] = {}
    result: dict[str, tuple[CriterionAgreement, ...]] = {}
    for metric in ordered:
        per_criterion = []
        for criterion in metric.criteria:
            stream = next(streams)
            if metric.id not in wanted:
                continue
            if criterion.field not in matrices:
                matrices[criterion.field] = rating_matrix(rows, criterion.field)
            per_criterion.append(
                criterion_agreement(
                    matrices[criterion.field],
                    criterion,
                    metric_id=metric.id,
                    confidence=confidence,
                    n_resamples=n_resamples,
                    rng=np.random.default_rng(stream),
                )
            )
        if per_criterion:
            result[metric.id] = tuple(per_criterion)
    return result


# --------------------------------------------------------------------------- the rule


@dataclass(frozen=True)
class AgreementRule:
    """The charter's pre-registered agreement rule for one metric (SPEC §5.1).

    ``kappa``: κ/α on every criterion the metric uses reaches ``threshold`` (the charter's
    κ target). ``ac1``: Gwet's AC1 on every criterion reaches ``threshold``.
    ``bias_bound``: the upper confidence limit of the final labels' bias on the metric
    (:func:`metric_bias_bound`) is below ``threshold`` = fraction · |θin − θout|, in the
    metric's points; ``fraction`` and ``gap`` = |θin − θout| say where it comes from.
    """

    rule: str
    threshold: float
    fraction: float | None = None
    gap: float | None = None

    @property
    def symbol(self) -> str:
        if self.rule == BIAS_BOUND_RULE:
            return "bias bound"
        return "AC1" if self.rule == AC1_RULE else "κ/α"

    @property
    def text(self) -> str:
        if self.rule == BIAS_BOUND_RULE:
            return (
                f"upper limit of the final labels' bias < {threshold_text(self.fraction or 0.0)}"
                f" × |θin − θout| = {threshold_text(self.threshold)} points"
            )
        what = "Gwet's AC1" if self.rule == AC1_RULE else "κ/α"
        return f"{what} ≥ {threshold_text(self.threshold)} on each criterion"


def compared_text(value: float, target: float) -> str:
    """Return ``value`` with enough digits that, read beside ``target``, it compares as it is.

    Two decimals unless rounding moves it across ``target`` (0.5986 against 0.60 would read
    "0.60", which is not below 0.60): then as many as it takes (0.599), up to 12. A value
    equal to the target prints as the target does.
    """
    if not math.isfinite(value):
        return "undefined"
    for digits in range(2, 13):
        text = f"{value:.{digits}f}"
        if (float(text) < target) == (value < target):
            return text
    return repr(value)


def below_text(value: float, target: float) -> str:
    """Return "value < target" with enough digits that the printed comparison reads true.

    "assertive α = 0.60 < 0.60" (0.5986 rounded) is never printed: it reads "0.599 < 0.60".
    """
    if not value < target:
        raise ValueError(f"value: {value!r} is not below target {target!r}")
    return f"{compared_text(value, target)} < {threshold_text(target)}"


def at_least_text(value: float, target: float) -> str:
    """Return "value ≥ target", with digits enough that it reads true (see :func:`below_text`)."""
    if not value >= target:
        raise ValueError(f"value: {value!r} is not at least target {target!r}")
    return f"{compared_text(value, target)} ≥ {threshold_text(target)}"


def threshold_text(value: float) -> str:
    """Return a threshold as text: two decimals, more only where it has them (0.625)."""
    for digits in range(2, 13):
        text = f"{value:.{digits}f}"
        if float(text) == value:
            return text
    return repr(value)


def agreement_rule(
    entry: Mapping[str, object] | None, kappa_target: float, *, gap: float | None = None
) -> AgreementRule:
    """Return the rule a charter metric entry pre-registers, or the default κ/α rule.

    A charter that states none (every charter before the field existed) reads κ/α on the
    metric's criteria against its ``kappa_target``. A bias bound needs ``gap`` = |θin − θout|
    (the charter's thresholds of the metric).
    """
    if not entry or entry.get("rule", KAPPA_RULE) == KAPPA_RULE:
        return AgreementRule(KAPPA_RULE, float(kappa_target))
    if entry.get("rule") == BIAS_BOUND_RULE:
        fraction = entry.get("fraction")
        if not isinstance(fraction, int | float) or gap is None:
            raise ValueError(
                f"entry: a bias bound needs its fraction and the metric's |θin − θout|: "
                f"{dict(entry)!r}, gap {gap!r}"
            )
        return AgreementRule(
            BIAS_BOUND_RULE, float(fraction) * abs(gap), float(fraction), abs(float(gap))
        )
    threshold = entry.get("threshold")
    if entry.get("rule") != AC1_RULE or not isinstance(threshold, int | float):
        raise ValueError(f"entry: not an agreement rule: {dict(entry)!r}")
    return AgreementRule(AC1_RULE, float(threshold))


#: What a metric's bias bound is a share of (docs/statistics.md, the bias-bound rule): the
#: rubric field whose final values count the metric's denominator units, the final values that
#: count (None: every unit of the field), and whether a wrong label can move the denominator
#: too (graded denominators: the bound doubles, |ΔR| ≤ (|Δnum| + R·|Δden|)/den).
BIAS_DENOMINATORS: Mapping[str, tuple[str, frozenset[str] | None, bool]] = MappingProxyType(
    {
        "hallucination_rate": ("assertive", None, False),
        "irrelevance_rate": ("relevant", None, False),
        "citation_precision_lenient": ("citation", None, False),
        "citation_precision_strict": ("citation", None, False),
        "citation_recall": ("supported", frozenset({"fully", "partially"}), True),
        "key_element_capture": ("key_element", None, False),
        "guidance_precision": ("guidance", frozenset({"TP", "FP"}), False),
        "guidance_recall": ("guidance", frozenset({"TP", "FN"}), True),
    }
)


@dataclass(frozen=True)
class CriterionBias:
    """The share of wrong final labels on one criterion, from the graders' error rates."""

    criterion: AgreementCriterion
    bound: LabelErrorBound
    graders: tuple[Hashable, ...]


@dataclass(frozen=True)
class MetricBias:
    """The bias bound of a metric's final labels, in the metric's points (SPEC §5.1).

    ``upper`` = 100 · k · Σ_c ε_c^U · n_c / n_D: ε_c^U the upper limit of the share of wrong
    final labels on criterion c (:func:`enterpriseval.stats.label_error_bound`, each at the
    one-sided level α/C for the C criteria), n_c its units, n_D the metric's denominator
    units in the reliability sample and k = 2 when a wrong label can move the denominator.
    ``point`` is the same at the observed rates. ``upper`` is infinite, with ``reason``,
    when it cannot be computed.
    """

    metric_id: str
    criteria: tuple[CriterionBias, ...]
    n_denominator: int
    factor: int
    point: float
    upper: float
    confidence: float  # one-sided
    reason: str = ""

    @property
    def defined(self) -> bool:
        return math.isfinite(self.upper)

    def to_dict(self) -> dict[str, object]:
        """Return the figures, JSON-ready (for the decision record)."""
        return {
            "point": _finite_or_none(self.point),
            "upper": _finite_or_none(self.upper),
            "confidence": self.confidence,
            "confidence_percent": float(f"{100.0 * self.confidence:.6g}"),
            "n_denominator": self.n_denominator,
            "factor": self.factor,
            "reason": self.reason,
            "criteria": [
                {
                    "criterion": c.criterion.name,
                    "label": c.criterion.label,
                    "n_units": c.bound.n_units,
                    "wrong_share": _finite_or_none(c.bound.share),
                    "wrong_share_upper": _finite_or_none(c.bound.upper_share),
                    "errors": round(float(c.bound.errors.sum())),
                    "max_error_rate_upper": _finite_or_none(float(c.bound.upper.max())),
                }
                for c in self.criteria
            ],
        }


def _criterion_reliability(
    rows: Iterable[UnitRatings], criterion: AgreementCriterion
) -> tuple[Codes, Codes, tuple[Hashable, ...]]:
    """Return the 0/1 ratings (units × graders) and final values of the adjudicated units."""
    graders: dict[Hashable, int] = {}
    cells: list[tuple[int, int, float]] = []
    finals: list[float] = []
    for row in rows:
        if row.field != criterion.field or row.final is None:
            continue
        rated = [(g, label) for g, label in row.ratings.items() if label is not None]
        if len(rated) < 2:
            continue
        unit = len(finals)
        finals.append(float(row.final in criterion.positive))
        cells.extend(
            (unit, graders.setdefault(g, len(graders)), float(label in criterion.positive))
            for g, label in rated
        )
    codes = np.full((len(finals), len(graders)), np.nan)
    if cells:
        table = np.asarray(cells)
        codes[table[:, 0].astype(np.intp), table[:, 1].astype(np.intp)] = table[:, 2]
    return codes, np.asarray(finals), tuple(graders)


def metric_bias_bound(
    rows: Sequence[UnitRatings], metric_id: str, *, confidence: float
) -> MetricBias:
    """Return the upper confidence limit of the bias of the metric's final labels (SPEC §5.1).

    The reliability sample is the session's double-graded units with their final values
    (agreed, or adjudicated where the graders disagreed): each grader's error rates on each
    criterion the metric uses are measured against those values. ``confidence`` is the
    one-sided level of the limit (the gate's 1 − α/2). See :class:`MetricBias` and
    docs/statistics.md for the derivation and its assumption (graders' errors independent
    given the truth).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if metric_id not in BIAS_DENOMINATORS:
        known = ", ".join(BIAS_DENOMINATORS)
        raise ValueError(f"metric_id: {metric_id!r} has no bias bound ({known})")
    criteria = metric_criteria(metric_id)
    field_name, values, graded = BIAS_DENOMINATORS[metric_id]
    factor = 2 if graded else 1
    n_denominator = sum(
        1
        for row in rows
        if row.field == field_name
        and row.final is not None
        and (values is None or row.final in values)
    )
    alpha = (1.0 - confidence) / len(criteria)  # Bonferroni over the criteria
    found: list[CriterionBias] = []
    point = upper = 0.0
    reason = ""
    for criterion in criteria:
        codes, finals, graders = _criterion_reliability(rows, criterion)
        try:
            bound = label_error_bound(codes, finals, alpha=alpha)
        except ValueError:
            reason = f"{criterion.name}: no unit with two ratings and a final value"
            continue
        found.append(CriterionBias(criterion, bound, graders))
        point += bound.share * bound.n_units
        upper += bound.upper_share * bound.n_units
    if not reason and n_denominator == 0:
        reason = f"no {field_name} unit in the metric's denominator has a final value"
    if reason:
        nowhere = math.inf
        return MetricBias(
            metric_id, tuple(found), n_denominator, factor, nowhere, nowhere, confidence, reason
        )
    scale = 100.0 * factor / n_denominator  # in the metric's points
    return MetricBias(
        metric_id,
        tuple(found),
        n_denominator,
        factor,
        point * scale,
        upper * scale,
        confidence,
    )


def criterion_figure(agreement: CriterionAgreement, rule: AgreementRule) -> float:
    """Return the figure the rule compares: AC1 or κ/α on the criterion."""
    return agreement.profile.ac1 if rule.rule == AC1_RULE else agreement.point


@dataclass(frozen=True)
class Eligibility:
    """Whether a human-graded metric may enter the gate under its rule, and why."""

    metric_id: str
    rule: AgreementRule
    agreements: tuple[CriterionAgreement, ...]
    eligible: bool
    blocking: tuple[str, ...]  # criteria that fail the rule
    reasons: tuple[str, ...]
    bias: MetricBias | None = None

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.criterion.field for a in self.agreements))

    @property
    def reason(self) -> str:
        if self.eligible:
            return "; ".join(self.reasons)
        return "rubric needs revision: " + "; ".join(self.reasons)

    def to_dict(self) -> dict[str, object]:
        """Return the verdict and its figures, JSON-ready (for the decision record)."""
        return {
            "rule": self.rule.rule,
            "threshold": self.rule.threshold,
            **(
                {"fraction": self.rule.fraction, "gap": self.rule.gap}
                if self.rule.rule == BIAS_BOUND_RULE
                else {}
            ),
            **({"bias": self.bias.to_dict()} if self.bias is not None else {}),
            "eligible": self.eligible,
            "reason": self.reason,
            "criteria": [
                {
                    "criterion": a.criterion.name,
                    "label": a.criterion.label,
                    "statistic": a.symbol,
                    "value": _finite_or_none(a.point),
                    "lo": _finite_or_none(a.lo),
                    "hi": _finite_or_none(a.hi),
                    "n_units": a.n_units,
                    "prevalence": _finite_or_none(a.profile.prevalence),
                    "positive_agreement": _finite_or_none(a.profile.positive_agreement),
                    "negative_agreement": _finite_or_none(a.profile.negative_agreement),
                    "ac1": _finite_or_none(a.profile.ac1),
                    "low_prevalence": a.low_prevalence,
                }
                for a in self.agreements
            ],
        }


def _finite_or_none(value: float) -> float | None:
    return round(value, 6) if math.isfinite(value) else None


def metric_eligibility(
    metric_id: str,
    agreements: Sequence[CriterionAgreement],
    rule: AgreementRule,
    *,
    bias: MetricBias | None = None,
) -> Eligibility:
    """Return whether the metric's criteria meet its agreement rule (SPEC §5.1).

    The point figure decides (the interval is shown beside it). A criterion with an
    undefined figure fails, as does a metric with no criterion measured: no figure means
    not eligible, never eligible by default. Under the bias-bound rule the upper confidence
    limit of ``bias`` decides (the κ/α figures are still shown); no bias figure is not
    eligible.
    """
    if rule.rule not in AGREEMENT_RULES:
        raise ValueError(f"rule: expected one of {', '.join(AGREEMENT_RULES)}, got {rule.rule!r}")
    if rule.rule == BIAS_BOUND_RULE:
        return _bias_eligibility(metric_id, agreements, rule, bias)
    blocking: list[str] = []
    reasons: list[str] = []
    if not agreements:
        return Eligibility(
            metric_id,
            rule,
            (),
            False,
            ("(no criterion)",),
            ("no agreement figure: no unit was rated by two graders on its criteria",),
        )
    for agreement in agreements:
        name = agreement.criterion.name
        figure = criterion_figure(agreement, rule)
        symbol = "AC1" if rule.rule == AC1_RULE else agreement.symbol
        if not math.isfinite(figure):
            blocking.append(name)
            reasons.append(
                f"{name} {symbol} undefined ({agreement.n_units} units with two ratings)"
            )
        elif figure < rule.threshold:
            blocking.append(name)
            reasons.append(f"{name} {symbol} = {below_text(figure, rule.threshold)}")
        else:
            reasons.append(f"{name} {symbol} = {at_least_text(figure, rule.threshold)}")
    return Eligibility(
        metric_id, rule, tuple(agreements), not blocking, tuple(blocking), tuple(reasons)
    )


def _bias_eligibility(
    metric_id: str,
    agreements: Sequence[CriterionAgreement],
    rule: AgreementRule,
    bias: MetricBias | None,
) -> Eligibility:
    eligible = bias is not None and bias.defined and bias.upper < rule.threshold
    if bias is None or not bias.defined:
        reason = f"no bias bound: {bias.reason if bias is not None else 'not computed'}"
    else:
        level = f"{100.0 * bias.confidence:g} % upper limit"
        limit = f"{threshold_text(rule.fraction or 0.0)} × |θin − θout| = "
        limit += threshold_text(rule.threshold)
        if eligible:
            shown = below_text(bias.upper, rule.threshold)
            reason = f"bias of the final labels ≤ {shown} points ({level}; limit {limit})"
        else:
            shown = compared_text(bias.upper, rule.threshold)
            reason = f"bias of the final labels ≤ {shown} points, not below {limit} ({level})"
    blocking = () if eligible else ("(bias bound)",)
    return Eligibility(metric_id, rule, tuple(agreements), eligible, blocking, (reason,), bias)


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
