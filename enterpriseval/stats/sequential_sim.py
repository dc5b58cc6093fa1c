"""Seeded simulation of grading until decided (SPEC §5.5; issue 19, Deliver 5).

Each :class:`SimCell` is one operating point. :func:`simulate_sequential` runs
``replications`` evaluations of it at once (vectorised across evaluations) through the
product's engine (:class:`enterpriseval.stats.sequential.BettingCells`, the code behind
:func:`~enterpriseval.stats.sequential.mean_sequence`), with the planner's draw rule
(:func:`~enterpriseval.stats.sequential.draw_probabilities`: s_i = √ of the judge's
uncertainty summed over the metrics still undecided, τ = 0.5), the product's default bets
(adaptive; ``SimCell.bets`` and ``SimCell.truncation`` change them) and the session's stopping
rule: stop when every gated metric is settled, when any is settled Reject, or at the budget.
With ``SimCell.adaptive_tau`` τ is a floor and draw t uses τ_t = max(τ_{t−1}, the largest
:meth:`~enterpriseval.stats.sequential.BettingCells.suggest_tau` of the undecided metrics).

The model of an evaluation (one population per replication and metric):

- N outputs; output i has a latent pass probability p_i ~ Beta(κθ, κ(1 − θ)) and exactly
  k = round(θN) outputs pass (chosen with probabilities ∝ p_i, Efraimidis–Spirakis keys),
  so the estimand θ_N = mean(y) is exactly the cell's truth;
- κ = 0.3 is a *strong* judge (p_i near 0 or 1, the judge nearly knows the grade), κ = 1 a
  *weak* one; the judge reports f_i = p_i (*calibrated*), logit f = 1.5·logit p
  (*overconfident*) or f = min(1, p + 0.05) (*biased* +0.05), with uncertainty f(1 − f);
- a higher-is-better metric with θout = 0.75 and θin = 0.85; with three metrics, the first
  is at the cell's truth and the other two at θin + 0.05 (Scale, but they must be graded to
  be settled), the gate being conjunctive;
- α = 0.05: each lower bound at α/2 (a wrong Scale or a status above the truth: the
  intersection–union test needs no correction), each upper bound at α/(2J) (Bonferroni over
  the J metrics that could each be wrongly settled Reject).

Reads per cell: grades used (mean, median, P90), P(decided before the budget), P(correct
status), P(wrong Scale), P(wrong Reject: a metric settled Reject while above θout), P(above:
a final status above the true one), with Clopper–Pearson upper bounds. :func:`naive_peeking`
runs the same cell with a fixed-n normal PPI interval re-checked after every grade, which
must show an inflated wrong-Scale rate (a check that the harness can fail).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, logit
from scipy.stats import beta as beta_dist
from scipy.stats import norm

from enterpriseval.stats.sequential import (
    BET_TRUNCATION,
    DEFAULT_BETS,
    DEFAULT_GRID_POINTS,
    BetRule,
    BettingCells,
)

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
JudgeKind = Literal["calibrated", "overconfident", "biased"]

THETA_OUT = 0.75
THETA_IN = 0.85
#: Beta concentration of the latent pass probabilities: strong and weak judges.
KAPPA = {"strong": 0.3, "weak": 1.0}
#: Status codes, ordered as the gate orders them.
REJECT, CONDITIONAL, SCALE = 0, 1, 2
STATUS_NAMES = {REJECT: "reject", CONDITIONAL: "conditional", SCALE: "scale"}
#: Truths of the cells: θin, θout and ±0.01, 0.03, 0.05, 0.1 around them.
OFFSETS = (0.01, 0.03, 0.05, 0.1)


def truths() -> list[float]:
    """Return the cells' true values, sorted and without repeats."""
    values = {THETA_OUT, THETA_IN}
    for centre in (THETA_OUT, THETA_IN):
        for offset in OFFSETS:
            values.update({round(centre - offset, 4), round(centre + offset, 4)})
    return sorted(values)


@dataclass(frozen=True)
class SimCell:
    """One operating point of the simulation."""

    n_total: int
    strength: Literal["strong", "weak"]
    judge: JudgeKind
    truth: float
    n_metrics: int = 1
    alpha: float = 0.05
    tau: float = 0.5
    budget_fraction: float = 0.4
    bets: BetRule = DEFAULT_BETS
    truncation: float = BET_TRUNCATION
    #: True: τ is a floor; draw t uses τ_t = max(τ_{t−1}, BettingCells.suggest_tau), predictable.
    adaptive_tau: bool = False

    @property
    def budget(self) -> int:
        return round(self.budget_fraction * self.n_total)

    @property
    def truths(self) -> list[float]:
        return [self.truth] + [THETA_IN + 0.05] * (self.n_metrics - 1)

    def label(self) -> str:
        return (
            f"N={self.n_total} {self.strength} {self.judge} θ={self.truth:.2f} J={self.n_metrics}"
        )


