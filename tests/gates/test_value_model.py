"""Tests of the annual value-and-risk model (SPEC §6.3; seed 003 Eq. 10)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import stats

from gates.value_model import (
    ProportionInput,
    TimeInput,
    ValueInputs,
    value_components,
    value_draws,
    value_estimate,
    value_point,
)


def inputs(**changes: object) -> ValueInputs:
    """Return a credit-memo-like value case, overridden by ``changes``."""
    base: dict[str, object] = {
        "tasks_per_year": 2000.0,
        "hourly_cost": 90.0,
        "t_manual": TimeInput.fixed(6.0),
        "t_gen": TimeInput.fixed(0.5),
        "t_review": TimeInput.fixed(1.5),
        "inference_cost_per_task": 2.0,
        "integration_cost": 150_000.0,
        "rework_cost": 20_000.0,
        "quality_value": 10_000.0,
        "avoided_value": 5_000.0,
        "loss_per_error": 1_000.0,
        "hallucination": ProportionInput(successes=16, n=1000),
        "catch": ProportionInput(successes=60, n=100),
        # s̄ = 1 reduces π_err per task to HR·(1 − ρ_catch): the hand sums below stay simple
        "sentences_per_output": 1.0,
    }
    base.update(changes)
    return ValueInputs(**base)  # type: ignore[arg-type]


def test_it_computes_the_point_value_by_hand() -> None:
    # 2000·90·(6 − 0.5) = 990,000; inference 2000·2 = 4,000; review 2000·90·1.5 = 270,000;
    # π_err = 0.016·(1 − 0.6) = 0.0064, error loss 2000·0.0064·1000 = 12,800.
    expected = 990_000 + 10_000 + 5_000 - 4_000 - 150_000 - 270_000 - 20_000 - 12_800

    assert value_point(inputs()) == pytest.approx(expected, abs=1e-6)
    assert value_point(inputs()) == pytest.approx(548_200, abs=1e-6)


def test_it_reports_signed_components_that_sum_to_the_point() -> None:
    components = value_components(inputs())

    assert components == pytest.approx(
        {
            "time_saved": 990_000,
            "quality_value": 10_000,
            "avoided_value": 5_000,
            "inference_cost": -4_000,
            "integration_cost": -150_000,
            "review_cost": -270_000,
            "rework_cost": -20_000,
            "error_loss": -12_800,
        }
    )
    assert sum(components.values()) == pytest.approx(value_point(inputs()))


def test_it_uses_the_sample_mean_and_the_mode_as_point_values() -> None:
    case = inputs(
        t_manual=TimeInput.observed([17.0, 25.0, 33.0, 25.0]),  # mean 25
        t_gen=TimeInput.triangular(0.5, 1.0, 4.0),  # mode 1, mean 1.833
        t_review=TimeInput.fixed(0.0),
        loss_per_error=0.0,
        hallucination=None,
        catch=None,
        integration_cost=0.0,
        rework_cost=0.0,
        quality_value=0.0,
        avoided_value=0.0,
        inference_cost_per_task=0.0,
    )

    assert value_point(case) == pytest.approx(2000 * 90 * (25.0 - 1.0))


def test_it_gives_no_catch_credit_without_catch_counts() -> None:
    components = value_components(inputs(catch=None))

    assert components["error_loss"] == pytest.approx(-2000 * 0.016 * 1000)


def test_the_monte_carlo_is_reproducible_from_its_seed() -> None:
    case = inputs(t_manual=TimeInput.triangular(4.0, 6.0, 9.0))

    first = value_estimate(case, seed=11)
    again = value_estimate(case, seed=11)
    other = value_estimate(case, seed=12)

    assert (first.lo, first.hi) == (again.lo, again.hi)
    assert (first.lo, first.hi) != (other.lo, other.hi)
    assert first.seed == 11 and first.draws == 10_000 and first.level == 0.90


def test_the_interval_collapses_to_the_point_when_every_input_is_fixed() -> None:
    case = inputs(loss_per_error=0.0, hallucination=None, catch=None)

    estimate = value_estimate(case, draws=500)

    assert estimate.lo == estimate.point == estimate.hi


def test_the_interval_contains_the_point_in_an_ordinary_case() -> None:
    case = inputs(
        t_manual=TimeInput.observed([5.0, 6.5, 7.0, 4.5, 6.0, 5.5, 8.0, 6.2]),
        t_gen=TimeInput.triangular(0.25, 0.5, 1.0),
        t_review=TimeInput.triangular(1.0, 1.5, 2.5),
        hallucination=ProportionInput(successes=40, n=1000),
        catch=ProportionInput(successes=30, n=50),
    )

    estimate = value_estimate(case, draws=4000)

    assert estimate.lo < estimate.point < estimate.hi
    assert estimate.components == value_components(case)


def test_the_interval_widens_with_the_level() -> None:
    case = inputs(t_manual=TimeInput.triangular(4.0, 6.0, 9.0))

    narrow = value_estimate(case, level=0.5, draws=4000)
    wide = value_estimate(case, level=0.99, draws=4000)

    assert wide.lo < narrow.lo < narrow.hi < wide.hi


def test_hallucination_draws_follow_the_uniform_prior_beta_posterior() -> None:
    # Isolate the error-loss term: V = −N·ℓ·HR with nothing else uncertain or non-zero.
    k, n = 16, 200
    case = ValueInputs(
        tasks_per_year=1.0,
        hourly_cost=0.0,
        t_manual=TimeInput.fixed(0.0),
        t_gen=TimeInput.fixed(0.0),
        t_review=TimeInput.fixed(0.0),
        inference_cost_per_task=0.0,
        loss_per_error=1.0,
        hallucination=ProportionInput(successes=k, n=n),
        sentences_per_output=1.0,
    )
    posterior = stats.beta(1 + k, 1 + n - k)

    hr = -value_draws(case, draws=20_000, seed=3)
    estimate = value_estimate(case, draws=20_000, seed=3, level=0.90)

    assert posterior.mean() == pytest.approx((1 + k) / (2 + n))
    assert hr.mean() == pytest.approx(posterior.mean(), rel=0.01)
    assert hr.std() == pytest.approx(posterior.std(), rel=0.03)
    assert -estimate.hi == pytest.approx(posterior.ppf(0.05), rel=0.03)
    assert -estimate.lo == pytest.approx(posterior.ppf(0.95), rel=0.03)
    # SPEC §6.3: the point is the Monte Carlo median, here the posterior's median
    assert -estimate.point == pytest.approx(posterior.median(), rel=0.01)
    assert estimate.central == pytest.approx(-k / n)


def test_the_bootstrap_of_the_manual_time_is_centred_on_the_sample_mean() -> None:
    samples = np.array([17.0, 25.0, 33.0, 25.0, 17.0, 33.0, 25.0, 25.0, 33.0, 41.0])
    case = ValueInputs(
        tasks_per_year=1.0,
        hourly_cost=1.0,
        t_manual=TimeInput.observed(samples.tolist()),
        t_gen=TimeInput.fixed(0.0),
        t_review=TimeInput.fixed(0.0),
        inference_cost_per_task=0.0,
    )

    draws = value_draws(case, draws=20_000, seed=5)

    assert draws.mean() == pytest.approx(samples.mean(), rel=0.005)
    # the bootstrap standard error of the mean is the population sd over √m
    assert draws.std() == pytest.approx(samples.std() / np.sqrt(samples.size), rel=0.05)


def test_triangular_draws_have_the_triangular_mean() -> None:
    case = ValueInputs(
        tasks_per_year=1.0,
        hourly_cost=1.0,
        t_manual=TimeInput.triangular(2.0, 3.0, 7.0),
        t_gen=TimeInput.fixed(0.0),
        t_review=TimeInput.fixed(0.0),
        inference_cost_per_task=0.0,
    )

    draws = value_draws(case, draws=20_000, seed=1)

    assert draws.mean() == pytest.approx(stats.triang(c=0.2, loc=2.0, scale=5.0).mean(), rel=0.01)
    assert value_point(case) == 3.0


# --------------------------------------------------------------------------- label


def test_it_labels_the_value_observed_only_with_an_observed_baseline() -> None:
    observed_times = TimeInput.observed([5.0, 6.0, 7.0])

    assert (
        value_estimate(inputs(t_manual=observed_times, baseline_observed=True), draws=100).label
        == "observed"
    )
    assert (
        value_estimate(inputs(t_manual=observed_times, baseline_observed=False), draws=100).label
        == "estimated"
    )
    assert value_estimate(inputs(baseline_observed=True), draws=100).label == "estimated"
    assert (
        value_estimate(
            inputs(t_manual=TimeInput.triangular(4.0, 6.0, 9.0), baseline_observed=True), draws=100
        ).label
        == "estimated"
    )


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: ProportionInput(successes=-1, n=10), "ProportionInput.successes"),
        (lambda: ProportionInput(successes=11, n=10), "ProportionInput.successes"),
        (lambda: ProportionInput(successes=0, n=-3), "ProportionInput.n"),
        (lambda: ProportionInput(successes=0, n=0), "ProportionInput.n"),
        (lambda: ProportionInput(successes=1.5, n=10), "ProportionInput.successes"),  # type: ignore[arg-type]
        (lambda: TimeInput.observed([]), "TimeInput.samples"),
        (lambda: TimeInput.observed([1.0, -2.0]), "TimeInput.samples[1]"),
        (lambda: TimeInput.triangular(3.0, 2.0, 4.0), "TimeInput.mode"),
        (lambda: TimeInput.triangular(1.0, 5.0, 4.0), "TimeInput.mode"),
        (lambda: TimeInput(value=1.0, low=0.0, mode=1.0, high=2.0), "TimeInput"),
        (lambda: TimeInput(), "TimeInput"),
        (lambda: TimeInput(low=1.0, mode=2.0), "TimeInput.high"),
        (lambda: TimeInput.fixed(float("nan")), "TimeInput.value"),
        (lambda: inputs(tasks_per_year=-5.0), "tasks_per_year"),
        (lambda: inputs(hourly_cost="90"), "hourly_cost"),
        (lambda: inputs(integration_cost=-1.0), "integration_cost"),
        (lambda: inputs(hallucination=None), "hallucination"),
        (lambda: inputs(sentences_per_output=None), "sentences_per_output"),
        (lambda: inputs(sentences_per_output=-1.0), "sentences_per_output"),
        (lambda: inputs(t_gen=0.5), "t_gen"),
    ],
)
def test_it_names_the_field_of_invalid_input(build: object, field: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(field)):
        build()  # type: ignore[operator]


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.1])
def test_it_refuses_a_level_outside_the_open_unit_interval(level: float) -> None:
    with pytest.raises(ValueError, match=r"^level"):
        value_estimate(inputs(), level=level, draws=10)


@pytest.mark.parametrize("draws", [0, -1, 2.5])
def test_it_refuses_a_bad_number_of_draws(draws: float) -> None:
    with pytest.raises(ValueError, match=r"^draws"):
        value_estimate(inputs(), draws=draws)  # type: ignore[arg-type]


def test_a_degenerate_range_is_a_fixed_time() -> None:
    case = inputs(
        t_manual=TimeInput.triangular(6.0, 6.0, 6.0),
        loss_per_error=0.0,
        hallucination=None,
        catch=None,
    )

    estimate = value_estimate(case, draws=50)

    assert estimate.lo == estimate.point == estimate.hi


# --------------------------------------------------------------------------- π_err per task


def _credit_memo_like(**changes: object) -> ValueInputs:
    base: dict[str, object] = {
        "tasks_per_year": 2600.0,
        "hourly_cost": 95.0,
        "t_manual": TimeInput.triangular(2.0, 3.0, 5.0),
        "t_gen": TimeInput.fixed(0.05),
        "t_review": TimeInput.triangular(0.5, 1.0, 1.5),
        "inference_cost_per_task": 0.40,
        "integration_cost": 150_000.0,
        "loss_per_error": 2_000.0,
        "hallucination": ProportionInput(successes=13, n=860),
        "catch": ProportionInput(successes=27, n=40),
        "sentences_per_output": 860 / 40,
    }
    base.update(changes)
    return ValueInputs(**base)  # type: ignore[arg-type]


def test_pi_err_is_per_task_from_hr_per_sentence_and_the_sentences_per_output() -> None:
    case = _credit_memo_like()
    hr, rho, s_bar = 13 / 860, 27 / 40, 860 / 40
    # SPEC §6.3 by hand: the chance a task's output carries ≥ 1 uncaught unsupported sentence
    per_task = 1.0 - (1.0 - hr * (1.0 - rho)) ** s_bar

    components = value_components(case)

    assert per_task == pytest.approx(0.1003, abs=5e-4)
    assert components["error_loss"] == pytest.approx(-2600 * per_task * 2_000.0, rel=1e-12)
    assert value_estimate(case, draws=200).pi_err == pytest.approx(per_task, rel=1e-12)


def test_the_per_sentence_error_rate_times_tasks_understated_the_loss_about_s_bar_fold() -> None:
    # Issue 16: π_err per sentence multiplied by tasks per year was "about 6.6× too small"
    # once ℓ_err > 0; with 7 sentences per output the per-task rate is ~6.6× the per-sentence.
    hr, rho, s_bar = 0.016, 0.40, 7.0
    case = _credit_memo_like(
        hallucination=ProportionInput(successes=16, n=1000),
        catch=ProportionInput(successes=40, n=100),
        sentences_per_output=s_bar,
    )
    per_sentence_loss = 2600 * hr * (1 - rho) * 2_000.0

    ratio = value_components(case)["error_loss"] / -per_sentence_loss

    assert ratio == pytest.approx((1 - (1 - hr * (1 - rho)) ** s_bar) / (hr * (1 - rho)))
    assert 6.5 < ratio < 6.9


def test_the_monte_carlo_draws_match_an_independent_numpy_computation() -> None:
    case = _credit_memo_like()
    draws = value_draws(case, draws=10_000, seed=7)
    # Independently, with the same generators (one SeedSequence child per input, in order).
    rngs = [np.random.default_rng(c) for c in np.random.SeedSequence(7).spawn(5)]
    t_manual = rngs[0].triangular(2.0, 3.0, 5.0, size=10_000)
    rngs[1].random(0)  # t_gen is fixed: its generator is spawned but draws nothing
    t_review = rngs[2].triangular(0.5, 1.0, 1.5, size=10_000)
    hr = rngs[3].beta(1 + 13, 1 + 860 - 13, size=10_000)
    rho = rngs[4].beta(1 + 27, 1 + 40 - 27, size=10_000)
    pi_err = 1.0 - (1.0 - hr * (1.0 - rho)) ** (860 / 40)
    expected = (
        2600 * 95 * (t_manual - 0.05)
        - 2600 * 0.40
        - 150_000
        - 2600 * 95 * t_review
        - 2600 * pi_err * 2_000.0
    )

    np.testing.assert_allclose(draws, expected, rtol=1e-9, atol=1e-6)


def test_the_point_is_the_monte_carlo_median_and_lies_inside_the_interval() -> None:
    # Issue 16: the point sat at the 33rd percentile of its own distribution when it was the
    # value at the central inputs; SPEC §6.3 makes it the median of the draws.
    case = _credit_memo_like(loss_per_error=0.0)
    estimate = value_estimate(case, draws=10_000, seed=3)
    draws = value_draws(case, draws=10_000, seed=3)

    assert estimate.point == pytest.approx(float(np.median(draws)), rel=1e-12)
    assert estimate.point_rule == "median of the Monte Carlo draws"
    assert (draws <= estimate.point).mean() == pytest.approx(0.5, abs=1e-3)
    assert estimate.central == pytest.approx(value_point(case))
    # the central value (modes) sits far below the median: the manual range is right-skewed
    assert (draws <= estimate.central).mean() < 0.40
    assert estimate.lo < estimate.point < estimate.hi
