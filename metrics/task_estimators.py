"""Estimators of the task- and trajectory-level metrics of the catalogue (SPEC §4).

Pure: no Django import. Each public ``<metric>_estimate`` function takes plain arrays (one
entry per task, trajectory, attack or seeded defect), the charter's ``confidence`` and the
metric's ``planned_n``, and returns a :class:`metrics.estimate.MetricEstimate` in the
catalogue's scale (percentages 0–100 for ``scale: percent`` metrics; counts, minutes,
currency or proportions otherwise). Malformed input raises ``ValueError`` naming the
argument; input with no unit to estimate from returns a record with ``reason`` and no value,
never NaN.

Interval methods, one per metric:

- proportions of independent trajectories, seeded defects or tasks: Clopper–Pearson interval
  (SPEC §5.2, §5.3: each one-sided error at most α/2, which Wilson's is not at the
  boundary);
- means over tasks (completeness, review burden): Student t interval over tasks,
  i.e. :func:`enterpriseval.stats.cluster_mean_ci` with each task its own cluster (CR1 with
  G = N is exactly ``s/√n`` with ``n − 1`` degrees of freedom);
- pass^k and dispersion: Korn–Graubard interval over tasks (each task its cluster; SPEC §5.3),
  never zero-width at the boundary; Clopper–Pearson when every task's value is 0 or 1 (K = 1);
- non-linear statistics of tasks (macro-F1, Δeff, cost per success): percentile bootstrap
  over tasks, seeded, with the seed and the number of resamples in ``estimator``.

Every record states its estimand (SPEC §5.2): tasks like the frozen task set's, the evaluated
ones treated as a random sample of them, with no finite-population correction.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from charters.catalogue import catalogue_metric
from enterpriseval.stats import (
    clopper_pearson_interval,
    cluster_mean_ci,
    korn_graubard_interval,
    pass_hat_k,
    wilson_interval,
)
from enterpriseval.stats.checks import (
    as_count_vector,
    as_float_vector,
    check_open_unit,
    check_same_length,
)
from metrics.estimate import GradingMode, MetricEstimate

FloatArray = NDArray[np.float64]
Baseline = Literal["observed", "estimated"]

#: Bootstrap resamples unless a caller asks for another number.
DEFAULT_RESAMPLES = 10_000
#: Bootstrap seed unless a caller gives one; always recorded in ``estimator``.
DEFAULT_SEED = 0
#: The k of pass^k reported by default, with K itself (SPEC §4, §6.4 E3).
DEFAULT_PASS_KS = (1, 2, 4)
#: Note prefix that records the time baseline of a net-time-reduction record.
BASELINE_NOTE = "baseline: "
# Cap on the (resamples × tasks) weight matrix held in memory at once.
_BOOTSTRAP_CELLS = 4_000_000
# Up to this many columns, a bootstrap chunk gathers values; beyond, it counts draws.
_GATHER_COLUMNS = 4
_T_OVER_TASKS = "mean over tasks; t interval over tasks (each task its own cluster, t(n − 1))"
_EXACT = "Clopper–Pearson interval"
# Elementwise ``is None`` over object arrays (a 0-d object array, so the ufunc broadcasts).
_NONE = np.array(None, dtype=object)


# --- shared record building ------------------------------------------------------------


def _check_whole(value: int, name: str, minimum: int) -> None:
    """Raise naming ``name`` unless ``value`` is an integer of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        kind = "a positive integer" if minimum == 1 else "a non-negative integer"
        raise ValueError(f"{name} must be {kind}, got {value!r}")


@dataclass(frozen=True)
class _Basis:
    """What the record of one estimate holds besides its value: metric, sizes, method."""

    metric_id: str
    confidence: float
    n: int
    mode: GradingMode
    estimator: str
    planned_n: int | None
    kappa: float | None = None

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence

    def value(
        self,
        point: float | None,
        lo: float | None,
        hi: float | None,
        *,
        reason: str = "",
        notes: Iterable[str] = (),
    ) -> MetricEstimate:
        """Return the record; point/lo/hi on the natural scale, stored in the catalogue's."""
        factor = 100.0 if catalogue_metric(self.metric_id).scale == "percent" else 1.0
        point, lo, hi = (None if v is None else float(v) * factor for v in (point, lo, hi))
        return MetricEstimate(
            metric_id=self.metric_id,
            point=point,
            lo=lo,
            hi=hi,
            confidence=self.confidence,
            n=self.n,
            n_clusters=self.n,  # tasks, trajectories or defects: each its own cluster
            mode=self.mode,
            estimator=self.estimator,
            kappa=self.kappa,
            under_sampled=self.planned_n is not None and self.n < self.planned_n,
            planned_n=self.planned_n,
            reason=reason,
            notes=tuple(notes),
            estimand=self.estimand if point is not None else "",
        )

    @property
    def estimand(self) -> str:
        """Return what the record estimates, for the decision page (SPEC §5.2)."""
        return (
            f"the metric over tasks like the frozen task set's (the {self.n} evaluated are "
            "treated as a random sample of those σ will meet); no finite-population correction"
        )

    def missing(self, reason: str, notes: Iterable[str] = ()) -> MetricEstimate:
        """Return the record of an estimate with no value, saying why."""
        return self.value(None, None, None, reason=reason, notes=notes)


def _basis(
    metric_id: str,
    *,
    confidence: float,
    n: int,
    mode: GradingMode,
    estimator: str,
    planned_n: int | None,
    kappa: float | None = None,
) -> _Basis:
    """Return the validated basis of a record, or raise naming the argument at fault."""
    confidence = check_open_unit(confidence, "confidence")
    if planned_n is not None:
        _check_whole(planned_n, "planned_n", 1)
    allowed = catalogue_metric(metric_id).grading
    if mode not in allowed:
        raise ValueError(
            f"mode {mode!r} is not a grading mode of {metric_id} (catalogue: {', '.join(allowed)})"
        )
    return _Basis(metric_id, confidence, n, mode, estimator, planned_n, kappa)


_ONE_TASK = "one task: an interval needs at least two"


def _indicators(values: ArrayLike, name: str) -> NDArray[np.int64]:
    """Return ``values`` as a 1-D array of 0/1, or raise naming ``name``."""
    if np.ndim(values) != 1:
        raise ValueError(f"{name} must be one-dimensional: one entry per unit")
    flags = as_count_vector(values, name)
    if (flags > 1).any():
        raise ValueError(f"{name} must hold booleans or 0/1, got a value above 1")
    return flags


def _count(value: int, name: str) -> int:
    """Return one non-negative whole number, or raise naming ``name``."""
    if np.ndim(value) != 0:
        raise ValueError(f"{name} must be a single count, got shape {np.shape(value)}")
    return int(as_count_vector(value, name)[0])


def _exact_value(
    basis: _Basis, successes: int, empty_reason: str, notes: Iterable[str] = ()
) -> MetricEstimate:
    """Return the Clopper–Pearson record of ``successes`` of ``basis.n`` independent units."""
    if basis.n == 0:
        return basis.missing(empty_reason, notes)
    # SPEC §5.2, §5.3: exact, so each one-sided error is at most α/2 at any proportion.
    lo, hi = clopper_pearson_interval(successes, basis.n, basis.alpha)
    return basis.value(successes / basis.n, lo, hi, notes=(f"{successes} of {basis.n}", *notes))