@dataclass
class CellResult:
    """Per-replication outcomes of one cell."""

    cell: SimCell
    grades: IntArray
    decided: BoolArray
    status: IntArray
    true_status: int
    wrong_reject: BoolArray

    @property
    def replications(self) -> int:
        return int(self.grades.size)

    def rate(self, flags: BoolArray) -> float:
        return float(flags.mean())

    @property
    def wrong_scale(self) -> BoolArray:
        return np.asarray((self.status == SCALE) & (self.true_status != SCALE), dtype=bool)

    @property
    def above(self) -> BoolArray:
        return np.asarray(self.status > self.true_status, dtype=bool)

    @property
    def correct(self) -> BoolArray:
        return np.asarray(self.status == self.true_status, dtype=bool)

    def summary(self) -> dict[str, float]:
        """Return the cell's reads (rates, grade quantiles and Clopper–Pearson bounds)."""
        r = self.replications
        out = {
            "mean_grades": float(self.grades.mean()),
            "median_grades": float(np.median(self.grades)),
            "p90_grades": float(np.quantile(self.grades, 0.9)),
            "p_decided": self.rate(self.decided),
            "p_correct": self.rate(self.correct),
            "p_wrong_scale": self.rate(self.wrong_scale),
            "p_wrong_reject": self.rate(self.wrong_reject),
            "p_above": self.rate(self.above),
        }
        for name, flags in (
            ("wrong_scale", self.wrong_scale),
            ("wrong_reject", self.wrong_reject),
            ("above", self.above),
        ):
            out[f"cp_{name}"] = clopper_pearson_upper(int(flags.sum()), r)
        return out


def clopper_pearson_upper(failures: int, n: int, confidence: float = 0.95) -> float:
    """Return the one-sided Clopper–Pearson upper bound of a rate (Clopper and Pearson 1934)."""
    if failures >= n:
        return 1.0
    return float(beta_dist.ppf(confidence, failures + 1, n - failures))


def true_status(value: float) -> int:
    """Return the status the true value implies (SPEC §6.1, strict inequalities)."""
    if value > THETA_IN:
        return SCALE
    if value > THETA_OUT:
        return CONDITIONAL
    return REJECT


# --------------------------------------------------------------------------------------
# Populations
# --------------------------------------------------------------------------------------


def make_population(
    rng: np.random.Generator,
    replications: int,
    n_total: int,
    truth: float,
    strength: str,
    judge: JudgeKind,
) -> tuple[FloatArray, FloatArray]:
    """Return human grades y and judge scores f, shape (R, N), with mean(y) = truth exactly."""
    kappa = KAPPA[strength]
    latent = rng.beta(kappa * truth, kappa * (1.0 - truth), size=(replications, n_total))
    latent = np.clip(latent, 1e-6, 1.0 - 1e-6)
    passes = round(truth * n_total)
    # Efraimidis–Spirakis: the k largest u^(1/p) are a weighted draw without replacement.
    keys = np.log(rng.random((replications, n_total))) / latent
    y = np.zeros((replications, n_total))
    if passes > 0:
        top = np.argpartition(-keys, passes - 1, axis=1)[:, :passes]
        np.put_along_axis(y, top, 1.0, axis=1)
    if judge == "calibrated":
        f = latent
    elif judge == "overconfident":
        f = expit(1.5 * logit(latent))
    elif judge == "biased":
        f = np.minimum(1.0, latent + 0.05)
    else:
        raise ValueError(f"judge must be calibrated, overconfident or biased, got {judge!r}")
    return y, f


# --------------------------------------------------------------------------------------
# Grading until decided
# --------------------------------------------------------------------------------------


def _cell_index(value: float) -> int:
    """Return j with grid[j] ≤ value < grid[j + 1] on the product's default grid."""
    grid = np.linspace(0.0, 1.0, DEFAULT_GRID_POINTS)
    return int(np.searchsorted(grid, value, side="right") - 1)


