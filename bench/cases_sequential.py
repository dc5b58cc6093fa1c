"""``make bench``: human grades per decision, grading until decided against fixed-n PPI.

For each cell of the simulation (``enterpriseval.stats.sequential_sim``; N = 500, one gated
metric, θout = 0.75, θin = 0.85, α = 0.05) this prints the mean grades the sequential
session used and its P(correct status), then the smallest fixed n of a uniform PPI design
(the §5.2 gated interval, ``ppi_proportion_ci``: Korn–Graubard around PPI++; status from
the lower bound, SPEC §6.1) whose P(correct) reaches the sequential one, on populations
drawn from the same model, and the ratio sequential / fixed. Groups: *near* (truth within
0.05 of a threshold) and *clear* (0.1 beyond one). Issue 19's targets: ≥ 40 % fewer grades
near a threshold, ≥ 65 % fewer on clear cases. The figures are reported as they come,
shortfalls included.

``python -m bench.cases_sequential [--replications R] [--n-total N]``
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace

import numpy as np

from enterpriseval.stats import clopper_pearson_interval, ppi_proportion_ci
from enterpriseval.stats.sequential_sim import (
    THETA_IN,
    THETA_OUT,
    SimCell,
    make_population,
    seed_for,
    simulate_sequential,
    true_status,
    truths,
)

FIXED_N = (25, 50, 75, 100, 150, 200, 250, 300, 400, 500, 750, 1000, 1500, 2000)
JUDGES = [
    (strength, kind)
    for strength in ("strong", "weak")
    for kind in ("calibrated", "overconfident", "biased")
]


def fixed_n_correct(cell: SimCell, replications: int, seed: int) -> dict[int, float]:
    """Return P(correct status) of uniform fixed-n PPI at each n ≤ N."""
    rng = np.random.default_rng(seed + 1)
    y, f = make_population(rng, replications, cell.n_total, cell.truth, cell.strength, cell.judge)
    truth = true_status(cell.truth)
    out = {}
    for n in (n for n in FIXED_N if n < cell.n_total):
        correct = 0
        for r in range(replications):
            pick = rng.permutation(cell.n_total)
            graded, rest = pick[:n], pick[n:]
            try:
                lower, _ = ppi_proportion_ci(
                    y[r, graded], f[r, graded], f[r, rest], alpha=cell.alpha
                )
            except ValueError:  # PPI++ estimate outside [0, 1]: the human-only interval
                successes = int(y[r, graded].sum())
                lower, _ = clopper_pearson_interval(successes, n, alpha=cell.alpha)
            status = 2 if lower > THETA_IN else 1 if lower > THETA_OUT else 0
            correct += status == truth
        out[n] = correct / replications
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=300)
    parser.add_argument("--n-total", type=int, default=500)
    parser.add_argument("--taus", default="0.5,1.0", help="uniform floors τ to compare")
    parser.add_argument("--judges", default=None, help="e.g. weak-calibrated,strong-biased")
    args = parser.parse_args(argv)
    judges = JUDGES
    if args.judges:
        wanted = set(args.judges.split(","))
        judges = [(s, k) for s, k in JUDGES if f"{s}-{k}" in wanted]
    taus = [float(value) for value in args.taus.split(",")]
    started = time.perf_counter()
    groups: dict[tuple[float, str], list[tuple[float, float]]] = {
        (tau, name): [] for tau in taus for name in ("near", "clear")
    }
    print(
        f"{'cell':<44} {'τ':>4} {'seq grades':>10} {'P(correct)':>10} {'fixed n':>8} "
        f"{'P(correct)':>10} {'ratio':>6}",
        flush=True,
    )
    for strength, kind in judges:
        for value in truths():
            base = SimCell(args.n_total, strength, kind, value)  # type: ignore[arg-type]
            fixed = fixed_n_correct(base, args.replications, seed_for(base))
            distance = min(abs(value - THETA_OUT), abs(value - THETA_IN))
            group = "clear" if distance > 0.05 + 1e-9 else "near"
            for tau in taus:
                cell = replace(base, tau=tau)
                result = simulate_sequential(cell, args.replications, seed_for(base))
                seq_grades = float(result.grades.mean())
                seq_correct = float(result.correct.mean())
                reaching = [n for n, p in fixed.items() if p >= seq_correct]
                if reaching:
                    n_fixed = min(reaching)
                    fixed_text = (
                        f"{n_fixed:>8d} {fixed[n_fixed]:>10.3f} {seq_grades / n_fixed:>6.2f}"
                    )
                else:
                    n_fixed = args.n_total  # no fixed n below N matches it: count N
                    fixed_text = (
                        f"{'> ' + str(max(fixed)):>8} {max(fixed.values()):>10.3f} "
                        f"≤{seq_grades / n_fixed:>5.2f}"
                    )
                groups[(tau, group)].append((seq_grades, float(n_fixed)))
                print(
                    f"{base.label():<44} {tau:>4.1f} {seq_grades:>10.1f} {seq_correct:>10.3f} "
                    f"{fixed_text}",
                    flush=True,
                )
    print()
    for (tau, name), pairs in groups.items():
        target = 0.40 if name == "near" else 0.65
        seq_total = sum(p[0] for p in pairs)
        fixed_total = sum(p[1] for p in pairs)
        saving = 1.0 - seq_total / fixed_total
        per_cell = [1.0 - seq / fix for seq, fix in pairs]
        print(
            f"τ={tau:.1f} {name:<6} {len(pairs):3d} cells: sequential {seq_total / len(pairs):.0f} "
            f"grades per decision, fixed-n {fixed_total / len(pairs):.0f}; saving {saving:+.0%} "
            f"(target ≥ {target:.0%}: {'met' if saving >= target else 'NOT met'}); per cell "
            f"median {np.median(per_cell):+.0%}, worst {min(per_cell):+.0%}, best "
            f"{max(per_cell):+.0%}"
        )
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
