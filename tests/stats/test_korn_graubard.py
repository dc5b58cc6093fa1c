"""The Korn–Graubard interval against a worked example and scipy/statsmodels building blocks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from enterpriseval.stats import clopper_pearson_interval, korn_graubard_interval


def reference(point, variance, n, alpha, df=None):
    """Korn and Graubard (1998) Eqs. 2.2–2.3 from scipy.stats' beta, norm and t."""
    spread = point * (1 - point)
    n_eff = min(n, spread / variance) if spread > 0 and variance > 0 else n
    if df is not None:
        n_eff *= (stats.norm.ppf(1 - alpha / 2) / stats.t.ppf(1 - alpha / 2, df)) ** 2
    x = n_eff * point
    lo = 0.0 if point == 0 else stats.beta.ppf(alpha / 2, x, n_eff - x + 1)
    hi = 1.0 if point == 1 else stats.beta.ppf(1 - alpha / 2, x + 1, n_eff - x)
    return lo, hi


def test_a_design_effect_of_2_is_clopper_pearson_on_half_the_units():
    # Worked example: 20 defects in 200 sentences (p̂ = 0.1) clustered so that the
    # design-based variance is 0.0009, twice the binomial 0.1·0.9/200 = 0.00045.
    # n_eff = 0.09/0.0009 = 100 and x* = 10: the interval is Clopper–Pearson's 10 of 100.
    lo, hi = korn_graubard_interval(0.1, 0.0009, 200, alpha=0.05)
    assert (lo, hi) == pytest.approx(proportion_confint(10, 100, 0.05, method="beta"), abs=1e-12)
    assert (lo, hi) == pytest.approx((0.04900469, 0.17622260), abs=1e-7)


def test_independent_units_give_the_clopper_pearson_interval():
    for k, n in ((0, 30), (3, 30), (17, 40), (40, 40)):
        p = k / n
        got = korn_graubard_interval(p, p * (1 - p) / n, n, alpha=0.1)
        assert got == pytest.approx(clopper_pearson_interval(k, n, alpha=0.1), abs=1e-12)


def test_the_degrees_of_freedom_shrink_the_effective_sample_size_by_z_over_t_squared():
    # The example above with 20 clusters (df 19): n* = 100·(1.95996/2.09302)² = 87.6895.
    got = korn_graubard_interval(0.1, 0.0009, 200, alpha=0.05, df=19)
    assert got == pytest.approx(reference(0.1, 0.0009, 200, 0.05, df=19), rel=1e-10)
    n_star = 100 * (1.959963984540054 / 2.093024054408263) ** 2
    assert n_star == pytest.approx(87.6895, abs=1e-4)
    wider = korn_graubard_interval(0.1, 0.0009, 200, alpha=0.05)
    assert got[0] < wider[0] and got[1] > wider[1]


def test_the_design_effect_is_floored_at_1():
    # A variance below the binomial one would claim more units than there are.
    assert korn_graubard_interval(0.2, 0.0001, 50) == pytest.approx(
        clopper_pearson_interval(10, 50), abs=1e-12
    )


def test_no_event_gives_zero_and_the_exact_upper_limit_on_the_effective_units():
    lo, hi = korn_graubard_interval(0.0, 0.0, 300, alpha=0.05, df=17)
    n_star = 300 * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, 17)) ** 2
    assert lo == 0.0
    assert hi == pytest.approx(1 - 0.025 ** (1 / n_star), rel=1e-12)
    lo, hi = korn_graubard_interval(1.0, 0.0, 30, alpha=0.05)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 30), rel=1e-12)


@pytest.mark.parametrize("df", [None, 4, 60])
def test_arrays_broadcast_and_agree_with_the_scalar_reference(df):
    rng = np.random.default_rng(3)
    points = rng.uniform(0.005, 0.995, 25)
    variances = points * (1 - points) / rng.uniform(20, 400, 25) * rng.uniform(0.5, 4, 25)
    lo, hi = korn_graubard_interval(points, variances, 150, alpha=0.1, df=df)
    expected = np.array(
        [reference(p, v, 150, 0.1, df) for p, v in zip(points, variances, strict=True)]
    )
    assert lo == pytest.approx(expected[:, 0], rel=1e-9)
    assert hi == pytest.approx(expected[:, 1], rel=1e-9)
    assert ((lo >= 0) & (lo <= points) & (points <= hi) & (hi <= 1)).all()


@pytest.mark.parametrize(
    ("args", "kwargs", "name"),
    [
        ((1.2, 0.01, 10), {}, "point"),
        ((math.nan, 0.01, 10), {}, "point"),
        ((0.2, -0.01, 10), {}, "variance"),
        ((0.2, 0.01, 0), {}, "n"),
        ((0.2, 0.01, 10), {"df": 0}, "df"),
        ((0.2, 0.01, 10), {"alpha": 1.0}, "alpha"),
        (([0.2, 0.3], [0.01, 0.01, 0.01], 10), {}, "broadcast"),
    ],
)
def test_malformed_input_is_refused_naming_the_argument(args, kwargs, name):
    with pytest.raises(ValueError, match=name):
        korn_graubard_interval(*args, **kwargs)