class _Sampler:
    """Draws without replacement with q_t = (1 − τ)·s/Σ_U s + τ/|U_t|, batched.

    The same distribution as :func:`draw_probabilities` followed by :func:`draw_next`,
    drawn as a mixture (with probability τ uniform on U_t, else ∝ s on U_t) by rejection
    of already graded outputs, so a step costs O(R log N) rather than O(R·N).
    """

    def __init__(self, rng: np.random.Generator, s: FloatArray, tau: float) -> None:
        self.rng = rng
        self.tau = tau
        self.s = s
        self.graded = np.zeros(s.shape, dtype=bool)
        self.n_left = s.shape[1]
        # Row r's cumulative shares, offset by r so that one searchsorted serves every row.
        self.cdf = np.zeros(s.shape)
        self.s_left = np.zeros(s.shape[0])
        self.set_uncertainty(np.ones(s.shape[0], dtype=bool), s)

    def set_uncertainty(self, rows: BoolArray, s_rows: FloatArray) -> None:
        self.s[rows] = s_rows
        totals = s_rows.sum(axis=1, keepdims=True)
        offsets = np.flatnonzero(rows)[:, None].astype(np.float64)
        self.cdf[rows] = np.cumsum(s_rows, axis=1) / np.where(totals > 0, totals, 1.0) + offsets
        self.s_left[rows] = np.where(self.graded[rows], 0.0, s_rows).sum(axis=1)

    def keep(self, rows: BoolArray) -> None:
        old = np.flatnonzero(rows)[:, None].astype(np.float64)
        new = np.arange(old.shape[0], dtype=np.float64)[:, None]
        self.s, self.graded, self.s_left = self.s[rows], self.graded[rows], self.s_left[rows]
        self.cdf = self.cdf[rows] - old + new

    def draw(self, tau: FloatArray | None = None) -> tuple[IntArray, FloatArray]:
        """Draw one output per row, with the uniform share ``tau`` per row (default τ)."""
        r, n = self.s.shape
        shares = np.full(r, self.tau) if tau is None else tau
        index = np.empty(r, dtype=np.int64)
        pending = np.ones(r, dtype=bool)
        uniform = (self.rng.random(r) < shares) | (self.s_left <= 0)
        flat_cdf = self.cdf.ravel()
        rounds = 0
        while pending.any():
            rounds += 1
            if rounds > 3:  # graded outputs hold most of s: drop them from these rows' cdf
                stuck = pending.copy()
                self.set_uncertainty(stuck, np.where(self.graded[stuck], 0.0, self.s[stuck]))
                uniform |= self.s_left <= 0  # no s left on U_t: uniform, as draw_probabilities
                flat_cdf = self.cdf.ravel()
                rounds = 0
            rows = np.flatnonzero(pending)
            u = self.rng.random(rows.size)
            by_s = np.searchsorted(flat_cdf, rows + u, side="right") - rows * n
            by_s = np.clip(by_s, 0, n - 1)
            flat = self.rng.integers(0, n, size=rows.size)
            pick = np.where(uniform[rows], flat, by_s)
            ok = ~self.graded[rows, pick]
            index[rows[ok]] = pick[ok]
            pending[rows[ok]] = False
        every = np.arange(r)
        s_drawn = self.s[every, index]
        positive = self.s_left > 0
        share = np.divide(s_drawn, self.s_left, out=np.zeros(r), where=positive)
        q = np.where(
            positive, (1.0 - shares) * share + shares / self.n_left, 1.0 / self.n_left
        )  # SPEC §5.5: q_t(I_t), as draw_probabilities
        self.graded[every, index] = True
        self.s_left = np.maximum(self.s_left - s_drawn, 0.0)
        self.n_left -= 1
        return index, q


class _Extremes:
    """max and min of f over the ungraded outputs, per replication, kept by pointers."""

    def __init__(self, f: FloatArray) -> None:
        self.order_desc = np.argsort(-f, axis=1)
        self.f = f
        self.hi = np.zeros(f.shape[0], dtype=np.int64)
        self.lo = np.full(f.shape[0], f.shape[1] - 1, dtype=np.int64)

    def keep(self, rows: BoolArray) -> None:
        self.order_desc, self.f = self.order_desc[rows], self.f[rows]
        self.hi, self.lo = self.hi[rows], self.lo[rows]

    def current(self, graded: BoolArray) -> tuple[FloatArray, FloatArray]:
        rows = np.arange(self.f.shape[0])
        for pointer, step in ((self.hi, 1), (self.lo, -1)):
            while True:
                item = self.order_desc[rows, pointer]
                moved = graded[rows, item]
                if not moved.any():
                    break
                pointer[moved] += step
        return (
            self.f[rows, self.order_desc[rows, self.hi]],
            self.f[rows, self.order_desc[rows, self.lo]],
        )


