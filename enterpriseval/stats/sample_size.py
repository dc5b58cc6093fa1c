"""Planning the number of graded units for a proportion (SPEC §5.3, §5.4)."""

from __future__ import annotations

import math

from scipy.stats import norm

from enterpriseval.stats.checks import check_alpha, check_open_unit

# A product such as z²·p(1−p)/margin² that lies within this relative distance of an
# integer is taken to be that integer: decimal inputs (0.1, 0.05) are not exact in
# binary, and 100.00000000000001 must not become 101.
_INTEGER_TOLERANCE = 1e-9


def required_sample_size(p: float, margin: float, alpha: float = 0.05) -> int:
    """Return the number of units needed to estimate a proportion within ``margin``.

    Parameters
    ----------
    p : float
        Anticipated proportion, in the open interval (0, 1). Use 0.5 when unknown:
        it maximises p(1 − p) and so gives the worst-case (largest) n.
    margin : float
        Desired half-width δ of the normal-approximation interval, in (0, 1).
    alpha : float, optional
        Error level in (0, 1). Default 0.05.

    Returns
    -------
    int
        :math:`n = \\lceil z_{1-\\alpha/2}^2\\, p (1-p) / \\delta^2 \\rceil`, at least 1.

    Raises
    ------
    ValueError
        If ``p`` or ``margin`` is not in (0, 1), or ``alpha`` is not in (0, 1).

    Notes
    -----
    The quantile is the exact normal quantile ``norm.ppf(1 - alpha / 2)``, not 1.96
    typed in: p = 0.5, δ = 0.05, α = 0.05 gives 384.15 and so 385.

    Rounding up is done after snapping a value within a relative 1e-9 of an integer
    to that integer, so that floating-point noise in the product (e.g.
    384.00000000000006 for an exact 384) does not add a unit. The cost of the choice
    is that a true value exceeding an integer by less than one part in 10⁹ is
    rounded down, which is immaterial for planning.

    References
    ----------
    .. [1] W. G. Cochran, *Sampling Techniques*, 3rd ed., Wiley (1977), Section 4.4.
    """
    p = check_open_unit(p, "p", "use p = 0.5 for the worst case when p is unknown")
    margin = check_open_unit(
        margin, "margin", "give the half-width as a proportion, e.g. 0.05 for ±5 percentage points"
    )
    alpha = check_alpha(alpha)
    z = float(norm.ppf(1.0 - alpha / 2.0))
    exact = z * z * p * (1.0 - p) / (margin * margin)  # SPEC §5.3: z²·p(1−p)/δ²
    nearest = round(exact)
    if abs(exact - nearest) <= _INTEGER_TOLERANCE * max(exact, 1.0):
        return max(int(nearest), 1)
    return max(math.ceil(exact), 1)  # SPEC §5.3: round up


def outputs_to_clear(
    n: int, half_width: float, distance: float, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Return the total sample size at which a bound clears a threshold with ``power``.

    Parameters
    ----------
    n : int
        The current sample size (graded outputs, the grading unit), at least 1.
    half_width : float
        h = |estimate − bound|, the one-sided half-width of the current interval, > 0.
    distance : float
        δ = |estimate − θ|, the distance from the estimate to the threshold, > 0.
    alpha : float, optional
        Error level of the two-sided interval the bound belongs to, in (0, 1).
    power : float, optional
        The chance the bound clears θ if the estimate holds, in (0, 1). Default 0.8.

    Returns
    -------
    int
        :math:`n' = \\lceil n (h/\\delta)^2 ((z_{1-\\alpha/2} + z_{power}) / z_{1-\\alpha/2})^2
        \\rceil` (SPEC §5.3), at least ``n``.

    Notes
    -----
    With the half-width h = z_{1−α/2}·σ/√n, σ = h√n/z_{1−α/2}. If the true value is the
    estimate, the estimate at n′ is normal around it with standard error σ/√n′ and its bound
    lies z_{1−α/2}·σ/√n′ beyond; the bound clears θ with probability
    Φ(δ√n′/σ − z_{1−α/2}), which equals ``power`` when δ√n′/σ = z_{1−α/2} + z_power, i.e. at
    n′ above. With power = 0.5 it is n·(h/δ)², where the bound is expected to sit at θ.
    The usual power calculation for a one-sided test of a proportion (Chow, Shao and Wang
    2008, §4.1), written with the current interval's half-width.
    """
    if n < 1:
        raise ValueError(f"n must be a positive sample size, got {n!r}")
    if not half_width > 0 or not math.isfinite(half_width):
        raise ValueError(f"half_width must be positive and finite, got {half_width!r}")
    if not distance > 0 or not math.isfinite(distance):
        raise ValueError(f"distance must be positive and finite, got {distance!r}")
    alpha = check_alpha(alpha)
    power = check_open_unit(power, "power")
    z = float(norm.ppf(1.0 - alpha / 2.0))
    z_power = float(norm.ppf(power))
    exact = n * (half_width / distance) ** 2 * ((z + z_power) / z) ** 2  # SPEC §5.3
    nearest = round(exact)
    if abs(exact - nearest) <= _INTEGER_TOLERANCE * max(exact, 1.0):
        return max(int(nearest), n)
    return max(math.ceil(exact), n)
