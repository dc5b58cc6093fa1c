"""Unsafe-side error of the gated bounds, by simulation through the product's estimators.

``python -m bench.coverage_table`` prints the table of docs/statistics.md (the slow grid);
``python -m bench.coverage_table --fast`` the grid the test suite runs in ``make test``;
``python -m bench.coverage_table --ppi-choice`` the comparison of candidate PPI intervals
that chose the gated one.

A gated bound is a promise to the committee (SPEC §5.2, §5.3): with the truth exactly at the
threshold, the conservative bound passes the threshold — upper bound below it for a
lower-is-better metric, lower bound above it for a higher-is-better one — at most α/2 of the
time. Each :class:`Cell` is one operating point; :func:`unsafe_error` simulates it
``replicates`` times with a seeded generator and calls the product's estimator on each
simulated evaluation (``metrics.unit_estimators.estimate_unit_metric``,
``classification_accuracy_estimate``, ``pass_hat_k_estimates``), never a copy of its formula.
A cell fails when its unsafe-side error exceeds α/2 by more than three Monte Carlo standard
errors, √(α/2·(1 − α/2)/R).

The model of an evaluation (the estimand is the superpopulation value, the harder target: a
finite-population truth varies less):

- outputs hold a random number of units (sentences 2 + Poisson(6), about the credit-memo
  example's 6.6; cited chunks 2 + Poisson(5), key elements 3 + Poisson(4), flagged guidance
  items 1 + Poisson(3), breached items Poisson(2));
- overdispersion: output i's unit rate is p_i ~ Beta with mean θ and intra-output
  correlation ρ, its count Binomial(units_i, p_i), i.e. beta-binomial units per output, so
  defects concentrate in a few outputs as they do in the credit-memo example;
- judges (PPI cells) label every unit of every output: a *calibrated* judge with 10 % misses
  and false alarms set so that its mean equals the truth, a *biased* one that misses 30 % of
  the metric's events and adds 0.2 % false ones (lower-is-better) or over-credits 40 % of
  the failures (higher-is-better); humans give the true (adjudicated) labels on a uniform
  random sample of ``n_graded`` of the ``n_outputs`` outputs;
- tasks (classification accuracy, pass^k) are independent; task i's success probability is
  Beta with concentration 4 around a mean chosen so that E[q^k] is the truth (pass^k's
  estimand), K repeats Binomial(K, q_i).
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit, logit, ndtri, stdtrit

from enterpriseval.stats import cluster_ratio_ci, korn_graubard_interval
from metrics.estimate import MetricEstimate
from metrics.task_estimators import classification_accuracy_estimate, pass_hat_k_estimates
from metrics.unit_estimators import OutputUnits, estimate_unit_metric, human_only_ratio, ppi_ratio

#: Metrics whose value is better when lower (the gate uses the upper bound).
LOWER_IS_BETTER = frozenset({"hallucination_rate", "irrelevance_rate"})
#: Units per output: (fixed part, Poisson mean).
UNITS = {
    "hallucination_rate": (2, 6.0),
    "citation_precision_lenient": (2, 5.0),
    "key_element_capture": (3, 4.0),
    "guidance_precision": (1, 3.0),
    "guidance_recall": (0, 2.0),
}
TASK_METRICS = frozenset({"classification_accuracy", "pass_hat_k"})
#: Beta concentration of a task's success probability around its mean (pass^k).
TASK_CONCENTRATION = 4.0


@dataclass(frozen=True)
class Cell:
    """One operating point: metric, truth (= threshold), sample and judge."""

    metric: str
    truth: float
    n_graded: int
    judge: str | None = None
    n_outputs: int | None = None
    rho: float = 0.05
    k: int = 4
    repeats: int = 4
    confidence: float = 0.95
    replicates: int = 1_000
    seed: int = 20261201

    @property
    def label(self) -> str:
        """Return the cell in words, as the table prints it."""
        metric = (
            f"pass^{self.k} (K = {self.repeats})" if self.metric == "pass_hat_k" else self.metric
        )
        design = (
            f"{self.n_graded} tasks"
            if self.metric in TASK_METRICS
            else f"{self.n_graded} graded outputs, ρ = {self.rho:g}"
        )
        source = f"PPI, {self.judge} judge, N = {self.n_outputs}" if self.judge else "human only"
        if self.metric in TASK_METRICS:
            source = "automatic"
        return f"{metric} | {100 * self.truth:g} % | {design} | {source}"


@dataclass(frozen=True)
class CellResult:
    """The simulated unsafe-side error of one cell and whether it keeps the promise."""

    cell: Cell
    unsafe: float
    limit: float
    gated_ppi: float
    seconds: float

    @property
    def passes(self) -> bool:
        return self.unsafe <= self.limit


def mc_limit(alpha_half: float, replicates: int) -> float:
    """Return α/2 plus three Monte Carlo standard errors of an error rate at α/2."""
    return alpha_half + 3.0 * math.sqrt(alpha_half * (1.0 - alpha_half) / replicates)


# -- simulated evaluations -------------------------------------------------------------------


def _beta_rates(rng: np.random.Generator, mean: float, rho: float, size: int) -> np.ndarray:
    """Return unit rates with mean ``mean`` and intra-output correlation ``rho``."""
    concentration = (1.0 - rho) / rho
    return rng.beta(mean * concentration, (1.0 - mean) * concentration, size=size)


def _judge_counts(
    rng: np.random.Generator, events: np.ndarray, units: np.ndarray, cell: Cell
) -> np.ndarray:
    """Return the judge's count of the metric's events per output (unit labels flipped)."""
    if cell.judge == "calibrated" and cell.metric in LOWER_IS_BETTER:
        miss = 0.10
        false_alarm = cell.truth * miss / (1.0 - cell.truth)  # mean of the judge = truth
    elif cell.judge == "calibrated":
        false_alarm = 0.10
        miss = (1.0 - cell.truth) * false_alarm / cell.truth  # mean of the judge = truth
    elif cell.metric in LOWER_IS_BETTER:
        miss, false_alarm = 0.30, 0.002
    else:
        # The event of a higher-is-better metric is a success: over-credit 40 % of failures.
        miss, false_alarm = 0.02, 0.40
    kept = rng.binomial(events, 1.0 - miss)
    added = rng.binomial(units - events, false_alarm)
    return (kept + added).astype(np.float64)


def simulate_units(cell: Cell, rng: np.random.Generator) -> OutputUnits:
    """Return one simulated evaluation of a unit-level metric as the estimator's input."""
    size = cell.n_outputs if cell.judge else cell.n_graded
    fixed, mean_units = UNITS[cell.metric]
    units = fixed + rng.poisson(mean_units, size=size)
    if cell.metric == "key_element_capture":
        units = np.maximum(units, 1)
    events = rng.binomial(units, _beta_rates(rng, cell.truth, cell.rho, size))
    labeled = np.zeros(size, dtype=bool)
    labeled[rng.choice(size, cell.n_graded, replace=False)] = True
    human = np.where(labeled, events, np.nan)
    if cell.metric in ("guidance_precision", "guidance_recall"):
        return OutputUnits(
            output_id=np.arange(size),
            labeled=labeled,
            h_num=human,
            h_den=np.where(labeled, units, np.nan),
        )
    judge = _judge_counts(rng, events, units, cell) if cell.judge else None
    return OutputUnits(
        output_id=np.arange(size), labeled=labeled, d=units, f_num=judge, h_num=human
    )


