"""Estimators of the unit-level, human/judge-graded metrics (SPEC §4, §5.2, §5.3).

Pure: no Django import. The metrics here are shares of units (sentences, cited chunks, key
elements, guidance items) that sit in outputs. Graders grade whole outputs, so the sampling
unit is the output (SPEC §5.2): every estimator works on per-output totals,

- a numerator (e.g. hallucinated sentences in output i), judge ``f_num`` for every output and
  human ``h_num`` for the human-graded ones;
- a denominator, either *known* for every output without grading (``d``: sentences, cited
  chunks, key elements) or *graded* (``f_den``/``h_den``: assertive supported sentences,
  flagged or truly breached guidance items).

Three estimators are computed from them: human-only (a cluster-robust ratio over the
human-graded outputs), judge-only (the same over the judge's values on all outputs,
informational) and PPI++ (the judge on every output corrected by the human sample).
:func:`estimate_unit_metric` chooses the gated one by the rule of SPEC §5.2 and returns a
:class:`metrics.estimate.MetricEstimate` in percent.

The ``*_counts`` helpers turn unit-level 0/1 criterion scores (``runs.judges.rubric``; human
labels map onto them through ``grading.rubric.criterion_scores``) into those per-output
totals, and define each metric from its units.

References
----------
.. [1] A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan and T. Zrnic,
   "Prediction-powered inference", Science 382 (2023) 669-674.
.. [2] A. N. Angelopoulos, J. C. Duchi and T. Zrnic, "PPI++: Efficient prediction-powered
   inference", arXiv:2311.01453 (2023).
.. [3] A. Fisch, J. Maynez, R. A. Hofer, B. Dhingra, A. Globerson and W. W. Cohen,
   "Stratified prediction-powered inference for hybrid language model evaluation",
   NeurIPS 2024 (arXiv:2406.04291).
.. [4] W. G. Cochran, *Sampling Techniques*, 3rd ed., Wiley (1977): §5.3 (variance of a
   stratified mean), §6.3 (variance of a ratio estimate), §6.11 (the combined ratio estimate
   in stratified sampling).
.. [5] G. Casella and R. L. Berger, *Statistical Inference*, 2nd ed., Duxbury (2002),
   §5.5.4 (the multivariate delta method).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from charters.catalogue import catalogue_metric
from enterpriseval.stats import Estimate, cluster_ratio_ci, korn_graubard_interval, ppi_lambda
from metrics.estimate import MIN_OUTPUTS_FOR_PPI_GATE, Interval, MetricEstimate

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.intp]

#: Tolerance for "numerator ≤ denominator" and "whole number" checks on float totals.
_TOLERANCE = 1e-9


# -- the metrics ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UnitMetric:
    """How one unit-level metric is estimated from per-output totals.

    ``denominator`` is ``"known"`` when every output's denominator is known without grading
    (``OutputUnits.d``) and ``"graded"`` when it needs grading too (``f_den``/``h_den``).
    ``mean_of_shares`` is true when the estimand is the mean over outputs of the per-output
    share ``num_i / d_i`` rather than the pooled ratio ``Σ num_i / Σ d_i``.
    """

    metric_id: str
    denominator: Literal["known", "graded"]
    mean_of_shares: bool
    units: str


#: The unit-level metrics of SPEC §4 this module estimates.
UNIT_METRICS: Mapping[str, UnitMetric] = MappingProxyType(
    {
        spec.metric_id: spec
        for spec in (
            UnitMetric("hallucination_rate", "known", False, "sentences"),
            UnitMetric("irrelevance_rate", "known", False, "sentences"),
            UnitMetric("citation_precision_lenient", "known", False, "cited chunks"),
            UnitMetric("citation_precision_strict", "known", False, "cited chunks"),
            UnitMetric("citation_recall", "graded", False, "assertive supported sentences"),
            UnitMetric("key_element_capture", "known", True, "key elements"),
            UnitMetric("guidance_precision", "graded", False, "flagged guidance items"),
            UnitMetric("guidance_recall", "graded", False, "breached guidance items"),
        )
    }
)


def unit_metric(metric_id: str) -> UnitMetric:
    """Return the estimation spec of a unit-level metric, or raise naming ``metric_id``."""
    try:
        return UNIT_METRICS[metric_id]
    except KeyError:
        raise ValueError(
            f"metric_id: {metric_id!r} is not a unit-level human/judge-graded metric "
            f"({', '.join(UNIT_METRICS)})"
        ) from None


# -- from unit scores to per-output totals ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class OutputCounts:
    """Per-output numerator and denominator totals of one metric, shape ``(n_outputs,)``."""

    numerator: FloatArray
    denominator: FloatArray


def _unit_index(output_index: ArrayLike, n_outputs: int, name: str) -> IntArray:
    if n_outputs < 1:
        raise ValueError(f"n_outputs: must be at least 1, got {n_outputs}")
    index = np.asarray(output_index)
    if index.ndim != 1 or (index.size and index.dtype.kind not in "iu"):
        raise ValueError(f"{name}: must be a one-dimensional array of integer positions")
    if index.size and (index.min() < 0 or index.max() >= n_outputs):
        raise ValueError(f"{name}: positions must lie in 0..{n_outputs - 1} (n_outputs)")
    return index.astype(np.intp)


def _unit_scores(values: ArrayLike, size: int, name: str, *, allow_nan: bool = False) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.shape != (size,):
        raise ValueError(f"{name}: expected {size} unit scores, got shape {array.shape}")
    checked = array[~np.isnan(array)] if allow_nan else array
    if np.isnan(checked).any() or (checked < 0).any() or (checked > 1).any():
        raise ValueError(f"{name}: unit scores must be numbers in [0, 1] (0/1 criterion scores)")
    return array


def _per_output(index: IntArray, weights: FloatArray, n_outputs: int) -> FloatArray:
    return np.bincount(index, weights=weights, minlength=n_outputs).astype(np.float64)


def hallucination_counts(
    *, output_index: ArrayLike, assertive: ArrayLike, supported: ArrayLike, n_outputs: int
) -> OutputCounts:
    """Return hallucinated sentences and sentences per output.

    Parameters
    ----------
    output_index : array_like of int, shape (S,)
        The output (0..n_outputs − 1) of each sentence.
    assertive, supported : array_like of float, shape (S,)
        The sentence's 0/1 criterion scores; "partially supported" scores 1 (SPEC §4).
        ``supported`` is asked only of assertive sentences and may be NaN elsewhere.
    n_outputs : int
        Number of outputs N; an output with no sentence gets 0/0.

    Returns
    -------
    OutputCounts
        ``numerator_i = Σ_s assert(s)·(1 − supp(s))``, ``denominator_i`` = sentences.

    Notes
    -----
    HR(y) = (1/|y|) Σ_s 1[assert(s) ∧ ¬supp(s∣S)] (SPEC §4), pooled over outputs.
    """
    index = _unit_index(output_index, n_outputs, "output_index")
    asserted = _unit_scores(assertive, index.size, "assertive")
    support = _unit_scores(supported, index.size, "supported", allow_nan=True)
    if np.isnan(support[asserted > 0]).any():
        raise ValueError("supported: an assertive sentence has no supported score")
    hallucinated = np.where(asserted > 0, asserted * (1.0 - support), 0.0)  # SPEC §4: HR
    return OutputCounts(
        _per_output(index, hallucinated, n_outputs),
        _per_output(index, np.ones(index.size), n_outputs),
    )


def irrelevance_counts(
    *, output_index: ArrayLike, relevant: ArrayLike, n_outputs: int
) -> OutputCounts:
    """Return irrelevant sentences and sentences per output.

    ``numerator_i = Σ_s (1 − rel(s))`` over the sentences of output i (SPEC §4: IR);
    ``relevant`` holds 0/1 criterion scores, one per sentence.
    """
    index = _unit_index(output_index, n_outputs, "output_index")
    relevance = _unit_scores(relevant, index.size, "relevant")
    return OutputCounts(
        _per_output(index, 1.0 - relevance, n_outputs),  # SPEC §4: IR = (1/|y|) Σ 1[s ∉ rel(x)]
        _per_output(index, np.ones(index.size), n_outputs),
    )


def citation_precision_counts(
    *, output_index: ArrayLike, used: ArrayLike, n_outputs: int
) -> OutputCounts:
    """Return used cited chunks and cited chunks per output.

    ``used`` is the ``citation_lenient`` score of each cited chunk for lenient precision
    (strict or lenient counts) or its ``citation_strict`` score for strict precision.
    """
    index = _unit_index(output_index, n_outputs, "output_index")
    scores = _unit_scores(used, index.size, "used")
    return OutputCounts(
        _per_output(index, scores, n_outputs),
        _per_output(index, np.ones(index.size), n_outputs),
    )


def citation_recall_counts(
    *,
    output_index: ArrayLike,
    assertive: ArrayLike,
    supported: ArrayLike,
    chunk_sentence: ArrayLike,
    chunk_used: ArrayLike,
    n_outputs: int,
) -> OutputCounts:
    """Return cited assertive supported sentences and assertive supported sentences per output.

    Parameters
    ----------
    output_index, assertive, supported : array_like, shape (S,)
        As :func:`hallucination_counts`, one per sentence.
    chunk_sentence : array_like of int, shape (C,)
        The sentence (0..S − 1) that cites each cited chunk.
    chunk_used : array_like of float, shape (C,)
        Each cited chunk's ``citation_lenient`` score (1 for strict or lenient).
    n_outputs : int
        Number of outputs N.

    Returns
    -------
    OutputCounts
        ``denominator_i`` the assertive, supported sentences of output i (graded, so the
        metric's denominator needs grading); ``numerator_i`` those of them that cite at least
        one chunk graded strict or lenient.

    Notes
    -----
    SPEC §4 defines citation recall as the share of assertive, supported sentences that cite a
    chunk supporting them. From the units we have: a sentence counts when
    ``assert(s) ∧ supp(s)`` and ``max over its cited chunks c of lenient(c) = 1``; a sentence
    that cites nothing does not count.
    """
    index = _unit_index(output_index, n_outputs, "output_index")
    asserted = _unit_scores(assertive, index.size, "assertive")
    support = _unit_scores(supported, index.size, "supported", allow_nan=True)
    if np.isnan(support[asserted > 0]).any():
        raise ValueError("supported: an assertive sentence has no supported score")
    eligible = np.where(asserted > 0, asserted * support, 0.0)
    sentence = _unit_index(chunk_sentence, max(index.size, 1), "chunk_sentence")
    if index.size == 0 and sentence.size:
        raise ValueError("chunk_sentence: there are cited chunks but no sentences")
    chunk_scores = _unit_scores(chunk_used, sentence.size, "chunk_used")
    cites_support = np.zeros(index.size)
    np.maximum.at(cites_support, sentence, chunk_scores)  # any supporting cited chunk
    return OutputCounts(
        _per_output(index, eligible * cites_support, n_outputs),
        _per_output(index, eligible, n_outputs),
    )


def key_element_counts(
    *, output_index: ArrayLike, captured: ArrayLike, n_outputs: int
) -> OutputCounts:
    """Return captured key elements and key elements |K| per output.

    ``captured`` is the ``key_element_captured`` score (1 for present and correct; present
    but wrong and absent score 0). Key-element capture is the mean over outputs of
    ``numerator_i / denominator_i`` (:data:`UNIT_METRICS` ``mean_of_shares``).
    """
    index = _unit_index(output_index, n_outputs, "output_index")
    scores = _unit_scores(captured, index.size, "captured")
    return OutputCounts(
        _per_output(index, scores, n_outputs),  # SPEC §4: |K(g) ∩ K(y)|
        _per_output(index, np.ones(index.size), n_outputs),  # SPEC §4: |K(g)|
    )


def guidance_counts(
    *,
    output_index: ArrayLike,
    flagged: ArrayLike,
    breached: ArrayLike,
    n_outputs: int,
    measure: Literal["precision", "recall"],
    mandatory: ArrayLike | None = None,
) -> OutputCounts:
    """Return per-output totals of guidance precision or recall.

    ``numerator_i`` = items flagged and truly breached (TP); ``denominator_i`` = items
    flagged (precision: TP + FP) or items truly breached or omitted (recall: TP + FN). Both
    need grading: a guidance grade TP/FP/FN/correct gives ``flagged`` and ``breached``
    (``grading.rubric.criterion_scores``). Recall counts mandatory items only (SPEC §4:
    non-mandatory items never enter its denominator): ``mandatory`` flags each unit's item
    (default all mandatory); precision reads every flagged item.
    """
    if measure not in ("precision", "recall"):
        raise ValueError(f"measure: must be 'precision' or 'recall', got {measure!r}")
    index = _unit_index(output_index, n_outputs, "output_index")
    flags = _unit_scores(flagged, index.size, "flagged")
    breaches = _unit_scores(breached, index.size, "breached")
    if measure == "recall" and mandatory is not None:
        # SPEC §4 guidance_recall: mandatory items breached/omitted only
        breaches = breaches * _unit_scores(mandatory, index.size, "mandatory")
    return OutputCounts(
        _per_output(index, flags * breaches, n_outputs),
        _per_output(index, flags if measure == "precision" else breaches, n_outputs),
    )


# -- the input of the estimators ---------------------------------------------------------------


def _optional_vector(values: ArrayLike | None, size: int, name: str) -> FloatArray | None:
    if values is None:
        return None
    array = np.asarray(values, dtype=np.float64)
    if array.shape != (size,):
        raise ValueError(f"{name}: expected one value per output ({size}), got shape {array.shape}")
    return array


def _plain(value: Any) -> Any:
    """Return a numpy scalar as the Python value, for messages a reader can act on."""
    return value.item() if isinstance(value, np.generic) else value


def _check_totals(
    values: FloatArray, where: BoolArray, name: str, ids: NDArray[Any], *, whole: bool
) -> None:
    chosen = values[where]
    bad = ~np.isfinite(chosen) | (chosen < 0)
    if whole:
        bad |= np.abs(chosen - np.round(chosen)) > _TOLERANCE
    if bad.any():
        first = _plain(ids[where][int(np.argmax(bad))])
        kind = "whole non-negative counts" if whole else "finite and non-negative"
        raise ValueError(
            f"{name}: output {first!r} has {float(chosen[bad][0])!r}; values must be {kind}"
        )


def _check_not_above(
    num: FloatArray, den: FloatArray, where: BoolArray, names: str, ids: NDArray[Any]
) -> None:
    above = where & (num > den + _TOLERANCE)
    if above.any():
        first = _plain(ids[int(np.argmax(above))])
        raise ValueError(f"{names}: output {first!r} has a numerator above its denominator")


@dataclass(frozen=True, slots=True)
class OutputUnits:
    """Per-output totals of one metric for the N outputs of an evaluation.

    Parameters
    ----------
    output_id : array_like of hashable, shape (N,)
        Distinct output ids (used in error messages).
    labeled : array_like of bool, shape (N,)
        True for the outputs in the human sample (graded by humans).
    stratum : array_like of hashable, shape (N,), optional
        Sampling stratum of each output (e.g. the run). ``None``: one stratum, a uniform
        sample. With strata, the human sample is taken to be a simple random sample of
        ``n_h`` of the ``N_h`` outputs of each stratum, so π_h = n_h/N_h (as
        ``grading.sampling.draw_sample`` draws it), and every estimator weights stratum h by
        ``W_h = N_h/N`` (i.e. each labeled output by 1/π_h, normalised).
    d : array_like of int, shape (N,), optional
        The known denominator of every output (sentences, cited chunks, key elements), for
        metrics whose denominator needs no grading.
    f_num, f_den : array_like of float, shape (N,), optional
        The judge's numerator (and graded denominator) for every output; ``None`` when no
        judge scored the outputs.
    h_num, h_den : array_like of float, shape (N,), optional
        The humans' (adjudicated) numerator and graded denominator. Only the labeled
        positions are read; put NaN elsewhere.

    Raises
    ------
    ValueError
        Naming the field at fault: lengths other than N, repeated ids, negative or
        non-finite totals, human totals or known denominators that are not whole numbers, a
        numerator above its denominator, human values missing for a labeled output, or a
        graded denominator without its numerator.
    """

    output_id: NDArray[Any]
    labeled: BoolArray
    stratum: NDArray[Any] | None = None
    d: FloatArray | None = None
    f_num: FloatArray | None = None
    f_den: FloatArray | None = None
    h_num: FloatArray | None = None
    h_den: FloatArray | None = None
    _strata: tuple[IntArray, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ids = np.asarray(self.output_id)
        if ids.ndim != 1 or ids.size == 0:
            raise ValueError("output_id: expected a non-empty one-dimensional list of ids")
        size = ids.size
        unique, counts = np.unique(ids, return_counts=True)
        if (counts > 1).any():
            raise ValueError(f"output_id: {_plain(unique[np.argmax(counts > 1)])!r} appears twice")
        labeled = np.asarray(self.labeled)
        if labeled.shape != (size,) or labeled.dtype.kind not in "biu":
            raise ValueError(f"labeled: expected {size} booleans, got shape {labeled.shape}")
        if labeled.dtype.kind != "b" and not np.isin(labeled, (0, 1)).all():
            raise ValueError("labeled: values must be True/False (or 1/0)")
        labeled = labeled.astype(bool)
        strata: tuple[IntArray, int] = (np.zeros(size, dtype=np.intp), 1)
        stratum = None
        if self.stratum is not None:
            stratum = np.asarray(self.stratum)
            if stratum.shape != (size,):
                raise ValueError(f"stratum: expected {size} labels, got shape {stratum.shape}")
            try:
                levels, codes = np.unique(stratum, return_inverse=True)
            except TypeError:
                raise ValueError("stratum: labels must be of one comparable type") from None
            strata = (codes.ravel().astype(np.intp), len(levels))
        everywhere = np.ones(size, dtype=bool)
        d = _optional_vector(self.d, size, "d")
        f_num = _optional_vector(self.f_num, size, "f_num")
        f_den = _optional_vector(self.f_den, size, "f_den")
        h_num = _optional_vector(self.h_num, size, "h_num")
        h_den = _optional_vector(self.h_den, size, "h_den")
        if d is not None:
            _check_totals(d, everywhere, "d", ids, whole=True)
        if f_den is not None and f_num is None:
            raise ValueError("f_den: a judge denominator needs the judge numerator f_num")
        if h_den is not None and h_num is None:
            raise ValueError("h_den: a human denominator needs the human numerator h_num")
        if labeled.any() and h_num is None:
            raise ValueError("h_num: some outputs are labeled but no human values are given")
        for name, values, where, whole in (
            ("f_num", f_num, everywhere, False),
            ("f_den", f_den, everywhere, False),
            ("h_num", h_num, labeled, True),
            ("h_den", h_den, labeled, True),
        ):
            if values is not None:
                _check_totals(values, where, name, ids, whole=whole)
        for num, den, where, names in (
            (f_num, f_den if f_den is not None else d, everywhere, "f_num"),
            (h_num, h_den if h_den is not None else d, labeled, "h_num"),
        ):
            if num is not None and den is not None:
                _check_not_above(num, den, where, names, ids)
        for name, value in (
            ("output_id", ids),
            ("labeled", labeled),
            ("stratum", stratum),
            ("d", d),
            ("f_num", f_num),
            ("f_den", f_den),
            ("h_num", h_num),
            ("h_den", h_den),
            ("_strata", strata),
        ):
            object.__setattr__(self, name, value)

    @property
    def n_outputs(self) -> int:
        """N, the outputs of the evaluation."""
        return int(self.output_id.size)

    @property
    def n_labeled(self) -> int:
        """n, the human-graded outputs."""
        return int(self.labeled.sum())

    @property
    def has_judge(self) -> bool:
        """Whether a judge scored every output."""
        return self.f_num is not None


# -- estimators -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RatioEstimate(Estimate):
    """A ratio (in [0, 1]) with its confidence interval and how it was obtained.

    An ``enterpriseval.stats.Estimate`` (``point, lo, hi, se, n, n_clusters``): ``n`` counts
    the units behind it (the denominator's total over the outputs used: human units for the
    human-only and PPI estimates, judge units for the judge-only one) and ``n_clusters`` the
    outputs. ``method`` says in words what was computed; ``lambdas`` are the PPI++ λ̂ per
    stratum for the numerator, ``lambdas_den`` for a graded denominator.
    """

    method: str = ""
    lambdas: tuple[float, ...] = ()
    lambdas_den: tuple[float, ...] = ()

    def interval(self, scale: float = 1.0) -> Interval:
        """Return ``(point, lo, hi)`` multiplied by ``scale`` (100 for percent)."""
        return Interval(self.point * scale, self.lo * scale, self.hi * scale)


def _alpha_checked(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha: must be in the open interval (0, 1), got {alpha!r}")
    return float(alpha)


def _sides(
    data: OutputUnits, who: Literal["judge", "human"], mean_of_shares: bool
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return per-output (y, x, units): the ratio's numerator, denominator and unit count.

    The estimand is Σ W_h ȳ_h / Σ W_h x̄_h; for a mean of shares y_i = num_i/d_i and x_i = 1.
    """
    num, den = (data.f_num, data.f_den) if who == "judge" else (data.h_num, data.h_den)
    prefix = "f" if who == "judge" else "h"
    if num is None:
        raise ValueError(f"{prefix}_num: no {who} values are given")
    if den is not None and data.d is not None:
        raise ValueError(f"{prefix}_den: give either the known denominator d or a graded one")
    if den is None:
        if data.d is None:
            raise ValueError(f"d: the ratio needs a known denominator d or a graded {prefix}_den")
        den = data.d
    if not mean_of_shares:
        return num, den, den
    if data.d is None:
        raise ValueError("d: a mean of per-output shares needs the known denominator d")
    if (data.d == 0).any():
        first = _plain(data.output_id[int(np.argmax(data.d == 0))])
        raise ValueError(f"d: output {first!r} has no units, so its share is undefined")
    return num / data.d, np.ones(data.n_outputs), data.d


def _count_total(values: FloatArray) -> int:
    return int(np.round(values.sum()))


def _kg_limits(
    point: float, variance: float, units: float, df: int, alpha: float
) -> tuple[float, float, str]:
    """Return the Korn–Graubard limits of a ratio in [0, 1] and the words that describe them.

    The ratio's design-based variance gives the effective sample size (SPEC §5.2; Korn and
    Graubard 1998), capped at the units behind it, scaled by (z/t_df)²; the limits are
    Clopper–Pearson's at that effective count.
    """
    if not 0.0 <= point <= 1.0:
        raise ValueError(
            f"the estimate {point:.4g} lies outside [0, 1], so no Korn–Graubard interval exists"
        )
    lo, hi = korn_graubard_interval(point, variance, max(units, 1.0), alpha, df=max(df, 1))
    spread = point * (1.0 - point)
    effective = min(units, spread / variance) if spread > 0 and variance > 0 else units
    words = f"Korn–Graubard (n_eff {effective:.1f} of {units:.0f} units, t({max(df, 1)}))"
    return float(lo), float(hi), words


def _cluster_ratio(
    y: FloatArray, x: FloatArray, units: FloatArray, alpha: float, whose: str
) -> RatioEstimate:
    """Return the ratio Σy/Σx with its CR1 linearised variance and Korn–Graubard limits."""
    estimate = cluster_ratio_ci(y, x, alpha=alpha)  # SPEC §5.3: linearised, CR1
    clusters = estimate.n_clusters
    lo, hi, words = _kg_limits(
        estimate.point, estimate.se**2, float(units.sum()), clusters - 1, alpha
    )  # SPEC §5.2: Korn–Graubard on the cluster-robust variance
    return RatioEstimate(
        point=estimate.point,
        lo=lo,
        hi=hi,
        se=estimate.se,
        n=_count_total(units),
        n_clusters=estimate.n_clusters,
        method=f"ratio over {clusters} {whose}, linearised CR1 variance; {words}",
    )


def _stratum_weights(codes: IntArray, n_strata: int) -> FloatArray:
    sizes = np.bincount(codes, minlength=n_strata).astype(np.float64)
    weights: FloatArray = sizes / sizes.sum()  # W_h = N_h / N
    return weights


def _check_stratum_sample(data: OutputUnits, minimum: int, what: str) -> IntArray:
    codes, n_strata = data._strata
    per_stratum = np.bincount(codes[data.labeled], minlength=n_strata)
    if (per_stratum < minimum).any():
        level = int(np.argmin(per_stratum))
        label = _plain(data.stratum[codes == level][0]) if data.stratum is not None else "(all)"
        raise ValueError(
            f"stratum: {label!r} has {int(per_stratum[level])} human-graded output(s); "
            f"{what} needs at least {minimum} in every stratum"
        )
    return per_stratum


def _stratified_ratio(
    data: OutputUnits, y: FloatArray, x: FloatArray, units: FloatArray, alpha: float
) -> RatioEstimate:
    """Return the combined ratio estimate of a stratified sample (Cochran §6.11).

    R̂ = Σ_h W_h ȳ_h / Σ_h W_h x̄_h; z_i = (y_i − R̂ x_i)/X̂ with X̂ = Σ_h W_h x̄_h;
    var(R̂) = Σ_h W_h² s²_{z,h}/n_h, s² with ddof 1; t quantile with n − H df.
    """
    per_stratum = _check_stratum_sample(data, 2, "a stratified human-only interval")
    codes_all, n_strata = data._strata
    weights = _stratum_weights(codes_all, n_strata)
    codes = codes_all[data.labeled]
    y_lab, x_lab, units_lab = y[data.labeled], x[data.labeled], units[data.labeled]
    sizes = per_stratum.astype(np.float64)
    y_mean = np.bincount(codes, weights=y_lab, minlength=n_strata) / sizes
    x_mean = np.bincount(codes, weights=x_lab, minlength=n_strata) / sizes
    x_total = float(weights @ x_mean)  # Cochran §6.11: X̂ = Σ W_h x̄_h
    if x_total <= 0.0:
        raise ValueError("the human-graded outputs hold no unit of the denominator (0/0)")
    ratio = float(weights @ y_mean) / x_total  # Cochran §6.11: combined ratio R̂_c
    z = (y_lab - ratio * x_lab) / x_total  # linearised ratio
    z_mean = np.bincount(codes, weights=z, minlength=n_strata) / sizes
    z_ss = np.bincount(codes, weights=(z - z_mean[codes]) ** 2, minlength=n_strata)
    variance = float(weights**2 @ (z_ss / (sizes - 1.0) / sizes))  # Cochran §5.3: Σ W_h² s²_h/n_h
    df = int(y_lab.size - n_strata)
    se = float(np.sqrt(variance))
    lo, hi, words = _kg_limits(ratio, variance, float(units_lab.sum()), df, alpha)
    method = (
        f"stratified combined ratio over {y_lab.size} human-graded outputs in {n_strata} strata "
        f"(weights N_h/N, i.e. 1/π_h), linearised; {words}"
    )
    return RatioEstimate(
        point=ratio,
        lo=lo,
        hi=hi,
        se=se,
        n=_count_total(units_lab),
        n_clusters=int(y_lab.size),
        method=method,
    )


def human_only_ratio(
    data: OutputUnits, *, alpha: float = 0.05, mean_of_shares: bool = False
) -> RatioEstimate:
    """Return the human-only ratio over the human-graded outputs with its interval.

    Parameters
    ----------
    data : OutputUnits
        Needs ``h_num`` and the known ``d`` or the graded ``h_den``.
    alpha : float, optional
        Error level in (0, 1); the interval has confidence 1 − α.
    mean_of_shares : bool, optional
        Estimate the mean over outputs of ``h_num_i / d_i`` (key-element capture) instead of
        the pooled ratio ``Σ h_num_i / Σ d_i``.

    Returns
    -------
    RatioEstimate
        In [0, 1]; ``n`` the human-graded units, ``n_clusters`` the human-graded outputs.

    Raises
    ------
    ValueError
        With fewer than two human-graded outputs (in any stratum, when stratified), when they
        hold no unit of the denominator, or when a required field is missing.

    Notes
    -----
    One stratum (a uniform sample): ``enterpriseval.stats.cluster_ratio_ci`` over the
    labeled outputs, R̂ = Σ y_i / Σ x_i with the linearised CR1 variance (SPEC §5.3, §5.4).
    With strata, the combined ratio estimate

    .. math::

        \\hat R = \\frac{\\sum_h W_h \\bar y_h}{\\sum_h W_h \\bar x_h}, \\quad
        \\widehat{\\operatorname{var}}(\\hat R) = \\sum_h \\frac{W_h^2 s_{z,h}^2}{n_h}, \\quad
        z_i = \\frac{y_i - \\hat R x_i}{\\sum_h W_h \\bar x_h},

    with W_h = N_h/N (each labeled output weighted by 1/π_h = N_h/n_h, normalised) (Cochran
    1977 §5.3, §6.11); it reduces to the one-stratum formula when H = 1.

    The interval is Korn–Graubard's (SPEC §5.2; ``enterpriseval.stats.korn_graubard_interval``):
    Clopper–Pearson at the effective sample size R̂(1 − R̂)/var(R̂), capped at the graded
    units (design effect floored at 1) and scaled by (z/t)² with G − 1 (stratified: n − H)
    degrees of freedom. It lies in [0, 1] and is never zero-width at 0 or 1; a zero variance
    (every labeled output with the same ratio, e.g. no defect) takes the design effect as 1.
    No finite-population correction is applied (conservative for the N recorded outputs).
    """
    alpha = _alpha_checked(alpha)
    y, x, units = _sides(data, "human", mean_of_shares)
    if data.n_labeled < 2:
        raise ValueError(
            f"labeled: {data.n_labeled} human-graded output(s); a cluster-robust interval "
            "needs at least 2"
        )
    if data._strata[1] > 1:
        return _stratified_ratio(data, y, x, units, alpha)
    mask = data.labeled
    if x[mask].sum() == 0:
        raise ValueError("the human-graded outputs hold no unit of the denominator (0/0)")
    return _cluster_ratio(y[mask], x[mask], units[mask], alpha, "human-graded outputs")


def judge_only_ratio(
    data: OutputUnits, *, alpha: float = 0.05, mean_of_shares: bool = False
) -> RatioEstimate:
    """Return the judge-only ratio over all N outputs with its interval (informational).

    The judge scored every output, so this is a census of the evaluation's outputs: the
    cluster-robust ratio ``enterpriseval.stats.cluster_ratio_ci`` of ``f_num`` over ``d`` (or
    ``f_den``) on all N outputs, unweighted whatever the strata (CR1, t with N − 1 df). It
    ignores the judge's bias, so it is never gated (SPEC §5.2); ``n`` counts the judge's
    units. Parameters, zero-variance fallback and errors as :func:`human_only_ratio`.
    """
    alpha = _alpha_checked(alpha)
    y, x, units = _sides(data, "judge", mean_of_shares)
    if data.n_outputs < 2:
        raise ValueError("output_id: a cluster-robust interval needs at least 2 outputs")
    if x.sum() == 0:
        raise ValueError("the outputs hold no unit of the judge's denominator (0/0)")
    return _cluster_ratio(y, x, units, alpha, "outputs (judge)")


def _cov0(values: FloatArray) -> FloatArray:
    """Return the population (ddof 0) covariance matrix of the columns of ``values``."""
    centred = values - values.mean(axis=0)
    covariance: FloatArray = (centred.T @ centred) / values.shape[0]
    return covariance


def _ppi_moments(
    y: FloatArray, f: FloatArray, labeled: BoolArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return PPI++ means θ̂ (k,), their covariance (k, k) and λ̂ (k,) for k columns.

    θ̂_j = λ_j·mean(f_u,j) + mean(y_j − λ_j f_j); Cov(θ̂) = λλᵀ ⊙ cov₀(f_u)/N_u +
    cov₀(y − λf)/n. With no unlabeled output λ = 0 (the classical mean).
    """
    y_lab, f_lab, f_unl = y[labeled], f[labeled], f[~labeled]
    n_unlabeled = f_unl.shape[0]
    lam = np.zeros(y.shape[1])
    if n_unlabeled:
        lam = np.array(
            [ppi_lambda(y_lab[:, j], f_lab[:, j], f_unl[:, j]) for j in range(y.shape[1])]
        )  # SPEC §5.4: PPI++ λ̂ clipped to [0, 1], computed once
    rectifier = y_lab - lam * f_lab
    theta = rectifier.mean(axis=0)  # SPEC §5.2: mean(h − λf) over labeled units
    covariance = _cov0(rectifier) / y_lab.shape[0]  # SPEC §5.4: var₀(Y − λŶ)/n
    if n_unlabeled:
        theta = theta + lam * f_unl.mean(axis=0)  # SPEC §5.2: + mean(λf) over unlabeled
        covariance = covariance + np.outer(lam, lam) * _cov0(f_unl) / n_unlabeled
    return theta, covariance, lam


def _format_lambdas(lambdas: tuple[float, ...]) -> str:
    return "/".join(f"{value:.2f}" for value in lambdas)


def ppi_ratio(
    data: OutputUnits, *, alpha: float = 0.05, mean_of_shares: bool = False
) -> RatioEstimate:
    """Return the prediction-powered (PPI++) ratio with its Korn–Graubard interval.

    Parameters
    ----------
    data : OutputUnits
        Needs the judge on every output (``f_num``, and ``f_den`` for a graded
        denominator), the humans on the labeled outputs, at least two labeled outputs in
        every stratum and at least one unlabeled output.
    alpha : float, optional
        Error level in (0, 1).
    mean_of_shares : bool, optional
        Estimate the mean over outputs of ``num_i / d_i`` (key-element capture).

    Returns
    -------
    RatioEstimate
        In [0, 1], not clipped; ``n`` the human-graded units, ``n_clusters`` the
        human-graded outputs, ``lambdas`` (and ``lambdas_den``) the λ̂ of each stratum.

    Raises
    ------
    ValueError
        If there is no judge, fewer than two labeled outputs in a stratum, no unlabeled
        output, a zero mean denominator, or a required field is missing.

    Notes
    -----
    Within stratum h (one stratum for a uniform sample), with y the human values on the n_h
    labeled outputs, f the judge's on them and f_u the judge's on the N_h − n_h unlabeled
    ones (ppi_py's convention: the unlabeled set excludes the labeled outputs), PPI++ gives

    .. math::

        \\hat\\theta_h = \\lambda_h \\bar f_u + \\overline{(y - \\lambda_h f)}, \\qquad
        \\widehat{\\operatorname{var}}_h = \\frac{\\operatorname{var}_0(\\lambda_h f_u)}{N_h - n_h}
        + \\frac{\\operatorname{var}_0(y - \\lambda_h f)}{n_h},

    with λ̂_h from ``enterpriseval.stats.ppi_lambda`` (computed once, clipped to [0, 1]);
    a fully labeled stratum uses λ = 0. Strata combine as θ̂ = Σ_h W_h θ̂_h,
    var = Σ_h W_h² var_h with W_h = N_h/N (stratified PPI, Fisch et al. 2024; Cochran §5.3).
    With one stratum θ̂ and its interval are ``ppi_mean_ci(y, f, f_u, alpha, lam=None)``.

    *Known denominator* (SPEC §5.2): R̂ = θ̂_num / d̄ with d̄ = (1/N) Σ_i d_i over all N
    outputs, se = √var / d̄ (d̄ is known, not estimated). For a mean of shares y_i, f_i are
    the per-output shares and d̄ = 1.

    *Graded denominator*: PPI++ means of the numerator a and denominator b (each with its
    own λ̂), with their covariance per stratum

    .. math::

        \\widehat{\\operatorname{cov}}_h(\\hat\\theta_a, \\hat\\theta_b)
        = \\frac{\\lambda_a \\lambda_b \\operatorname{cov}_0(f_{u,a}, f_{u,b})}{N_h - n_h}
        + \\frac{\\operatorname{cov}_0(y_a - \\lambda_a f_a,\\, y_b - \\lambda_b f_b)}{n_h}

    (labeled and unlabeled outputs are independent samples), combined over strata like the
    variances, then the delta method for R̂ = θ̂_a/θ̂_b with gradient (1/θ̂_b, −R̂/θ̂_b):

    .. math::

        \\widehat{\\operatorname{var}}(\\hat R) = \\frac{
        \\widehat{\\operatorname{var}}(\\hat\\theta_a)
        - 2\\hat R\\,\\widehat{\\operatorname{cov}}(\\hat\\theta_a, \\hat\\theta_b)
        + \\hat R^2\\,\\widehat{\\operatorname{var}}(\\hat\\theta_b)}{\\hat\\theta_b^2}

    (Casella and Berger 2002 §5.5.4; Cochran 1977 §6.3).

    The interval is Korn–Graubard's on R̂ and var(R̂) with the effective sample size capped at
    the human-graded units and t(n − H) scaling: the judge may remove the clustering design
    effect, never add units the humans did not grade (SPEC §5.2). The normal interval R̂ ± z·se
    (ppi_py's, still what ``se`` is) erred on the unsafe side 6–10 % of the time at 100–400
    graded outputs and rare defects (nominal 2.5 %), and a cap at all N outputs' units 3–5 %;
    this one stays within α/2 there (``python -m bench.coverage_table --ppi-choice``,
    docs/statistics.md). A PPI++ estimate outside [0, 1] has no such interval: ``ValueError``,
    and the gate keeps the human-only interval.
    """
    alpha = _alpha_checked(alpha)
    y, x, units = _sides(data, "human", mean_of_shares)
    f, f_x, _ = _sides(data, "judge", mean_of_shares)
    graded = data.d is None
    if data.n_labeled == data.n_outputs:
        raise ValueError("labeled: every output is human-graded; PPI has no unlabeled output")
    _check_stratum_sample(data, 2, "PPI")
    codes, n_strata = data._strata
    weights = _stratum_weights(codes, n_strata)
    columns_h = np.column_stack((y, x)) if graded else y[:, None]
    columns_f = np.column_stack((f, f_x)) if graded else f[:, None]
    k = columns_h.shape[1]
    theta, covariance = np.zeros(k), np.zeros((k, k))
    lambdas = np.zeros((n_strata, k))
    for level in range(n_strata):
        rows = codes == level
        theta_h, cov_h, lambdas[level] = _ppi_moments(
            columns_h[rows], columns_f[rows], data.labeled[rows]
        )
        theta += weights[level] * theta_h  # SPEC §5.2 (stratified): θ̂ = Σ W_h θ̂_h
        covariance += weights[level] ** 2 * cov_h  # Cochran §5.3: Σ W_h² var_h
    strata = f", stratified ({n_strata} strata, weights N_h/N)" if n_strata > 1 else ""
    lam_num = tuple(float(v) for v in lambdas[:, 0])
    lam_den: tuple[float, ...] = ()
    if graded:
        if theta[1] <= 0.0:
            raise ValueError("the PPI++ estimate of the mean denominator is not positive (0/0)")
        ratio = float(theta[0] / theta[1])
        gradient = np.array([1.0, -ratio]) / theta[1]  # delta method: ∂R/∂θ_a, ∂R/∂θ_b
        variance = float(gradient @ covariance @ gradient)  # Casella & Berger §5.5.4
        lam_den = tuple(float(v) for v in lambdas[:, 1])
        method = (
            f"PPI++ means of numerator (λ̂ = {_format_lambdas(lam_num)}) and denominator "
            f"(λ̂ = {_format_lambdas(lam_den)}) per output, delta-method ratio{strata}; "
            f"judge on {data.n_outputs} outputs"
        )
    else:
        mean_denominator = float(x.mean())  # SPEC §5.2: known mean denominator over all N
        if mean_denominator <= 0.0:
            raise ValueError("d: the outputs hold no unit of the denominator (0/0)")
        ratio = float(theta[0]) / mean_denominator  # SPEC §5.2: PPI mean numerator / d̄
        variance = float(covariance[0, 0]) / mean_denominator**2
        method = (
            f"PPI++ mean {'share' if mean_of_shares else 'numerator'} per output "
            f"(λ̂ = {_format_lambdas(lam_num)})"
            f"{'' if mean_of_shares else ' over the known mean denominator'}{strata}; "
            f"judge on {data.n_outputs} outputs"
        )
    variance = max(variance, 0.0)
    se = float(np.sqrt(variance))
    # The effective sample size is capped at the human-graded units: the judge may remove
    # the design effect of clustering, never add units the humans did not grade. Capping at
    # the N outputs' units instead erred on the unsafe side 4–7 % of the time at 1–2 %
    # prevalence with 100–200 graded outputs (nominal 2.5 %; bench.coverage_table).
    labeled_units = float(units[data.labeled].sum())
    lo, hi, words = _kg_limits(ratio, variance, labeled_units, data.n_labeled - n_strata, alpha)
    method = f"{method}; {words}"
    return RatioEstimate(
        point=ratio,
        lo=lo,
        hi=hi,
        se=se,
        n=_count_total(units[data.labeled]),
        n_clusters=data.n_labeled,
        method=method,
        lambdas=lam_num,
        lambdas_den=lam_den,
    )


# -- the record -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UnitIntervals:
    """The three estimates of one metric (in [0, 1]); ``None`` with the reason in
    ``problems`` when one cannot be computed."""

    human_only: RatioEstimate | None
    judge_only: RatioEstimate | None
    ppi: RatioEstimate | None
    problems: tuple[str, ...] = ()


def _check_fields(spec: UnitMetric, data: OutputUnits) -> None:
    if spec.denominator == "known":
        if data.d is None:
            raise ValueError(f"d: {spec.metric_id} needs the known denominator ({spec.units})")
        for name in ("f_den", "h_den"):
            if getattr(data, name) is not None:
                raise ValueError(
                    f"{name}: {spec.metric_id} has a known denominator d; give no graded one"
                )
        return
    if data.d is not None:
        raise ValueError(f"d: {spec.metric_id}'s denominator ({spec.units}) is graded, not known")
    if data.has_judge and data.f_den is None:
        raise ValueError(f"f_den: the judge's {spec.units} per output are needed")
    if data.n_labeled and data.h_den is None:
        raise ValueError(f"h_den: the humans' {spec.units} per output are needed")


def unit_metric_intervals(metric_id: str, data: OutputUnits, *, confidence: float) -> UnitIntervals:
    """Return the human-only, judge-only and PPI++ estimates of a unit-level metric.

    Each is computed when its inputs allow (humans: ≥ 2 labeled outputs; judge: scored every
    output; PPI: both, ≥ 2 labeled outputs per stratum and ≥ 1 unlabeled output); a data
    problem (e.g. no unit in the denominator) leaves it ``None`` and says why in
    ``problems``. Malformed input (a field missing for ``metric_id``) raises ``ValueError``.
    """
    spec = unit_metric(metric_id)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence: must be in the open interval (0, 1), got {confidence!r}")
    _check_fields(spec, data)
    alpha = 1.0 - confidence
    problems: list[str] = []
    found: dict[str, RatioEstimate | None] = {"human-only": None, "judge-only": None, "PPI": None}
    attempts = (
        ("human-only", human_only_ratio, data.n_labeled > 0),
        ("judge-only", judge_only_ratio, data.has_judge),
        ("PPI", ppi_ratio, data.has_judge and data.n_labeled > 0),
    )
    for name, estimator, possible in attempts:
        if not possible:
            continue
        try:
            found[name] = estimator(data, alpha=alpha, mean_of_shares=spec.mean_of_shares)
        except ValueError as error:
            problems.append(f"no {name} interval: {error}")
    return UnitIntervals(found["human-only"], found["judge-only"], found["PPI"], tuple(problems))


def _shown(label: str, estimate: RatioEstimate) -> str:
    point = estimate.interval(100.0)
    return f"{label}: {point.point:.2f} [{point.lo:.2f}, {point.hi:.2f}] ({estimate.method})"


def _judge_bias(data: OutputUnits, spec: UnitMetric) -> str | None:
    """Return the judge's bias on the labeled outputs (judge ratio − human ratio), in points."""
    if not data.has_judge or data.n_labeled == 0:
        return None
    y, x, _ = _sides(data, "human", spec.mean_of_shares)
    f, f_x, _ = _sides(data, "judge", spec.mean_of_shares)
    mask = data.labeled
    if x[mask].sum() <= 0 or f_x[mask].sum() <= 0:
        return None
    bias = 100.0 * (f[mask].sum() / f_x[mask].sum() - y[mask].sum() / x[mask].sum())
    return f"judge bias on the {data.n_labeled} human-graded outputs: {bias:+.2f} points"


def estimate_unit_metric(
    metric_id: str,
    data: OutputUnits,
    *,
    confidence: float,
    planned_n: int | None = None,
    kappa: float | None = None,
) -> MetricEstimate:
    """Return the gated estimate of a unit-level metric, in percent, with the others beside it.

    Parameters
    ----------
    metric_id : str
        One of :data:`UNIT_METRICS`.
    data : OutputUnits
        The per-output totals of this metric (see the ``*_counts`` helpers).
    confidence : float
        The charter's confidence level in (0, 1), e.g. 0.9.
    planned_n : int, optional
        The charter's planned n in units; ``under_sampled`` is ``n < planned_n``.
    kappa : float, optional
        Agreement of the metric's rubric fields (SPEC §5.1), carried into the record.

    Returns
    -------
    MetricEstimate
        ``point``/``lo``/``hi`` are those of the gated estimator, in percent; every interval
        (gated, human-only, judge-only) is Korn–Graubard's, inside [0, 100]:

        - ``mode="PPI"``: a judge scored every output and at least
          ``MIN_OUTPUTS_FOR_PPI_GATE`` (100) outputs are human-graded;
        - ``mode="H"``: human-graded outputs but fewer than 100, or no judge, or PPI not
          computable, e.g. its estimate outside [0, 100] (SPEC §5.2: the gate uses the
          human-only interval; a computed PPI interval is shown in ``notes``, first line
          starting ``"PPI++ (shown, not gated)"``, and a failed one is named there);
        - ``mode="J"``: no usable human grades, the judge's values only, with ``reason``
          saying it is informational and never gated;
        - no value (``point`` None) with ``reason`` when neither is available.

        ``human_only`` and ``judge_only`` hold those intervals when computed. ``n`` counts
        the units behind the gated value (human-graded units for H and PPI, judged units for
        J) and ``n_clusters`` the outputs. ``estimand`` says what is estimated and that
        no finite-population correction is applied.

    Raises
    ------
    ValueError
        On an unknown ``metric_id``, ``confidence`` outside (0, 1) or malformed ``data``.
    """
    spec = unit_metric(metric_id)
    scale = catalogue_metric(metric_id).scale
    if scale != "percent":
        raise ValueError(f"metric_id: {metric_id} is on the {scale!r} scale, expected percent")
    found = unit_metric_intervals(metric_id, data, confidence=confidence)
    human, judge, ppi = found.human_only, found.judge_only, found.ppi
    notes: list[str] = []
    reason = ""
    chosen: RatioEstimate | None
    mode: Literal["H", "J", "PPI"]
    if human is not None and ppi is not None and data.n_labeled >= MIN_OUTPUTS_FOR_PPI_GATE:
        chosen, mode = ppi, "PPI"
        if ppi.se == 0.0:
            chosen, mode = human, "H"
            notes.append(_shown("PPI++ (shown, not gated: its standard error is 0)", ppi))
    elif human is not None:
        chosen, mode = human, "H"
        if ppi is not None:
            notes.append(
                _shown(
                    f"PPI++ (shown, not gated: {data.n_labeled} human-graded outputs < "
                    f"{MIN_OUTPUTS_FOR_PPI_GATE}, SPEC §5.2)",
                    ppi,
                )
            )
    elif judge is not None:
        chosen, mode = judge, "J"
        reason = (
            "informational: judge-only, not corrected by human grades "
            f"({data.n_labeled} human-graded outputs, no human-only interval); never gated "
            "(SPEC §5.2)"
        )
    else:
        chosen, mode = None, "J" if data.has_judge else "H"
        reason = "; ".join(found.problems) or "no human-graded output and no judge scores"
    bias = _judge_bias(data, spec) if chosen is not None else None
    if bias is not None:
        notes.append(bias)
    notes.extend(found.problems if chosen is not None else ())
    point = lo = hi = None
    n, n_clusters = 0, 0
    if chosen is not None:
        shown = chosen.interval(100.0)
        point, lo, hi = shown.point, shown.lo, shown.hi
        n, n_clusters = chosen.n, chosen.n_clusters
    estimator = chosen.method if chosen is not None else "none"
    if mode == "H" and ppi is not None and data.n_labeled < MIN_OUTPUTS_FOR_PPI_GATE:
        estimator += f" (gated: fewer than {MIN_OUTPUTS_FOR_PPI_GATE} human-graded outputs)"
    return MetricEstimate(
        metric_id=metric_id,
        point=point,
        lo=lo,
        hi=hi,
        confidence=float(confidence),
        n=n,
        n_clusters=n_clusters,
        mode=mode,
        estimator=estimator,
        kappa=kappa,
        under_sampled=planned_n is not None and n < planned_n,
        planned_n=planned_n,
        human_only=human.interval(100.0) if human is not None else None,
        judge_only=judge.interval(100.0) if judge is not None else None,
        reason=reason,
        notes=tuple(notes),
        estimand=unit_estimand(data) if chosen is not None else "",
    )


def unit_estimand(data: OutputUnits) -> str:
    """Return what a unit-level estimate estimates, and the finite-population correction."""
    return (
        f"the metric over the outputs σ produces on the frozen task set (the {data.n_outputs} "
        "recorded outputs are treated as a random sample of them, the human-graded ones as a "
        "random sample of those); no finite-population correction, so the interval is "
        f"conservative for the {data.n_outputs} recorded outputs themselves"
    )


__all__ = [
    "UNIT_METRICS",
    "OutputCounts",
    "OutputUnits",
    "RatioEstimate",
    "UnitIntervals",
    "UnitMetric",
    "citation_precision_counts",
    "citation_recall_counts",
    "estimate_unit_metric",
    "guidance_counts",
    "hallucination_counts",
    "human_only_ratio",
    "irrelevance_counts",
    "judge_only_ratio",
    "key_element_counts",
    "ppi_ratio",
    "unit_estimand",
    "unit_metric",
    "unit_metric_intervals",
]
