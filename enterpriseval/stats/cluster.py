"""Cluster-robust intervals for means and ratios of clustered units (SPEC §5.3, §5.4).

Units (sentences, cited chunks, key elements) are clustered within outputs, so their
scores are not independent. Both estimators here use the cluster-robust (CR1, "Stata")
variance with a Student t quantile on G − 1 degrees of freedom.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import stdtrit

from enterpriseval.stats.checks import (
    as_count_vector,
    as_float_vector,
    check_alpha,
    check_same_length,
)


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its confidence interval and sample sizes.

    Attributes
    ----------
    point : float
        The point estimate.
    lo, hi : float
        Limits of the two-sided confidence interval.
    se : float
        Standard error used for the interval (``hi - point = t·se``).
    n : int
        Number of units behind the estimate.
    n_clusters : int
        Number of clusters G; the t quantile has G − 1 degrees of freedom.
    """

    point: float
    lo: float
    hi: float
    se: float
    n: int
    n_clusters: int


def _cluster_codes(clusters: Sequence[Hashable] | ArrayLike) -> tuple[NDArray[np.intp], int]:
    """Return integer codes 0..G-1 for the cluster labels, and G."""
    labels = np.asarray(clusters)
    if labels.ndim != 1:
        raise ValueError(f"clusters must be one-dimensional, got shape {labels.shape}")
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError("clusters contains NaN; every unit needs a cluster label")
    if labels.dtype.kind in "iu" and labels.size and labels.min() >= 0:
        top = int(labels.max())
        if top < 4 * labels.size + 1024:
            # Small non-negative integers (output ids): count, not sort — O(N + max).
            present = np.bincount(labels, minlength=top + 1) > 0
            codes = (np.cumsum(present) - 1)[labels]
            return codes.astype(np.intp, copy=False), int(present.sum())
    try:
        unique, codes = np.unique(labels, return_inverse=True)
    except TypeError:
        raise ValueError(
            "clusters must be labels of one comparable type (all strings or all numbers)"
        ) from None
    return codes.ravel(), len(unique)


def _check_finite(total: float, name: str) -> None:
    if not np.isfinite(total):
        raise ValueError(f"{name} must be finite numbers (found an infinity)")


def _t_interval(point: float, se: float, n: int, n_clusters: int, alpha: float) -> Estimate:
    quantile = float(-stdtrit(n_clusters - 1, alpha / 2.0))  # SPEC §5.4: t with G − 1 df
    return Estimate(
        point=float(point),
        lo=float(point - quantile * se),
        hi=float(point + quantile * se),
        se=float(se),
        n=n,
        n_clusters=n_clusters,
    )


def _check_enough_clusters(n_clusters: int, name: str) -> None:
    if n_clusters < 2:
        raise ValueError(
            f"{name} must hold at least two clusters for a cluster-robust interval, "
            f"got {n_clusters}"
        )


def cluster_mean_ci(
    values: ArrayLike, clusters: Sequence[Hashable] | ArrayLike, alpha: float = 0.05
) -> Estimate:
    """Return the mean of unit values with a cluster-robust confidence interval.

    Parameters
    ----------
    values : array_like of float, shape (N,)
        One score per unit (e.g. 1 for an unsupported assertive sentence, else 0).
    clusters : array_like of hashable, shape (N,)
        The cluster of each unit (e.g. the output id); any labels of one comparable
        type (strings or numbers). Relabelling clusters does not change the result.
    alpha : float, optional
        Error level in (0, 1). Default 0.05.

    Returns
    -------
    Estimate
        ``point`` the mean, ``lo``/``hi`` the interval, ``se`` the cluster-robust
        standard error, ``n = N`` units and ``n_clusters = G``.

    Raises
    ------
    ValueError
        If the inputs are empty, of different lengths, contain NaN or infinities,
        there are fewer than two clusters, or ``alpha`` is not in (0, 1).

    Notes
    -----
    With residuals :math:`e_i = y_i - \\bar y` and cluster sums
    :math:`S_g = \\sum_{i \\in g} e_i`,

    .. math::

        \\widehat{\\mathrm{se}}^2 = \\frac{G}{G-1}\\,\\frac{N-1}{N-K}\\,
        \\frac{\\sum_g S_g^2}{N^2}, \\qquad K = 1,

    and the interval is :math:`\\bar y \\pm t_{G-1,\\,1-\\alpha/2}\\,\\widehat{\\mathrm{se}}`.
    This equals statsmodels ``OLS(values, ones).fit(cov_type="cluster",
    cov_kwds={"groups": codes, "use_correction": True, "df_correction": True},
    use_t=True)``. It is also :func:`cluster_ratio_ci` applied to per-cluster totals
    and sizes.

    References
    ----------
    .. [1] A. C. Cameron and D. L. Miller, "A practitioner's guide to cluster-robust
       inference", Journal of Human Resources 50 (2015) 317-372, Sections II-III.
    """
    alpha = check_alpha(alpha)
    y = as_float_vector(values, "values")
    codes, n_clusters = _cluster_codes(clusters)
    n = check_same_length(values=y, clusters=codes)
    if n == 0:
        raise ValueError("values is empty")
    _check_enough_clusters(n_clusters, "clusters")
    mean = y.mean()
    _check_finite(mean, "values")
    residual_sums = np.bincount(codes, weights=y - mean, minlength=n_clusters)
    k_params = 1  # the intercept
    correction = n_clusters / (n_clusters - 1) * (n - 1) / (n - k_params)  # SPEC §5.4: CR1
    se = np.sqrt(correction * (residual_sums @ residual_sums)) / n  # SPEC §5.4: sandwich
    return _t_interval(mean, se, n, n_clusters, alpha)