@functools.cache
def _task_mean_for(truth: float, k: int) -> float:
    """Return the mean success probability whose Beta law has E[q^k] = ``truth``."""

    def moment(mean: float) -> float:
        a, total = mean * TASK_CONCENTRATION, TASK_CONCENTRATION
        return float(np.prod([(a + j) / (total + j) for j in range(k)])) - truth

    return float(brentq(moment, 1e-9, 1.0 - 1e-12))


Estimator = Callable[[Cell, np.random.Generator], MetricEstimate]


def product_estimate(cell: Cell, rng: np.random.Generator) -> MetricEstimate:
    """Return the product's gated estimate of one simulated evaluation of ``cell``."""
    if cell.metric == "classification_accuracy":
        correct = rng.random(cell.n_graded) < cell.truth
        gold = np.full(cell.n_graded, "compliant", dtype=object)
        predicted = np.where(correct, "compliant", "non-compliant")
        return classification_accuracy_estimate(predicted, gold, confidence=cell.confidence)
    if cell.metric == "pass_hat_k":
        mean = _task_mean_for(cell.truth, cell.k)
        q = rng.beta(mean * TASK_CONCENTRATION, (1.0 - mean) * TASK_CONCENTRATION, cell.n_graded)
        successes = rng.binomial(cell.repeats, q)
        found = pass_hat_k_estimates(
            successes, cell.repeats, confidence=cell.confidence, ks=(cell.k,)
        )
        return found[cell.k]
    data = simulate_units(cell, rng)
    return estimate_unit_metric(cell.metric, data, confidence=cell.confidence)


