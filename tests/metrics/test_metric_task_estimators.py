"""Task- and trajectory-level metric estimators against hand calculations and references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import f1_score, precision_recall_fscore_support
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.weightstats import DescrStatsW

from metrics.task_estimators import (
    adversarial_incident_count_estimate,
    catch_rate_estimate,
    classification_accuracy_estimate,
    classification_class_scores,
    classification_macro_f1_estimate,
    completeness_estimate,
    cost_per_successful_task_estimate,
    dispersion_estimate,
    escalation_appropriateness_estimate,
    false_acceptance_rate_estimate,
    net_time_reduction_estimate,
    pass_hat_k_estimates,
    policy_violation_rate_estimate,
    recovery_rate_estimate,
    review_burden_estimate,
    time_baseline,
    unplanned_intervention_rate_estimate,
)


def wilson_percent(successes: int, n: int, confidence: float) -> tuple[float, float]:
    lo, hi = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
    return 100 * lo, 100 * hi


def exact_percent(successes: int, n: int, confidence: float) -> tuple[float, float]:
    lo, hi = proportion_confint(successes, n, alpha=1 - confidence, method="beta")
    return 100 * lo, 100 * hi


def kg_over_tasks(values, confidence: float) -> tuple[float, float]:
    """Korn–Graubard over tasks from scipy.stats: n_eff = min(n, p(1 − p)/(s²/n))·(z/t)²."""
    values = np.asarray(values, dtype=float)
    n, alpha = values.size, 1 - confidence
    p, v = values.mean(), values.var(ddof=1) / values.size
    n_eff = min(n, p * (1 - p) / v) if 0 < p < 1 and v > 0 else n
    n_eff *= (stats.norm.ppf(1 - alpha / 2) / stats.t.ppf(1 - alpha / 2, n - 1)) ** 2
    x = n_eff * p
    lo = 0.0 if p == 0 else stats.beta.ppf(alpha / 2, x, n_eff - x + 1)
    hi = 1.0 if p == 1 else stats.beta.ppf(1 - alpha / 2, x + 1, n_eff - x)
    return lo, hi


def t_interval(values, confidence: float) -> tuple[float, float]:
    return DescrStatsW(np.asarray(values, dtype=float)).tconfint_mean(alpha=1 - confidence)


def scipy_percentile_bootstrap(data, statistic, confidence: float, seed: int, resamples=4_000):
    """Reference percentile bootstrap over tasks (rows resampled together)."""
    result = stats.bootstrap(
        data,
        statistic,
        n_resamples=resamples,
        paired=True,
        vectorized=False,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return result.confidence_interval.low, result.confidence_interval.high


# --- completeness ------------------------------------------------------------------------


def test_completeness_is_the_mean_of_per_task_shares_with_a_t_interval():
    attempted = [3, 4, 2, 5, 1]
    required = [4, 5, 4, 5, 2]
    shares = [0.75, 0.8, 0.5, 1.0, 0.5]  # by hand
    estimate = completeness_estimate(attempted, required, confidence=0.9)

    assert estimate.point == pytest.approx(100 * 3.55 / 5)
    lo, hi = t_interval(shares, 0.9)
    assert (estimate.lo, estimate.hi) == pytest.approx((100 * lo, 100 * hi), rel=1e-12)
    assert (estimate.n, estimate.n_clusters, estimate.mode) == (5, 5, "A")
    assert estimate.confidence == 0.9


def test_completeness_interval_is_clipped_to_0_100():
    estimate = completeness_estimate([4, 4, 1], [4, 4, 4], confidence=0.95)

    assert estimate.hi == 100.0
    assert estimate.lo < estimate.point < estimate.hi
    assert 100 * t_interval([1, 1, 0.25], 0.95)[1] > 100


def test_completeness_of_one_task_has_a_point_but_no_interval():
    estimate = completeness_estimate([1], [2], confidence=0.95)

    assert estimate.point == 50.0
    assert estimate.lo is None and estimate.hi is None
    assert not estimate.has_value
    assert "two" in estimate.reason


def test_completeness_rejects_a_task_without_required_items():
    with pytest.raises(ValueError, match="required must be at least 1"):
        completeness_estimate([0, 1], [0, 2], confidence=0.95)


def test_completeness_rejects_more_attempted_than_required():
    with pytest.raises(ValueError, match="attempted must not exceed required; task 1"):
        completeness_estimate([1, 3], [2, 2], confidence=0.95)


# --- classification ------------------------------------------------------------------------


def test_accuracy_counts_matching_labels_with_a_clopper_pearson_interval():
    gold = ["compliant", "partial", "non", "compliant", "partial", "compliant", "non"]
    predicted = ["compliant", "non", "non", "compliant", None, "partial", "non"]
    estimate = classification_accuracy_estimate(predicted, gold, confidence=0.95)

    assert estimate.point == pytest.approx(100 * 4 / 7)
    assert (estimate.lo, estimate.hi) == pytest.approx(exact_percent(4, 7, 0.95), rel=1e-9)
    assert estimate.estimator == "Clopper–Pearson interval"
    assert "frozen task set" in estimate.estimand
    assert "no finite-population correction" in estimate.estimand
    assert estimate.notes == ("4 of 7",)


def test_accuracy_rejects_labels_of_different_lengths():
    with pytest.raises(ValueError, match="predicted has 2, gold has 3"):
        classification_accuracy_estimate(["a", "b"], ["a", "b", "c"], confidence=0.95)


def test_accuracy_rejects_a_missing_gold_label():
    with pytest.raises(ValueError, match="gold has no label for task 1"):
        classification_accuracy_estimate(["a", "b"], ["a", None], confidence=0.95)


def labelled_tasks(seed: int, n: int):
    rng = np.random.default_rng(seed)
    classes = np.array(["compliant", "partial", "non-compliant"])
    gold = rng.choice(classes, size=n, p=[0.6, 0.25, 0.15])
    predicted = gold.copy()
    flip = rng.random(n) < 0.3
    predicted[flip] = rng.choice([*classes, "unsure"], size=int(flip.sum()))
    return gold.tolist(), predicted.tolist()


def test_macro_f1_equals_sklearn_over_the_gold_label_set():
    gold, predicted = labelled_tasks(7, 150)
    labels = sorted(set(gold))
    estimate = classification_macro_f1_estimate(predicted, gold, confidence=0.95)

    expected = f1_score(gold, predicted, labels=labels, average="macro", zero_division=0)
    assert "unsure" in predicted  # a label outside the gold set counts against its gold class
    assert estimate.point == pytest.approx(100 * expected, rel=1e-12)
    assert estimate.n == estimate.n_clusters == 150
    assert "seed 0" in estimate.estimator and "10000 resamples" in estimate.estimator


def test_macro_f1_shows_per_class_precision_and_recall_as_sklearn():
    gold, predicted = labelled_tasks(11, 120)
    labels = sorted(set(gold))
    precision, recall, f1, support = precision_recall_fscore_support(
        gold, predicted, labels=labels, zero_division=0
    )
    scores = classification_class_scores(predicted, gold)

    assert [score.label for score in scores] == labels
    assert [score.precision for score in scores] == pytest.approx(100 * precision)
    assert [score.recall for score in scores] == pytest.approx(100 * recall)
    assert [score.f1 for score in scores] == pytest.approx(100 * f1)
    assert [score.support for score in scores] == list(support)
    notes = classification_macro_f1_estimate(predicted, gold, confidence=0.95).notes
    assert notes[0].startswith(f"class {labels[0]!r}: precision {100 * precision[0]:.1f} %")


def test_a_gold_class_never_predicted_has_no_precision_and_f1_zero():
    gold = ["a", "a", "b", "b", "c"]
    predicted = ["a", "b", "b", "a", "a"]
    scores = {score.label: score for score in classification_class_scores(predicted, gold)}

    assert scores["c"].precision is None
    assert scores["c"].recall == 0.0 and scores["c"].f1 == 0.0
    expected = f1_score(gold, predicted, average="macro", zero_division=0)
    estimate = classification_macro_f1_estimate(predicted, gold, confidence=0.95)
    assert estimate.point == pytest.approx(100 * expected)
    assert any("precision n/a" in note for note in estimate.notes)


def test_a_listed_label_absent_from_gold_and_predictions_is_left_out_of_the_mean():
    gold = ["a", "a", "b", "b"]
    predicted = ["a", "b", "b", "b"]
    estimate = classification_macro_f1_estimate(
        predicted, gold, labels=["a", "b", "c"], confidence=0.95
    )

    assert estimate.point == pytest.approx(100 * f1_score(gold, predicted, average="macro"))
    assert "left out of the mean, neither in gold nor predicted: ['c']" in estimate.notes


def test_macro_f1_rejects_a_gold_label_outside_the_label_set():
    with pytest.raises(ValueError, match="labels does not contain the gold label 'c' of task 2"):
        classification_macro_f1_estimate(
            ["a", "b", "c"], ["a", "b", "c"], labels=["a", "b"], confidence=0.95
        )


def test_macro_f1_bootstrap_interval_agrees_with_scipy():
    gold, predicted = labelled_tasks(3, 200)
    labels = sorted(set(gold))
    estimate = classification_macro_f1_estimate(predicted, gold, confidence=0.9, seed=5)

    def macro(g, p):
        return f1_score(g, p, labels=labels, average="macro", zero_division=0)

    pairs = (np.array(gold), np.array(predicted))
    lo, hi = scipy_percentile_bootstrap(pairs, macro, 0.9, 5, resamples=2_000)
    # Different random streams: the limits agree within Monte Carlo error (about 0.3 points).
    assert estimate.lo == pytest.approx(100 * lo, abs=1.0)
    assert estimate.hi == pytest.approx(100 * hi, abs=1.0)


def test_macro_f1_is_reproducible_from_its_seed():
    gold, predicted = labelled_tasks(3, 60)
    first = classification_macro_f1_estimate(predicted, gold, confidence=0.95, seed=9)
    again = classification_macro_f1_estimate(predicted, gold, confidence=0.95, seed=9)
    other = classification_macro_f1_estimate(predicted, gold, confidence=0.95, seed=10)

    assert (first.lo, first.hi) == (again.lo, again.hi)
    assert (first.lo, first.hi) != (other.lo, other.hi)


# --- net time reduction ----------------------------------------------------------------------


def test_net_time_reduction_nets_generation_and_review_time():
    estimate = net_time_reduction_estimate(
        [60, 50, 40], [10, 20, 10], [5, 5, 5], baseline="observed", confidence=0.95
    )

    # t̄_manual = 50, t̄_AI = 5 + 40/3: Δeff = 1 − (55/3)/50
    assert estimate.point == pytest.approx(100 * (1 - (55 / 3) / 50))
    assert time_baseline(estimate) == "observed"
    assert not any("value claim" in note for note in estimate.notes)


def test_an_estimated_baseline_is_recorded_and_barred_from_value_claims():
    estimate = net_time_reduction_estimate(
        [60, 50], [10, 20], baseline="estimated", confidence=0.95
    )

    assert time_baseline(estimate) == "estimated"
    assert "estimated baseline: for prioritisation only, not for a value claim" in estimate.notes
    assert any("generation time not given separately" in note for note in estimate.notes)


def test_net_time_reduction_is_negative_when_the_ai_route_takes_longer():
    estimate = net_time_reduction_estimate([10, 10], [12, 14], baseline="observed", confidence=0.9)

    assert estimate.point == pytest.approx(-30.0)


def test_net_time_reduction_paired_bootstrap_agrees_with_scipy():
    rng = np.random.default_rng(21)
    manual = rng.gamma(4.0, 10.0, size=30)
    review = manual * rng.uniform(0.2, 0.6, size=30)
    estimate = net_time_reduction_estimate(
        manual, review, baseline="observed", confidence=0.95, seed=1
    )

    lo, hi = scipy_percentile_bootstrap(
        (manual, review), lambda m, r: 1 - r.mean() / m.mean(), 0.95, 1
    )
    assert estimate.lo == pytest.approx(100 * lo, abs=1.0)
    assert estimate.hi == pytest.approx(100 * hi, abs=1.0)
    assert "paired by task" in estimate.estimator


def test_unpaired_net_time_reduction_takes_samples_of_different_sizes():
    estimate = net_time_reduction_estimate(
        [30, 40, 50, 60], [10, 20], baseline="observed", confidence=0.95, paired=False
    )

    assert estimate.point == pytest.approx(100 * (1 - 15 / 45))
    assert estimate.n == 2
    assert estimate.lo < estimate.point < estimate.hi
    with pytest.raises(ValueError, match="manual_times has 4, review_times has 2"):
        net_time_reduction_estimate(
            [30, 40, 50, 60], [10, 20], baseline="observed", confidence=0.95
        )


@pytest.mark.parametrize(
    ("manual", "review", "baseline", "message"),
    [
        ([10, 0], [1, 1], "observed", "manual_times must be positive"),
        ([10, 5], [1, -1], "observed", "review_times must be non-negative"),
        ([10, 5], [1, 1], "guessed", "baseline must be 'observed' or 'estimated'"),
    ],
)
def test_net_time_reduction_rejects_malformed_input(manual, review, baseline, message):
    with pytest.raises(ValueError, match=message):
        net_time_reduction_estimate(manual, review, baseline=baseline, confidence=0.95)


# --- cost per successful task -----------------------------------------------------------------


def test_cost_per_success_divides_total_cost_by_successes():
    estimate = cost_per_successful_task_estimate(
        [1.0, 2.0, 3.0, 4.0], [1, 0, 1, 1], [0.5, 0.5, 0.5, 0.5], confidence=0.95
    )

    assert estimate.point == pytest.approx((10 + 2) / 3)  # currency, not percent
    assert estimate.n == 4


def test_cost_per_success_refuses_unknown_costs_and_says_how_many():
    estimate = cost_per_successful_task_estimate(
        [1.0, None, 3.0, float("nan")], [1, 1, 1, 1], confidence=0.95
    )

    assert estimate.point is None
    assert estimate.reason.startswith("2 of 4 tasks have an unknown cost (inference 2, review 0)")


def test_cost_per_success_can_exclude_unknown_costs_and_flags_it():
    estimate = cost_per_successful_task_estimate(
        [1.0, None, 3.0, 2.0],
        [1, 1, 0, 1],
        [1.0, 1.0, None, 1.0],
        confidence=0.95,
        unknown_costs="exclude",
    )

    assert estimate.point == pytest.approx((1 + 1 + 2 + 1) / 2)
    assert estimate.n == 2
    assert estimate.notes[0].startswith("flag: 2 of 4 tasks have an unknown cost")


def test_cost_per_success_without_a_success_has_no_value():
    estimate = cost_per_successful_task_estimate([1.0, 2.0], [0, 0], confidence=0.95)

    assert estimate.point is None
    assert estimate.reason == "no successful task among 2"


def test_cost_per_success_bootstrap_agrees_with_scipy():
    rng = np.random.default_rng(4)
    costs = rng.uniform(0.01, 0.2, size=80)
    succeeded = rng.random(80) < 0.7
    estimate = cost_per_successful_task_estimate(costs, succeeded, confidence=0.95, seed=2)

    lo, hi = scipy_percentile_bootstrap(
        (costs, succeeded.astype(float)), lambda c, s: c.sum() / s.sum(), 0.95, 2
    )
    assert estimate.lo == pytest.approx(lo, rel=0.02)
    assert estimate.hi == pytest.approx(hi, rel=0.02)


def test_cost_per_success_with_one_success_has_no_finite_upper_limit():
    succeeded = np.zeros(40, dtype=bool)
    succeeded[0] = True
    estimate = cost_per_successful_task_estimate(np.full(40, 0.1), succeeded, confidence=0.95)

    assert estimate.point == pytest.approx(4.0)
    assert estimate.hi is None and estimate.lo is not None
    # (39/40)^40 ≈ 36 % of resamples hold no success: far above α/2.
    assert "too few successful tasks (1)" in estimate.reason


# --- pass^k and dispersion ---------------------------------------------------------------------


def test_pass_hat_k_reports_1_2_4_and_k_by_hand():
    estimates = pass_hat_k_estimates([5, 3, 0, 4], 5, confidence=0.95)

    assert list(estimates) == [1, 2, 4, 5]
    # C(c,2)/C(5,2): (10 + 3 + 0 + 6)/10/4
    assert estimates[2].point == pytest.approx(100 * (10 + 3 + 0 + 6) / 10 / 4)
    assert estimates[1].point == pytest.approx(100 * 12 / 20)
    assert estimates[4].point == pytest.approx(100 * (1 + 0 + 0 + 1 / 5) / 4)
    assert estimates[5].point == pytest.approx(100 * 1 / 4)
    assert all(est.metric_id == "pass_hat_k" for est in estimates.values())
    assert estimates[4].notes[:2] == ("k = 4", "K = 5 repeats")


def test_pass_hat_4_with_three_repeats_says_it_needs_more():
    estimates = pass_hat_k_estimates([3, 2, 1], 3, confidence=0.95)

    assert list(estimates) == [1, 2, 3, 4]
    assert estimates[4].point is None
    assert estimates[4].reason == "pass^4 needs at least 4 repeats of every task; the fewest is 3"
    assert estimates[3].has_value


def test_pass_hat_k_interval_is_korn_graubard_over_the_per_task_terms():
    rng = np.random.default_rng(12)
    successes = rng.binomial(4, rng.beta(3, 1, size=60))
    estimates = pass_hat_k_estimates(successes, 4, confidence=0.95, ks=[2])

    terms = np.array([math.comb(c, 2) / math.comb(4, 2) for c in successes])
    lo, hi = kg_over_tasks(terms, 0.95)
    assert estimates[2].point == pytest.approx(100 * terms.mean())
    assert (estimates[2].lo, estimates[2].hi) == pytest.approx((100 * lo, 100 * hi), rel=1e-9)
    assert "Korn–Graubard over tasks" in estimates[2].estimator


def test_pass_hat_k_of_always_successful_tasks_is_100_with_an_exact_lower_limit():
    # Every term is 1, so the interval is Clopper–Pearson's at 3 of 3: [(α/2)^(1/3), 1],
    # never the zero-width [100, 100] of the percentile bootstrap.
    estimate = pass_hat_k_estimates([4, 4, 4], 4, confidence=0.95, ks=[4])[4]

    assert (estimate.point, estimate.hi) == (100.0, 100.0)
    assert estimate.lo == pytest.approx(100 * 0.025 ** (1 / 3))
    assert estimate.lo == pytest.approx(exact_percent(3, 3, 0.95)[0])


def test_pass_hat_1_with_one_repeat_is_clopper_pearson_over_tasks():
    successes = [1] * 17 + [0]
    estimate = pass_hat_k_estimates(successes, 1, confidence=0.9, ks=[1])[1]

    assert estimate.point == pytest.approx(100 * 17 / 18)
    assert (estimate.lo, estimate.hi) == pytest.approx(exact_percent(17, 18, 0.9), rel=1e-9)


def test_pass_hat_k_accepts_a_different_number_of_repeats_per_task():
    estimates = pass_hat_k_estimates([2, 5], [3, 5], confidence=0.95, mode="H", kappa=0.8)

    assert list(estimates) == [1, 2, 3, 4]
    assert estimates[2].point == pytest.approx(100 * (1 / 3 + 1) / 2)
    assert estimates[2].notes[1] == "K = 3–5 repeats per task"
    assert estimates[4].point is None
    assert (estimates[1].mode, estimates[1].kappa) == ("H", 0.8)


def test_dispersion_is_the_mean_per_task_std_of_the_indicators():
    successes = np.random.default_rng(8).binomial(4, 0.8, size=40)
    indicators = np.array([[1] * c + [0] * (4 - c) for c in successes])
    for ddof in (0, 1):
        per_task = indicators.std(axis=1, ddof=ddof)
        estimate = dispersion_estimate(successes, 4, confidence=0.95, ddof=ddof)

        assert estimate.point == pytest.approx(per_task.mean())  # proportion scale
        # Korn–Graubard over tasks of the values as shares of the largest possible std.
        ceiling = 0.5 * math.sqrt(4 / (4 - ddof))
        lo, hi = kg_over_tasks(per_task / ceiling, 0.95)
        assert (estimate.lo, estimate.hi) == pytest.approx((lo * ceiling, hi * ceiling), rel=1e-9)
        assert estimate.notes[0] == f"ddof = {ddof}"
        assert "depends on K (K = 4)" in estimate.notes[2]


def test_dispersion_interval_stays_within_the_possible_standard_deviations():
    estimate = dispersion_estimate([2, 2, 0], 4, confidence=0.95)

    lo, hi = t_interval([0.5, 0.5, 0.0], 0.95)
    assert lo < 0 and hi > 0.5  # the old t interval left the possible range
    # Shares of the largest std 0.5 are [1, 1, 0]: Clopper–Pearson at 2 of 3, times 0.5.
    exact_lo, exact_hi = exact_percent(2, 3, 0.95)
    assert (estimate.lo, estimate.hi) == pytest.approx((exact_lo / 200, exact_hi / 200))
    assert 0.0 < estimate.lo < estimate.hi < 0.5


def test_dispersion_of_deterministic_tasks_is_zero_with_an_upper_limit_above_zero():
    estimate = dispersion_estimate([4, 0, 4, 4, 0], 4, confidence=0.9)

    assert (estimate.point, estimate.lo) == (0.0, 0.0)
    assert estimate.hi == pytest.approx(0.5 * exact_percent(0, 5, 0.9)[1] / 100)


@pytest.mark.parametrize(
    ("trials", "ddof", "message"),
    [(1, 0, "trials must be at least 2"), (4, 2, "ddof must be 0 or 1")],
)
def test_dispersion_rejects_invalid_repeats_or_ddof(trials, ddof, message):
    with pytest.raises(ValueError, match=message):
        dispersion_estimate([1, 0], trials, confidence=0.95, ddof=ddof)


# --- trajectory-level and oversight proportions -------------------------------------------------


@pytest.mark.parametrize(
    ("estimator", "metric_id", "mode"),
    [
        (recovery_rate_estimate, "recovery_rate", "A"),
        (policy_violation_rate_estimate, "policy_violation_rate", "A"),
        (escalation_appropriateness_estimate, "escalation_appropriateness", "H"),
        (unplanned_intervention_rate_estimate, "unplanned_intervention_rate", "A"),
    ],
)
def test_trajectory_rates_are_clopper_pearson_proportions(estimator, metric_id, mode):
    flags = [True, False, True, True, False, True, True, True, False, True, True, True]
    estimate = estimator(flags, confidence=0.9, planned_n=20)

    assert estimate.metric_id == metric_id and estimate.mode == mode
    assert estimate.point == pytest.approx(100 * 9 / 12)
    assert (estimate.lo, estimate.hi) == pytest.approx(exact_percent(9, 12, 0.9), rel=1e-9)
    assert estimate.under_sampled and estimate.planned_n == 20


@pytest.mark.parametrize(
    "estimator",
    [
        recovery_rate_estimate,
        policy_violation_rate_estimate,
        escalation_appropriateness_estimate,
        unplanned_intervention_rate_estimate,
        adversarial_incident_count_estimate,
        review_burden_estimate,
    ],
)
def test_no_unit_gives_a_reason_and_no_nan(estimator):
    estimate = estimator([], confidence=0.95)

    assert (estimate.point, estimate.lo, estimate.hi) == (None, None, None)
    assert estimate.reason
    assert estimate.n == 0


def test_policy_violation_rate_rejects_a_grading_mode_the_catalogue_does_not_allow():
    with pytest.raises(ValueError, match="mode 'J' is not a grading mode of policy_violation_rate"):
        policy_violation_rate_estimate([0, 1], confidence=0.95, mode="J")


def test_trajectory_rates_reject_values_other_than_booleans():
    with pytest.raises(ValueError, match="violated must hold booleans or 0/1"):
        policy_violation_rate_estimate([0, 2], confidence=0.95)


def test_adversarial_incidents_give_the_count_and_the_rate_per_attack():
    incidents = np.zeros(40, dtype=bool)
    incidents[[3, 17]] = True
    estimate = adversarial_incident_count_estimate(incidents, confidence=0.95)

    lo, hi = wilson_percent(2, 40, 0.95)
    assert estimate.point == 2  # a count, not a percentage
    assert (estimate.lo, estimate.hi) == pytest.approx((40 * lo / 100, 40 * hi / 100))
    assert estimate.notes == (f"rate per attack 2 of 40 = 5.0 % (Wilson 95%: {lo:.1f}–{hi:.1f} %)",)


def test_catch_rate_and_false_acceptance_rate_are_clopper_pearson_proportions():
    catch = catch_rate_estimate(37, 50, confidence=0.95, kappa=0.74)
    far = false_acceptance_rate_estimate(6, 40, confidence=0.95)

    assert catch.point == pytest.approx(74.0)
    assert (catch.lo, catch.hi) == pytest.approx(exact_percent(37, 50, 0.95), rel=1e-9)
    assert (catch.mode, catch.kappa, catch.metric_id) == ("H", 0.74, "catch_rate")
    assert far.point == pytest.approx(15.0)
    assert (far.lo, far.hi) == pytest.approx(exact_percent(6, 40, 0.95), rel=1e-9)
    assert catch_rate_estimate(0, 0, confidence=0.95).reason == "no seeded defect"


def test_catch_rate_rejects_more_detected_than_seeded():
    with pytest.raises(ValueError, match="detected must not exceed seeded, got 5 > 4"):
        catch_rate_estimate(5, 4, confidence=0.95)


def test_review_burden_is_mean_minutes_with_a_t_interval():
    minutes = [12.0, 30.5, 8.0, 22.0, 15.5, 41.0]
    estimate = review_burden_estimate(minutes, confidence=0.95, planned_n=6)

    assert estimate.point == pytest.approx(np.mean(minutes))  # minutes, not percent
    assert (estimate.lo, estimate.hi) == pytest.approx(t_interval(minutes, 0.95), rel=1e-12)
    assert not estimate.under_sampled


def test_review_burden_lower_limit_is_not_negative():
    estimate = review_burden_estimate([0.0, 0.0, 30.0], confidence=0.95)

    assert t_interval([0.0, 0.0, 30.0], 0.95)[0] < 0
    assert estimate.lo == 0.0


# --- shared arguments ------------------------------------------------------------------


@pytest.mark.parametrize("confidence", [0.0, 1.0, 95])
def test_a_confidence_outside_0_1_is_rejected_by_name(confidence):
    with pytest.raises(ValueError, match="confidence must be in the open interval"):
        review_burden_estimate([1.0, 2.0], confidence=confidence)


def test_a_non_positive_planned_n_is_rejected_by_name():
    with pytest.raises(ValueError, match="planned_n must be a positive integer"):
        recovery_rate_estimate([1, 0], confidence=0.95, planned_n=0)


# --------------------------------------------------------------------------- Δeff baseline


REVIEW = [0.04, 0.06, 0.05, 0.07, 0.03, 0.05, 0.06, 0.04, 0.05, 0.05]
GENERATION = [0.01] * len(REVIEW)


def test_delta_eff_carries_the_charters_baseline_range_as_an_independent_simulation_does():
    # Issue 16: the Δeff interval treated an estimated 3 h baseline as exact. With the
    # charter's range 2–5 h (mode 3) the manual mean is drawn triangular in each resample.
    estimate = net_time_reduction_estimate(
        [3.0] * len(REVIEW),
        REVIEW,
        GENERATION,
        baseline="estimated",
        confidence=0.95,
        manual_range=(2.0, 3.0, 5.0),
    )
    exact = net_time_reduction_estimate(
        [3.0] * len(REVIEW), REVIEW, GENERATION, baseline="estimated", confidence=0.95
    )
    # Independently: bootstrap the AI mean with numpy and draw the manual mean from scipy's
    # triangular distribution, many more times than the estimator does.
    rng = np.random.default_rng(2026)
    ai = np.asarray(REVIEW) + np.asarray(GENERATION)
    ai_means = ai[rng.integers(0, ai.size, size=(200_000, ai.size))].mean(axis=1)
    manual = stats.triang(c=1 / 3, loc=2.0, scale=3.0).rvs(size=200_000, random_state=rng)
    lo, hi = np.percentile(100 * (1 - ai_means / manual), [2.5, 97.5])

    assert estimate.point == pytest.approx(100 * (1 - ai.mean() / 3.0))
    assert estimate.lo == pytest.approx(lo, abs=0.15)
    assert estimate.hi == pytest.approx(hi, abs=0.15)
    assert exact.hi - exact.lo < 1.0 < estimate.hi - estimate.lo  # exact: spread of AI only
    assert any("charter's range 2–5 h (mode 3)" in note for note in estimate.notes)


def test_delta_eff_with_observed_manual_times_carries_their_spread():
    manual = [2.5, 3.5, 3.0, 4.0, 2.8, 3.2]

    estimate = net_time_reduction_estimate(
        manual, REVIEW, GENERATION, baseline="observed", confidence=0.95, paired=False
    )

    assert any("observed spread of 6 manual times" in note for note in estimate.notes)
    assert estimate.lo < estimate.point < estimate.hi


@pytest.mark.parametrize(
    ("manual_range", "message"),
    [
        ((3.0, 2.0, 5.0), "low ≤ mode ≤ high"),
        ((0.0, 3.0, 5.0), "positive"),
        ((2.0, 4.0, 5.0), "mode"),
    ],
)
def test_delta_eff_refuses_a_bad_baseline_range(manual_range, message):
    with pytest.raises(ValueError, match=r"^(manual_range|manual_times)") as error:
        net_time_reduction_estimate(
            [3.0] * len(REVIEW),
            REVIEW,
            GENERATION,
            baseline="estimated",
            confidence=0.95,
            manual_range=manual_range,
        )
    assert message in str(error.value)
