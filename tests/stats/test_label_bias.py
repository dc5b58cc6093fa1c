"""The upper confidence limit on wrong final labels behind the bias-bound rule (SPEC §5.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta
from statsmodels.stats.proportion import proportion_confint

from enterpriseval.stats import label_error_bound


def two_graders(n0: int, n1: int, wrong: dict[tuple[str, int], int]) -> tuple[np.ndarray, ...]:
    """Units with final 0 then final 1; grader A (column 0) and B (column 1) wrong on the
    first ``wrong[(grader, class)]`` units of each class, never on the same unit."""
    final = np.r_[np.zeros(n0), np.ones(n1)]
    ratings = np.column_stack([final, final])
    for (grader, cls), count in wrong.items():
        column = 0 if grader == "A" else 1
        start = 0 if cls == 0 else n0
        offset = 0 if grader == "A" else 50 if cls == 0 else 10  # B errs on other units
        rows = slice(start + offset, start + offset + count)
        ratings[rows, column] = 1.0 - cls
    return ratings, final


def test_a_hand_computed_case_matches_clopper_pearson_and_the_product_formula():
    # 100 units final 0, 20 final 1; A errs on 2 negatives and 1 positive, B on 1 positive.
    ratings, final = two_graders(100, 20, {("A", 0): 2, ("A", 1): 1, ("B", 1): 1})
    bound = label_error_bound(ratings, final, alpha=0.05)
    level = 0.05 / 4  # Bonferroni over the four rates (2 graders × 2 classes)

    def upper(x: int, n: int) -> float:
        # statsmodels' two-sided Clopper–Pearson at 2·level has the one-sided upper limit
        return float(proportion_confint(x, n, alpha=2 * level, method="beta")[1])

    a0, b0 = upper(2, 100), upper(0, 100)
    a1, b1 = upper(1, 20), upper(1, 20)
    assert a0 == pytest.approx(beta.ppf(1 - level, 3, 98), rel=1e-9)
    assert b0 == pytest.approx(1 - level ** (1 / 100), rel=1e-9)  # zero errors: 1 − level^(1/n)
    # shared errors are invisible: e_g ≤ ẽ_g / (1 − e_other)
    corrected = np.array([[a0 / (1 - b0), a1 / (1 - b1)], [b0 / (1 - a0), b1 / (1 - a1)]])
    np.testing.assert_allclose(bound.upper, corrected, rtol=1e-9)
    expected = (
        100 * corrected[0, 0] * corrected[1, 0] + 20 * corrected[0, 1] * corrected[1, 1]
    ) / 120
    assert bound.upper_share == pytest.approx(expected, rel=1e-9)
    np.testing.assert_allclose(bound.errors, [[2, 1], [0, 1]])
    np.testing.assert_allclose(bound.rated, [[100, 20], [100, 20]])
    point = ((2 / 100) * 0 * 100 + (1 / 20) / (1 - 1 / 20) * (1 / 20) / (1 - 1 / 20) * 20) / 120
    assert bound.share == pytest.approx(point, rel=1e-9)
    assert (bound.n_units, bound.n_rates) == (120, 4)


def test_units_rated_once_are_left_out_and_weights_use_kish_effective_counts():
    ratings = np.array([[0, 0], [0, 0], [1, 0], [0, np.nan], [1, 1]], dtype=float)
    final = np.array([0, 0, 0, 0, 1], dtype=float)
    plain = label_error_bound(ratings, final, alpha=0.1)
    assert plain.n_units == 4
    np.testing.assert_allclose(plain.rated, [[3, 1], [3, 1]])
    weights = np.array([1.0, 1.0, 4.0, 1.0, 2.0])
    weighted = label_error_bound(ratings, final, alpha=0.1, weights=weights)
    # grader A on final-0 units: weights 1, 1, 4 → rate 4/6, n_eff = 36/18 = 2
    assert weighted.rate[0, 0] == pytest.approx(4 / 6)
    assert weighted.rated[0, 0] == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("ratings", "final", "weights", "message"),
    [
        ([[0, 2]], [0], None, "ratings: labels must be 0 or 1"),
        ([0, 1], [0], None, "ratings: expected units × graders"),
        ([[0, 0]], [0, 1], None, "final: expected one final value per unit"),
        ([[0, 0]], [0.5], None, "final: values must be 0 or 1"),
        ([[0, 0]], [0], [0.0], "weights: expected 1 positive"),
        ([[0, np.nan]], [0], None, "no unit was rated by two graders"),
    ],
)
def test_malformed_input_is_refused_naming_the_argument(ratings, final, weights, message):
    with pytest.raises(ValueError, match=message):
        label_error_bound(ratings, final, weights=weights)


def test_the_bound_covers_the_true_share_of_wrong_final_labels_in_a_seeded_simulation():
    """Graders err independently given the truth; the adjudicator settles disagreements.

    The true share of wrong final labels is (1 − p)·a·b + p·c·d (the module's Eq. 1–2). The
    95 % upper limit must cover it in at least 95 % of samples, less three Monte Carlo
    standard errors.
    """
    rng = np.random.default_rng(20261202)
    p, n, reps, alpha = 0.04, 400, 400, 0.05
    false_positive = np.array([0.02, 0.04])
    false_negative = np.array([0.10, 0.05])
    truth_share = (1 - p) * false_positive.prod() + p * false_negative.prod()
    covered = 0
    for _ in range(reps):
        truth = (rng.random(n) < p).astype(float)
        error_rate = np.where(truth[:, None] == 1, false_negative, false_positive)
        wrong = rng.random((n, 2)) < error_rate
        ratings = np.where(wrong, 1 - truth[:, None], truth[:, None])
        agree = ratings[:, 0] == ratings[:, 1]
        final = np.where(agree, ratings[:, 0], truth)  # the adjudicator's value is the truth
        covered += label_error_bound(ratings, final, alpha=alpha).upper_share >= truth_share
    rate = covered / reps
    standard_error = math.sqrt(alpha * (1 - alpha) / reps)
    assert rate >= 1 - alpha - 3 * standard_error, rate


def test_accurate_graders_at_low_prevalence_get_a_small_bound_where_kappa_is_low():
    # SPEC §5.1's kappa paradox: 2 % prevalence, two graders erring on 2 % each (κ ≈ 0.48);
    # the share of wrong final labels they leave is about 0.02² = 0.0004.
    rng = np.random.default_rng(7)
    n = 2000
    truth = (rng.random(n) < 0.02).astype(float)
    wrong = rng.random((n, 2)) < 0.02
    ratings = np.where(wrong, 1 - truth[:, None], truth[:, None])
    final = np.where(ratings[:, 0] == ratings[:, 1], ratings[:, 0], truth)
    bound = label_error_bound(ratings, final, alpha=0.05)
    assert bound.upper_share < 0.01  # below 1 point of a rate, whatever κ says