#: Compact the batch when this share of its rows has finished.
COMPACT_SHARE = 0.25


def simulate_sequential(cell: SimCell, replications: int, seed: int) -> CellResult:
    """Run ``replications`` evaluations of ``cell`` graded until decided; seeded."""
    rng = np.random.default_rng(seed)
    n, r, j_count = cell.n_total, replications, cell.n_metrics
    populations = [
        make_population(rng, r, n, value, cell.strength, cell.judge) for value in cell.truths
    ]
    ys = [pop[0] for pop in populations]
    fs = [pop[1] for pop in populations]
    uncertainty = np.stack([f * (1.0 - f) for f in fs])  # (J, R, N)
    grid = np.linspace(0.0, 1.0, DEFAULT_GRID_POINTS)
    cells = np.array([_cell_index(THETA_OUT), _cell_index(THETA_IN)])
    engines = [
        BettingCells(
            n_total=n,
            replications=r,
            cell_lo=grid[cells],
            cell_hi=grid[cells + 1],
            f_num_sum=f.sum(axis=1),
            f_den_sum=None,
            alpha_lower=cell.alpha / 2.0,
            alpha_upper=cell.alpha / (2.0 * j_count),  # Bonferroni over J
            tau=cell.tau,
            bets=cell.bets,
            truncation=cell.truncation,
        )
        for f in fs
    ]
    extremes = [_Extremes(f) for f in fs]
    sampler = _Sampler(rng, np.sqrt(uncertainty.sum(axis=0)), cell.tau)
    metric_truths = np.array([true_status(v) for v in cell.truths])
    alive = np.arange(r)  # the replication each live row is
    previous = np.full(r, cell.tau)  # τ_{t−1} per live row (adaptive τ only)
    finished = np.zeros(r, dtype=bool)  # per live row
    settled = np.full((r, j_count), -1, dtype=np.int64)
    graded_sum = np.zeros((r, j_count))
    out_grades = np.full(r, cell.budget, dtype=np.int64)
    out_decided = np.zeros(r, dtype=bool)
    out_status = np.full(r, -1, dtype=np.int64)
    out_wrong_reject = np.zeros(r, dtype=bool)
    for t in range(1, cell.budget + 1):
        ranges = [extreme.current(sampler.graded) for extreme in extremes]  # over U_t
        shares = None
        if cell.adaptive_tau:
            # τ_t: the largest share any undecided metric asks for (suggest_tau), never below
            # τ_{t−1} (once a bet was held back by its cap, the session stays that uniform);
            # both use the grades before draw t only, so every bet stays predictable
            asked = [
                np.where(
                    settled[:, j] < 0,
                    engine.suggest_tau(cell.tau, f_num_max=hi, f_num_min=lo),
                    cell.tau,
                )
                for j, (engine, (hi, lo)) in enumerate(zip(engines, ranges, strict=True))
            ]
            shares = np.maximum(np.max(asked, axis=0), previous)
            previous = shares
        index, q = sampler.draw(shares)
        for j in range(j_count):
            y_drawn = ys[j][alive, index]
            engines[j].step(
                q=q,
                y_num=y_drawn,
                f_num=fs[j][alive, index],
                f_num_max=ranges[j][0],
                f_num_min=ranges[j][1],
                tau=shares,
            )
            graded_sum[:, j] += y_drawn
        lower_out, lower_in, upper_out, upper_in = _threshold_reads(engines, graded_sum, t, n)
        newly = np.full(settled.shape, -1, dtype=np.int64)
        newly[lower_out & upper_in] = CONDITIONAL
        newly[lower_in] = SCALE
        newly[upper_out] = REJECT
        newly[settled >= 0] = -1
        settled = np.where(settled < 0, newly, settled)
        stop = ((settled == REJECT).any(axis=1) | (settled >= 0).all(axis=1)) & ~finished
        last = t == cell.budget
        ending = stop | (last & ~finished)
        if ending.any():
            conservative = np.where(lower_in, SCALE, np.where(lower_out, CONDITIONAL, REJECT))
            final = np.where(settled >= 0, settled, conservative)
            which = alive[ending]
            out_grades[which] = t
            out_decided[which] = stop[ending]
            out_status[which] = _gate(final[ending])  # a settled Reject is the minimum
            out_wrong_reject[which] = (
                (settled[ending] == REJECT) & (metric_truths[None, :] > REJECT)
            ).any(axis=1)
            finished |= ending
        if last or finished.all():
            break
        changed = (newly >= 0).any(axis=1) & ~finished
        if changed.any():  # s over the metrics still undecided (SPEC §5.5)
            undecided = (settled[changed] < 0).astype(np.float64)
            s_rows = np.sqrt(np.einsum("jrn,rj->rn", uncertainty[:, alive[changed]], undecided))
            sampler.set_uncertainty(changed, s_rows)
        if finished.mean() >= COMPACT_SHARE:
            keep = ~finished
            alive, settled, graded_sum = alive[keep], settled[keep], graded_sum[keep]
            previous = previous[keep]
            finished = finished[keep]
            sampler.keep(keep)
            for engine, extreme in zip(engines, extremes, strict=True):
                engine.keep(keep)
                extreme.keep(keep)
    return CellResult(
        cell=cell,
        grades=out_grades,
        decided=out_decided,
        status=out_status,
        true_status=int(metric_truths.min()),
        wrong_reject=out_wrong_reject,
    )


