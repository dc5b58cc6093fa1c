import itertools
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from enterpriseval.stats import pass_at_k, pass_hat_k


def exact_pass_hat_k(successes, trials, k) -> float:
    terms = [Fraction(comb(c, k), comb(n, k)) for c, n in zip(successes, trials, strict=True)]
    return float(sum(terms) / len(terms))


def exact_pass_at_k(successes, trials, k) -> float:
    terms = [
        1 - Fraction(comb(n - c, k), comb(n, k)) for c, n in zip(successes, trials, strict=True)
    ]
    return float(sum(terms) / len(terms))


def chen_pass_at_k(n: int, c: int, k: int) -> float:
    """The numerically stable estimator printed in Chen et al. (2021), Figure 3."""
    if n - c < k:
        return 1.0
    return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))


@pytest.mark.parametrize(("n_tasks", "repeats"), [(1, 1), (10, 4), (200, 8), (1_000, 25)])
def test_it_matches_the_exact_binomial_ratio_for_every_k(n_tasks, repeats):
    rng = np.random.default_rng(n_tasks + repeats)
    successes = rng.binomial(repeats, rng.beta(2.0, 1.0, size=n_tasks))

    for k in range(1, repeats + 1):
        trials = [repeats] * n_tasks
        assert pass_hat_k(successes, repeats, k) == pytest.approx(
            exact_pass_hat_k(successes, trials, k), rel=1e-12, abs=1e-15
        )
        assert pass_at_k(successes, repeats, k) == pytest.approx(
            exact_pass_at_k(successes, trials, k), rel=1e-12
        )


@pytest.mark.parametrize(("repeats", "k"), [(10, 1), (10, 5), (20, 7), (50, 50), (200, 3)])
def test_pass_at_k_matches_chen_et_al_estimator(repeats, k):
    rng = np.random.default_rng(repeats * k)
    successes = rng.integers(0, repeats + 1, size=300)

    expected = np.mean([chen_pass_at_k(repeats, int(c), k) for c in successes])

    assert pass_at_k(successes, repeats, k) == pytest.approx(expected, rel=1e-12)


def test_it_gives_the_hand_computed_values_for_four_repeats():
    successes = [4, 3, 2, 0]

    # pass^2 = mean(6/6, 3/6, 1/6, 0); pass@2 = mean(1, 1, 1 - 1/6, 0).
    assert pass_hat_k(successes, 4, 2) == pytest.approx(10 / 24, rel=1e-14)
    assert pass_at_k(successes, 4, 2) == pytest.approx((3 - 1 / 6) / 4, rel=1e-14)
    assert pass_hat_k(successes, 4, 4) == 0.25
    assert pass_at_k(successes, 4, 4) == 0.75


def test_k_equal_1_is_the_mean_success_rate_for_both():
    successes = np.array([0, 1, 5, 7, 8])

    assert pass_hat_k(successes, 8, 1) == pytest.approx(21 / 40, rel=1e-14)
    assert pass_at_k(successes, 8, 1) == pytest.approx(21 / 40, rel=1e-14)


def test_every_repeat_succeeding_gives_exactly_1_and_none_gives_exactly_0():
    assert pass_hat_k([7, 7, 7], 7, 4) == 1.0
    assert pass_at_k([7, 7, 7], 7, 4) == 1.0
    assert pass_hat_k([0, 0], 7, 4) == 0.0
    assert pass_at_k([0, 0], 7, 4) == 0.0


def test_trials_may_differ_per_task():
    successes = [3, 2, 5]
    trials = [4, 3, 8]

    assert pass_hat_k(successes, trials, 2) == pytest.approx(
        exact_pass_hat_k(successes, trials, 2), rel=1e-12
    )
    assert pass_at_k(successes, trials, 3) == pytest.approx(
        exact_pass_at_k(successes, trials, 3), rel=1e-12
    )


def test_large_numbers_of_repeats_do_not_overflow():
    successes = [1_500, 1_999, 2_000, 700]

    assert pass_hat_k(successes, 2_000, 1_000) == pytest.approx(
        exact_pass_hat_k(successes, [2_000] * 4, 1_000), rel=1e-9
    )
    assert pass_at_k(successes, 2_000, 1_000) == pytest.approx(
        exact_pass_at_k(successes, [2_000] * 4, 1_000), rel=1e-9
    )


@settings(max_examples=100, deadline=None)
@given(
    data=st.data(),
    repeats=st.integers(1, 30),
    n_tasks=st.integers(1, 20),
)
def test_pass_hat_k_falls_and_pass_at_k_rises_with_k(data, repeats, n_tasks):
    successes = data.draw(st.lists(st.integers(0, repeats), min_size=n_tasks, max_size=n_tasks))

    hats = [pass_hat_k(successes, repeats, k) for k in range(1, repeats + 1)]
    ats = [pass_at_k(successes, repeats, k) for k in range(1, repeats + 1)]

    assert all(0.0 <= value <= 1.0 for value in hats + ats)
    assert all(later <= earlier + 1e-12 for earlier, later in itertools.pairwise(hats))
    assert all(later >= earlier - 1e-12 for earlier, later in itertools.pairwise(ats))
    assert all(hat <= at + 1e-12 for hat, at in zip(hats, ats, strict=True))


@pytest.mark.parametrize("function", [pass_hat_k, pass_at_k])
@pytest.mark.parametrize(
    ("successes", "trials", "k", "message"),
    [
        ([1, 2], 4, 5, "k = 5 exceeds the number of trials K = 4"),
        ([1, 2], [4, 3], 4, "k = 4 exceeds the number of trials K = 3"),
        ([1, 5], 4, 2, "successes must not exceed trials"),
        ([1, -1], 4, 2, "successes must be non-negative"),
        ([1, 2.5], 4, 2, "successes must be whole numbers"),
        ([1, 2], -4, 2, "trials must be non-negative"),
        ([1, 2], [4, 4, 4], 2, "successes has 2, trials has 3"),
        ([], 4, 2, "successes is empty"),
        ([1, 2], 4, 0, "k must be a positive integer"),
        ([1, 2], 4, 2.5, "k must be a positive integer"),
        ([1, 2], 4, None, "k must be a positive integer"),
    ],
)
def test_it_rejects_malformed_input_naming_the_argument(function, successes, trials, k, message):
    with pytest.raises(ValueError, match=message):
        function(successes, trials, k)
