"""Confidence intervals for a binomial proportion (SPEC §5.3, §5.4).

Both functions follow statsmodels ``proportion_confint`` (``method="wilson"`` and
``method="beta"``) and agree with it to about 1e-9. They accept scalars, returning
floats, or array-likes that broadcast against each other, returning arrays.
"""

from __future__ import annotations

import math
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import betainccinv, betaincinv, ndtri, stdtrit
from scipy.stats import norm

from enterpriseval.stats.checks import as_count_vector, check_alpha

FloatArray = NDArray[np.float64]


def _as_counts(values: ArrayLike, name: str) -> NDArray[Any]:
    """Return ``values`` as an integer array of its own shape (at least 1-D), or raise."""
    array = np.asarray(values)
    if array.dtype.kind in "iu":
        # Integer arrays can only fail the sign check; skipping the float round trip of
        # the shared helper keeps million-element calls fast.
        if array.size and array.min() < 0:
            raise ValueError(f"{name} must be non-negative counts, got a negative value")
        return np.atleast_1d(array)
    return as_count_vector(np.ravel(array), name).reshape(array.shape or (1,))


def _counts_and_trials(
    successes: ArrayLike, n: ArrayLike
) -> tuple[FloatArray, FloatArray, tuple[int, ...]]:
    """Return validated (successes, n) as float arrays of one shape, and the output shape."""
    try:
        shape = np.broadcast_shapes(np.shape(successes), np.shape(n))
    except ValueError:
        raise ValueError(
            f"successes and n must have broadcastable shapes, got {np.shape(successes)} "
            f"and {np.shape(n)}"
        ) from None
    k = _as_counts(successes, "successes")
    trials = _as_counts(n, "n")
    if math.prod(shape) == 0:
        raise ValueError("successes is empty")
    if trials.min() < 1:
        raise ValueError("n must be at least 1 (a proportion of zero trials is undefined)")
    if (k > trials).any():
        raise ValueError("successes must not exceed n")
    if k.shape != trials.shape:
        k, trials = np.broadcast_arrays(k, trials)
    return k.astype(np.float64), trials.astype(np.float64), shape


def _shape_output(
    lo: FloatArray, hi: FloatArray, shape: tuple[int, ...]
) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
    if shape == ():
        return float(lo.flat[0]), float(hi.flat[0])
    return lo.reshape(shape), hi.reshape(shape)


@overload
def wilson_interval(successes: int, n: int, alpha: float = ...) -> tuple[float, float]: ...
@overload
def wilson_interval(successes: ArrayLike, n: ArrayLike, alpha: float = ...) -> tuple[Any, Any]: ...
def wilson_interval(successes: ArrayLike, n: ArrayLike, alpha: float = 0.05) -> tuple[Any, Any]:
    """Return the Wilson score interval for a binomial proportion.

    Parameters
    ----------
    successes : int or array_like of int
        Number of successes, ``0 <= successes <= n``.
    n : int or array_like of int
        Number of trials, at least 1. Broadcasts against ``successes``.
    alpha : float, optional
        Error level in (0, 1); the interval has coverage ``1 - alpha``. Default 0.05.

    Returns
    -------
    lo, hi : float or ndarray
        Interval limits in [0, 1]. Floats when both inputs are scalars, otherwise
        arrays of the broadcast shape.

    Raises
    ------
    ValueError
        If ``successes`` or ``n`` is negative or not a whole number, ``n`` is 0,
        ``successes > n``, the input is empty, or ``alpha`` is not in (0, 1).

    Notes
    -----
    With :math:`z = \\Phi^{-1}(1 - \\alpha/2)`, :math:`k` successes in :math:`n` trials,

    .. math::

        \\text{centre} = \\frac{k + z^2/2}{n + z^2}, \\qquad
        \\text{half} = \\frac{z \\sqrt{k(n-k)/n + z^2/4}}{n + z^2},

    and the interval is ``centre ± half`` clipped to [0, 1]; this is the statsmodels
    expression multiplied through by :math:`n`. The upper limit is computed as 1 minus
    the lower limit for the :math:`n - k` failures (the same number in exact
    arithmetic), so the interval is exactly mirror-symmetric, its lower limit is
    exactly 0 at ``k = 0`` and its upper limit exactly 1 at ``k = n``.

    References
    ----------
    .. [1] E. B. Wilson, "Probable inference, the law of succession, and statistical
       inference", JASA 22 (1927) 209-212.
    .. [2] L. D. Brown, T. T. Cai and A. DasGupta, "Interval estimation for a binomial
       proportion", Statistical Science 16 (2001) 101-133.
    """
    alpha = check_alpha(alpha)
    k, trials, shape = _counts_and_trials(successes, n)
    z = float(norm.isf(alpha / 2.0))
    z2 = z * z
    failures = trials - k
    # Half-width z·sqrt(k(n−k)/n + z²/4)/(n + z²), built in place to limit passes.
    half = failures * k
    half /= trials
    half += z2 / 4.0
    np.sqrt(half, out=half)
    half *= z
    denominator = np.add(trials, z2, out=trials)
    half /= denominator  # SPEC §5.3; Brown, Cai and DasGupta (2001) Eq. 4
    # lo = centre − half with centre = (k + z²/2)/(n + z²); hi is 1 minus the lower
    # limit for the failures, which makes the interval exactly mirror-symmetric. At
    # k = 0 the centre and the half-width are the same rounded number, so the lower
    # limit is exactly 0 (and the upper exactly 1 at k = n).
    lo = np.add(k, z2 / 2.0, out=k)
    lo /= denominator
    lo -= half
    hi = np.add(failures, z2 / 2.0, out=failures)
    hi /= denominator
    hi -= half
    np.subtract(1.0, hi, out=hi)
    np.clip(lo, 0.0, 1.0, out=lo)  # SPEC §5.4: Wilson limits clipped to [0, 1]
    np.clip(hi, 0.0, 1.0, out=hi)
    return _shape_output(lo, hi, shape)