def _gate(statuses: IntArray) -> IntArray:
    """Return the conjunctive gate's status per row (the lowest metric status)."""
    return np.asarray(statuses.min(axis=1), dtype=np.int64)


def _threshold_reads(
    engines: list[BettingCells], graded_sum: FloatArray, t: int, n: int
) -> tuple[BoolArray, BoolArray, BoolArray, BoolArray]:
    """Return (lower > θout, lower > θin, upper ≤ θout, upper ≤ θin) per row and metric.

    For a mean the capital of a side is monotone in the candidate value, so the product's
    grid bound passes a threshold exactly when the cell holding the threshold is rejected
    (docs/statistics.md); the sure bounds of :func:`mean_sequence` are applied as there.
    """
    plus = np.stack([engine.rejected_plus for engine in engines], axis=1)  # (R, J, 2)
    minus = np.stack([engine.rejected_minus for engine in engines], axis=1)
    sure_lower = graded_sum / n
    sure_upper = (graded_sum + n - t) / n
    return (
        plus[:, :, 0] | (sure_lower > THETA_OUT),
        plus[:, :, 1] | (sure_lower > THETA_IN),
        minus[:, :, 0] | (sure_upper <= THETA_OUT),
        minus[:, :, 1] | (sure_upper <= THETA_IN),
    )


# --------------------------------------------------------------------------------------
# Naive peeking: a fixed-n interval re-checked after every grade (invalid; must inflate)
# --------------------------------------------------------------------------------------


def naive_peeking(cell: SimCell, replications: int, seed: int, n_min: int = 10) -> CellResult:
    """Grade uniformly and stop when the normal PPI interval (SPEC §5.2) decides; seeded.

    The interval θ̂ ± z·se with θ̂ = mean(f) − mean(f − y over graded) and
    se² = var(f)/N + var(f − y)/n (classic PPI, ppi_py ``ppi_mean_ci`` with λ = 1),
    recomputed after each grade from cumulative sums; for one metric only.
    """
    if cell.n_metrics != 1:
        raise ValueError("naive_peeking runs one metric; cell.n_metrics must be 1")
    rng = np.random.default_rng(seed)
    n, r = cell.n_total, replications
    y, f = make_population(rng, r, n, cell.truth, cell.strength, cell.judge)
    order = np.argsort(rng.random((r, n)), axis=1)[:, : cell.budget]
    diff = np.take_along_axis(f - y, order, axis=1)
    counts = np.arange(1, cell.budget + 1)
    mean_diff = np.cumsum(diff, axis=1) / counts
    var_diff = np.maximum(np.cumsum(diff * diff, axis=1) / counts - mean_diff**2, 0.0)
    centre = f.mean(axis=1, keepdims=True) - mean_diff
    se = np.sqrt(f.var(axis=1, keepdims=True) / n + var_diff / counts)
    z = float(norm.ppf(1.0 - cell.alpha / 2.0))
    lower, upper = centre - z * se, centre + z * se
    scale = lower > THETA_IN
    reject = upper <= THETA_OUT
    conditional = (lower > THETA_OUT) & (upper <= THETA_IN)
    decided = (scale | reject | conditional) & (counts >= n_min)[None, :]
    first = np.where(decided.any(axis=1), decided.argmax(axis=1), cell.budget - 1)
    rows = np.arange(r)
    stopped = decided[rows, first]
    at_stop = np.where(
        scale[rows, first],
        SCALE,
        np.where(reject[rows, first], REJECT, np.where(lower[rows, first] > THETA_OUT, 1, 0)),
    )
    return CellResult(
        cell=cell,
        grades=first + 1,
        decided=stopped,
        status=at_stop.astype(np.int64),
        true_status=true_status(cell.truth),
        wrong_reject=stopped & reject[rows, first] & (cell.truth > THETA_OUT),
    )


