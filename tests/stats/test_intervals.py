import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from enterpriseval.stats import clopper_pearson_interval, wilson_interval

SIZES = [1, 2, 3, 5, 10, 30, 100, 1_000, 100_000, 10_000_000]
ALPHAS = [0.01, 0.05, 0.1, 0.32]


def counts_for(n: int, rng: np.random.Generator) -> np.ndarray:
    """Edge counts and a few random ones for n trials."""
    edges = [0, 1, n // 2, n - 1, n]
    return np.unique(np.clip(np.concatenate([edges, rng.integers(0, n + 1, 20)]), 0, n))


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("n", SIZES)
def test_it_matches_statsmodels_wilson_across_sizes(n, alpha):
    k = counts_for(n, np.random.default_rng(n))

    lo, hi = wilson_interval(k, n, alpha=alpha)

    ref_lo, ref_hi = proportion_confint(k, n, alpha=alpha, method="wilson")
    np.testing.assert_allclose(lo, ref_lo, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(hi, ref_hi, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("n", SIZES)
def test_it_matches_statsmodels_clopper_pearson_across_sizes(n, alpha):
    k = counts_for(n, np.random.default_rng(n))

    lo, hi = clopper_pearson_interval(k, n, alpha=alpha)

    ref_lo, ref_hi = proportion_confint(k, n, alpha=alpha, method="beta")
    np.testing.assert_allclose(lo, ref_lo, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(hi, ref_hi, rtol=1e-9, atol=1e-12)


def test_it_matches_statsmodels_on_random_arrays_of_counts_and_trials():
    rng = np.random.default_rng(7)
    n = rng.integers(1, 5_000, size=2_000)
    k = rng.binomial(n, rng.random(2_000))

    for method, ours in (("wilson", wilson_interval), ("beta", clopper_pearson_interval)):
        lo, hi = ours(k, n, alpha=0.05)
        ref_lo, ref_hi = proportion_confint(k, n, alpha=0.05, method=method)
        np.testing.assert_allclose(lo, ref_lo, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(hi, ref_hi, rtol=1e-9, atol=1e-12)


def test_wilson_gives_the_hand_computed_interval_for_3_of_10():
    z = 1.959963984540054
    centre = (3 + z**2 / 2) / (10 + z**2)
    half = z * math.sqrt(3 * 7 / 10 + z**2 / 4) / (10 + z**2)

    lo, hi = wilson_interval(3, 10)

    assert lo == pytest.approx(centre - half, rel=1e-12)
    assert hi == pytest.approx(centre + half, rel=1e-12)
    assert (lo, hi) == pytest.approx((0.1077912674, 0.6032218525), abs=1e-10)


def test_clopper_pearson_has_the_closed_form_limits_at_the_edges():
    n, alpha = 20, 0.05

    zero_lo, zero_hi = clopper_pearson_interval(0, n, alpha=alpha)
    all_lo, all_hi = clopper_pearson_interval(n, n, alpha=alpha)

    assert zero_lo == 0.0
    assert zero_hi == pytest.approx(1 - (alpha / 2) ** (1 / n), rel=1e-12)
    assert all_hi == 1.0
    assert all_lo == pytest.approx((alpha / 2) ** (1 / n), rel=1e-12)


@pytest.mark.parametrize("interval", [wilson_interval, clopper_pearson_interval])
@pytest.mark.parametrize("n", [1, 7, 1_000_000])
def test_limits_are_exactly_0_and_1_at_the_edges(interval, n):
    assert interval(0, n)[0] == 0.0
    assert interval(n, n)[1] == 1.0
    lo, hi = interval(np.array([0, n]), n)
    assert lo[0] == 0.0
    assert hi[1] == 1.0


@pytest.mark.parametrize("interval", [wilson_interval, clopper_pearson_interval])
def test_scalar_inputs_return_floats(interval):
    lo, hi = interval(np.int64(4), 9)

    assert type(lo) is float
    assert type(hi) is float


@pytest.mark.parametrize("interval", [wilson_interval, clopper_pearson_interval])
def test_array_inputs_broadcast_and_keep_their_shape(interval):
    k = np.array([[0, 1, 2], [3, 4, 5]])
    n = np.array([5, 6, 7])

    lo, hi = interval(k, n)

    assert lo.shape == hi.shape == (2, 3)
    scalar = interval(4, 6)
    assert (lo[1, 1], hi[1, 1]) == scalar


@pytest.mark.parametrize("interval", [wilson_interval, clopper_pearson_interval])
def test_a_list_of_one_count_gives_arrays_of_one(interval):
    lo, hi = interval([2], [8])

    assert lo.shape == (1,)
    assert (lo[0], hi[0]) == interval(2, 8)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(1, 10**6), alpha=st.floats(0.001, 0.5))
def test_both_intervals_lie_in_0_1_and_contain_the_sample_proportion(data, n, alpha):
    k = data.draw(st.integers(0, n))
    for interval in (wilson_interval, clopper_pearson_interval):
        lo, hi = interval(k, n, alpha=alpha)
        assert 0.0 <= lo <= k / n <= hi <= 1.0


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(1, 10**6), alpha=st.floats(0.001, 0.5))
def test_both_intervals_are_mirror_symmetric(data, n, alpha):
    k = data.draw(st.integers(0, n))
    for interval in (wilson_interval, clopper_pearson_interval):
        lo, hi = interval(k, n, alpha=alpha)
        mirror_lo, mirror_hi = interval(n - k, n, alpha=alpha)
        assert lo == pytest.approx(1.0 - mirror_hi, abs=1e-12)
        assert hi == pytest.approx(1.0 - mirror_lo, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), n=st.integers(1, 10_000))
def test_a_higher_confidence_level_never_narrows_the_interval(data, n):
    k = data.draw(st.integers(0, n))
    for interval in (wilson_interval, clopper_pearson_interval):
        narrow = interval(k, n, alpha=0.10)
        wide = interval(k, n, alpha=0.01)
        assert wide[0] <= narrow[0] + 1e-15
        assert wide[1] >= narrow[1] - 1e-15


@pytest.mark.parametrize("interval", [wilson_interval, clopper_pearson_interval])
@pytest.mark.parametrize(
    ("successes", "n", "message"),
    [
        (11, 10, "successes must not exceed n"),
        ([1, 11], 10, "successes must not exceed n"),
        (-1, 10, "successes must be non-negative"),
        (2.5, 10, "successes must be whole numbers"),
        (float("nan"), 10, "successes contains NaN"),
        (0, 0, "n must be at least 1"),
        (1, -3, "n must be non-negative"),
        (1, 4.5, "n must be whole numbers"),
        ([], 10, "successes is empty"),
        ([1, 2], [3, 4, 5], "successes and n must have broadcastable shapes"),
    ],
)
def test_it_rejects_malformed_counts_naming_the_argument(interval, successes, n, message):
    with pytest.raises(ValueError, match=message):
        interval(successes, n)


@pytest.mark.parametrize("interval", [wilson_interval, clopper_pearson_interval])
@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, "a"])
def test_it_rejects_alpha_outside_0_1(interval, alpha):
    with pytest.raises(ValueError, match="alpha"):
        interval(3, 10, alpha=alpha)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 10**9), alpha=st.floats(1e-6, 0.999))
def test_wilson_limits_are_exactly_0_and_1_at_the_edges_for_any_alpha(n, alpha):
    assert wilson_interval(0, n, alpha=alpha)[0] == 0.0
    assert wilson_interval(n, n, alpha=alpha)[1] == 1.0