def wald_estimate(cell: Cell, rng: np.random.Generator) -> MetricEstimate:
    """Return the old gated interval: the linearised cluster ratio, t(G − 1), clipped.

    This is what the product gated before Korn–Graubard; the suite runs it through the same
    harness to show that the harness can fail an interval that errs on the unsafe side.
    """
    data = simulate_units(cell, rng)
    mask = data.labeled
    assert data.h_num is not None and data.d is not None
    old = cluster_ratio_ci(data.h_num[mask], data.d[mask], alpha=1.0 - cell.confidence)
    return MetricEstimate(
        metric_id=cell.metric,
        point=100.0 * old.point,
        lo=max(0.0, 100.0 * old.lo),
        hi=min(100.0, 100.0 * old.hi),
        confidence=cell.confidence,
        n=old.n,
        n_clusters=old.n_clusters,
        mode="H",
        estimator="linearised cluster ratio, CR1, t(G − 1), clipped (the old Wald bound)",
    )


def unsafe_error(cell: Cell, estimator: Estimator = product_estimate) -> CellResult:
    """Return the share of simulated evaluations whose gated bound passes the truth."""
    rng = np.random.default_rng(cell.seed)
    threshold = 100.0 * cell.truth
    lower_is_better = cell.metric in LOWER_IS_BETTER
    unsafe = ppi = 0
    started = time.perf_counter()
    for _ in range(cell.replicates):
        estimate = estimator(cell, rng)
        if not estimate.has_value:
            raise ValueError(f"{cell.label}: no gated value ({estimate.reason})")
        assert estimate.lo is not None and estimate.hi is not None
        # SPEC §6.1: Scale needs d(m − θin) > 0, strictly; here θin is the truth.
        unsafe += estimate.hi < threshold if lower_is_better else estimate.lo > threshold
        ppi += estimate.mode == "PPI"
    alpha_half = (1.0 - cell.confidence) / 2.0
    return CellResult(
        cell=cell,
        unsafe=unsafe / cell.replicates,
        limit=mc_limit(alpha_half, cell.replicates),
        gated_ppi=ppi / cell.replicates,
        seconds=time.perf_counter() - started,
    )


# -- the choice of the PPI interval ----------------------------------------------------------

#: The PPI intervals compared before choosing (SPEC §5.2: "decide by simulation").
PPI_VARIANTS = (
    "normal (ppi_py)",
    "logit-scale t",
    "KG, n_eff ≤ all N outputs' units",
    "KG, n_eff ≤ graded units (chosen)",
    "human-only KG",
)


