import math
from statistics import NormalDist

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from enterpriseval.stats import required_sample_size


def by_hand(p: float, margin: float, alpha: float) -> int:
    z = NormalDist().inv_cdf(1 - alpha / 2)
    return math.ceil(z * z * p * (1 - p) / margin**2)


def test_the_worst_case_at_5_points_and_95_percent_needs_385():
    # 1.959964² · 0.25 / 0.0025 = 384.146 -> 385.
    assert required_sample_size(0.5, 0.05, alpha=0.05) == 385


@pytest.mark.parametrize(
    ("p", "margin", "alpha", "expected"),
    [
        (0.5, 0.05, 0.05, 385),
        (0.1, 0.03, 0.05, 385),
        (0.3, 0.02, 0.01, 3484),
        (0.5, 0.1, 0.1, 68),
        (0.02, 0.01, 0.05, 753),
        (0.9, 0.05, 0.2, 60),
    ],
)
def test_it_matches_a_hand_calculation(p, margin, alpha, expected):
    assert by_hand(p, margin, alpha) == expected
    assert required_sample_size(p, margin, alpha=alpha) == expected


def test_it_returns_a_python_int():
    assert type(required_sample_size(0.3, 0.05)) is int


def test_floating_point_noise_above_an_integer_does_not_add_a_unit():
    # At the two-sigma level z = 2, so 4 · 0.25 / 0.05² is exactly 400, but the
    # floating-point product is 400.0000000000001.
    alpha = 2 * norm.sf(2.0)
    z = norm.ppf(1 - alpha / 2)
    assert z * z * 0.25 / 0.05**2 > 400

    assert required_sample_size(0.5, 0.05, alpha=alpha) == 400
    assert required_sample_size(0.2, 0.02, alpha=2 * norm.sf(1.0)) == 400


def test_a_value_just_above_an_integer_beyond_noise_still_rounds_up():
    # z² · p(1-p) / δ² = 400 · (1 + 1e-6) is a real excess, not noise.
    alpha = 2 * norm.sf(2.0)
    margin = 0.05 / math.sqrt(1 + 1e-6)

    assert required_sample_size(0.5, margin, alpha=alpha) == 401


def test_a_tiny_requirement_is_still_one_unit():
    assert required_sample_size(0.001, 0.9, alpha=0.5) == 1


@settings(max_examples=100, deadline=None)
@given(
    p=st.floats(0.01, 0.99),
    margin=st.floats(0.005, 0.5),
    alpha=st.floats(0.001, 0.5),
)
def test_a_narrower_margin_or_higher_confidence_never_needs_fewer_units(p, margin, alpha):
    n = required_sample_size(p, margin, alpha=alpha)

    assert n >= 1
    assert required_sample_size(p, margin / 2, alpha=alpha) >= n
    assert required_sample_size(p, margin, alpha=alpha / 2) >= n
    assert required_sample_size(0.5, margin, alpha=alpha) >= n


@pytest.mark.parametrize("p", [0.0, 1.0, -0.2, 1.5, float("nan")])
def test_p_outside_0_1_is_rejected_suggesting_the_worst_case(p):
    with pytest.raises(ValueError, match=r"p must be in the open interval \(0, 1\).*p = 0.5"):
        required_sample_size(p, 0.05)


def test_a_non_numeric_p_is_rejected_naming_p():
    with pytest.raises(ValueError, match="p must be a number"):
        required_sample_size("half", 0.05)


@pytest.mark.parametrize("margin", [0.0, -0.05, 1.0, 5.0])
def test_a_margin_outside_0_1_is_rejected_naming_margin(margin):
    with pytest.raises(ValueError, match=r"margin must be in the open interval \(0, 1\)"):
        required_sample_size(0.5, margin)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.05])
def test_alpha_outside_0_1_is_rejected(alpha):
    with pytest.raises(ValueError, match="alpha"):
        required_sample_size(0.5, 0.05, alpha=alpha)
