"""An upper confidence limit on the share of wrong final labels (SPEC §5.1, the bias bound).

Pure: numpy and scipy only. The charter may pre-register, for a human-graded metric, the
agreement rule "bias bound": graders' error rates measured against an adjudicated reliability
sample bound how far the final labels can be from the truth, instead of κ (which is low for
accurate graders when a category is rare, the "kappa paradox").

Model (docs/statistics.md, "The bias-bound agreement rule", derives it). Each unit i is rated
on a binary criterion by the graders G_i (at least two); where they disagree an adjudicator
decides, and the adjudicated value is taken as the truth T_i. Where they agree, their common
label is final, so the final label L_i is wrong exactly when every grader of i gave the same
wrong label. With grader g's error rate e_g(t) = P(g says not t | T = t) and the graders'
errors independent given the truth,

    P(L_i ≠ T_i | T_i = t) = Π_{g ∈ G_i} e_g(t)                                  (1)

and the bias of the final labels' prevalence is bounded by the share of wrong final labels,

    |mean(L) − mean(T)| ≤ ε = mean_i Π_{g ∈ G_i} e_g(t_i).                        (2)

A grader's disagreement with the final value estimates e_g(t) from below: when the other
graders are wrong with g, the final value is wrong too and g seems right. With ẽ_g(t) =
P(g ≠ L | L = t), e_g(t) ≤ ẽ_g(t) / (1 − max_{o ≠ g} e_o(t)) up to second-order terms, which
is the correction applied to the upper limits.

The upper limits are one-sided Clopper–Pearson limits on each grader's error count per final
class (Clopper and Pearson 1934), each at level α/m for the m rates used (Bonferroni), so all
hold together with probability at least 1 − α; ε is increasing in every rate, so its value at
the upper limits is an upper confidence limit at level 1 − α.

With weights (a reliability sample enriched with judge-flagged outputs, each unit weighted by
its inverse inclusion probability) the counts are the weighted counts scaled to Kish's
effective sample size n_eff = (Σw)² / Σw² (Kish 1965, §11.7).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import betainccinv

from enterpriseval.stats.checks import check_alpha

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class LabelErrorBound:
    """The share of wrong final labels on one criterion, its upper limit and the error rates.

    ``errors`` and ``rated`` are graders × 2 (column t: units whose final value is t, 0 or
    1; effective counts under weights); ``rate`` their ratio and ``upper`` the corrected
    upper limits e_g(t)^U. ``share`` is ε of Eq. (2) at the observed rates (corrected the
    same way) and ``upper_share`` at the upper limits: the bound.
    """

    errors: FloatArray
    rated: FloatArray
    rate: FloatArray
    upper: FloatArray
    share: float
    upper_share: float
    n_units: int
    alpha: float
    n_rates: int


def _as_ratings(ratings: ArrayLike) -> FloatArray:
    try:
        array = np.asarray(ratings, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("ratings: expected units × graders of 0/1 (NaN where not rated)") from None
    if array.ndim != 2:
        raise ValueError(f"ratings: expected units × graders, got shape {array.shape}")
    given = array[~np.isnan(array)]
    if not np.isin(given, (0.0, 1.0)).all():
        raise ValueError("ratings: labels must be 0 or 1 (NaN where a grader did not rate)")
    return array


def _upper_limits(errors: FloatArray, rated: FloatArray, level: float) -> FloatArray:
    """Return one-sided Clopper–Pearson upper limits at ``level`` (1 where nothing was rated)."""
    upper = np.ones_like(errors)
    some = rated > 0
    below = some & (errors < rated)
    # Clopper and Pearson (1934): hi = B⁻¹(1 − level; x + 1, n − x); exactly 1 at x = n
    upper[below] = betainccinv(errors[below] + 1.0, rated[below] - errors[below], level)
    return upper


def _corrected(rates: FloatArray, present: NDArray[np.bool_]) -> FloatArray:
    """Return e_g(t) ≤ ẽ_g(t) / (1 − max_{o ≠ g} e_o(t)), capped at 1 (module notes)."""
    masked = np.where(present, rates, 0.0)
    n_graders = rates.shape[0]
    others = np.empty_like(rates)
    for t in range(2):  # two classes: the largest other grader's rate, without a loop on units
        column = masked[:, t]
        order = np.argsort(column)[::-1]
        first, second = column[order[0]], column[order[1]] if n_graders > 1 else 0.0
        others[:, t] = np.where(np.arange(n_graders) == order[0], second, first)
    with np.errstate(divide="ignore", invalid="ignore"):
        corrected = np.where(others < 1.0, rates / (1.0 - others), 1.0)
    return np.minimum(corrected, 1.0)


def label_error_bound(
    ratings: ArrayLike,
    final: ArrayLike,
    *,
    alpha: float = 0.05,
    weights: ArrayLike | None = None,
) -> LabelErrorBound:
    """Return the share of wrong final labels with its upper confidence limit (Eq. 2).

    Parameters
    ----------
    ratings : array_like, shape (units, graders)
        Each grader's 0/1 label on the criterion, NaN where the grader did not rate the
        unit. Units with fewer than two ratings are left out (their final value is a single
        grader's, outside this model).
    final : array_like, shape (units,)
        The final 0/1 value of each unit: the graders' common label or the adjudicator's.
    alpha : float, optional
        One-sided error level in (0, 1): the upper limit holds with probability ≥ 1 − α.
    weights : array_like, shape (units,), optional
        Positive design weights (1/π) of an enriched reliability sample; ``None``: all 1.

    Returns
    -------
    LabelErrorBound

    Raises
    ------
    ValueError
        Naming the argument: ratings not units × graders of 0/1/NaN, ``final`` of another
        length or not 0/1, weights not positive, ``alpha`` outside (0, 1), or no unit with
        two ratings.

    Notes
    -----
    ẽ_g(t) = Σ_i w_i 1[g rated i, L_i = t, r_gi ≠ t] / Σ_i w_i 1[g rated i, L_i = t]; its
    upper limit is Clopper–Pearson's at level α/m on the Kish-effective counts; the limits
    are corrected for errors shared by all graders (module notes); ε^U = Σ_i w_i Π_{g ∈ G_i}
    e_g(L_i)^U / Σ_i w_i. With two graders who never disagree, ε^U is the product of two
    zero-error Clopper–Pearson limits: 0/n errors give 1 − (α/m)^(1/n) each.

    References
    ----------
    .. [1] C. J. Clopper and E. S. Pearson, Biometrika 26 (1934) 404-413.
    .. [2] L. Kish, *Survey Sampling*, Wiley (1965), §11.7 (effective sample size).
    .. [3] A. P. Dawid and A. M. Skene, "Maximum likelihood estimation of observer
       error-rates using the EM algorithm", Applied Statistics 28 (1979) 20-28 (the
       conditionally independent grader-error model of Eq. 1).
    """
    alpha = check_alpha(alpha)
    codes = _as_ratings(ratings)
    truth = np.asarray(final, dtype=np.float64)
    if truth.shape != (codes.shape[0],):
        raise ValueError(
            f"final: expected one final value per unit ({codes.shape[0]}), got shape {truth.shape}"
        )
    if not np.isin(truth, (0.0, 1.0)).all():
        raise ValueError("final: values must be 0 or 1")
    w = np.ones(codes.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != truth.shape or not (np.isfinite(w) & (w > 0)).all():
        raise ValueError(f"weights: expected {truth.size} positive finite weights")
    rated = ~np.isnan(codes)
    keep = rated.sum(axis=1) >= 2
    if not keep.any():
        raise ValueError("ratings: no unit was rated by two graders")
    codes, rated, truth, w = codes[keep], rated[keep], truth[keep], w[keep]
    classes = truth.astype(np.intp)
    wrong = rated & (codes != truth[:, None])
    # Weighted counts per grader (rows) and final class (columns), one bincount each.
    onehot = np.stack([classes == 0, classes == 1], axis=1).astype(np.float64)  # units × 2
    weight_rated = (rated * w[:, None]).T @ onehot  # graders × 2: Σ w over rated units
    weight_wrong = (wrong * w[:, None]).T @ onehot
    square_rated = (rated * (w**2)[:, None]).T @ onehot
    with np.errstate(divide="ignore", invalid="ignore"):
        # Kish (1965): n_eff = (Σw)²/Σw², the errors scaled to it
        n_eff = np.where(square_rated > 0, weight_rated**2 / square_rated, 0.0)
        rate = np.where(weight_rated > 0, weight_wrong / weight_rated, 0.0)
    errors = rate * n_eff
    present = n_eff > 0
    n_rates = int(present.sum())
    level = alpha / n_rates  # Bonferroni over the m rates used
    raw_upper = _upper_limits(errors, n_eff, level)
    upper = _corrected(raw_upper, present)
    point = _corrected(rate, present)

    def share(rates: FloatArray) -> float:
        # SPEC §5.1; Eq. (2): ε = mean_i Π_{g ∈ G_i} e_g(L_i), weighted
        per_grader = np.where(rated, rates[:, classes].T, 1.0)  # units × graders
        return float(np.average(per_grader.prod(axis=1), weights=w))

    return LabelErrorBound(
        errors=errors,
        rated=n_eff,
        rate=rate,
        upper=upper,
        share=share(point),
        upper_share=share(upper),
        n_units=int(keep.sum()),
        alpha=alpha,
        n_rates=n_rates,
    )
