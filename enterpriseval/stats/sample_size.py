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
