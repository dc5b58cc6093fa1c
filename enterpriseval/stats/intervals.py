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
from scipy.special import betainccinv, betaincinv
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
