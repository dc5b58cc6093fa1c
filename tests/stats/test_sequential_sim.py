"""The seeded simulation of grading until decided (SPEC §5.5; issue 19, Deliver 5).

The fast cells run with the suite; the full grid (N ∈ {500, 2000}, strong and weak judges,
calibrated, overconfident and biased, truths around both thresholds, one and three gated
metrics, a fixed and an adaptive uniform share τ, 1,000 evaluations per cell: 720 cells) runs
once per ``make test`` (``make test-validity``, marker ``validity``; CI runs it) and in ``make
test-slow``. A cell fails when the Clopper–Pearson upper bound of a wrong-decision rate exceeds
α/2 + 0.01.
"""

from dataclasses import replace

import numpy as np
import pytest

from enterpriseval.stats import draw_probabilities, mean_sequence, settle
from enterpriseval.stats.sequential import DEFAULT_GRID_POINTS, BettingCells
from enterpriseval.stats.sequential_sim import (
    CONDITIONAL,
    REJECT,
    SCALE,
    THETA_IN,
    THETA_OUT,
    SimCell,
    _cell_index,
    _Sampler,
    _threshold_reads,
    clopper_pearson_upper,
    describe,
    full_grid,
    make_population,
    naive_peeking,
    seed_for,
    simulate_sequential,
    validity_bound,
)

REPLICATIONS = 1000
BOUND = validity_bound(0.05)  # α/2 + 0.01


def check_validity(result):
    summary = result.summary()
    for name in ("wrong_scale", "wrong_reject", "above"):
        assert summary[f"cp_{name}"] <= BOUND, f"{describe(result)}: {name}"
    return summary


@pytest.mark.parametrize("judge", ["calibrated", "overconfident", "biased"])
def test_each_population_holds_exactly_the_truth(judge):
    rng = np.random.default_rng(1)
    y, f = make_population(rng, 50, 500, 0.85, "strong", judge)
    assert (y.sum(axis=1) == 425).all()
    assert ((f > 0) & (f < 1) | (f == 1)).all()
    # the judge's scores track the grades (a strong judge ranks passes above fails)
    assert f[y == 1].mean() > f[y == 0].mean() + 0.5


def test_the_sampler_draws_as_draw_probabilities_then_draw_next():
    rng = np.random.default_rng(2)
    s = np.array([0.0, 0.5, 2.0, 1.0, 0.25])
    reps = 40_000
    sampler = _Sampler(rng, np.tile(s, (reps, 1)), tau=0.5)
    first, q_first = sampler.draw()
    expected = draw_probabilities(s, np.zeros(5, dtype=bool), tau=0.5)
    frequencies = np.bincount(first, minlength=5) / reps
    assert frequencies == pytest.approx(expected, abs=0.012)  # > 4 binomial SE
    assert q_first == pytest.approx(expected[first])
    # second draw, given the first: q recorded as draw_probabilities over the rest
    second, q_second = sampler.draw()
    assert (second != first).all()
    for i in range(5):
        graded = np.zeros(5, dtype=bool)
        graded[i] = True
        rows = first == i
        assert q_second[rows] == pytest.approx(draw_probabilities(s, graded)[second[rows]])


@pytest.mark.parametrize(("truth", "expected"), [(0.95, "scale"), (0.65, "reject")])
def test_threshold_cells_settle_as_the_full_sequence_does(truth, expected):
    """The simulation reads the cells at θout and θin; the product reads the whole grid."""
    rng = np.random.default_rng(3)
    n, steps = 300, 150
    y, f = make_population(rng, 1, n, truth, "strong", "calibrated")
    sampler = _Sampler(rng, np.sqrt(f * (1 - f)), tau=0.5)
    order, q_drawn = [], []
    for _ in range(steps):
        index, q = sampler.draw()
        order.append(int(index[0]))
        q_drawn.append(float(q[0]))
    path = mean_sequence(f[0], order, q_drawn, y[0, order], alpha_lower=0.025, alpha_upper=0.025)
    grid = np.linspace(0.0, 1.0, DEFAULT_GRID_POINTS)
    cells = np.array([_cell_index(THETA_OUT), _cell_index(THETA_IN)])
    engine = BettingCells(
        n_total=n,
        replications=1,
        cell_lo=grid[cells],
        cell_hi=grid[cells + 1],
        f_num_sum=f.sum(axis=1),
        f_den_sum=None,
        alpha_lower=0.025,
        alpha_upper=0.025,
        tau=0.5,
    )
    graded_sum = np.zeros((1, 1))
    decided = []
    for t, i in enumerate(order, start=1):
        rest = np.ones(n, dtype=bool)
        rest[order[: t - 1]] = False
        engine.step(
            q=np.array([q_drawn[t - 1]]),
            y_num=y[:, i],
            f_num=f[:, i],
            f_num_max=np.array([f[0, rest].max()]),
            f_num_min=np.array([f[0, rest].min()]),
        )
        graded_sum += y[0, i]
        lower_out, lower_in, upper_out, upper_in = _threshold_reads([engine], graded_sum, t, n)
        ours = None
        if lower_in[0, 0]:
            ours = "scale"
        elif upper_out[0, 0]:
            ours = "reject"
        elif lower_out[0, 0] and upper_in[0, 0]:
            ours = "conditional"
        product = settle(path.lower[t - 1], path.upper[t - 1], THETA_OUT, THETA_IN, 1)
        assert ours == product, f"draw {t}"
        decided.append(product)
    assert expected in decided  # the check saw the decision