def ppi_variant_errors(cell: Cell) -> dict[str, float]:
    """Return the unsafe-side error of each candidate PPI interval in one cell.

    All share the PPI++ point and variance of ``metrics.unit_estimators.ppi_ratio``; they
    differ in the interval built on them. The human-only Korn–Graubard interval of the same
    evaluations is the fallback they are compared with.
    """
    rng = np.random.default_rng(cell.seed)
    alpha = 1.0 - cell.confidence
    lower_is_better = cell.metric in LOWER_IS_BETTER
    shares = cell.metric == "key_element_capture"
    unsafe = dict.fromkeys(PPI_VARIANTS, 0)
    for _ in range(cell.replicates):
        data = simulate_units(cell, rng)
        ppi = ppi_ratio(data, alpha=alpha, mean_of_shares=shares)
        human = human_only_ratio(data, alpha=alpha, mean_of_shares=shares)
        assert data.d is not None
        point, se, df = min(max(ppi.point, 0.0), 1.0), ppi.se, data.n_labeled - 1
        quantile, z = float(-stdtrit(df, alpha / 2.0)), float(-ndtri(alpha / 2.0))
        if 0.0 < point < 1.0:
            half = quantile * se / (point * (1.0 - point))
            logit_limits = (float(expit(logit(point) - half)), float(expit(logit(point) + half)))
        else:
            logit_limits = (0.0, 1.0)
        limits = {
            PPI_VARIANTS[0]: (ppi.point - z * se, ppi.point + z * se),
            PPI_VARIANTS[1]: logit_limits,
            PPI_VARIANTS[2]: korn_graubard_interval(
                point, se**2, float(data.d.sum()), alpha, df=df
            ),
            PPI_VARIANTS[3]: (ppi.lo, ppi.hi),
            PPI_VARIANTS[4]: (human.lo, human.hi),
        }
        for name, (lo, hi) in limits.items():
            unsafe[name] += hi < cell.truth if lower_is_better else lo > cell.truth
    return {name: count / cell.replicates for name, count in unsafe.items()}


def ppi_choice_grid() -> list[Cell]:
    """Return the PPI operating points the choice was made on (100–400 graded outputs)."""
    return [
        Cell("hallucination_rate", 0.02, 100, judge="calibrated", n_outputs=400, replicates=2_000),
        Cell("hallucination_rate", 0.01, 200, judge="biased", n_outputs=600, replicates=2_000),
        Cell(
            "hallucination_rate", 0.01, 400, judge="calibrated", n_outputs=1_200, replicates=2_000
        ),
        Cell("hallucination_rate", 0.05, 100, judge="biased", n_outputs=300, replicates=2_000),
        Cell("key_element_capture", 0.95, 100, judge="biased", n_outputs=300, replicates=2_000),
        Cell(
            "citation_precision_lenient",
            0.97,
            200,
            judge="calibrated",
            n_outputs=600,
            replicates=2_000,
        ),
    ]


def ppi_choice_table(cells: Sequence[Cell]) -> str:
    """Return the unsafe-side error of each candidate PPI interval, cell by cell."""
    lines = [
        "| metric | truth = threshold | design | judge | "
        + " | ".join(PPI_VARIANTS)
        + " | limit |",
        "| --- | --- | --- | --- |" + " --- |" * (len(PPI_VARIANTS) + 1),
    ]
    for cell in cells:
        errors = ppi_variant_errors(cell)
        limit = mc_limit((1.0 - cell.confidence) / 2.0, cell.replicates)
        shown = " | ".join(f"{100 * errors[name]:.2f} %" for name in PPI_VARIANTS)
        lines.append(f"| {cell.label} | {shown} | {100 * limit:.2f} % |")
    return "\n".join(lines)


# -- the grids -------------------------------------------------------------------------------


def fast_grid() -> list[Cell]:
    """Return the cells ``make test`` runs (about a minute on one core)."""
    return [
        Cell("hallucination_rate", 0.01, 18),
        Cell("hallucination_rate", 0.05, 18, rho=0.1),
        Cell("hallucination_rate", 0.02, 100, judge="calibrated", n_outputs=400, replicates=600),
        Cell("hallucination_rate", 0.01, 200, judge="biased", n_outputs=600, replicates=600),
        Cell("citation_precision_lenient", 0.95, 18),
        Cell(
            "citation_precision_lenient", 0.97, 100, judge="biased", n_outputs=400, replicates=600
        ),
        Cell("key_element_capture", 0.90, 18),
        Cell("key_element_capture", 0.95, 100, judge="calibrated", n_outputs=400, replicates=600),
        Cell("guidance_precision", 0.95, 18),
        Cell("guidance_recall", 0.90, 18),
        Cell("classification_accuracy", 0.95, 18),
        Cell("classification_accuracy", 0.99, 100),
        Cell("pass_hat_k", 0.90, 30),
        Cell("pass_hat_k", 0.95, 18, k=1, repeats=1),
    ]