@overload
def clopper_pearson_interval(successes: int, n: int, alpha: float = ...) -> tuple[float, float]: ...
@overload
def clopper_pearson_interval(
    successes: ArrayLike, n: ArrayLike, alpha: float = ...
) -> tuple[Any, Any]: ...
def clopper_pearson_interval(
    successes: ArrayLike, n: ArrayLike, alpha: float = 0.05
) -> tuple[Any, Any]:
    """Return the Clopper–Pearson ("exact") interval for a binomial proportion.

    Parameters
    ----------
    successes : int or array_like of int
        Number of successes, ``0 <= successes <= n``.
    n : int or array_like of int
        Number of trials, at least 1. Broadcasts against ``successes``.
    alpha : float, optional
        Error level in (0, 1); the interval has coverage at least ``1 - alpha``.
        Default 0.05.

    Returns
    -------
    lo, hi : float or ndarray
        Interval limits in [0, 1]. Floats when both inputs are scalars, otherwise
        arrays of the broadcast shape.

    Raises
    ------
    ValueError
        If ``successes`` or ``n`` is negative or not a whole number, ``n`` is 0,
        ``successes > n``, the input is empty, or ``alpha`` is not in (0, 1).

    Notes
    -----
    The limits are quantiles of beta distributions:

    .. math::

        \\text{lo} = B^{-1}(\\alpha/2;\\ k, n-k+1), \\qquad
        \\text{hi} = B^{-1}(1-\\alpha/2;\\ k+1, n-k),

    with ``lo = 0`` exactly when ``k = 0`` and ``hi = 1`` exactly when ``k = n``
    (where the beta parameters degenerate), as statsmodels ``method="beta"``.

    References
    ----------
    .. [1] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits
       illustrated in the case of the binomial", Biometrika 26 (1934) 404-413.
    """
    alpha = check_alpha(alpha)
    k, trials, shape = _counts_and_trials(successes, n)
    none = k == 0
    every = k == trials
    # Degenerate beta parameters (a = 0 or b = 0) are replaced by 1 before the call so
    # that scipy raises no invalid-value warning; those limits are overwritten below.
    lo = betaincinv(np.where(none, 1.0, k), trials - k + 1.0, alpha / 2.0)  # SPEC §5.3
    hi = betainccinv(k + 1.0, np.where(every, 1.0, trials - k), alpha / 2.0)  # SPEC §5.3
    lo[none] = 0.0  # SPEC §5.4: exactly 0 at 0/n
    hi[every] = 1.0  # SPEC §5.4: exactly 1 at n/n
    return _shape_output(lo, hi, shape)


