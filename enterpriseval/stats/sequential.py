"""Grade until decided: active draws, IPW PPI increments, betting confidence sequences.

SPEC §5.5. Humans grade outputs one at a time; each output is drawn without replacement
from the not-yet-graded ones with a recorded probability q_t (:func:`draw_probabilities`,
:func:`draw_next`). Each draw gives an inverse-probability-weighted prediction-powered
increment Z_t whose conditional mean is the population value exactly, whatever the judge
does (only the draw is random). A betting confidence sequence over the increments
(:func:`mean_sequence`, :func:`ratio_sequence`) holds at every stopping time, so a session
may stop as soon as :func:`settle` reads a status from the current bounds.

The estimand is the mean over the N outputs of the frozen task set (a finite population),
not a superpopulation value.

API change: ``mean_sequence`` and ``ratio_sequence`` take ``tau`` (the uniform floor the
draws used, as :func:`draw_probabilities`); it bounds the inverse-probability weights, which
the bets need to stay valid. ``ratio_sequence`` also takes ``scale`` (the largest value a
per-output numerator or denominator can take). They also take one τ_t per draw, for sessions
that choose the uniform share draw by draw (:meth:`BettingCells.suggest_tau`; issue 19).

References
----------
.. [WSR24] I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random variables by
   betting", J. R. Stat. Soc. B 86 (2024) 1-27 (arXiv:2010.09686).
.. [WSR20] I. Waudby-Smith and A. Ramdas, "Confidence sequences for sampling without
   replacement", NeurIPS 2020 (arXiv:2006.04347).
.. [SXR23] S. Shekhar, Z. Xu, Z. Lipton, P. Liang and A. Ramdas, "Risk-limiting financial
   audits via weighted sampling without replacement", UAI 2023.
.. [ZC24] T. Zrnic and E. Candès, "Active statistical inference", ICML 2024
   (arXiv:2403.03208).
.. [ADZ23] A. N. Angelopoulos, J. C. Duchi and T. Zrnic, "PPI++: Efficient
   prediction-powered inference", arXiv:2311.01453 (2023).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from enterpriseval.stats.checks import as_float_vector, check_open_unit, check_same_length

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Status = Literal["scale", "conditional", "reject"]

#: Default uniform floor of the draw probabilities (SPEC §5.5).
DEFAULT_TAU = 0.5
#: Points of the default grid of candidate values, on [0, scale].
DEFAULT_GRID_POINTS = 1001
#: Fraction of the largest safe bet that a bet may use (WSR24 suggest c ∈ [1/2, 3/4]).
BET_TRUNCATION = 0.75
#: Prior weight, in graded outputs, of β = 1 (classic PPI) in the predictable PPI weight.
BETA_PRIOR_WEIGHT = 5.0
#: Prior variance (one pseudo-observation) of the standardised residual (WSR24 plug-in).
PRIOR_VARIANCE = 0.25
#: Floor on the predictable variance, so that a run of equal residuals keeps bets finite.
VARIANCE_FLOOR = 1e-4
#: Floor on |range| in a bet's cap, so that a zero range leaves the bet uncapped.
RANGE_FLOOR = 1e-12
#: Prior weight, in draws, of the judge's mean f̄ in the predictable mean of the adaptive bets.
MEAN_PRIOR_WEIGHT = 1.0
#: The bet rules: ``"agrapa"`` (adaptive, the default) or ``"plug-in"`` (WSR24's fixed hedge).
BetRule = Literal["agrapa", "plug-in"]
DEFAULT_BETS: BetRule = "agrapa"


# --------------------------------------------------------------------------------------
# Draws
# --------------------------------------------------------------------------------------


def draw_probabilities(
    uncertainty: ArrayLike, graded_mask: ArrayLike, tau: float = DEFAULT_TAU
) -> FloatArray:
    """Return the probabilities of drawing each output next (zero on graded ones).

    Parameters
    ----------
    uncertainty : array_like of float, shape (N,)
        s_i ≥ 0 for every output: the square root of the judge's uncertainty summed over the
        gated metrics not yet decided (SPEC §5.5). All-zero s gives uniform draws.
    graded_mask : array_like of bool, shape (N,)
        True for outputs already graded (drawn); at least one must be False.
    tau : float, optional
        Uniform floor in (0, 1]; 1 is uniform sampling. Default 0.5.

    Returns
    -------
    ndarray of float, shape (N,)
        q_t, summing to 1 over the ungraded outputs U_t and zero elsewhere.

    Notes
    -----
    q_t(i) = (1 − τ)·s_i / Σ_{U_t} s + τ / |U_t| for i ∈ U_t (ZC24, the π^(τ) rule;
    SPEC §5.5). The floor τ/|U_t| bounds the inverse-probability weights by |U_t|/τ, which
    the betting confidence sequence needs (SXR23).
    """
    s = as_float_vector(uncertainty, "uncertainty")
    try:
        mask = np.asarray(graded_mask, dtype=bool)
    except (TypeError, ValueError):
        raise ValueError("graded_mask must be a sequence of booleans") from None
    if mask.ndim != 1:
        raise ValueError(f"graded_mask must be one-dimensional, got shape {mask.shape}")
    check_same_length(uncertainty=s, graded_mask=mask)
    if not np.isfinite(s).all() or (s < 0).any():
        raise ValueError("uncertainty must be finite and non-negative")
    tau = _check_tau(tau)
    ungraded = ~mask
    n_ungraded = int(ungraded.sum())
    if n_ungraded == 0:
        raise ValueError("graded_mask marks every output graded; nothing is left to draw")
    s_ungraded = np.where(ungraded, s, 0.0)
    total = float(s_ungraded.sum())
    uniform = ungraded / n_ungraded
    if total <= 0.0:
        return uniform.astype(np.float64)
    return (1.0 - tau) * s_ungraded / total + tau * uniform  # ZC24 π^(τ); SPEC §5.5


def draw_next(q: ArrayLike, rng: np.random.Generator) -> int:
    """Return the index of the next output, drawn with probabilities ``q``.

    Parameters
    ----------
    q : array_like of float, shape (N,)
        Draw probabilities (:func:`draw_probabilities`): non-negative, summing to 1.
    rng : numpy.random.Generator
        The session's seeded generator.

    Returns
    -------
    int
        An index i with q[i] > 0.
    """
    probabilities = as_float_vector(q, "q")
    if probabilities.size == 0:
        raise ValueError("q is empty")
    if not np.isfinite(probabilities).all() or (probabilities < 0).any():
        raise ValueError("q must be finite and non-negative")
    if abs(float(probabilities.sum()) - 1.0) > 1e-9:
        raise ValueError(f"q must sum to 1, got {float(probabilities.sum())!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy.random.Generator (seeded by the caller)")
    cumulative = np.cumsum(probabilities)
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(index, int(np.flatnonzero(probabilities > 0)[-1]))  # guard the last bin


# --------------------------------------------------------------------------------------
# The betting engine (batched over replications; used by the sequences and the simulation)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _NextDraw:
    """The predictable quantities of the next draw (:meth:`BettingCells._next_draw`)."""

    beta_n: FloatArray
    beta_d: FloatArray
    c_num: FloatArray
    c_den: FloatArray
    centre: FloatArray  # (R, C, 2): X(v) at the cell ends without the drawn output's term
    low: FloatArray  # X(v) ≥ centre − low/τ_t
    high: FloatArray  # X(v) ≤ centre + high/τ_t
    base_plus: FloatArray  # (R, C): the bets λ⁺, λ⁻ before their caps
    base_minus: FloatArray


class BettingCells:
    """Capital processes over cells of candidate values, updated one draw at a time.

    Batched over R replications (the simulation runs many at once; the sequences use R = 1).
    Each cell [v_a, v_b] of candidate values carries its own predictable bets, constant on
    the cell, for two one-sided tests of the statistic X_t(v) = Zn_t − v·Zd_t:

    - K⁺(v) = Π (1 + λ⁺ X(v)), λ⁺ ≥ 0, tests "the mean of X(v) ≤ 0" (WSR24, capital process);
    - K⁻(v) = Π (1 − λ⁻ X(v)), λ⁻ ≥ 0, tests "the mean of X(v) ≥ 0".

    For a mean, Zd ≡ 1 and X(v) = Zn − v; for a ratio Σnum/Σden, Zn and Zd are the
    increments of the numerator and the denominator. A cell is rejected by a side when the
    capital of that side reaches 1/α at both ends of the cell: X(v) is affine in v and the
    bet is constant on the cell, so log K is concave in v and its minimum on the cell is at
    an end. At the true value, the cell's process is a non-negative (super)martingale, and
    Ville's inequality bounds by α the chance that it ever reaches 1/α (Ville 1939; WSR24). A
    rejection is kept for ever (running intersection).

    The bets (``bets``): ``"agrapa"`` (default) sizes each bet as Kelly would from the
    predictable estimates of the mean and variance of X(v) (:meth:`_adaptive_bets`), so a
    clearly wrong candidate is bet against hard and one near the estimate barely at all;
    ``"plug-in"`` is WSR24's predictable plug-in rule √(2 log(1/α)/(σ̃² t log(1 + t))),
    which bets the same whatever the distance to the estimate. Either way the bet is capped
    at ``truncation`` (0.75) of the largest bet that keeps every factor positive over the
    predictable range of X; any predictable bet in [0, cap] keeps K a non-negative
    martingale at the truth, so the choice changes power, never validity.
    """

    def __init__(
        self,
        *,
        n_total: int,
        replications: int,
        cell_lo: FloatArray,
        cell_hi: FloatArray,
        f_num_sum: FloatArray,
        f_den_sum: FloatArray | None,
        alpha_lower: float,
        alpha_upper: float,
        tau: float,
        bets: BetRule = DEFAULT_BETS,
        truncation: float = BET_TRUNCATION,
    ) -> None:
        if bets not in ("agrapa", "plug-in"):
            raise ValueError(f"bets must be 'agrapa' or 'plug-in', got {bets!r}")
        if not 0.0 < truncation < 1.0:
            raise ValueError(f"truncation must be in (0, 1), got {truncation!r}")
        self.n_total = n_total
        self.tau = tau
        self.bets = bets
        self.truncation = truncation
        self.t = 0
        r, c = replications, cell_lo.size
        self.ends = np.stack([cell_lo, cell_hi], axis=-1)  # (C, 2)
        self.mid = 0.5 * (cell_lo + cell_hi)  # (C,)
        self.log_bar_lower = math.log(1.0 / alpha_lower)
        self.log_bar_upper = math.log(1.0 / alpha_upper)
        self.ratio = f_den_sum is not None
        self.f_sum = (f_num_sum, f_den_sum)
        zeros = np.zeros(r)
        # Σ over graded outputs of y and f, numerator (0) and denominator (1).
        self.graded_y = [zeros.copy(), zeros.copy()]
        self.graded_f = [zeros.copy(), zeros.copy()]
        # Inverse-probability-weighted moments of graded (f, y) for the PPI weight β.
        self.moments = [np.zeros((5, r)), np.zeros((5, r))]
        # Predictable mean and sum of squared deviations of the standardised residuals.
        self.resid_mean = np.zeros((2, r))
        self.resid_sq = np.zeros((3, r))  # Σ dn², Σ dn·dd, Σ dd²
        self.log_k_plus = np.zeros((r, c, 2))
        self.log_k_minus = np.zeros((r, c, 2))
        self.rejected_plus = np.zeros((r, c), dtype=bool)
        self.rejected_minus = np.zeros((r, c), dtype=bool)
        self.z_sum = np.zeros((2, r))
        self.window = (0, c)

    def _shrink_window(self) -> None:
        """Narrow the cells still bet on to those some replication has not rejected.

        Below the first cell K⁺ has not rejected, and above the last one K⁻ has not, every
        cell is outside the running intersection for good (the bounds only tighten).
        """
        kept_plus = ~self.rejected_plus
        kept_minus = ~self.rejected_minus
        cells = kept_plus.shape[1]
        first = np.where(kept_plus.any(axis=1), kept_plus.argmax(axis=1), cells)
        last = np.where(
            kept_minus.any(axis=1), cells - kept_minus[:, ::-1].argmax(axis=1), 0
        )  # one past the highest cell K⁻ has not rejected
        start, stop = int(first.min()), int(last.max())
        self.window = (start, max(start, stop))

    def keep(self, rows: NDArray[np.bool_]) -> None:
        """Keep only the replications marked in ``rows`` (the simulation drops stopped ones)."""
        self.graded_y = [values[rows] for values in self.graded_y]
        self.graded_f = [values[rows] for values in self.graded_f]
        self.moments = [values[:, rows] for values in self.moments]
        self.resid_mean = self.resid_mean[:, rows]
        self.resid_sq = self.resid_sq[:, rows]
        self.log_k_plus = self.log_k_plus[rows]
        self.log_k_minus = self.log_k_minus[rows]
        self.rejected_plus = self.rejected_plus[rows]
        self.rejected_minus = self.rejected_minus[rows]
        self.z_sum = self.z_sum[:, rows]
        self.f_sum = (
            self.f_sum[0][rows],
            None if self.f_sum[1] is None else self.f_sum[1][rows],
        )

    def beta(self, part: int) -> FloatArray:
        """Return the predictable PPI weight β_t of one part, clipped to [0, 1].

        The weighted least-squares slope of y on f over the graded outputs with weights
        1/q (rule 3 of the research note: over-sampled uncertain outputs would skew an
        unweighted slope), shrunk towards β = 1 (classic PPI) with ``BETA_PRIOR_WEIGHT``.
        """
        if part == 1 and not self.ratio:
            return np.ones(self.resid_mean.shape[1])
        w, wf, wy, wff, wfy = self.moments[part]
        n_graded = float(self.t)
        with np.errstate(invalid="ignore", divide="ignore"):
            var_f = wff / w - (wf / w) ** 2
            cov = wfy / w - (wf / w) * (wy / w)
            slope = np.where(var_f > 1e-12, cov / var_f, 1.0)  # PPI++ tuning (ADZ23), IPW-weighted
        slope = np.where(w > 0, slope, 1.0)
        shrunk = (BETA_PRIOR_WEIGHT + n_graded * slope) / (BETA_PRIOR_WEIGHT + n_graded)
        return np.clip(shrunk, 0.0, 1.0)

    def _adaptive_bets(
        self, mid: FloatArray, variance: FloatArray, n_left: int, t: int
    ) -> tuple[FloatArray, FloatArray]:
        """Return the aGRAPA bets (λ⁺, λ⁻) of each cell, before the caps (WSR24 §5.1).

        λ = g / (σ²_X + g²), the maximiser of the second-order expansion of E log(1 + λX)
        (Kelly), with g the predictable estimate of E[X(v)] = θ − v at the cell's middle v
        and σ²_X = (|U_t|/N)²·σ̃² the predictable variance of X: the mean of the earlier
        increments X_1..X_{t−1}(v), with the judge's mean f̄ (f̄n − v·f̄d for a ratio) as
        ``MEAN_PRIOR_WEIGHT`` prior draws. K⁺ takes the positive part, K⁻ the negative
        part. Only the t − 1 earlier grades and the judge's scores enter: predictable.
        """
        big_n = self.n_total
        f_num_mean = self.f_sum[0] / big_n
        f_den_mean = np.ones_like(f_num_mean) if self.f_sum[1] is None else self.f_sum[1] / big_n
        past = t - 1
        prior = MEAN_PRIOR_WEIGHT
        mean_num = (prior * f_num_mean + self.z_sum[0]) / (prior + past)
        mean_den = (prior * f_den_mean + self.z_sum[1]) / (prior + past)  # 1 for a mean
        gap = mean_num[:, None] - mid * mean_den[:, None]  # ≈ E[X(v)] (WSR24 aGRAPA mean)
        spread = variance * (n_left / big_n) ** 2
        kelly = gap / (spread + gap * gap)
        return np.maximum(kelly, 0.0), np.maximum(-kelly, 0.0)

    def _next_draw(
        self,
        f_num_max: FloatArray,
        f_num_min: FloatArray,
        f_den_max: FloatArray | None,
        f_den_min: FloatArray | None,
    ) -> _NextDraw:
        """Return what the next draw's bets use, from the t − 1 earlier grades (predictable).

        The range of X_t(v) = Zn_t − v·Zd_t over every possible draw, at each end v of each
        cell in the window, is [centre − low/τ_t, centre + high/τ_t]: the last term of Z_t
        is (y − βf)/(N q_t) with 1/(N q_t) ≤ |U_t|/(N τ_t) (SXR23), and y ∈ [0, 1].
        """
        big_n = self.n_total
        beta_n = self.beta(0)  # from the t − 1 graded outputs: predictable
        beta_d = self.beta(1)
        t = self.t + 1
        n_left = big_n - t + 1  # |U_t|
        share = n_left / big_n
        # Predictable part c_t = β f̄ + (1/N) Σ_{S_{t−1}} (y − β f)   (research note §3)
        c_num = (beta_n * self.f_sum[0] + self.graded_y[0] - beta_n * self.graded_f[0]) / big_n
        if self.ratio:
            assert f_den_max is not None and f_den_min is not None
            f_den_total = self.f_sum[1]
            assert f_den_total is not None
            c_den = (beta_d * f_den_total + self.graded_y[1] - beta_d * self.graded_f[1]) / big_n
            den_down = beta_d * f_den_max * share  # Zd ≥ c_den − den_down/τ
            den_up = (1.0 - beta_d * f_den_min) * share  # Zd ≤ c_den + den_up/τ
        else:
            c_den = np.ones_like(c_num)
            den_down = den_up = np.zeros_like(c_num)
        num_down = beta_n * f_num_max * share
        num_up = (1.0 - beta_n * f_num_min) * share
        a, b = self.window  # cells outside are rejected for good: no need to bet on them
        ends = self.ends[None, a:b, :]  # (1, C, 2)
        # Range of X(v) = Zn − v·Zd over every possible draw (v ≥ 0), as centre ± spread/τ.
        centre = c_num[:, None, None] - ends * c_den[:, None, None]
        low = num_down[:, None, None] + ends * den_up[:, None, None]
        high = num_up[:, None, None] + ends * den_down[:, None, None]
        # Predictable variance of the standardised residual (WSR24 plug-in, prior ¼); on the
        # scale of X: Var X_t ≈ (|U_t|/N)² σ̃².
        mid = self.mid[None, a:b]
        sq_n, sq_nd, sq_d = (self.resid_sq[k][:, None] for k in range(3))
        variance = (PRIOR_VARIANCE + sq_n - 2 * mid * sq_nd + mid * mid * sq_d) / t
        variance = np.maximum(variance, VARIANCE_FLOOR)
        if self.bets == "agrapa":
            base_plus, base_minus = self._adaptive_bets(mid, variance, n_left, t)
        else:
            horizon = t * math.log(1.0 + t)
            scale_up = big_n / n_left
            base_plus = np.sqrt(2.0 * self.log_bar_lower / (variance * horizon)) * scale_up
            base_minus = np.sqrt(2.0 * self.log_bar_upper / (variance * horizon)) * scale_up
        return _NextDraw(beta_n, beta_d, c_num, c_den, centre, low, high, base_plus, base_minus)

    def suggest_tau(
        self,
        floor: float,
        *,
        f_num_max: FloatArray,
        f_num_min: FloatArray,
        f_den_max: FloatArray | None = None,
        f_den_min: FloatArray | None = None,
        cells: IntArray | None = None,
    ) -> FloatArray:
        """Return a predictable uniform share τ_t ∈ [floor, 1] for the next draw, per row.

        The most active draw (smallest τ) whose bets are not held back by their cap. The
        cap is c/(A + B/τ) (the range of X, :meth:`_next_draw`): a smaller τ shrinks the
        variance (ZC24) but widens the range by 1/τ. For each side of each cell of
        ``cells`` (default: every cell) still open and betting (λ > 0), the uncapped bet λ
        fits under the cap iff λ·(A_e + B_e/τ) ≤ c at both ends e, i.e. τ ≥ B_e/(c/λ − A_e)
        (τ = 1 when c/λ ≤ A_e: capped whatever τ). τ_t is the largest such bound over the
        open sides, clipped to [floor, 1]; ``floor`` when none is betting. It uses only the
        t − 1 earlier grades and the judge's values, so any bet sized with it stays
        predictable and the capital a martingale at the truth (Ville's inequality).
        """
        floor = _check_tau(floor)
        nxt = self._next_draw(f_num_max, f_num_min, f_den_max, f_den_min)
        a, b = self.window
        chosen = np.full(self.log_k_plus.shape[0], floor)
        if b <= a:
            return chosen
        wanted = np.zeros(self.rejected_plus.shape[1], dtype=bool)
        wanted[slice(None) if cells is None else cells] = True
        wanted = wanted[a:b]
        sides = (
            (nxt.base_plus, -nxt.centre, nxt.low, self.rejected_plus[:, a:b]),
            (nxt.base_minus, nxt.centre, nxt.high, self.rejected_minus[:, a:b]),
        )
        for bet, offset, spread, rejected in sides:
            open_side = (bet > 0) & ~rejected & wanted[None, :]
            ceiling = np.divide(
                self.truncation, bet, out=np.full(bet.shape, np.inf), where=bet > 0
            )  # c/λ: the largest range the bet λ fits under
            room = ceiling[:, :, None] - offset
            # λ·(A + B/τ) ≤ c  ⇔  τ ≥ B/(c/λ − A); capped at any τ when c/λ ≤ A: τ = 1
            need = np.where(room > 0, spread / np.where(room > 0, room, 1.0), 1.0)
            need = np.where(open_side, need.max(axis=-1), 0.0).max(axis=-1, initial=0.0)
            chosen = np.maximum(chosen, need)
        return np.asarray(np.clip(chosen, floor, 1.0), dtype=np.float64)

    def step(
        self,
        *,
        q: FloatArray,
        y_num: FloatArray,
        f_num: FloatArray,
        f_num_max: FloatArray,
        f_num_min: FloatArray,
        y_den: FloatArray | None = None,
        f_den: FloatArray | None = None,
        f_den_max: FloatArray | None = None,
        f_den_min: FloatArray | None = None,
        tau: FloatArray | None = None,
    ) -> tuple[FloatArray, FloatArray]:
        """Take one draw per replication; return the increments (Zn_t, Zd_t).

        ``q`` is q_t of the drawn output, ``y_*``/``f_*`` its human and judge values (all
        in [0, 1]), ``f_*_max``/``f_*_min`` the extremes of the judge's values over U_t,
        the outputs not graded before this draw (the drawn one included). ``tau`` is the
        uniform share τ_t this draw used, per row (default: the engine's ``tau``); it must
        have been fixed before the draw (e.g. by :meth:`suggest_tau`).
        """
        big_n = self.n_total
        nxt = self._next_draw(f_num_max, f_num_min, f_den_max, f_den_min)
        beta_n, beta_d, c_num, c_den = nxt.beta_n, nxt.beta_d, nxt.c_num, nxt.c_den
        self.t += 1
        t = self.t
        n_left = big_n - t + 1  # |U_t|
        resid_n = y_num - beta_n * f_num
        z_num = c_num + resid_n / (big_n * q)  # Z_t: E[Z_t | past] = θ_N exactly
        if self.ratio:
            assert y_den is not None and f_den is not None
            resid_d = y_den - beta_d * f_den
            z_den = c_den + resid_d / (big_n * q)
        else:
            resid_d = np.zeros_like(resid_n)
            z_den = c_den
        shares = np.full(z_num.shape, self.tau) if tau is None else np.asarray(tau, dtype=float)
        per_row = shares[:, None, None]  # 1/(N q_t) ≤ |U_t|/(N τ_t) (SXR23)
        x_low = nxt.centre - nxt.low / per_row
        x_high = nxt.centre + nxt.high / per_row
        a, b = self.window
        ends = self.ends[None, a:b, :]  # (1, C, 2)
        # Caps: 1 + λ⁺X ≥ 1 − c and 1 − λ⁻X ≥ 1 − c over the whole cell (WSR24).
        worst_low = np.maximum(np.max(-x_low, axis=-1, initial=0.0), RANGE_FLOOR)
        worst_high = np.maximum(np.max(x_high, axis=-1, initial=0.0), RANGE_FLOOR)
        lam_plus = np.minimum(nxt.base_plus, self.truncation / worst_low)[:, :, None]
        lam_minus = np.minimum(nxt.base_minus, self.truncation / worst_high)[:, :, None]
        x = z_num[:, None, None] - ends * z_den[:, None, None]
        if b > a:
            self.log_k_plus[:, a:b] += np.log1p(lam_plus * x)  # WSR24 capital process K⁺
            self.log_k_minus[:, a:b] += np.log1p(-lam_minus * x)  # WSR24 capital process K⁻
            self.rejected_plus[:, a:b] |= self.log_k_plus[:, a:b].min(axis=-1) >= self.log_bar_lower
            self.rejected_minus[:, a:b] |= (
                self.log_k_minus[:, a:b].min(axis=-1) >= self.log_bar_upper
            )
            self._shrink_window()
        # Update what the next draw's predictable quantities use.
        self.z_sum[0] += z_num
        self.z_sum[1] += z_den
        weight = 1.0 / q
        for part, (y_val, f_val) in enumerate(((y_num, f_num), (y_den, f_den))):
            if y_val is None or f_val is None:
                continue
            self.graded_y[part] += y_val
            self.graded_f[part] += f_val
            self.moments[part] += np.stack(
                [weight, weight * f_val, weight * y_val, weight * f_val**2, weight * f_val * y_val]
            )
        std_n = resid_n / (n_left * q)  # IPW mean residual over U_t
        std_d = resid_d / (n_left * q)
        dev_n = std_n - self.resid_mean[0] / t
        dev_d = std_d - self.resid_mean[1] / t
        self.resid_sq += np.stack([dev_n * dev_n, dev_n * dev_d, dev_d * dev_d])
        self.resid_mean[0] += std_n
        self.resid_mean[1] += std_d
        return z_num, z_den


# --------------------------------------------------------------------------------------
# Sequences
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SequencePath:
    """A confidence sequence, one value per draw evaluated.

    ``estimate[k]``, ``lower[k]``, ``upper[k]`` hold after draw k + 1 (on the caller's
    scale). The bounds are a running intersection: ``lower`` never decreases, ``upper``
    never increases. ``alpha_lower`` (``alpha_upper``) bounds the chance that the lower
    (upper) bound is ever above (below) the true value.
    """

    estimate: FloatArray
    lower: FloatArray
    upper: FloatArray
    n_total: int
    alpha_lower: float
    alpha_upper: float
    #: The uniform share the next draw asks for (:meth:`BettingCells.suggest_tau`), when the
    #: sequence was asked for it (``tau_floor``); ``None`` otherwise.
    tau_next: float | None = None


def mean_sequence(
    f: ArrayLike,
    order: ArrayLike,
    q_drawn: ArrayLike,
    y: ArrayLike,
    *,
    alpha_lower: float = 0.025,
    alpha_upper: float = 0.025,
    scale: float = 1.0,
    tau: float | ArrayLike = DEFAULT_TAU,
    bets: BetRule = DEFAULT_BETS,
    tau_floor: float | None = None,
    tau_at: ArrayLike | None = None,
) -> SequencePath:
    """Return the confidence sequence of a population mean graded until decided.

    Parameters
    ----------
    f : array_like of float, shape (N,)
        The judge's value for every output, in [0, scale].
    order : array_like of int, shape (T,)
        Indices of the graded outputs in draw order (distinct, T ≤ N).
    q_drawn : array_like of float, shape (T,)
        q_t(order[t]), the probability the draw had when it was made.
    y : array_like of float, shape (T,)
        The human values of the drawn outputs, in draw order, in [0, scale].
    alpha_lower, alpha_upper : float, optional
        Error of each side in (0, 1): P(the lower bound ever exceeds the mean) ≤
        ``alpha_lower``, and likewise for the upper bound. Default 0.025 each.
    scale : float, optional
        The largest value (1 for proportions, 100 for percentages). Default 1.
    tau : float or array_like of float, shape (T,), optional
        The uniform floor the draws used (:func:`draw_probabilities`); every q_drawn must
        be at least τ/|U_t|. Default 0.5. One value per draw when the session chose τ_t
        draw by draw (:meth:`BettingCells.suggest_tau`, fixed before each draw).
    bets : {"agrapa", "plug-in"}, optional
        The bet rule (:class:`BettingCells`): adaptive Kelly-style bets (default) or
        WSR24's predictable plug-in bets. Both are valid; the adaptive ones settle sooner.
    tau_floor : float, optional
        For a session that chooses τ_t draw by draw: the floor τ in (0, 1]. The path then
        carries ``tau_next``, the share the draw after the last one asks for
        (:meth:`BettingCells.suggest_tau` on the capital after the T draws, with the judge's
        extremes over the outputs not in ``order``). Default: not asked.
    tau_at : array_like of float, optional
        With ``tau_floor``: the values on [0, scale] whose cells the share is asked for (the
        thresholds a decision reads). Default: every cell.

    Returns
    -------
    SequencePath
        The estimate and bounds after each draw, on [0, scale], and ``tau_next`` when
        ``tau_floor`` is given.

    Raises
    ------
    ValueError
        Naming the argument: lengths, values outside [0, scale], repeated or out-of-range
        indices, q_drawn outside [τ/|U_t|, 1], alpha outside (0, 1).

    Notes
    -----
    With β_t the predictable PPI weight and S_{t−1} the outputs graded before draw t,

    .. math::

        Z_t = \\beta_t \\bar f + \\frac{1}{N}\\Big[\\sum_{i\\in S_{t-1}} (y_i - \\beta_t f_i)
        + \\frac{y_{I_t} - \\beta_t f_{I_t}}{q_t(I_t)}\\Big],

    so E[Z_t | past] = θ_N = mean(y) over the N outputs exactly (SXR23). With q_t ≥
    τ/|U_t|, Z_t lies in a predictable range, and the capital processes of
    :class:`BettingCells` (WSR24: capital processes with predictable adaptive bets, truncated
    at 0.75 of the largest safe bet) test each candidate mean. With uniform draws and β = 0,
    Z_t − m = (|U_t|/N)·(y_{I_t} − (N m − Σ_{S_{t−1}} y)/|U_t|), the without-replacement
    increment of WSR20, so the sequence shrinks to the point mean(y) as t → N. The
    bounds are also intersected with the sure bounds Σ_S y/N and (Σ_S y + |U_{t+1}|)/N.
    Valid at every stopping time, for any judge, any τ and any N.
    """
    scale = _check_scale(scale)
    alpha_lower = check_open_unit(alpha_lower, "alpha_lower")
    alpha_upper = check_open_unit(alpha_upper, "alpha_upper")
    judge = _unit_values(f, "f", scale)
    big_n = judge.size
    drawn, q_values, taus = _check_draws(order, q_drawn, big_n, tau)
    human = _unit_values(y, "y", scale)
    check_same_length(order=drawn, y=human)
    grid = np.linspace(0.0, 1.0, DEFAULT_GRID_POINTS)
    engine = BettingCells(
        n_total=big_n,
        replications=1,
        cell_lo=grid[:-1],
        cell_hi=grid[1:],
        f_num_sum=np.array([judge.sum()]),
        f_den_sum=None,
        alpha_lower=alpha_lower,
        alpha_upper=alpha_upper,
        tau=DEFAULT_TAU,  # each step passes the τ_t its draw used
        bets=bets,
    )
    f_max, f_min = _remaining_extremes(judge, drawn)
    steps = drawn.size
    lower = np.empty(steps)
    upper = np.empty(steps)
    estimate = np.empty(steps)
    graded_sum = 0.0
    for k in range(steps):
        engine.step(
            q=q_values[k : k + 1],
            y_num=human[k : k + 1],
            f_num=judge[drawn[k : k + 1]],
            f_num_max=f_max[k : k + 1],
            f_num_min=f_min[k : k + 1],
            tau=taus[k : k + 1],
        )
        graded_sum += human[k]
        lo, hi = _bounds_from_cells(engine, grid)
        lower[k] = max(lo[0], graded_sum / big_n)  # sure bounds: the ungraded y in [0, 1]
        upper[k] = min(hi[0], (graded_sum + big_n - k - 1) / big_n)
        estimate[k] = engine.z_sum[0, 0] / (k + 1)
    lower, upper = _running_intersection(lower, upper)
    estimate = np.clip(estimate, lower, upper)
    asked = None
    if tau_floor is not None:
        at = None if tau_at is None else as_float_vector(tau_at, "tau_at") / scale
        asked = _share_asked(engine, grid, tau_floor, at, drawn, judge)
    return SequencePath(
        estimate=estimate * scale,
        lower=lower * scale,
        upper=upper * scale,
        n_total=big_n,
        alpha_lower=alpha_lower,
        alpha_upper=alpha_upper,
        tau_next=asked,
    )


def ratio_sequence(
    f_num: ArrayLike,
    f_den: ArrayLike,
    order: ArrayLike,
    q_drawn: ArrayLike,
    y_num: ArrayLike,
    y_den: ArrayLike,
    *,
    alpha_lower: float = 0.025,
    alpha_upper: float = 0.025,
    grid: ArrayLike | None = None,
    scale: float = 1.0,
    tau: float | ArrayLike = DEFAULT_TAU,
    bets: BetRule = DEFAULT_BETS,
    tau_floor: float | None = None,
    tau_at: ArrayLike | None = None,
) -> SequencePath:
    """Return the confidence sequence of Σ y_num / Σ y_den over the N outputs.

    For a ratio whose denominator needs grading too (guidance recall: items truly
    breached). When the denominator is known for every output without grading (sentences,
    cited chunks, key elements), do not use this: call :func:`mean_sequence` on
    y_i = num_i / max_den (``scale=1``) and divide its path by the known mean denominator
    over max_den, i.e. multiply by max_den / mean(den).

    Parameters
    ----------
    f_num, f_den : array_like of float, shape (N,)
        The judge's numerator and denominator for every output, in [0, scale].
    order, q_drawn : array_like, shape (T,)
        As :func:`mean_sequence`.
    y_num, y_den : array_like of float, shape (T,)
        The human numerator and denominator of the drawn outputs, in [0, scale].
    alpha_lower, alpha_upper : float, optional
        Error of each side, as :func:`mean_sequence`.
    grid : array_like of float, optional
        Increasing candidate ratios r ≥ 0 (at least two); the bounds are grid points.
        Default 1001 points on [0, 1] (rates such as recall).
    scale : float, optional
        The largest per-output numerator or denominator (e.g. the most items an output
        can hold). Default 1.
    tau : float or array_like of float, shape (T,), optional
        The uniform floor the draws used, as :func:`mean_sequence`. Default 0.5.
    bets : {"agrapa", "plug-in"}, optional
        The bet rule, as :func:`mean_sequence`.
    tau_floor, tau_at : optional
        As :func:`mean_sequence`; ``tau_at`` holds candidate ratios (grid values).

    Returns
    -------
    SequencePath
        Bounds on the ratio (grid values) and its estimate Σ Zn / Σ Zd, clipped to them.

    Notes
    -----
    The ratio ρ = Σ num / Σ den (Σ den > 0) is the only r with Σ (num_i − r·den_i) = 0.
    For each cell [r_a, r_b] of the grid, the increments X_t(r) = Zn_t − r·Zd_t (the IPW
    PPI increments of numerator and denominator, each with its own predictable β) have
    conditional mean (1/N)Σ(num − r·den), zero at r = ρ, positive below, negative above.
    Betting that it is positive (K⁺) rejects cells below ρ, betting that it is negative
    (K⁻) cells above; a cell falls when its capital reaches 1/α at both ends (log K is
    concave in r on a cell, the bet being constant there). The lower bound is the top of
    the run of rejected cells from the bottom of the grid, the upper bound the bottom of
    the run from the top. This is the test-inversion construction of SXR23 and WSR24
    applied to Σ(num − r·den) ≤ 0 / ≥ 0. If Σ den = 0 the ratio is undefined and the
    sequence promises nothing.
    """
    scale = _check_scale(scale)
    alpha_lower = check_open_unit(alpha_lower, "alpha_lower")
    alpha_upper = check_open_unit(alpha_upper, "alpha_upper")
    judge_num = _unit_values(f_num, "f_num", scale)
    judge_den = _unit_values(f_den, "f_den", scale)
    big_n = check_same_length(f_num=judge_num, f_den=judge_den)
    drawn, q_values, taus = _check_draws(order, q_drawn, big_n, tau)
    human_num = _unit_values(y_num, "y_num", scale)
    human_den = _unit_values(y_den, "y_den", scale)
    check_same_length(order=drawn, y_num=human_num, y_den=human_den)
    points = _check_grid(grid)
    engine = BettingCells(
        n_total=big_n,
        replications=1,
        cell_lo=points[:-1],
        cell_hi=points[1:],
        f_num_sum=np.array([judge_num.sum()]),
        f_den_sum=np.array([judge_den.sum()]),
        alpha_lower=alpha_lower,
        alpha_upper=alpha_upper,
        tau=DEFAULT_TAU,  # each step passes the τ_t its draw used
        bets=bets,
    )
    num_max, num_min = _remaining_extremes(judge_num, drawn)
    den_max, den_min = _remaining_extremes(judge_den, drawn)
    steps = drawn.size
    lower = np.empty(steps)
    upper = np.empty(steps)
    estimate = np.empty(steps)
    for k in range(steps):
        pick = slice(k, k + 1)
        engine.step(
            q=q_values[pick],
            y_num=human_num[pick],
            f_num=judge_num[drawn[pick]],
            f_num_max=num_max[pick],
            f_num_min=num_min[pick],
            y_den=human_den[pick],
            f_den=judge_den[drawn[pick]],
            f_den_max=den_max[pick],
            f_den_min=den_min[pick],
            tau=taus[pick],
        )
        lo, hi = _bounds_from_cells(engine, points)
        lower[k], upper[k] = lo[0], hi[0]
        den_total = engine.z_sum[1, 0]
        estimate[k] = engine.z_sum[0, 0] / den_total if den_total > 0 else np.nan
    lower, upper = _running_intersection(lower, upper)
    estimate = np.where(np.isnan(estimate), 0.5 * (lower + upper), estimate)
    asked = None
    if tau_floor is not None:
        at = None if tau_at is None else as_float_vector(tau_at, "tau_at")
        asked = _share_asked(engine, points, tau_floor, at, drawn, judge_num, judge_den)
    return SequencePath(
        estimate=np.clip(estimate, lower, upper),
        lower=lower,
        upper=upper,
        n_total=big_n,
        alpha_lower=alpha_lower,
        alpha_upper=alpha_upper,
        tau_next=asked,
    )


def _share_asked(
    engine: BettingCells,
    points: FloatArray,
    floor: float,
    at: FloatArray | None,
    drawn: IntArray,
    judge_num: FloatArray,
    judge_den: FloatArray | None = None,
) -> float:
    """Return the share τ the draw after ``drawn`` asks for (:meth:`BettingCells.suggest_tau`).

    Over the cells holding ``at`` (every cell when None), with the judge's extremes over the
    outputs not in ``drawn``; the floor when every output is drawn.
    """
    floor = _check_tau(floor)
    left = np.ones(judge_num.size, dtype=bool)
    left[drawn] = False
    if not left.any():
        return floor
    cells = None
    if at is not None:
        if not np.isfinite(at).all():
            raise ValueError("tau_at must be finite numbers")
        # The cell [points[j], points[j + 1]) holding each value, clipped to the grid.
        cells = np.clip(np.searchsorted(points, at, side="right") - 1, 0, points.size - 2)
    den = None if judge_den is None else judge_den[left]
    asked = engine.suggest_tau(
        floor,
        f_num_max=np.array([judge_num[left].max()]),
        f_num_min=np.array([judge_num[left].min()]),
        f_den_max=None if den is None else np.array([den.max()]),
        f_den_min=None if den is None else np.array([den.min()]),
        cells=cells,
    )
    return float(asked[0])


def next_tau(floor: float, previous: float | None, asked: Iterable[float]) -> float:
    """Return τ_t of a session with an adaptive uniform share: never below τ_{t−1}.

    Parameters
    ----------
    floor : float
        The session's floor τ in (0, 1].
    previous : float or None
        τ_{t−1}, the share of the draw before (None before the first draw).
    asked : iterable of float
        The shares the metrics still undecided ask for (``SequencePath.tau_next``), each
        computed from the grades before the draw only (predictable).

    Returns
    -------
    float
        τ_t = max(floor, τ_{t−1}, max asked), in [floor, 1] (every share is checked to lie
        in (0, 1]).

    Notes
    -----
    Issue 19: once a bet was held back by its cap the session stays that uniform; without
    the running maximum, runs that settle slowly drift back to small τ_t and heavier
    weights (``enterpriseval.stats.sequential_sim``, ``SimCell.adaptive_tau``). Any τ_t
    fixed before the draw keeps the capital processes martingales at the truth (the cap
    of draw t is computed with it), so the guarantees hold whatever this rule returns.
    """
    floor = _check_tau(floor)
    shares = [floor]
    if previous is not None:
        shares.append(_check_tau(previous))
    for value in asked:
        shares.append(_check_tau(value))
    return float(max(shares))


def _running_intersection(lower: FloatArray, upper: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Return the running intersection of the bounds; an empty one collapses to its middle.

    An empty intersection can only follow a wrong rejection (probability ≤ α); the point
    keeps lower ≤ upper for the callers.
    """
    lower = np.maximum.accumulate(lower)
    upper = np.minimum.accumulate(upper)
    crossed = lower > upper
    middle = 0.5 * (lower + upper)
    return np.where(crossed, middle, lower), np.where(crossed, middle, upper)


def _bounds_from_cells(engine: BettingCells, grid: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Return (lower, upper) per replication from the cells rejected so far."""
    cells = grid.size - 1
    # Lower bound: the top of the leading run of cells rejected by K⁺.
    kept_plus = ~engine.rejected_plus
    first_kept = np.where(kept_plus.any(axis=1), kept_plus.argmax(axis=1), cells)
    lower = grid[first_kept]
    # Upper bound: the bottom of the trailing run of cells rejected by K⁻.
    kept_minus = ~engine.rejected_minus[:, ::-1]
    last_kept = np.where(
        kept_minus.any(axis=1), cells - 1 - kept_minus.argmax(axis=1), -1
    )  # index of the highest cell not rejected
    upper = grid[last_kept + 1]
    return lower, upper


# --------------------------------------------------------------------------------------
# Decisions
# --------------------------------------------------------------------------------------


def settle(
    lower: float, upper: float, theta_out: float, theta_in: float, direction: int
) -> Status | None:
    """Return the status the current bounds decide, or None while undecided.

    Parameters
    ----------
    lower, upper : float
        The current bounds of the metric's confidence sequence.
    theta_out, theta_in : float
        The charter's outer and inner thresholds.
    direction : int
        +1 (higher is better) or −1.

    Returns
    -------
    "scale", "conditional", "reject" or None

    Notes
    -----
    For d = +1 (SPEC §5.5, §6.1; strict inequalities as §6.1): Scale when lower > θin;
    Reject when upper ≤ θout; Conditional when θout < lower and upper ≤ θin. For d = −1
    the mirror: Scale when upper < θin; Reject when lower ≥ θout; Conditional when
    upper < θout and lower ≥ θin.
    """
    d = _check_direction(direction)
    lo, hi = float(lower), float(upper)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError("lower and upper must be finite numbers")
    if lo > hi:
        raise ValueError(f"lower ({lo!r}) must not exceed upper ({hi!r})")
    t_out, t_in = _check_thresholds(theta_out, theta_in, d)
    if d < 0:  # reflect a lower-is-better metric
        lo, hi, t_out, t_in = -hi, -lo, -t_out, -t_in
    if lo > t_in:
        return "scale"
    if hi <= t_out:
        return "reject"
    if lo > t_out and hi <= t_in:
        return "conditional"
    return None


def expected_more(
    path: SequencePath, theta_out: float, theta_in: float, direction: int, n_total: int
) -> int:
    """Return about how many more outputs the metric needs graded to settle.

    Parameters
    ----------
    path : SequencePath
        The metric's sequence so far (at least one draw).
    theta_out, theta_in : float
        The charter's thresholds.
    direction : int
        +1 or −1.
    n_total : int
        N, the outputs in the session.

    Returns
    -------
    int
        0 when already settled; at most N − t.

    Notes
    -----
    A heuristic, not a promise. If the estimate holds, each side of the sequence must
    shrink below its distance to the threshold it has to clear (Scale: the lower side
    below estimate − θin; Reject: the upper side below θout − estimate; Conditional:
    both sides inside (θout, θin]). The width is taken to shrink as t^(−p), p fitted on
    the path from the width at t/2 and at t (clipped to [0.25, 1]; 0.5 before 10 draws,
    the 1/√t of a betting sequence), so the required t′ = t·ρ^(1/p) for the shrink
    factor ρ. An estimate on a threshold needs every output: N − t.
    """
    d = _check_direction(direction)
    t_out, t_in = _check_thresholds(theta_out, theta_in, d)
    try:
        big_n = int(n_total)
    except (TypeError, ValueError):
        raise ValueError(f"n_total must be a positive integer, got {n_total!r}") from None
    t = int(path.estimate.size)
    if t == 0:
        raise ValueError("path holds no draw; grade at least one output first")
    if big_n < t:
        raise ValueError(f"n_total ({big_n}) is smaller than the draws in path ({t})")
    left = big_n - t
    lo, hi, est = float(path.lower[-1]), float(path.upper[-1]), float(path.estimate[-1])
    if settle(lo, hi, t_out, t_in, d) is not None:
        return 0
    if d < 0:
        lo, hi, est, t_out, t_in = -hi, -lo, -est, -t_out, -t_in
    below, above = est - lo, hi - est
    if est > t_in:
        factors = [below / (est - t_in)]
    elif est <= t_out:
        factors = [above / (t_out - est)] if est < t_out else [math.inf]
    else:
        factors = [below / (est - t_out), above / (t_in - est)] if est < t_in else [math.inf]
    shrink = max(factors)
    if not math.isfinite(shrink):
        return left
    shrink = max(shrink, 1.0)
    exponent = 0.5
    if t >= 10:
        width_now = float(path.upper[-1] - path.lower[-1])
        width_half = float(path.upper[t // 2 - 1] - path.lower[t // 2 - 1])
        if width_now > 0 and width_half > width_now:
            exponent = float(np.clip(math.log(width_half / width_now) / math.log(2), 0.25, 1.0))
    needed = max(1, math.ceil(t * shrink ** (1.0 / exponent) - t - 1e-9))  # ≥ 1 more
    return int(min(left, needed))


# --------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------


def _check_tau(tau: float) -> float:
    try:
        value = float(tau)
    except (TypeError, ValueError):
        raise ValueError(f"tau must be a number in (0, 1], got {tau!r}") from None
    if not 0.0 < value <= 1.0:
        raise ValueError(f"tau must be in (0, 1], got {tau!r}")
    return value


def _check_scale(scale: float) -> float:
    try:
        value = float(scale)
    except (TypeError, ValueError):
        raise ValueError(f"scale must be a positive number, got {scale!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"scale must be a positive number, got {scale!r}")
    return value


def _check_direction(direction: int) -> int:
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 or -1, got {direction!r}")
    return int(direction)


def _check_thresholds(theta_out: float, theta_in: float, direction: int) -> tuple[float, float]:
    try:
        t_out, t_in = float(theta_out), float(theta_in)
    except (TypeError, ValueError):
        raise ValueError("theta_out and theta_in must be numbers") from None
    if not (math.isfinite(t_out) and math.isfinite(t_in)):
        raise ValueError("theta_out and theta_in must be finite")
    if direction * (t_in - t_out) <= 0:
        raise ValueError(
            f"inverted pair: theta_in ({t_in!r}) must be "
            f"{'above' if direction > 0 else 'below'} theta_out ({t_out!r}) for direction "
            f"{direction:+d}"
        )
    return t_out, t_in


def _unit_values(values: ArrayLike, name: str, scale: float) -> FloatArray:
    array = as_float_vector(values, name)
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite numbers")
    if (array < 0).any() or (array > scale).any():
        raise ValueError(f"{name} must lie in [0, scale] = [0, {scale:g}]")
    return array / scale


def _check_draws(
    order: ArrayLike, q_drawn: ArrayLike, big_n: int, tau: float | ArrayLike
) -> tuple[IntArray, FloatArray, FloatArray]:
    raw = as_float_vector(order, "order")
    if not np.all(raw == np.floor(raw)) or (raw < 0).any() or (raw >= big_n).any():
        raise ValueError(f"order must hold indices of outputs in [0, {big_n - 1}]")
    drawn = raw.astype(np.int64)
    if np.unique(drawn).size != drawn.size:
        raise ValueError("order repeats an output; draws are without replacement")
    q_values = as_float_vector(q_drawn, "q_drawn")
    check_same_length(order=drawn, q_drawn=q_values)
    if np.ndim(tau) == 0:
        taus = np.full(drawn.size, _check_tau(tau))  # type: ignore[arg-type]
    else:
        taus = as_float_vector(tau, "tau")
        check_same_length(order=drawn, tau=taus)
        for value in taus:
            _check_tau(value)
    n_left = big_n - np.arange(drawn.size)
    floor = taus / n_left
    if not np.isfinite(q_values).all() or (q_values > 1.0).any():
        raise ValueError("q_drawn must be probabilities in (0, 1]")
    short = q_values < floor * (1.0 - 1e-9)
    if short.any():
        k = int(np.argmax(short))
        raise ValueError(
            f"q_drawn[{k}] = {q_values[k]!r} is below the floor tau/|U_t| = {floor[k]!r}; "
            "pass the tau the draws used"
        )
    return drawn, q_values, taus


def _check_grid(grid: ArrayLike | None) -> FloatArray:
    if grid is None:
        return np.linspace(0.0, 1.0, DEFAULT_GRID_POINTS)
    points = as_float_vector(grid, "grid")
    if points.size < 2 or not np.isfinite(points).all():
        raise ValueError("grid must hold at least two finite candidate ratios")
    if (points < 0).any() or (np.diff(points) <= 0).any():
        raise ValueError("grid must be non-negative and strictly increasing")
    return points


def _remaining_extremes(values: FloatArray, drawn: IntArray) -> tuple[FloatArray, FloatArray]:
    """Return max and min of ``values`` over U_t (not graded before draw t), for each t."""
    never = np.ones(values.size, dtype=bool)
    never[drawn] = False
    rest_max = float(values[never].max()) if never.any() else -np.inf
    rest_min = float(values[never].min()) if never.any() else np.inf
    in_order = values[drawn]
    suffix_max = np.maximum.accumulate(in_order[::-1])[::-1]
    suffix_min = np.minimum.accumulate(in_order[::-1])[::-1]
    return np.maximum(suffix_max, rest_max), np.minimum(suffix_min, rest_min)