def slow_grid() -> list[Cell]:
    """Return the larger grid of ``make test-slow`` and of the docs' table."""
    cells: list[Cell] = []
    for n in (18, 50, 100, 400):
        for truth in (0.01, 0.05):
            for rho in (0.02, 0.1):
                cells.append(Cell("hallucination_rate", truth, n, rho=rho))
        for metric in ("citation_precision_lenient", "key_element_capture"):
            for truth in (0.90, 0.99):
                cells.append(Cell(metric, truth, n, rho=0.1))
        for metric in ("guidance_precision", "guidance_recall"):
            for truth in (0.90, 0.99):
                cells.append(Cell(metric, truth, n, rho=0.1))
        for truth in (0.90, 0.95, 0.99):
            cells.append(Cell("classification_accuracy", truth, n))
            cells.append(Cell("pass_hat_k", truth, n))
        cells.append(Cell("pass_hat_k", 0.95, n, k=1, repeats=1))
    for n in (100, 200, 400):
        for judge in ("calibrated", "biased"):
            for truth in (0.01, 0.05):
                cells.append(
                    Cell("hallucination_rate", truth, n, judge=judge, n_outputs=3 * n, rho=0.1)
                )
            for metric in ("citation_precision_lenient", "key_element_capture"):
                cells.append(Cell(metric, 0.95, n, judge=judge, n_outputs=3 * n, rho=0.1))
    return [replace(cell, replicates=2_000) for cell in cells]


#: Cells of the slow grid where the gated bound is known to break its promise, and why.
KNOWN_LIMITS = {
    cell.label: (
        "strongly clustered rare defects (intra-output correlation 0.1 at 1 %): samples with no "
        "defect, or with one or two in a single output, show a design effect of about 1 where "
        "the true one is large (docs/statistics.md, 'Known limit')"
    )
    for cell in (
        Cell("hallucination_rate", 0.01, 50, rho=0.1, replicates=2_000),
        Cell("hallucination_rate", 0.01, 100, rho=0.1, replicates=2_000),
        Cell(
            "hallucination_rate",
            0.01,
            200,
            judge="biased",
            n_outputs=600,
            rho=0.1,
            replicates=2_000,
        ),
    )
}


def table(results: Sequence[CellResult]) -> str:
    """Return the results as the markdown table of docs/statistics.md."""
    lines = [
        "| metric | truth = threshold | design | grading | PPI gated | unsafe-side error "
        "| limit | |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for result in results:
        lines.append(
            f"| {result.cell.label} | {100 * result.gated_ppi:.0f} % | "
            f"{100 * result.unsafe:.2f} % | {100 * result.limit:.2f} % | "
            f"{'ok' if result.passes else 'FAILS'} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table of the chosen grid; exit 1 if a cell fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="the grid of make test")
    parser.add_argument(
        "--ppi-choice", action="store_true", help="compare the candidate PPI intervals"
    )
    options = parser.parse_args(argv)
    if options.ppi_choice:
        cells = ppi_choice_grid()
        print(
            f"{len(cells)} cells, confidence 0.95, {cells[0].replicates} evaluations per cell, "
            f"seed {cells[0].seed}\n"
        )
        print(ppi_choice_table(cells))
        return 0
    cells = fast_grid() if options.fast else slow_grid()
    started = time.perf_counter()
    results = []
    for cell in cells:
        results.append(unsafe_error(cell))
        print(f"{results[-1].seconds:6.1f} s  {cell.label}", file=sys.stderr, flush=True)
    confidence = {cell.confidence for cell in cells}
    print(
        f"{len(cells)} cells, confidence {', '.join(f'{c:g}' for c in sorted(confidence))}, "
        f"{cells[0].replicates} evaluations per cell, seed {cells[0].seed}; "
        f"{time.perf_counter() - started:.0f} s\n"
    )
    print(table(results))
    return 0 if all(result.passes for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