@overload
def korn_graubard_interval(
    point: float, variance: float, n: float, alpha: float = ..., df: float | None = ...
) -> tuple[float, float]: ...
@overload
def korn_graubard_interval(
    point: ArrayLike, variance: ArrayLike, n: ArrayLike, alpha: float = ..., df: ArrayLike = ...
) -> tuple[Any, Any]: ...
def korn_graubard_interval(
    point: ArrayLike,
    variance: ArrayLike,
    n: ArrayLike,
    alpha: float = 0.05,
    df: ArrayLike | None = None,
) -> tuple[Any, Any]:
    """Return the Korn–Graubard interval of a proportion estimated under a complex design.

    Parameters
    ----------
    point : float or array_like
        The estimated proportion :math:`\\hat p` in [0, 1] (e.g. a cluster-robust ratio).
    variance : float or array_like
        Its estimated variance :math:`\\hat v \\ge 0` under the design (clustered,
        stratified or prediction-powered).
    n : float or array_like
        The number of units behind :math:`\\hat p`, at least 1; the effective sample size
        never exceeds it (the design effect is floored at 1).
    alpha : float, optional
        Error level in (0, 1). Default 0.05.
    df : float or array_like, optional
        Degrees of freedom of the variance estimate (clusters − strata), at least 1. Given,
        the effective sample size is scaled by :math:`(z/t_{df})^2` (Korn and Graubard 1998,
        Eq. 2.3); ``None`` leaves it unscaled.

    Returns
    -------
    lo, hi : float or ndarray
        Interval limits in [0, 1]; floats when every input is a scalar.

    Raises
    ------
    ValueError
        If ``point`` is outside [0, 1] or NaN, ``variance`` negative or NaN, ``n`` or ``df``
        below 1, the shapes do not broadcast, or ``alpha`` is not in (0, 1).

    Notes
    -----
    The effective sample size and count are

    .. math::

        n^* = \\min\\Big(n, \\frac{\\hat p (1 - \\hat p)}{\\hat v}\\Big)
              \\Big(\\frac{z_{1-\\alpha/2}}{t_{df,\\,1-\\alpha/2}}\\Big)^2, \\qquad
        x^* = n^* \\hat p,

    with :math:`n^* = n` (times the same factor) when :math:`\\hat p \\in \\{0, 1\\}` or
    :math:`\\hat v = 0` (the design effect is then undefined and taken as 1). The limits are
    the Clopper–Pearson beta quantiles at that (non-integer) count,

    .. math::

        \\text{lo} = B^{-1}(\\alpha/2;\\ x^*, n^* - x^* + 1), \\qquad
        \\text{hi} = B^{-1}(1 - \\alpha/2;\\ x^* + 1, n^* - x^*),

    lo = 0 at :math:`\\hat p = 0` and hi = 1 at :math:`\\hat p = 1`. With independent
    units (:math:`\\hat v = \\hat p(1 - \\hat p)/n`) and no ``df`` it is
    :func:`clopper_pearson_interval`. The beta quantiles make the interval skewed away from
    the boundary, which is what keeps each one-sided error near α/2 for rare defects and high
    success rates, where a Wald interval errs on the unsafe side far more often.

    References
    ----------
    .. [1] E. L. Korn and B. I. Graubard, "Confidence intervals for proportions with small
       expected number of positive counts estimated from survey data", Survey Methodology
       24 (1998) 193-201.
    .. [2] N. Dean and M. Pagano, "Evaluating confidence interval methods for binomial
       proportions in clustered surveys", Journal of Survey Statistics and Methodology 3
       (2015) 484-503.
    """
    alpha = check_alpha(alpha)
    arrays = {"point": point, "variance": variance, "n": n}
    if df is not None:
        arrays["df"] = df
    try:
        shape = np.broadcast_shapes(*(np.shape(v) for v in arrays.values()))
    except ValueError:
        described = ", ".join(f"{name} {np.shape(v)}" for name, v in arrays.items())
        raise ValueError(f"point, variance, n and df must broadcast, got {described}") from None
    values = {
        name: np.broadcast_to(np.asarray(v, dtype=np.float64), shape).ravel()
        for name, v in arrays.items()
    }
    p, v, size = values["point"], values["variance"], values["n"]
    if p.size == 0:
        raise ValueError("point is empty")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("point must be proportions in [0, 1]")
    if np.isnan(v).any() or (v < 0).any():
        raise ValueError("variance must be non-negative numbers")
    if np.isnan(size).any() or (size < 1).any():
        raise ValueError("n must be at least 1 unit")
    spread = p * (1.0 - p)
    informative = (spread > 0) & (v > 0)
    ratio = np.divide(spread, v, out=np.zeros_like(p), where=informative)
    effective = np.where(informative, np.minimum(size, ratio), size)  # KG 1998: deff ≥ 1
    if df is not None:
        degrees = values["df"]
        if np.isnan(degrees).any() or (degrees < 1).any():
            raise ValueError("df must be at least 1")
        # scipy.special's quantiles: the same numbers as scipy.stats' isf, without its
        # per-call overhead (the coverage simulation calls this tens of thousands of times).
        z = float(-ndtri(alpha / 2.0))
        effective = effective * (z / -stdtrit(degrees, alpha / 2.0)) ** 2  # KG 1998 Eq. 2.3
    count = effective * p  # KG 1998: x* = n*·p̂
    none = p == 0
    every = p == 1
    # KG 1998 Eq. 2.2: Clopper–Pearson at the effective count (beta quantiles take reals).
    lo = betaincinv(np.where(none, 1.0, count), effective - count + 1.0, alpha / 2.0)
    hi = betainccinv(count + 1.0, np.where(every, 1.0, effective - count), alpha / 2.0)
    lo[none] = 0.0
    hi[every] = 1.0
    return _shape_output(lo, hi, shape)