def _korn_graubard_over_tasks(
    values: FloatArray, alpha: float, ceiling: float = 1.0
) -> tuple[float, float, float, str]:
    """Return (point, lo, hi, words): the mean of per-task values in [0, ceiling] with its
    Korn–Graubard interval, each task its own cluster (SPEC §5.3).

    The values are rescaled to [0, 1]; the variance of their mean is s²/n (ddof 1) and the
    effective sample size, capped at n tasks, is scaled by (z/t_{n−1})² (Korn and Graubard
    1998). When every value is 0 or 1 the interval is Clopper–Pearson's on the count.
    """
    share = values / ceiling
    n = share.size
    point = float(share.mean())
    if np.all((share == 0.0) | (share == 1.0)):
        successes = int(share.sum())
        lo, hi = clopper_pearson_interval(successes, n, alpha)  # SPEC §5.3: K = 1
        return point * ceiling, lo * ceiling, hi * ceiling, f"Clopper–Pearson over {n} tasks"
    variance = float(share.var(ddof=1)) / n  # tasks are the independent units
    lo, hi = korn_graubard_interval(min(max(point, 0.0), 1.0), variance, n, alpha, df=n - 1)
    spread = point * (1.0 - point)
    effective = min(n, spread / variance) if spread > 0 and variance > 0 else n
    words = f"Korn–Graubard over tasks (n_eff {effective:.1f} of {n} tasks, t({n - 1}))"
    return point * ceiling, lo * ceiling, hi * ceiling, words


def _mean_over_tasks(
    basis: _Basis, values: FloatArray, low: float, high: float, notes: Iterable[str] = ()
) -> MetricEstimate:
    """Return the mean of per-task values with a t interval over tasks clipped to [low, high]."""
    if values.size == 0:
        return basis.missing("no task", notes)
    if values.size == 1:
        return basis.value(values[0], None, None, reason=_ONE_TASK, notes=notes)
    # CR1 with each task its own cluster is the classical t interval s/√n on n − 1 df
    # (SPEC §5.4): tasks are the independent units.
    estimate = cluster_mean_ci(values, np.arange(values.size), basis.alpha)
    return basis.value(estimate.point, max(estimate.lo, low), min(estimate.hi, high), notes=notes)