def test_clopper_pearson_upper_matches_its_definition():
    from scipy.stats import binom

    upper = clopper_pearson_upper(3, 1000)
    assert binom.cdf(3, 1000, upper) == pytest.approx(0.05, abs=1e-9)
    assert clopper_pearson_upper(0, 1000) == pytest.approx(1 - 0.05 ** (1 / 1000))


# --------------------------------------------------------------------------------------
# The fast grid (make test)
# --------------------------------------------------------------------------------------

AT_THETA_IN = SimCell(500, "strong", "overconfident", THETA_IN)


def test_an_overconfident_judge_at_theta_in_gives_no_more_wrong_scales_than_promised():
    result = simulate_sequential(AT_THETA_IN, REPLICATIONS, seed_for(AT_THETA_IN))
    summary = check_validity(result)
    assert result.true_status == CONDITIONAL
    assert summary["p_wrong_scale"] <= 0.025 + 3 * np.sqrt(0.025 * 0.975 / REPLICATIONS)


def test_naive_peeking_at_a_fixed_n_interval_inflates_wrong_scales():
    """The harness can fail: re-checking the §5.2 normal PPI interval after every grade."""
    result = naive_peeking(AT_THETA_IN, REPLICATIONS, seed_for(AT_THETA_IN))
    wrong = int(result.wrong_scale.sum())
    # the Clopper–Pearson *lower* bound is above α/2 + 0.01: an unmistakable failure
    from scipy.stats import beta

    assert beta.ppf(0.05, wrong, REPLICATIONS - wrong + 1) > BOUND


def test_three_metrics_just_above_theta_out_with_a_biased_weak_judge_rarely_reject():
    cell = SimCell(500, "weak", "biased", THETA_OUT + 0.01, n_metrics=3)
    result = simulate_sequential(cell, REPLICATIONS, seed_for(cell))
    check_validity(result)
    assert result.true_status == CONDITIONAL


def test_a_clear_scale_with_a_strong_judge_is_decided_well_before_the_budget():
    cell = SimCell(500, "strong", "calibrated", THETA_IN + 0.1)
    result = simulate_sequential(cell, REPLICATIONS, seed_for(cell))
    summary = check_validity(result)
    assert result.true_status == SCALE
    assert summary["p_correct"] >= 0.9
    assert summary["median_grades"] <= 0.6 * cell.budget


def test_a_clear_reject_stops_the_session_with_reject():
    cell = SimCell(500, "weak", "overconfident", THETA_OUT - 0.1, n_metrics=3)
    result = simulate_sequential(cell, REPLICATIONS, seed_for(cell))
    summary = check_validity(result)
    assert result.true_status == REJECT
    assert summary["p_correct"] == 1.0  # a stop on Reject, or Reject by default at the budget
    assert summary["p_decided"] >= 0.8


# --------------------------------------------------------------------------------------
# The full grid (make test-validity, once per make test; make test-slow)
# --------------------------------------------------------------------------------------


def cell_id(cell):
    share = "adaptive" if cell.adaptive_tau else "fixed"
    return (
        f"N{cell.n_total}-{cell.strength}-{cell.judge}-{cell.truth:.2f}-J{cell.n_metrics}-{share}"
    )


FULL_GRID = [
    replace(cell, adaptive_tau=adaptive) for cell in full_grid() for adaptive in (False, True)
]


@pytest.mark.validity
@pytest.mark.parametrize("cell", FULL_GRID, ids=cell_id)
def test_full_grid_cell_keeps_every_wrong_decision_within_alpha(cell):
    result = simulate_sequential(cell, REPLICATIONS, seed_for(cell))
    check_validity(result)


# --------------------------------------------------------------------------------------
# Adaptive τ_t (issue 19): the same guarantees, fewer grades on clear cases
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cell",
    [
        SimCell(500, "strong", "overconfident", THETA_IN, adaptive_tau=True),
        SimCell(500, "weak", "biased", THETA_OUT + 0.01, n_metrics=3, adaptive_tau=True),
    ],
    ids=["wrong-scale-at-theta-in", "wrong-reject-above-theta-out"],
)
def test_adaptive_tau_keeps_every_wrong_decision_within_alpha(cell):
    result = simulate_sequential(cell, REPLICATIONS, seed_for(cell))
    check_validity(result)
    assert result.true_status == CONDITIONAL


def test_adaptive_tau_decides_a_clear_scale_with_fewer_grades_than_the_fixed_floor():
    fixed = SimCell(500, "strong", "calibrated", THETA_IN + 0.1)
    adaptive = SimCell(500, "strong", "calibrated", THETA_IN + 0.1, adaptive_tau=True)
    seed = seed_for(fixed)  # the same populations for both
    by_fixed = simulate_sequential(fixed, 300, seed)
    by_adaptive = simulate_sequential(adaptive, 300, seed)
    assert by_adaptive.correct.mean() >= by_fixed.correct.mean() - 0.02
    # the floor τ = 0.5 doubles the weights' range and halves the capped bets; τ_t = 1
    # while the cap binds restores them: at least 15 % fewer grades on this cell
    assert by_adaptive.grades.mean() <= 0.85 * by_fixed.grades.mean()