def cluster_ratio_ci(
    numerators: ArrayLike, denominators: ArrayLike, alpha: float = 0.05
) -> Estimate:
    """Return a ratio of per-cluster totals with a linearised cluster-robust interval.

    Parameters
    ----------
    numerators : array_like of float, shape (G,)
        Per-cluster totals :math:`y_g` (e.g. unsupported assertive sentences in output g).
    denominators : array_like of int, shape (G,)
        Per-cluster unit counts :math:`x_g` (e.g. sentences in output g); non-negative
        whole numbers with a positive total.
    alpha : float, optional
        Error level in (0, 1). Default 0.05.

    Returns
    -------
    Estimate
        ``point`` the ratio :math:`R = \\sum y_g / \\sum x_g`, ``lo``/``hi``, ``se``,
        ``n`` the total of the denominators (units) and ``n_clusters = G``.

    Raises
    ------
    ValueError
        If the inputs are empty or of different lengths, ``denominators`` are negative,
        not whole numbers or total zero, there are fewer than two clusters, or
        ``alpha`` is not in (0, 1).

    Notes
    -----
    The ratio is linearised at the cluster level (Taylor / delta method):

    .. math::

        z_g = \\frac{y_g - R\\,x_g}{\\bar x}, \\qquad
        \\widehat{\\mathrm{se}}^2 = \\frac{G}{G-1}\\,\\frac{\\sum_g z_g^2}{G^2},

    with :math:`\\bar x = \\sum_g x_g / G` and a t quantile on G − 1 degrees of
    freedom, the same CR1 convention as :func:`cluster_mean_ci` (with which it
    coincides when :math:`y_g` are within-cluster sums of unit values and :math:`x_g`
    the cluster sizes). Every row is a sampled cluster, so a cluster with
    :math:`x_g = 0` (an output with no units) still counts in G, as in design-based
    ratio estimation; unit-level cluster OLS cannot see such clusters.

    References
    ----------
    .. [1] W. G. Cochran, *Sampling Techniques*, 3rd ed., Wiley (1977), Sections 6.2-6.4
       and 9A.6 (ratio estimates with cluster units).
    .. [2] A. C. Cameron and D. L. Miller, "A practitioner's guide to cluster-robust
       inference", Journal of Human Resources 50 (2015) 317-372.
    """
    alpha = check_alpha(alpha)
    y = as_float_vector(numerators, "numerators")
    x = as_count_vector(denominators, "denominators").astype(np.float64)
    n_clusters = check_same_length(numerators=y, denominators=x)
    if n_clusters == 0:
        raise ValueError("numerators is empty")
    _check_enough_clusters(n_clusters, "numerators")
    total_x = x.sum()
    if total_x == 0:
        raise ValueError("denominators must have a positive total, got 0 units")
    total_y = y.sum()
    _check_finite(total_y, "numerators")
    ratio = total_y / total_x  # SPEC §5.3: ratio of per-cluster totals
    linearised = (y - ratio * x) / (total_x / n_clusters)  # SPEC §5.3: z_g = (y_g − R x_g)/x̄
    correction = n_clusters / (n_clusters - 1)  # SPEC §5.4: CR1, K = 1
    se = np.sqrt(correction * (linearised @ linearised)) / n_clusters
    return _t_interval(ratio, se, int(total_x), n_clusters, alpha)