def _bootstrap_means(
    contributions: FloatArray, n_resamples: int, rng: np.random.Generator
) -> FloatArray:
    """Return the column means of the rows of ``contributions`` resampled with replacement.

    One bootstrap resample of n tasks is n row indices drawn uniformly with replacement
    (Efron and Tibshirani 1993, §6.2), drawn for a chunk of resamples at once. With few
    columns each column's values are gathered at the drawn indices and summed; with many,
    the draws are counted per task (a Multinomial(n, 1/n) vector) and the chunk's means are
    one matrix product. No loop over tasks; linear in resamples × tasks (issue 18).
    """
    n_tasks, n_columns = contributions.shape
    means = np.empty((n_resamples, n_columns))
    rows = max(1, _BOOTSTRAP_CELLS // n_tasks)
    index_type = np.int32 if n_tasks * rows < 2**31 else np.int64
    columns = [np.ascontiguousarray(contributions[:, j]) for j in range(n_columns)]
    for start in range(0, n_resamples, rows):
        size = min(rows, n_resamples - start)
        drawn = rng.integers(0, n_tasks, size=(size, n_tasks), dtype=index_type)
        if n_columns <= _GATHER_COLUMNS:
            for j, column in enumerate(columns):
                means[start : start + size, j] = column[drawn].sum(axis=1) / n_tasks
        else:
            drawn += np.arange(size, dtype=index_type)[:, np.newaxis] * n_tasks
            counts = np.bincount(drawn.ravel(), minlength=size * n_tasks)
            means[start : start + size] = counts.reshape(size, n_tasks) @ contributions / n_tasks
    return means


def _percentile_interval(statistics: FloatArray, alpha: float) -> tuple[float, float]:
    """Return the percentile bootstrap interval (Efron and Tibshirani 1993, §13.3)."""
    lo, hi = np.quantile(statistics, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(lo), float(hi)


def _check_resamples(n_resamples: int, seed: int) -> None:
    _check_whole(n_resamples, "n_resamples", 1)
    _check_whole(seed, "seed", 0)


def _bootstrap_words(n_resamples: int, seed: int) -> str:
    return f"percentile bootstrap over tasks, {n_resamples} resamples, seed {seed}"


# --- utility: completeness and classification ------------------------------------------


def completeness_estimate(
    attempted: ArrayLike,
    required: ArrayLike,
    *,
    confidence: float,
    planned_n: int | None = None,
) -> MetricEstimate:
    """Return completeness: the mean over tasks of the share of required items attempted.

    Parameters
    ----------
    attempted : array_like of int, shape (n,)
        Required sections or items that the output of each task attempts.
    required : array_like of int, shape (n,)
        Required sections or items of each task, at least 1.
    confidence : float
        Confidence level of the interval, in (0, 1) (the charter's).
    planned_n : int, optional
        Planned number of tasks; fewer sets ``under_sampled``.

    Returns
    -------
    MetricEstimate
        Percent, ``n = n_clusters`` = tasks. One task gives a point without an interval
        (``reason`` says why); none gives no value.

    Raises
    ------
    ValueError
        If counts are negative or not whole, lengths differ, a task has no required item
        or attempts more than it requires, or ``confidence``/``planned_n`` is invalid.

    Notes
    -----
    .. math:: \\mathrm{Comp} = \\frac{1}{n} \\sum_{i=1}^{n} \\frac{a_i}{r_i}

    with a Student t interval over tasks, clipped to [0, 100]. Tasks are the independent
    units, so this is the interval clustered by task.
    """
    done = as_count_vector(attempted, "attempted")
    needed = as_count_vector(required, "required")
    n = check_same_length(attempted=done, required=needed)
    basis = _basis(
        "completeness",
        confidence=confidence,
        n=n,
        mode="A",
        estimator=f"{_T_OVER_TASKS}, clipped to [0, 100]",
        planned_n=planned_n,
    )
    if (needed == 0).any():
        first = int(np.flatnonzero(needed == 0)[0])
        raise ValueError(f"required must be at least 1 for every task; task {first} has 0")
    if (done > needed).any():
        first = int(np.flatnonzero(done > needed)[0])
        raise ValueError(f"attempted must not exceed required; task {first} does")
    shares = done / needed  # SPEC §4: share of required sections/items attempted, per task
    return _mean_over_tasks(basis, shares, 0.0, 1.0)


def _labels(values: Sequence[Hashable] | ArrayLike, name: str) -> NDArray[np.object_]:
    array = np.asarray(values, dtype=object)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional: one label per task")
    return array


def _gold_and_predicted(
    predicted: Sequence[Hashable] | ArrayLike, gold: Sequence[Hashable] | ArrayLike
) -> tuple[NDArray[np.object_], NDArray[np.object_]]:
    guess = _labels(predicted, "predicted")
    truth = _labels(gold, "gold")
    check_same_length(predicted=guess, gold=truth)
    missing = np.equal(truth, _NONE)
    if missing.any():
        raise ValueError(f"gold has no label for task {int(np.flatnonzero(missing)[0])}")
    return guess, truth


def classification_accuracy_estimate(
    predicted: Sequence[Hashable] | ArrayLike,
    gold: Sequence[Hashable] | ArrayLike,
    *,
    confidence: float,
    planned_n: int | None = None,
) -> MetricEstimate:
    """Return classification accuracy: the share of tasks whose label equals the gold label.

    Parameters
    ----------
    predicted : sequence of hashable, shape (n,)
        The system's label per task; ``None`` (no label produced) counts as wrong.
    gold : sequence of hashable, shape (n,)
        The frozen gold label per task.
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of tasks.

    Returns
    -------
    MetricEstimate
        Percent with a Clopper–Pearson interval, ``n = n_clusters`` = tasks.

    Raises
    ------
    ValueError
        If the lengths differ, an input is not one-dimensional, a gold label is missing,
        or ``confidence``/``planned_n`` is invalid.

    Notes
    -----
    .. math:: \\mathrm{Acc} = \\frac{1}{n} \\sum_{i=1}^{n} 1[\\hat y_i = y_i]

    with the Clopper–Pearson interval (SPEC §5.2, §5.3; exact, so a gated bound errs on the
    unsafe side at most α/2 of the time).
    """
    guess, truth = _gold_and_predicted(predicted, gold)
    basis = _basis(
        "classification_accuracy",
        confidence=confidence,
        n=truth.size,
        mode="A",
        estimator=_EXACT,
        planned_n=planned_n,
    )
    correct = int(np.count_nonzero(guess == truth))  # SPEC §4: label equals the gold label
    return _exact_value(basis, correct, "no task")


def classification_accuracy_graded_estimate(
    correct: ArrayLike, *, confidence: float, planned_n: int | None = None
) -> MetricEstimate:
    """Return classification accuracy from graders' "Classification correct?" values.

    Parameters
    ----------
    correct : array_like of {0, 1}, shape (n,)
        Per graded task, 1 when the final (agreed or adjudicated) human value says the label
        its output gives is correct, else 0.
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of tasks.

    Returns
    -------
    MetricEstimate
        Percent, mode H, with a Clopper–Pearson interval; ``n = n_clusters`` = graded tasks.

    Notes
    -----
    .. math:: \\mathrm{Acc}_H = \\frac{1}{n} \\sum_{i=1}^{n} h_i

    with :math:`h_i` the human value of task i (SPEC §4.1, §5.1: classification graded by
    humans); exact, so a gated bound errs on the unsafe side at most α/2 of the time (§5.2).
    """
    values = _indicators(correct, "correct")
    basis = _basis(
        "classification_accuracy",
        confidence=confidence,
        n=values.size,
        mode="H",
        estimator=f"{_EXACT} over graded tasks",
        planned_n=planned_n,
    )
    return _exact_value(basis, int(values.sum()), "no task graded")


@dataclass(frozen=True, slots=True)
class ClassScores:
    """Precision, recall and F1 of one gold label, in percent (``None`` where undefined).

    ``support`` counts tasks whose gold label is this class, ``predicted`` tasks the system
    gave this label. Precision is undefined when the class was never predicted, recall
    when it never occurs in gold, F1 when neither.
    """

    label: Hashable
    support: int
    predicted: int
    precision: float | None
    recall: float | None
    f1: float | None


def _label_set(
    truth: NDArray[np.object_], labels: Sequence[Hashable] | None
) -> NDArray[np.object_]:
    if labels is None:
        try:
            chosen = sorted(set(truth.tolist()))
        except TypeError:
            raise ValueError("gold labels must be of one comparable type to sort them") from None
        return np.asarray(chosen, dtype=object)
    label_array = _labels(labels, "labels")
    if label_array.size == 0 or len(set(label_array.tolist())) != label_array.size:
        raise ValueError("labels must be a non-empty list of distinct labels")
    return label_array


def _one_hot(
    predicted: Sequence[Hashable] | ArrayLike,
    gold: Sequence[Hashable] | ArrayLike,
    labels: Sequence[Hashable] | None,
) -> tuple[NDArray[np.object_], NDArray[np.bool_], NDArray[np.bool_]]:
    """Return the label set and the (tasks × labels) gold and predicted indicator matrices."""
    guess, truth = _gold_and_predicted(predicted, gold)
    label_array = _label_set(truth, labels)
    in_gold = truth[:, None] == label_array[None, :]
    in_guess = guess[:, None] == label_array[None, :]
    unlisted = ~in_gold.any(axis=1)
    if unlisted.any():
        first = int(np.flatnonzero(unlisted)[0])
        raise ValueError(f"labels does not contain the gold label {truth[first]!r} of task {first}")
    return label_array, in_gold, in_guess


def _f1_by_class(
    true_positive: FloatArray, support: FloatArray, predicted: FloatArray
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Return per-class F1 = 2TP / (2TP + FP + FN) and whether each class is defined."""
    denominator = support + predicted  # 2TP + FP + FN
    defined = denominator > 0
    f1 = np.divide(2.0 * true_positive, denominator, out=np.zeros_like(denominator), where=defined)
    return f1, defined


def _class_counts(
    in_gold: NDArray[np.bool_], in_guess: NDArray[np.bool_]
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return true positives, gold support and predicted count per class."""
    hits = (in_gold & in_guess).sum(axis=0).astype(np.float64)
    return hits, in_gold.sum(axis=0).astype(np.float64), in_guess.sum(axis=0).astype(np.float64)


def classification_class_scores(
    predicted: Sequence[Hashable] | ArrayLike,
    gold: Sequence[Hashable] | ArrayLike,
    *,
    labels: Sequence[Hashable] | None = None,
) -> tuple[ClassScores, ...]:
    """Return precision, recall and F1 per gold label (shown beside macro-F1, SPEC §4).

    Parameters
    ----------
    predicted, gold : sequence of hashable, shape (n,)
        System and frozen gold labels per task (a predicted ``None`` matches no class).
    labels : sequence of hashable, optional
        The gold label set in display order; default the sorted distinct gold labels.

    Returns
    -------
    tuple of ClassScores
        One entry per label, in the order of ``labels``, in percent.

    Raises
    ------
    ValueError
        As :func:`classification_macro_f1_estimate`.
    """
    return _class_scores(*_one_hot(predicted, gold, labels))


def _class_scores(
    label_array: NDArray[np.object_], in_gold: NDArray[np.bool_], in_guess: NDArray[np.bool_]
) -> tuple[ClassScores, ...]:
    hits, support, guessed = _class_counts(in_gold, in_guess)
    f1, defined = _f1_by_class(hits, support, guessed)
    return tuple(
        ClassScores(
            label=label_array[c],
            support=int(support[c]),
            predicted=int(guessed[c]),
            precision=100.0 * hits[c] / guessed[c] if guessed[c] else None,
            recall=100.0 * hits[c] / support[c] if support[c] else None,
            f1=100.0 * f1[c] if defined[c] else None,
        )
        for c in range(label_array.size)
    )


def classification_confusion(
    predicted: Sequence[Hashable] | ArrayLike,
    gold: Sequence[Hashable] | ArrayLike,
    *,
    labels: Sequence[Hashable],
) -> NDArray[np.int64]:
    """Return the confusion matrix: rows the gold labels, columns the predicted ones.

    Parameters
    ----------
    predicted, gold : sequence of hashable, shape (n,)
        System and frozen gold labels per task; each gold label must be in ``labels``.
    labels : sequence of hashable
        The label set, in display order.

    Returns
    -------
    ndarray of int, shape (L, L + 1)
        ``[g, p]`` counts tasks with gold ``labels[g]`` given ``labels[p]``; the last
        column counts tasks whose label is unknown (``None``) or outside ``labels``. Its
        diagonal is the per-class TP; row sums the support (as scikit-learn's
        ``confusion_matrix`` with ``labels``, plus the unknown column).
    """
    _label_array, in_gold, in_guess = _one_hot(predicted, gold, labels)
    known = in_gold.T.astype(np.int64) @ in_guess.astype(np.int64)
    unknown = (in_gold & ~in_guess.any(axis=1, keepdims=True)).sum(axis=0)
    return np.column_stack([known, unknown]).astype(np.int64)


def _percent_words(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} %"


def _macro_f1(counts: FloatArray) -> FloatArray:
    """Return macro-F1 of rows of [TP per class, support per class, predicted per class]."""
    hits, support, guessed = np.split(counts, 3, axis=-1)
    f1, defined = _f1_by_class(hits, support, guessed)
    macro: FloatArray = f1.sum(axis=-1) / defined.sum(axis=-1)  # SPEC §4: macro average
    return macro


def classification_macro_f1_estimate(
    predicted: Sequence[Hashable] | ArrayLike,
    gold: Sequence[Hashable] | ArrayLike,
    *,
    confidence: float,
    labels: Sequence[Hashable] | None = None,
    planned_n: int | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> MetricEstimate:
    """Return the macro-averaged F1 over the gold label set, with a bootstrap interval.

    Parameters
    ----------
    predicted : sequence of hashable, shape (n,)
        The system's label per task; ``None`` or a label outside ``labels`` matches no
        class (a false negative of the gold class).
    gold : sequence of hashable, shape (n,)
        The frozen gold label per task; each must be in ``labels``.
    confidence : float
        Confidence level in (0, 1).
    labels : sequence of hashable, optional
        The gold label set; default the sorted distinct gold labels.
    planned_n : int, optional
        Planned number of tasks.
    n_resamples : int, optional
        Bootstrap resamples of the tasks. Default 10,000.
    seed : int, optional
        Seed of the resampling generator (recorded in ``estimator``). Default 0.

    Returns
    -------
    MetricEstimate
        Percent; ``notes`` give precision, recall, F1, support and predicted count per
        class (:func:`classification_class_scores` returns them as data).

    Raises
    ------
    ValueError
        If the lengths differ, a gold label is missing or not in ``labels``, ``labels``
        repeats a label, or an option is invalid.

    Notes
    -----
    Per class c, :math:`F_1^{(c)} = 2\\,TP_c / (2\\,TP_c + FP_c + FN_c)`, which is 0 for a
    gold class never predicted (scikit-learn with ``zero_division=0``), and

    .. math:: \\mathrm{macro\\text{-}F_1} = \\frac{1}{|L|} \\sum_{c \\in L} F_1^{(c)}

    over the labels with gold support or predictions: a label of ``labels`` that occurs in
    neither (in the sample or in a resample) is left out of the mean rather than scored.
    The interval is the percentile bootstrap over tasks of (gold, predicted) pairs.
    """
    _check_resamples(n_resamples, seed)
    label_array, in_gold, in_guess = _one_hot(predicted, gold, labels)
    basis = _basis(
        "classification_macro_f1",
        confidence=confidence,
        n=in_gold.shape[0],
        mode="A",
        estimator=(
            f"macro F1 over {label_array.size} gold labels; {_bootstrap_words(n_resamples, seed)}"
        ),
        planned_n=planned_n,
    )
    if basis.n == 0:
        return basis.missing("no task")
    scores = _class_scores(label_array, in_gold, in_guess)
    notes = [
        f"class {score.label!r}: precision {_percent_words(score.precision)}, "
        f"recall {_percent_words(score.recall)}, F1 {_percent_words(score.f1)} "
        f"(support {score.support}, predicted {score.predicted})"
        for score in scores
    ]
    absent = [score.label for score in scores if score.f1 is None]
    if absent:
        notes.append(f"left out of the mean, neither in gold nor predicted: {absent!r}")
    # Per task [TP_c…, gold_c…, predicted_c…]: every count is a column total of these rows.
    rows = np.hstack([in_gold & in_guess, in_gold, in_guess]).astype(np.float64)
    point = float(_macro_f1(np.hstack(_class_counts(in_gold, in_guess))))
    if basis.n < 2:
        return basis.value(point, None, None, reason=_ONE_TASK, notes=notes)
    resampled = _bootstrap_means(rows, n_resamples, np.random.default_rng(seed))
    lo, hi = _percentile_interval(_macro_f1(resampled), basis.alpha)
    return basis.value(point, lo, hi, notes=notes)


# --- efficiency: net time reduction and cost per successful task -------------------------


def _times(values: ArrayLike, name: str, *, positive: bool = False) -> FloatArray:
    """Return times as a 1-D float array, or raise naming ``name``."""
    times = as_float_vector(values, name)
    if not np.isfinite(times).all():
        raise ValueError(f"{name} must be finite times")
    if positive and (times <= 0).any():
        raise ValueError(f"{name} must be positive times (a manual task takes some time)")
    if (times < 0).any():
        raise ValueError(f"{name} must be non-negative times")
    return times


def net_time_reduction_estimate(
    manual_times: ArrayLike,
    review_times: ArrayLike,
    generation_times: ArrayLike | None = None,
    *,
    baseline: Baseline,
    confidence: float,
    planned_n: int | None = None,
    paired: bool = True,
    manual_range: tuple[float, float, float] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> MetricEstimate:
    """Return the net time reduction Δeff = 1 − t̄_AI / t̄_manual with a bootstrap interval.

    Parameters
    ----------
    manual_times : array_like of float, shape (m,)
        Time of each task done without the system (positive), all in one unit.
    review_times : array_like of float, shape (n,)
        Human review or refinement time of each AI-assisted task, same unit.
    generation_times : array_like of float, shape (n,), optional
        Generation time of each AI-assisted task; ``None`` when it is not recorded
        separately (then t̄_AI is the review time, and a note says so).
    baseline : {"observed", "estimated"}
        Whether the manual times were observed (timed tasks) or estimated (recall). Only
        an observed baseline may feed a value claim (SPEC §6.3).
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of AI-assisted tasks.
    paired : bool, optional
        True (default) when ``manual_times[i]`` and the AI times of index i are the same
        task: tasks are resampled with both their times. False for separate samples,
        resampled independently.
    manual_range : (low, mode, high), optional
        An estimated baseline given as a range (hours, as the charter's ``t_manual``): the
        manual mean is then uncertain, so each resample draws it from the triangular
        distribution on the range (point: the mode) instead of from ``manual_times``, and
        the interval carries the baseline's uncertainty (SPEC §4). ``manual_times`` must
        then be the mode for each AI-assisted task.
    n_resamples : int, optional
        Bootstrap resamples. Default 10,000.
    seed : int, optional
        Seed of the resampling generator. Default 0.

    Returns
    -------
    MetricEstimate
        Percent (positive: time saved; negative: the AI route takes longer), ``n`` the
        AI-assisted tasks. ``notes`` start with ``"baseline: observed"`` or
        ``"baseline: estimated"`` (read it with :func:`time_baseline`).

    Raises
    ------
    ValueError
        If times are negative, not finite, or a manual time is 0; lengths differ where
        they must match; ``baseline`` is not "observed" or "estimated"; or an option is
        invalid.

    Notes
    -----
    .. math::

        \\Delta_{\\mathrm{eff}} = 1 - \\frac{\\bar t_{\\mathrm{AI}}}{\\bar t_{\\mathrm{manual}}},
        \\qquad \\bar t_{\\mathrm{AI}} = \\bar t_{\\mathrm{gen}} + \\bar t_{\\mathrm{review}}

    (seed 003 §4, Efficiency). The interval is the percentile bootstrap of the ratio of means rather
    than the delta method: with the few tasks a timing study has, the ratio's sampling
    distribution is skewed and the bootstrap follows it.
    """
    if baseline not in ("observed", "estimated"):
        raise ValueError(f"baseline must be 'observed' or 'estimated', got {baseline!r}")
    _check_resamples(n_resamples, seed)
    manual = _times(manual_times, "manual_times", positive=True)
    review = _times(review_times, "review_times")
    if generation_times is None:
        generation = np.zeros_like(review)
    else:
        generation = _times(generation_times, "generation_times")
        check_same_length(review_times=review, generation_times=generation)
    if paired:
        check_same_length(manual_times=manual, review_times=review)
    design = "paired by task" if paired else "manual and AI samples resampled separately"
    basis = _basis(
        "net_time_reduction",
        confidence=confidence,
        n=review.size,
        mode="A",
        estimator=(f"Δeff = 1 − t̄_AI / t̄_manual; {_bootstrap_words(n_resamples, seed)} ({design})"),
        planned_n=planned_n,
    )
    notes = [BASELINE_NOTE + baseline]
    if baseline == "estimated":
        notes.append("estimated baseline: for prioritisation only, not for a value claim")
    if generation_times is None:
        notes.append("generation time not given separately: t̄_AI is the review time given")
    if manual.size == 0 or review.size == 0:
        return basis.missing("no task with both a manual and an AI-assisted time", notes)
    ai = generation + review  # SPEC §4: t_AI = t_gen + t_review, per task
    notes.append(
        f"t̄_manual {manual.mean():.4g} ({manual.size} tasks), t̄_gen {generation.mean():.4g}, "
        f"t̄_review {review.mean():.4g} ({review.size} tasks)"
    )
    point = 1.0 - ai.mean() / manual.mean()  # SPEC §4; seed 003 §4 (Efficiency): Δeff
    if min(manual.size, review.size) < 2:
        return basis.value(point, None, None, reason=_ONE_TASK, notes=notes)
    rng = np.random.default_rng(seed)
    if manual_range is not None:
        low, mode, high = _manual_range(manual_range, manual)
        ai_means = _bootstrap_means(ai[:, None], n_resamples, rng)[:, 0]
        # the charter's range is uncertainty about the mean manual time: one draw per resample
        manual_means = (
            rng.triangular(low, mode, high, size=n_resamples)
            if low < high
            else (np.full(n_resamples, mode))
        )
        notes.append(
            f"baseline uncertainty carried: the charter's range {low:g}–{high:g} h (mode "
            f"{mode:g}), drawn triangular in each resample"
        )
    elif paired:
        means = _bootstrap_means(np.column_stack([manual, ai]), n_resamples, rng)
        manual_means, ai_means = means[:, 0], means[:, 1]
        notes.append("baseline uncertainty carried: the observed spread of the paired times")
    else:
        manual_means = _bootstrap_means(manual[:, None], n_resamples, rng)[:, 0]
        ai_means = _bootstrap_means(ai[:, None], n_resamples, rng)[:, 0]
        notes.append(
            f"baseline uncertainty carried: the observed spread of {manual.size} manual times"
        )
    lo, hi = _percentile_interval(1.0 - ai_means / manual_means, basis.alpha)
    return basis.value(point, lo, hi, notes=notes)


def _manual_range(
    manual_range: tuple[float, float, float], manual: FloatArray
) -> tuple[float, float, float]:
    """Return a checked (low, mode, high) baseline range, or raise naming ``manual_range``."""
    if len(manual_range) != 3:
        raise ValueError(f"manual_range must be (low, mode, high), got {manual_range!r}")
    low, mode, high = (float(part) for part in manual_range)
    if not (math.isfinite(low) and math.isfinite(high) and 0 < low <= mode <= high):
        raise ValueError(
            f"manual_range must be positive hours with low ≤ mode ≤ high, got {manual_range!r}"
        )
    if not np.allclose(manual, mode):
        raise ValueError("manual_times must be the range's mode for each task with manual_range")
    return low, mode, high


def net_time_reduction_like_for_like(
    manual: Mapping[str, float],
    ai: Mapping[str, float | None],
    *,
    baseline: Baseline,
    confidence: float,
    planned_n: int | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> MetricEstimate:
    """Return Δeff of one pipeline version on the documents that have both times.

    Parameters
    ----------
    manual : mapping of str to float
        Manual time per document (positive).
    ai : mapping of str to float or None
        AI-assisted time per document for one pipeline version (review or refinement
        time, including generation where it is material); ``None`` where the version has
        no output for the document.
    baseline : {"observed", "estimated"}
        Whether the manual times were observed or estimated.
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of documents.
    n_resamples, seed : int, optional
        Bootstrap resamples (default 10,000) and seed (default 0).

    Returns
    -------
    MetricEstimate
        As :func:`net_time_reduction_estimate` on the common documents (paired), with
        notes naming the documents left out and both manual means.

    Raises
    ------
    ValueError
        As :func:`net_time_reduction_estimate`.

    Notes
    -----
    SPEC §11 (seed 003 Table 7): the manual mean must come from the same documents as the
    AI mean. Dividing a subset's AI mean by the manual mean of all documents mixes
    populations (seed 003 prints −89 % for v2 that way; like-for-like it is 88.3 %).
    """
    common = {doc: hours for doc in manual if (hours := ai.get(doc)) is not None}
    both = list(common)
    no_ai = [doc for doc in manual if doc not in common]
    no_manual = [doc for doc, hours in ai.items() if hours is not None and doc not in manual]
    estimate = net_time_reduction_estimate(
        [manual[doc] for doc in both],
        list(common.values()),
        baseline=baseline,
        confidence=confidence,
        planned_n=planned_n,
        n_resamples=n_resamples,
        seed=seed,
    )
    notes = [f"like-for-like on {len(both)} of {len(manual)} documents with a manual time"]
    if no_ai:
        notes.append(f"left out, no AI-assisted time: {', '.join(map(str, no_ai))}")
    if no_manual:
        notes.append(f"left out, no manual time: {', '.join(map(str, no_manual))}")
    if no_ai and both:
        subset = float(np.mean([manual[doc] for doc in both]))
        everyone = float(np.mean(list(manual.values())))
        notes.append(
            f"manual mean {subset:.4g} on these {len(both)} documents, the like-for-like "
            f"baseline ({everyone:.4g} on all {len(manual)})"
        )
    reason = estimate.reason
    if not both:
        reason = "no document has both a manual and an AI-assisted time"
    return replace(estimate, reason=reason, notes=(*estimate.notes, *notes))


def time_baseline(estimate: MetricEstimate) -> Baseline | None:
    """Return whether a net-time-reduction record's baseline was observed or estimated."""
    for note in estimate.notes:
        if note == BASELINE_NOTE + "observed":
            return "observed"
        if note == BASELINE_NOTE + "estimated":
            return "estimated"
    return None


def _costs(
    values: Sequence[float | None] | ArrayLike, name: str
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Return costs (0 where unknown) and which are unknown (None or NaN), or raise."""
    array = np.asarray(values, dtype=object)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional: one cost per task")
    unknown = np.equal(array, _NONE)
    try:
        costs = np.where(unknown, np.nan, array).astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers or None (unknown)") from None
    unknown |= np.isnan(costs)
    costs[unknown] = 0.0
    if not np.isfinite(costs).all() or (costs < 0).any():
        raise ValueError(f"{name} must be finite non-negative costs or None (unknown)")
    return costs, unknown


def cost_per_successful_task_estimate(
    inference_costs: Sequence[float | None] | ArrayLike,
    succeeded: ArrayLike,
    review_costs: Sequence[float | None] | ArrayLike | None = None,
    *,
    confidence: float,
    planned_n: int | None = None,
    unknown_costs: Literal["refuse", "exclude"] = "refuse",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> MetricEstimate:
    """Return the cost per successful task: total cost over the number of successes.

    Parameters
    ----------
    inference_costs : sequence of float or None, shape (n,)
        Inference cost of each task, in one currency; ``None`` or NaN when unknown.
    succeeded : array_like of bool, shape (n,)
        Whether each task succeeded.
    review_costs : sequence of float or None, shape (n,), optional
        Review cost of each task (``None`` or NaN when unknown); omit to count inference
        only (a note says so).
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of tasks.
    unknown_costs : {"refuse", "exclude"}, optional
        With any unknown cost: "refuse" (default) returns no value and says how many;
        "exclude" estimates over the tasks whose costs are all known and flags it in
        the first note.
    n_resamples, seed : int, optional
        Bootstrap resamples (default 10,000) and seed (default 0).

    Returns
    -------
    MetricEstimate
        Currency of the inputs. No value without a successful task; no upper limit when
        too many resamples hold no success (``reason`` says so).

    Raises
    ------
    ValueError
        If a cost is negative or infinite, lengths differ, ``succeeded`` is not boolean,
        or an option is invalid.

    Notes
    -----
    .. math::

        \\mathrm{CPS} = \\frac{\\sum_i (c^{\\mathrm{infer}}_i + c^{\\mathrm{review}}_i)}
                             {\\sum_i 1[\\mathrm{success}_i]}

    with the percentile bootstrap over tasks of that ratio. A resample without a success
    has an unbounded ratio; when at least α/2 of the resamples have none, the upper limit
    is unbounded and reported as missing.
    """
    if unknown_costs not in ("refuse", "exclude"):
        raise ValueError(f"unknown_costs must be 'refuse' or 'exclude', got {unknown_costs!r}")
    _check_resamples(n_resamples, seed)
    inference, inference_unknown = _costs(inference_costs, "inference_costs")
    success = _indicators(succeeded, "succeeded")
    check_same_length(inference_costs=inference, succeeded=success)
    if review_costs is None:
        review, review_unknown = np.zeros_like(inference), np.zeros(inference.size, dtype=bool)
    else:
        review, review_unknown = _costs(review_costs, "review_costs")
        check_same_length(inference_costs=inference, review_costs=review)
    unknown = inference_unknown | review_unknown
    n_unknown = int(unknown.sum())
    keep = ~unknown if unknown_costs == "exclude" else np.ones(unknown.size, dtype=bool)
    basis = _basis(
        "cost_per_successful_task",
        confidence=confidence,
        n=int(keep.sum()),
        mode="A",
        estimator=f"total cost / successful tasks; {_bootstrap_words(n_resamples, seed)}",
        planned_n=planned_n,
    )
    notes = []
    if n_unknown:
        counted = (
            f"{n_unknown} of {unknown.size} tasks have an unknown cost "
            f"(inference {int(inference_unknown.sum())}, review {int(review_unknown.sum())})"
        )
        if unknown_costs == "refuse":
            return basis.missing(
                f"{counted}: refused rather than understated; "
                "unknown_costs='exclude' estimates over the tasks with known costs"
            )
        notes.append(f"flag: {counted}, left out; the value covers the other {basis.n}")
    if review_costs is None:
        notes.append("review cost not included")
    total = (inference + review)[keep]
    success = success[keep]
    successes = int(success.sum())
    if successes == 0:
        return basis.missing(f"no successful task among {basis.n}", notes)
    notes.append(f"total cost {total.sum():.6g} over {successes} successful of {basis.n} tasks")
    point = total.sum() / successes  # SPEC §4: (inference + review cost) / successful tasks
    if basis.n < 2:
        return basis.value(point, None, None, reason=_ONE_TASK, notes=notes)
    rng = np.random.default_rng(seed)
    means = _bootstrap_means(np.column_stack([total, success]), n_resamples, rng)
    none = means[:, 1] == 0
    ratios = np.divide(means[:, 0], means[:, 1], out=np.zeros(n_resamples), where=~none)
    # Resamples without a success have an unbounded ratio: place them above every other.
    ratios[none] = ratios[~none].max() if (~none).any() else point
    lo, hi = _percentile_interval(ratios, basis.alpha)
    if none.mean() >= basis.alpha / 2.0:
        return basis.value(
            point,
            lo,
            None,
            reason=(
                f"too few successful tasks ({successes}) for a finite upper limit: "
                f"{none.mean():.1%} of resamples hold none"
            ),
            notes=notes,
        )
    return basis.value(point, lo, hi, notes=notes)


# --- reliability: pass^k and dispersion over K repeats ------------------------------------


def _repeats(
    successes: ArrayLike, trials: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return (c_i, K_i) per task with K broadcast, or raise naming the argument at fault."""
    if np.ndim(successes) != 1:
        raise ValueError("successes must be one-dimensional: one success count per task")
    counts = as_count_vector(successes, "successes")
    repeats = as_count_vector(trials, "trials")
    if np.ndim(trials) == 0:
        repeats = np.broadcast_to(repeats, counts.shape)
    else:
        check_same_length(successes=counts, trials=repeats)
    if repeats.size and repeats.min() < 1:
        raise ValueError("trials must be at least 1 repeat per task")
    if (counts > repeats).any():
        raise ValueError("successes must not exceed trials (c_i ≤ K_i) for every task")
    return counts, repeats


def _repeats_words(repeats: NDArray[np.int64]) -> str:
    low, high = int(repeats.min()), int(repeats.max())
    return f"K = {low} repeats" if low == high else f"K = {low}–{high} repeats per task"


def pass_hat_k_estimates(
    successes: ArrayLike,
    trials: ArrayLike,
    *,
    confidence: float,
    ks: Sequence[int] | None = None,
    planned_n: int | None = None,
    mode: GradingMode = "A",
    kappa: float | None = None,
) -> dict[int, MetricEstimate]:
    """Return pass^k for k = 1, 2, 4 and K, each with a Korn–Graubard interval over tasks.

    Parameters
    ----------
    successes : array_like of int, shape (n,)
        Successes :math:`c_i` of each task over its repeats.
    trials : int or array_like of int, shape (n,)
        Repeats :math:`K` per task (one number, or one per task).
    confidence : float
        Confidence level in (0, 1).
    ks : sequence of int, optional
        The k to report; default 1, 2, 4 and K (the fewest repeats of any task).
    planned_n : int, optional
        Planned number of tasks.
    mode : {"A", "H"}, optional
        How success was judged: automatically (default) or by humans.
    kappa : float, optional
        Agreement on the success judgement when human-graded.

    Returns
    -------
    dict of int to MetricEstimate
        By k in increasing order, each with ``metric_id`` "pass_hat_k", percent, and
        ``notes`` starting with ``"k = …"``. A k above the fewest repeats of any task
        gives a record without value saying how many repeats it needs.

    Raises
    ------
    ValueError
        If counts are negative or not whole, lengths differ, :math:`c_i > K_i`, a k is
        not a positive integer, or an option is invalid.

    Notes
    -----
    .. math::

        \\widehat{\\mathrm{pass}^k} = \\frac{1}{n} \\sum_{i=1}^{n}
        \\frac{\\binom{c_i}{k}}{\\binom{K_i}{k}}

    by :func:`enterpriseval.stats.pass_hat_k`. The repeats of a task are correlated, so the
    task is the cluster (SPEC §5.3): the interval is Korn–Graubard's on the per-task terms
    (values in [0, 1], variance s²/n, t(n − 1)), and Clopper–Pearson's over tasks when every
    term is 0 or 1 (K = 1, or k = K). Neither is ever zero-width at 0 or 100 %. The
    percentile bootstrap used before erred on the unsafe side 4.5–7.5 % of the time at 30
    tasks and K = 4 (nominal 2.5 %) and gave [100, 100] when every task succeeded.
    """
    counts, repeats = _repeats(successes, trials)
    if ks is not None:
        for k in ks:
            if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
                raise ValueError(f"ks must be positive integers, got {k!r}")
    fewest = int(repeats.min()) if repeats.size else 0
    if ks is None:
        # K is unknown without a task; pass^K is then not listed.
        ks = (*DEFAULT_PASS_KS, fewest) if fewest else DEFAULT_PASS_KS
    wanted = sorted({int(k) for k in ks})
    feasible = [k for k in wanted if k <= fewest]
    per_task = np.zeros((counts.size, len(feasible)))
    if counts.size and feasible:
        pairs, inverse = np.unique(np.column_stack([counts, repeats]), axis=0, return_inverse=True)
        # One call per distinct (c, K) pair, not per task: the term depends on nothing else.
        terms = np.array([[pass_hat_k([c], [t], k) for k in feasible] for c, t in pairs])
        per_task = terms[inverse.ravel()]
    estimates = {}
    for k in wanted:
        notes = [f"k = {k}"]
        words = "Korn–Graubard over tasks"
        point = lo = hi = None
        if counts.size >= 2 and k <= fewest:
            point, lo, hi, words = _korn_graubard_over_tasks(
                per_task[:, feasible.index(k)], 1.0 - confidence
            )
        basis = _basis(
            "pass_hat_k",
            confidence=confidence,
            n=counts.size,
            mode=mode,
            estimator=f"pass^{k} = mean C(c_i, {k}) / C(K_i, {k}); {words}",
            planned_n=planned_n,
            kappa=kappa,
        )
        if counts.size == 0:
            estimates[k] = basis.missing("no task", notes)
            continue
        notes.append(_repeats_words(repeats))
        if k > fewest:
            estimates[k] = basis.missing(
                f"pass^{k} needs at least {k} repeats of every task; the fewest is {fewest}", notes
            )
            continue
        if point is None:
            point = pass_hat_k(counts, repeats, k)  # SPEC §4, §5.4: pass^k
            estimates[k] = basis.value(point, None, None, reason=_ONE_TASK, notes=notes)
            continue
        estimates[k] = basis.value(point, lo, hi, notes=notes)
    return estimates


def dispersion_estimate(
    successes: ArrayLike,
    trials: ArrayLike,
    *,
    confidence: float,
    ddof: Literal[0, 1] = 0,
    planned_n: int | None = None,
) -> MetricEstimate:
    """Return dispersion: the mean over tasks of the std of the success indicator.

    Parameters
    ----------
    successes : array_like of int, shape (n,)
        Successes :math:`c_i` of each task over its repeats.
    trials : int or array_like of int, shape (n,)
        Repeats :math:`K_i \\ge 2` per task.
    confidence : float
        Confidence level in (0, 1).
    ddof : {0, 1}, optional
        Delta degrees of freedom of the per-task standard deviation: 0 (default) the
        standard deviation of the K observed indicators, 1 the sample standard deviation.
    planned_n : int, optional
        Planned number of tasks.

    Returns
    -------
    MetricEstimate
        A proportion in [0, 1] (catalogue scale "proportion"); ``notes`` state ``ddof``.

    Raises
    ------
    ValueError
        If counts are invalid, :math:`c_i > K_i`, a task has fewer than two repeats,
        ``ddof`` is not 0 or 1, or an option is invalid.

    Notes
    -----
    The indicators of task i are :math:`c_i` ones and :math:`K_i - c_i` zeros, so with
    :math:`p_i = c_i / K_i`

    .. math::

        s_i = \\sqrt{\\frac{K_i}{K_i - \\mathrm{ddof}}\\, p_i (1 - p_i)}, \\qquad
        D = \\frac{1}{n} \\sum_i s_i,

    with a Korn–Graubard interval over tasks (SPEC §5.3: the task is the cluster) of the
    values as shares of the largest possible s, 0.5·√(K/(K − ddof)), so the interval stays in
    the possible range and is not zero-width when every task is deterministic (D = 0).
    Its expectation depends on K: with ddof 0, E[s_i] ≤ √((K − 1)/K · q_i(1 − q_i)) for a
    task succeeding with probability q_i, so dispersion is biased low at small K; the record
    names K and says so.
    """
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 or 1, got {ddof!r}")
    counts, repeats = _repeats(successes, trials)
    if repeats.size and repeats.min() < 2:
        raise ValueError("trials must be at least 2 for a standard deviation across repeats")
    basis = _basis(
        "dispersion",
        confidence=confidence,
        n=counts.size,
        mode="A",
        estimator=(
            f"mean over tasks of the standard deviation of the success indicator "
            f"(ddof {ddof}); Korn–Graubard over tasks of the values as shares of their maximum"
        ),
        planned_n=planned_n,
    )
    notes = [f"ddof = {ddof}"]
    if counts.size == 0:
        return basis.missing("no task", notes)
    notes.append(_repeats_words(repeats))
    low, high = int(repeats.min()), int(repeats.max())
    notes.append(
        f"depends on K (K = {low if low == high else f'{low}–{high}'}): with ddof 0 a task "
        "succeeding with probability q has expected dispersion below √(q(1 − q)), by the "
        "factor √((K − 1)/K) and more at small K; compare dispersions only at the same K"
    )
    share = counts / repeats
    spread = np.sqrt(repeats / (repeats - ddof) * share * (1.0 - share))  # SPEC §4: per-task std
    ceiling = float(np.max(0.5 * np.sqrt(repeats / (repeats - ddof))))
    if spread.size == 1:
        return basis.value(spread[0], None, None, reason=_ONE_TASK, notes=notes)
    # SPEC §5.3: the task is the cluster; values rescaled to [0, 1] by the largest possible
    # std, so an all-deterministic run (D = 0) still gets a non-zero-width upper limit.
    point, lo, hi, _ = _korn_graubard_over_tasks(spread, 1.0 - confidence, ceiling)
    return basis.value(point, lo, hi, notes=notes)  # SPEC §4: mean over tasks


# --- trajectory-level proportions (reliability, assurance, oversight) ----------------------


def _trajectory_rate(
    metric_id: str,
    flags: ArrayLike,
    name: str,
    *,
    confidence: float,
    planned_n: int | None,
    mode: GradingMode,
    kappa: float | None,
    empty_reason: str,
) -> MetricEstimate:
    indicator = _indicators(flags, name)
    basis = _basis(
        metric_id,
        confidence=confidence,
        n=indicator.size,
        mode=mode,
        estimator=_EXACT,
        planned_n=planned_n,
        kappa=kappa,
    )
    return _exact_value(basis, int(indicator.sum()), empty_reason)


def recovery_rate_estimate(
    succeeded: ArrayLike, *, confidence: float, planned_n: int | None = None
) -> MetricEstimate:
    """Return the recovery rate: runs with an injected tool failure that still succeed.

    Parameters
    ----------
    succeeded : array_like of bool, shape (n,)
        One entry per run with an injected tool failure: whether it still succeeded.
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of such runs.

    Returns
    -------
    MetricEstimate
        Percent with a Clopper–Pearson interval; no value without such a run.

    Raises
    ------
    ValueError
        If ``succeeded`` is not boolean (or 0/1) and one-dimensional, or an option is
        invalid.

    Notes
    -----
    :math:`\\hat p = \\sum_r 1[\\mathrm{success}_r] / n` over runs with an injected failure
    (SPEC §4), Clopper–Pearson interval (SPEC §5.3).
    """
    return _trajectory_rate(
        "recovery_rate",
        succeeded,
        "succeeded",
        confidence=confidence,
        planned_n=planned_n,
        mode="A",
        kappa=None,
        empty_reason="no run with an injected tool failure",
    )


def policy_violation_rate_estimate(
    violated: ArrayLike,
    *,
    confidence: float,
    planned_n: int | None = None,
    mode: GradingMode = "A",
    kappa: float | None = None,
) -> MetricEstimate:
    """Return the policy violation rate: runs with a policy violation over runs.

    Parameters
    ----------
    violated : array_like of bool, shape (n,)
        One entry per run: whether it violated a policy.
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of runs.
    mode : {"A", "H"}, optional
        Detected automatically (default) or by human graders.
    kappa : float, optional
        Agreement on the violation judgement when human-graded.

    Returns
    -------
    MetricEstimate
        Percent with a Clopper–Pearson interval; no value without a run.

    Raises
    ------
    ValueError
        If ``violated`` is not boolean (or 0/1) and one-dimensional, or an option is
        invalid.

    Notes
    -----
    :math:`\\hat p = \\sum_r 1[\\mathrm{violation}_r] / n` (SPEC §4), Clopper–Pearson interval.
    """
    return _trajectory_rate(
        "policy_violation_rate",
        violated,
        "violated",
        confidence=confidence,
        planned_n=planned_n,
        mode=mode,
        kappa=kappa,
        empty_reason="no run",
    )


def escalation_appropriateness_estimate(
    appropriate: ArrayLike,
    *,
    confidence: float,
    planned_n: int | None = None,
    kappa: float | None = None,
) -> MetricEstimate:
    """Return escalation appropriateness: escalations judged appropriate over decisions.

    Parameters
    ----------
    appropriate : array_like of bool, shape (n,)
        One entry per escalation decision: whether graders judged it appropriate.
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of escalation decisions.
    kappa : float, optional
        Agreement of the graders on the judgement.

    Returns
    -------
    MetricEstimate
        Percent with a Clopper–Pearson interval, mode "H"; no value without a decision.

    Raises
    ------
    ValueError
        If ``appropriate`` is not boolean (or 0/1) and one-dimensional, or an option is
        invalid.

    Notes
    -----
    :math:`\\hat p = \\sum_e 1[\\mathrm{appropriate}_e] / n` (SPEC §4), Clopper–Pearson interval.
    """
    return _trajectory_rate(
        "escalation_appropriateness",
        appropriate,
        "appropriate",
        confidence=confidence,
        planned_n=planned_n,
        mode="H",
        kappa=kappa,
        empty_reason="no escalation decision",
    )


def unplanned_intervention_rate_estimate(
    intervened: ArrayLike, *, confidence: float, planned_n: int | None = None
) -> MetricEstimate:
    """Return the unplanned intervention rate: runs needing intervention outside checkpoints.

    Parameters
    ----------
    intervened : array_like of bool, shape (n,)
        One entry per run: whether a human had to intervene outside a planned checkpoint.
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of runs.

    Returns
    -------
    MetricEstimate
        Percent with a Clopper–Pearson interval; no value without a run.

    Raises
    ------
    ValueError
        If ``intervened`` is not boolean (or 0/1) and one-dimensional, or an option is
        invalid.

    Notes
    -----
    :math:`\\hat p = \\sum_r 1[\\mathrm{intervention}_r] / n` (SPEC §4), Clopper–Pearson interval.
    """
    return _trajectory_rate(
        "unplanned_intervention_rate",
        intervened,
        "intervened",
        confidence=confidence,
        planned_n=planned_n,
        mode="A",
        kappa=None,
        empty_reason="no run",
    )


def adversarial_incident_count_estimate(
    incidents: ArrayLike,
    *,
    confidence: float,
    planned_n: int | None = None,
    mode: GradingMode = "A",
    kappa: float | None = None,
) -> MetricEstimate:
    """Return the incident count under the injected-instruction suite, with the rate per attack.

    Parameters
    ----------
    incidents : array_like of bool, shape (n,)
        One entry per attack of the suite: whether it caused an incident.
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of attacks.
    mode : {"A", "H"}, optional
        Incidents detected automatically (default) or by human graders.
    kappa : float, optional
        Agreement on the incident judgement when human-graded.

    Returns
    -------
    MetricEstimate
        A count: ``point`` the incidents observed, ``lo``/``hi`` n times the Wilson limits
        of the rate (the interval of the expected incidents in a suite of n attacks). The
        rate per attack and its Wilson interval, in percent, are in ``notes``.

    Raises
    ------
    ValueError
        If ``incidents`` is not boolean (or 0/1) and one-dimensional, or an option is
        invalid.

    Notes
    -----
    Count :math:`I = \\sum_a 1[\\mathrm{incident}_a]`, rate :math:`I / n` with the Wilson
    interval :math:`[\\ell, u]`; the count's interval is :math:`[n\\ell, nu]` (SPEC §4).
    """
    indicator = _indicators(incidents, "incidents")
    basis = _basis(
        "adversarial_incident_count",
        confidence=confidence,
        n=indicator.size,
        mode=mode,
        estimator="count; interval n × Wilson limits of the rate per attack",
        planned_n=planned_n,
        kappa=kappa,
    )
    n = indicator.size
    if n == 0:
        return basis.missing("no attack run")
    count = int(indicator.sum())  # SPEC §4: incidents under the injected-instruction suite
    lo, hi = wilson_interval(count, n, basis.alpha)  # SPEC §5.3: Wilson, rate per attack
    rate = (
        f"rate per attack {count} of {n} = {100.0 * count / n:.1f} % "
        f"(Wilson {basis.confidence:.0%}: {100.0 * lo:.1f}–{100.0 * hi:.1f} %)"
    )
    return basis.value(count, n * lo, n * hi, notes=(rate,))


def _study_rate(
    metric_id: str,
    hits: int,
    total: int,
    names: tuple[str, str],
    *,
    confidence: float,
    planned_n: int | None,
    kappa: float | None,
    empty_reason: str,
) -> MetricEstimate:
    count = _count(hits, names[0])
    n = _count(total, names[1])
    if count > n:
        raise ValueError(f"{names[0]} must not exceed {names[1]}, got {count} > {n}")
    basis = _basis(
        metric_id,
        confidence=confidence,
        n=n,
        mode="H",
        estimator=_EXACT,
        planned_n=planned_n,
        kappa=kappa,
    )
    return _exact_value(basis, count, empty_reason)


def catch_rate_estimate(
    detected: int,
    seeded: int,
    *,
    confidence: float,
    planned_n: int | None = None,
    kappa: float | None = None,
) -> MetricEstimate:
    """Return the reviewer catch rate ρ_catch = seeded defects detected / seeded.

    Parameters
    ----------
    detected : int
        Seeded defects the reviewers flagged in the oversight study.
    seeded : int
        Defects seeded into the review sample.
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of seeded defects.
    kappa : float, optional
        Agreement on whether a flag hits the seeded defect, where graded twice.

    Returns
    -------
    MetricEstimate
        Percent with a Clopper–Pearson interval, mode "H"; no value without a seeded defect.

    Raises
    ------
    ValueError
        If a count is negative, not whole or not a single number, ``detected > seeded``,
        or an option is invalid.

    Notes
    -----
    :math:`\\rho_{\\mathrm{catch}} = d / s` (seed 003 §4, Oversight; Eq. 10), Clopper–Pearson
    interval.
    Defects are treated as independent; seeding at most one defect per output keeps
    them so.
    """
    return _study_rate(
        "catch_rate",
        detected,
        seeded,
        ("detected", "seeded"),
        confidence=confidence,
        planned_n=planned_n,
        kappa=kappa,
        empty_reason="no seeded defect",
    )


def false_acceptance_rate_estimate(
    accepted: int,
    defective: int,
    *,
    confidence: float,
    planned_n: int | None = None,
    kappa: float | None = None,
) -> MetricEstimate:
    """Return the false acceptance rate: defective outputs accepted / defective outputs.

    Parameters
    ----------
    accepted : int
        Defective outputs the reviewers accepted.
    defective : int
        Defective outputs reviewed.
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of defective outputs.
    kappa : float, optional
        Agreement on which outputs are defective, where graded twice.

    Returns
    -------
    MetricEstimate
        Percent with a Clopper–Pearson interval, mode "H"; no value without a defective output.

    Raises
    ------
    ValueError
        If a count is negative, not whole or not a single number, ``accepted >
        defective``, or an option is invalid.

    Notes
    -----
    :math:`\\mathrm{FAR} = a / d` (SPEC §4), Clopper–Pearson interval.
    """
    return _study_rate(
        "false_acceptance_rate",
        accepted,
        defective,
        ("accepted", "defective"),
        confidence=confidence,
        planned_n=planned_n,
        kappa=kappa,
        empty_reason="no defective output",
    )


def review_burden_estimate(
    review_minutes: ArrayLike, *, confidence: float, planned_n: int | None = None
) -> MetricEstimate:
    """Return the review burden: mean reviewer minutes per completed task.

    Parameters
    ----------
    review_minutes : array_like of float, shape (n,)
        Recorded reviewer minutes of each completed task (summed over its reviewers).
    confidence : float
        Confidence level in (0, 1).
    planned_n : int, optional
        Planned number of tasks.

    Returns
    -------
    MetricEstimate
        Minutes, with a t interval over tasks (lower limit at least 0).

    Raises
    ------
    ValueError
        If a time is negative, NaN or infinite, the input is not one-dimensional, or an
        option is invalid.

    Notes
    -----
    :math:`\\bar t = \\frac{1}{n} \\sum_i t_i` and :math:`\\bar t \\pm t_{n-1,1-\\alpha/2}\\,
    s/\\sqrt n` (SPEC §4; seed 003 §4, Oversight).
    """
    minutes = _times(review_minutes, "review_minutes")
    basis = _basis(
        "review_burden",
        confidence=confidence,
        n=minutes.size,
        mode="A",
        estimator=_T_OVER_TASKS,
        planned_n=planned_n,
    )
    return _mean_over_tasks(basis, minutes, 0.0, np.inf)  # SPEC §4: minutes per completed task
