"""``make bench``: human grades per decision, grading until decided against fixed-n PPI.

For each cell of the simulation (``enterpriseval.stats.sequential_sim``; N = 500, one gated
metric, θout = 0.75, θin = 0.85, α = 0.05) this prints the mean grades the sequential
session used and its P(correct), then the fixed n of a uniform PPI design (the §5.2 gated
interval, ``ppi_proportion_ci``: Korn–Graubard around PPI++, two-sided at α) whose P(correct)
reaches the sequential one, on populations drawn from the same model, and the ratio.

**P(correct) is read the same way for both designs** (SPEC §6.1 applied to each bound): a
design's status is *settled* when the §6.1 rule gives the same status read from the lower
bound as from the upper bound (Scale: lower > θin; Reject: upper ≤ θout; Conditional: θout <
lower and upper ≤ θin), and P(correct) is P(settled and equal to the true status). A fixed-n
interval that straddles θout is not a Reject, as a sequence that straddles it is not: the gate
would show the conservative status with "grade about N more outputs" (§6.1, §5.3), i.e. not
a decision. (Reading the status from the lower bound alone makes every true Reject "correct"
at any n, however small, so the smallest fixed n is always the first one; that reading is
printed too, as ``gate-read``, for reference.) The sequential session's status is its settled
one (every gated metric settled, or one settled Reject) before the budget.

The fixed n is the smallest n reaching the sequential P(correct) on a grid of n, linearly
interpolated between grid points (a coarse grid would round the fixed design up); where no n
below N reaches it, N is counted and the cell flagged. Groups: *near* (truth within 0.05 of a
threshold) and *clear* (0.1 beyond one). Issue 19's targets: ≥ 40 % fewer grades near a
threshold, ≥ 65 % fewer on clear cases. Cells where the sequential session settles correctly in
fewer than half the runs (both designs mostly undecided: the truth within about 0.01 of a
threshold) make the "smallest fixed n reaching it" nearly meaningless; the summary prints each
group with and without them. The figures are reported as they come, shortfalls included.

``python -m bench.cases_sequential [--replications R] [--n-total N] [--taus 0.5,1.0]
[--bets agrapa|plug-in] [--truncation 0.75]``
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace

import numpy as np

from enterpriseval.stats import clopper_pearson_interval, ppi_proportion_ci
from enterpriseval.stats.sequential import BET_TRUNCATION, DEFAULT_BETS
from enterpriseval.stats.sequential_sim import (
    CONDITIONAL,
    REJECT,
    SCALE,
    STATUS_NAMES,
    THETA_IN,
    THETA_OUT,
    SimCell,
    make_population,
    seed_for,
    simulate_sequential,
    true_status,
    truths,
)

FIXED_N = (10, 20, 30, 40, 50, 60, 80, 100, 120, 140, 160, 180, 200, 225, 250, 275, 300, 350, 400)
FIXED_N += (450, 500, 600, 800, 1000, 1200, 1500, 1800)
JUDGES = [
    (strength, kind)
    for strength in ("strong", "weak")
    for kind in ("calibrated", "overconfident", "biased")
]
#: Below this sequential P(correct) both designs are mostly undecided (see the module doc).
UNDECIDED_BELOW = 0.5


def status_of(bound: float) -> int:
    """Return the SPEC §6.1 status read from one bound (d = +1, strict inequalities)."""
    return SCALE if bound > THETA_IN else CONDITIONAL if bound > THETA_OUT else REJECT


@dataclass(frozen=True)
class FixedCurve:
    """P(correct) of the fixed-n design at each n of the grid, read both ways."""

    n: tuple[int, ...]
    settled: tuple[float, ...]  # P(settled and correct): the comparison
    gate_read: tuple[float, ...]  # P(status read from the lower bound is correct)

    def smallest_n(self, target: float, which: str = "settled") -> float | None:
        """Return the smallest n reaching ``target`` (interpolated), None if none does."""
        p = np.maximum.accumulate(np.array(getattr(self, which)))  # larger n never hurts
        reached = np.flatnonzero(p >= target - 1e-12)
        if reached.size == 0:
            return None
        k = int(reached[0])
        if k == 0 or p[k] <= p[k - 1]:
            return float(self.n[k])
        share = (target - p[k - 1]) / (p[k] - p[k - 1])  # linear between grid points
        return float(self.n[k - 1] + share * (self.n[k] - self.n[k - 1]))


def fixed_n_curve(cell: SimCell, replications: int, seed: int) -> FixedCurve:
    """Return P(correct) of uniform fixed-n PPI at each grid n below N."""
    rng = np.random.default_rng(seed + 1)
    y, f = make_population(rng, replications, cell.n_total, cell.truth, cell.strength, cell.judge)
    truth = true_status(cell.truth)
    sizes = tuple(n for n in FIXED_N if n < cell.n_total)
    settled, gate_read = [], []
    for n in sizes:
        hits_settled = hits_gate = 0
        for r in range(replications):
            pick = rng.permutation(cell.n_total)
            graded, rest = pick[:n], pick[n:]
            try:
                lower, upper = ppi_proportion_ci(
                    y[r, graded], f[r, graded], f[r, rest], alpha=cell.alpha
                )
            except ValueError:  # PPI++ estimate outside [0, 1]: the human-only interval
                lower, upper = clopper_pearson_interval(int(y[r, graded].sum()), n, cell.alpha)
            read = status_of(lower)
            hits_gate += read == truth
            hits_settled += read == truth and status_of(upper) == read
        settled.append(hits_settled / replications)
        gate_read.append(hits_gate / replications)
    return FixedCurve(sizes, tuple(settled), tuple(gate_read))


def group_of(value: float) -> str:
    """Return the cell group: near or clear, and the true status."""
    distance = min(abs(value - THETA_OUT), abs(value - THETA_IN))
    closeness = "clear" if distance > 0.05 + 1e-9 else "near"
    return f"{closeness} {STATUS_NAMES[true_status(value)]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=300)
    parser.add_argument("--n-total", type=int, default=500)
    parser.add_argument("--taus", default="0.5,0.8,1.0", help="uniform floors τ to compare")
    parser.add_argument(
        "--adaptive-tau", action="store_true", help="τ is a floor; each draw picks τ_t ≥ τ"
    )
    parser.add_argument("--judges", default=None, help="e.g. weak-calibrated,strong-biased")
    parser.add_argument("--truths", default=None, help="e.g. 0.65,0.95 (default: the grid)")
    parser.add_argument("--bets", default=DEFAULT_BETS, choices=("agrapa", "plug-in"))
    parser.add_argument(
        "--truncation",
        type=float,
        default=BET_TRUNCATION,
        help="bet cap c, a share of the safe bet",
    )
    args = parser.parse_args(argv)
    judges = JUDGES
    if args.judges:
        wanted = set(args.judges.split(","))
        judges = [(s, k) for s, k in JUDGES if f"{s}-{k}" in wanted]
    values = truths() if not args.truths else [float(v) for v in args.truths.split(",")]
    taus = [float(value) for value in args.taus.split(",")]
    started = time.process_time()
    rows: list[Row] = []
    print(
        f"{'cell':<44} {'τ':>4} {'seq grades':>10} {'P(correct)':>10} {'fixed n':>8} "
        f"{'P(correct)':>10} {'ratio':>6} {'saving':>7}   gate-read: {'P seq':>5} {'fixed n':>7}",
        flush=True,
    )
    for strength, kind in judges:
        for value in values:
            base = SimCell(args.n_total, strength, kind, value)  # type: ignore[arg-type]
            curve = fixed_n_curve(base, args.replications, seed_for(base))
            for tau in taus:
                cell = replace(
                    base,
                    tau=tau,
                    bets=args.bets,
                    truncation=args.truncation,
                    adaptive_tau=args.adaptive_tau,
                )
                result = simulate_sequential(cell, args.replications, seed_for(base))
                seq_grades = float(result.grades.mean())
                seq_correct = float((result.decided & result.correct).mean())
                n_fixed = curve.smallest_n(seq_correct)
                flag, fixed_correct = "", seq_correct  # reached: equal by interpolation
                if n_fixed is None:
                    n_fixed, flag = float(args.n_total), "N counted"
                    fixed_correct = max(curve.settled)  # the best any n below N does
                gate_correct = float(result.correct.mean())
                n_gate = curve.smallest_n(gate_correct, "gate_read")
                undecided = seq_correct < UNDECIDED_BELOW
                distance = min(abs(value - THETA_OUT), abs(value - THETA_IN))
                rows.append(
                    (tau, group_of(value), seq_grades, n_fixed, seq_correct, undecided, distance)
                )
                print(
                    f"{base.label():<44} {tau:>4.1f} {seq_grades:>10.1f} {seq_correct:>10.3f} "
                    f"{n_fixed:>8.0f} {fixed_correct:>10.3f} {seq_grades / n_fixed:>6.2f} "
                    f"{1 - seq_grades / n_fixed:>+7.0%}"
                    f"   {gate_correct:>16.3f} {'> N' if n_gate is None else f'{n_gate:.0f}':>7}"
                    f"  {flag}{' (both mostly undecided)' if undecided else ''}",
                    flush=True,
                )
    print()
    summarise(rows, taus)
    print(f"\nCPU {time.process_time() - started:.0f} s")
    return 0


Row = tuple[float, str, float, float, float, bool, float]  # τ, group, seq, fixed, P, undecided, Δ

#: The summary's groups: name → which rows (by group name and distance to the threshold).
GROUPS = {
    "clear scale": lambda g, d: g == "clear scale",
    "clear reject": lambda g, d: g == "clear reject",
    "clear (0.1 beyond)": lambda g, d: g.startswith("clear"),
    "near, 0.05 away": lambda g, d: g.startswith("near") and d > 0.04,
    "near, ≤ 0.03 away": lambda g, d: g.startswith("near") and d < 0.04,
    "near (all)": lambda g, d: g.startswith("near"),
}


def summarise(rows: list[Row], taus: list[float]) -> None:
    """Print grades per decision per group: Σ sequential / Σ fixed, against the targets."""
    for tau in taus:
        for name, member in GROUPS.items():
            for decided_only in (False, True):
                picked = [
                    row
                    for row in rows
                    if row[0] == tau and member(row[1], row[6]) and not (decided_only and row[5])
                ]
                if not picked or (
                    decided_only
                    and len(picked)
                    == len([row for row in rows if row[0] == tau and member(row[1], row[6])])
                ):
                    continue  # nothing left, or the same cells as the line above
                seq = np.array([row[2] for row in picked])
                fixed = np.array([row[3] for row in picked])
                saving = 1.0 - seq.sum() / fixed.sum()
                per_cell = 1.0 - seq / fixed
                target = 0.40 if name.startswith("near") else 0.65
                print(
                    f"τ={tau:.1f} {name:<19} {'settled ≥ 0.5' if decided_only else 'all cells':<13}"
                    f" {len(picked):3d} cells: sequential {seq.mean():6.1f} grades per decision, "
                    f"fixed-n {fixed.mean():6.1f}; saving {saving:+5.0%} (target ≥ {target:.0%}: "
                    f"{'met' if saving >= target else 'NOT met'}); per cell median "
                    f"{np.median(per_cell):+.0%}, worst {per_cell.min():+.0%}, best "
                    f"{per_cell.max():+.0%}"
                )


if __name__ == "__main__":
    sys.exit(main())