def full_grid() -> list[SimCell]:
    """Return the cells of the full grid (issue 19, Deliver 5)."""
    return [
        SimCell(n_total=n, strength=strength, judge=judge, truth=value, n_metrics=j)
        for n in (500, 2000)
        for j in (1, 3)
        for strength in ("strong", "weak")
        for judge in ("calibrated", "overconfident", "biased")
        for value in truths()
    ]


def seed_for(cell: SimCell, base: int = 20_260_219) -> int:
    """Return a stable seed per cell (the cell's fields, not Python's salted hash)."""
    text = cell.label()
    return base + sum((k + 1) * ord(ch) for k, ch in enumerate(text)) % 1_000_003


def describe(result: CellResult) -> str:
    """Return one line of reads for a cell."""
    s = result.summary()
    return (
        f"{result.cell.label():<44} grades {s['mean_grades']:7.1f} / {s['median_grades']:6.0f}"
        f" / {s['p90_grades']:6.0f}  decided {s['p_decided']:.3f}  correct {s['p_correct']:.3f}"
        f"  wrongScale {s['p_wrong_scale']:.4f} (CP {s['cp_wrong_scale']:.4f})"
        f"  wrongReject {s['p_wrong_reject']:.4f} (CP {s['cp_wrong_reject']:.4f})"
        f"  above {s['p_above']:.4f}"
    )


def validity_bound(alpha: float) -> float:
    """Return the largest allowed Clopper–Pearson upper bound of a wrong-decision rate."""
    return alpha / 2.0 + 0.01


__all__ = [
    "CellResult",
    "SimCell",
    "clopper_pearson_upper",
    "describe",
    "full_grid",
    "make_population",
    "markdown_row",
    "naive_peeking",
    "seed_for",
    "simulate_sequential",
    "truths",
    "validity_bound",
]


def markdown_row(result: CellResult) -> str:
    """Return the cell's row of the table in docs/statistics.md."""
    c, s = result.cell, result.summary()
    return (
        f"| {c.n_total} | {c.strength} | {c.judge} | {c.n_metrics} | {c.truth:.2f} "
        f"| {s['mean_grades']:.0f} | {s['median_grades']:.0f} | {s['p90_grades']:.0f} "
        f"| {s['p_decided']:.3f} | {s['p_correct']:.3f} "
        f"| {s['p_wrong_scale']:.4f} | {s['p_wrong_reject']:.4f} "
        f"| {max(s['cp_wrong_scale'], s['cp_wrong_reject'], s['cp_above']):.4f} |"
    )


TABLE_HEADER = (
    "| N | judge | kind | J | truth | mean grades | median | P90 | P(decided) | P(correct) "
    "| P(wrong Scale) | P(wrong Reject) | worst CP upper |\n"
    "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
)


def main(argv: list[str] | None = None) -> int:
    """Print the full grid's table (``python -m enterpriseval.stats.sequential_sim``)."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--n-total", type=int, choices=(500, 2000), default=None)
    parser.add_argument("--start", type=int, default=0, help="skip the first cells (resume)")
    args = parser.parse_args(argv)
    cells = [c for c in full_grid() if args.n_total in (None, c.n_total)][args.start :]
    if args.start == 0:
        print(TABLE_HEADER, flush=True)
    failed = []
    for cell in cells:
        result = simulate_sequential(cell, args.replications, seed_for(cell))
        print(markdown_row(result), flush=True)
        s = result.summary()
        if max(s["cp_wrong_scale"], s["cp_wrong_reject"], s["cp_above"]) > validity_bound(
            cell.alpha
        ):
            failed.append(cell.label())
    if failed:
        print("validity fails in: " + "; ".join(failed), file=sys.stderr)
        return 1
    print(f"validity holds in all {len(cells)} cells", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
