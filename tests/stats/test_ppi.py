import numpy as np
import ppi_py
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta as beta_dist
from scipy.stats import norm
from scipy.stats import t as t_dist

from enterpriseval.stats import (
    classical_mean_ci,
    ppi_lambda,
    ppi_mean_ci,
    ppi_mean_estimate,
    ppi_proportion_ci,
)

SIZES = [(5, 50), (20, 1_000), (100, 10_000), (1_000, 100_000), (10_000, 100_000)]
LAMBDAS = [1.0, 0.0, 0.4, None]


def graded_outputs(
    rng: np.random.Generator, n: int, big_n: int, kind: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Human scores y, judge scores on them, judge scores on N unlabeled outputs."""
    if kind == "binary":
        # A judge that agrees with the human 85 % of the time, biased towards "pass".
        truth = rng.random(n + big_n) < 0.3
        flip = rng.random(n + big_n) < np.where(truth, 0.05, 0.2)
        judge = (truth ^ flip).astype(float)
        human = truth.astype(float)
    else:
        latent = rng.beta(2.0, 5.0, size=n + big_n)
        human = np.clip(latent + rng.normal(0.0, 0.05, size=n + big_n), 0.0, 1.0)
        judge = np.clip(0.8 * latent + 0.1 + rng.normal(0.0, 0.1, size=n + big_n), 0.0, 1.0)
    return human[:n], judge[:n], judge[n:]


def reference_ci(y, yhat, yhat_unlabeled, alpha, lam):
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=alpha, lam=lam)
    return float(np.squeeze(lo)), float(np.squeeze(hi))


@pytest.mark.parametrize("kind", ["binary", "continuous"])
@pytest.mark.parametrize("lam", LAMBDAS)
@pytest.mark.parametrize(("n", "big_n"), SIZES)
def test_it_matches_ppi_py_interval_and_estimate_across_sizes(n, big_n, lam, kind):
    rng = np.random.default_rng(1_000 * n + big_n)
    y, yhat, yhat_unlabeled = graded_outputs(rng, n, big_n, kind)

    for alpha in (0.05, 0.1):
        lo, hi = ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=alpha, lam=lam)
        ref_lo, ref_hi = reference_ci(y, yhat, yhat_unlabeled, alpha, lam)
        assert (lo, hi) == pytest.approx((ref_lo, ref_hi), rel=1e-9, abs=1e-12)
    estimate = ppi_mean_estimate(y, yhat, yhat_unlabeled, lam=lam)
    reference = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_unlabeled, lam=lam)
    assert estimate == pytest.approx(float(np.squeeze(reference)), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(("n", "big_n"), SIZES)
def test_it_matches_ppi_py_classical_interval(n, big_n):
    y, _, _ = graded_outputs(np.random.default_rng(n), n, big_n, "continuous")

    lo, hi = classical_mean_ci(y, alpha=0.05)

    ref_lo, ref_hi = ppi_py.classical_mean_ci(y, alpha=0.05)
    assert (lo, hi) == pytest.approx((ref_lo, ref_hi), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("kind", ["binary", "continuous"])
@pytest.mark.parametrize(("n", "big_n"), SIZES)
def test_lambda_hat_is_the_spec_formula_on_concatenated_scores(n, big_n, kind):
    rng = np.random.default_rng(n + big_n)
    y, yhat, yhat_unlabeled = graded_outputs(rng, n, big_n, kind)

    lam = ppi_lambda(y, yhat, yhat_unlabeled)

    covariance = np.mean((y - y.mean()) * (yhat - yhat.mean()))
    pooled = np.var(np.concatenate([yhat, yhat_unlabeled]), ddof=1)
    expected = np.clip(covariance / ((1 + n / big_n) * pooled), 0.0, 1.0)
    assert lam == pytest.approx(expected, rel=1e-9, abs=1e-15)
    assert 0.0 <= lam <= 1.0


def test_lam_none_uses_lambda_hat_once_for_estimate_and_interval():
    y, yhat, yhat_unlabeled = graded_outputs(np.random.default_rng(5), 300, 5_000, "continuous")
    lam = ppi_lambda(y, yhat, yhat_unlabeled)

    assert ppi_mean_ci(y, yhat, yhat_unlabeled, lam=None) == ppi_mean_ci(
        y, yhat, yhat_unlabeled, lam=lam
    )
    assert ppi_mean_estimate(y, yhat, yhat_unlabeled, lam=None) == ppi_mean_estimate(
        y, yhat, yhat_unlabeled, lam=lam
    )


def test_classic_ppi_gives_the_hand_computed_interval():
    y = np.array([1.0, 0.0, 1.0, 1.0])
    yhat = np.array([1.0, 0.0, 0.0, 1.0])
    yhat_unlabeled = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0])

    lo, hi = ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=0.05, lam=1.0)

    # θ = 5/8 + 1/4; var₀(Ŷu) = 15/64; var₀(Y − Ŷ) = 3/16.
    half = 1.959963984540054 * np.sqrt((15 / 64) / 8 + (3 / 16) / 4)
    assert ppi_mean_estimate(y, yhat, yhat_unlabeled) == 0.875
    assert (lo, hi) == pytest.approx((0.875 - half, 0.875 + half), rel=1e-12)
    assert lo == pytest.approx(0.3340645869, abs=1e-10)


def test_lam_zero_is_the_classical_interval():
    y, yhat, yhat_unlabeled = graded_outputs(np.random.default_rng(9), 50, 2_000, "binary")

    assert ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=0.1, lam=0.0) == pytest.approx(
        classical_mean_ci(y, alpha=0.1), rel=1e-12
    )
    assert ppi_mean_estimate(y, yhat, yhat_unlabeled, lam=0.0) == pytest.approx(y.mean())


@pytest.mark.parametrize("value", [0.0, 1.0, 0.7, 0.1])
def test_a_constant_judge_gives_lambda_zero_and_the_classical_interval(value):
    y, _, _ = graded_outputs(np.random.default_rng(2), 40, 0, "binary")
    yhat = np.full(40, value)
    yhat_unlabeled = np.full(1_000, value)

    assert ppi_lambda(y, yhat, yhat_unlabeled) == 0.0
    assert ppi_mean_ci(y, yhat, yhat_unlabeled, lam=None) == pytest.approx(
        classical_mean_ci(y), rel=1e-12
    )
    assert ppi_mean_estimate(y, yhat, yhat_unlabeled, lam=None) == pytest.approx(y.mean())


@pytest.mark.parametrize("value", [0.0, 0.7])
def test_ppi_py_returns_nan_for_a_constant_judge_where_we_do_not(value):
    # Documented difference (SPEC §5.4): ppi_py computes λ̂ = 0 / 0.
    y, _, _ = graded_outputs(np.random.default_rng(2), 40, 0, "binary")
    yhat, yhat_unlabeled = np.full(40, value), np.full(1_000, value)

    with np.errstate(invalid="ignore"):
        reference = reference_ci(y, yhat, yhat_unlabeled, 0.05, None)

    assert np.isnan(reference).all()
    assert np.isfinite(ppi_mean_ci(y, yhat, yhat_unlabeled, lam=None)).all()


def test_lambda_hat_is_clipped_to_1_for_a_judge_on_a_compressed_scale():
    rng = np.random.default_rng(4)
    y = rng.random(200)
    # cov(Y, Y/2) / var(Y/2) = 2 before clipping.
    assert ppi_lambda(y, y / 2, rng.random(100_000) / 2) == 1.0


def test_lambda_hat_is_clipped_to_0_for_an_anticorrelated_judge():
    rng = np.random.default_rng(4)
    y = rng.random(200)
    assert ppi_lambda(y, 1.0 - y, rng.random(1_000)) == 0.0


def test_a_better_judge_gives_a_narrower_interval_than_humans_alone():
    rng = np.random.default_rng(12)
    y, yhat, yhat_unlabeled = graded_outputs(rng, 200, 20_000, "continuous")

    ppi_lo, ppi_hi = ppi_mean_ci(y, yhat, yhat_unlabeled, lam=None)
    lo, hi = classical_mean_ci(y)

    assert ppi_hi - ppi_lo < 0.8 * (hi - lo)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 200),
    big_n=st.integers(1, 2_000),
    lam=st.one_of(st.none(), st.floats(0.0, 1.0)),
    alpha=st.floats(0.01, 0.5),
)
def test_the_estimate_lies_inside_its_interval(seed, n, big_n, lam, alpha):
    rng = np.random.default_rng(seed)
    y, yhat, yhat_unlabeled = graded_outputs(rng, n, big_n, "binary")

    lo, hi = ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=alpha, lam=lam)
    estimate = ppi_mean_estimate(y, yhat, yhat_unlabeled, lam=lam)

    assert lo <= estimate <= hi
    assert estimate == pytest.approx((lo + hi) / 2, abs=1e-12)
    assert 0.0 <= ppi_lambda(y, yhat, yhat_unlabeled) <= 1.0


@pytest.mark.parametrize(
    ("y", "yhat", "yhat_unlabeled", "message"),
    [
        ([1.0, 0.0, 1.0], [1.0, 0.0], [1.0, 0.0], "y has 3, yhat has 2"),
        ([], [], [1.0, 0.0], "y must hold at least 2 labeled units, got 0"),
        ([1.0], [1.0], [1.0, 0.0], "y must hold at least 2 labeled units, got 1"),
        ([1.0, 0.0], [1.0, 0.0], [], "yhat_unlabeled is empty"),
        ([1.0, np.nan], [1.0, 0.0], [1.0], "y contains NaN"),
        ([1.0, 0.0], [1.0, np.nan], [1.0], "yhat contains NaN"),
        ([1.0, 0.0], [1.0, 0.0], [np.inf, 0.0], "yhat_unlabeled must be finite"),
        ([1.0, np.inf], [1.0, 0.0], [1.0], "y must be finite"),
        ([1.0, 0.0], [-np.inf, 0.0], [1.0], "yhat must be finite"),
        ([[1.0, 0.0]], [[1.0, 0.0]], [1.0], "y must be one-dimensional"),
    ],
)
def test_the_interval_rejects_malformed_input_naming_the_argument(y, yhat, yhat_unlabeled, message):
    with pytest.raises(ValueError, match=message):
        ppi_mean_ci(y, yhat, yhat_unlabeled)


@pytest.mark.parametrize(
    ("y", "yhat", "yhat_unlabeled", "message"),
    [
        ([], [], [1.0], "y must hold at least 1 labeled unit, got 0"),
        ([1.0, 0.0], [1.0], [1.0], "y has 2, yhat has 1"),
        ([1.0], [1.0], [], "yhat_unlabeled is empty"),
        ([np.inf], [1.0], [1.0], "y must be finite"),
        ([1.0], [1.0], [np.inf], "yhat_unlabeled must be finite"),
    ],
)
def test_the_estimate_and_lambda_reject_malformed_input(y, yhat, yhat_unlabeled, message):
    with pytest.raises(ValueError, match=message):
        ppi_mean_estimate(y, yhat, yhat_unlabeled)
    with pytest.raises(ValueError, match=message):
        ppi_lambda(y, yhat, yhat_unlabeled)


@pytest.mark.parametrize("lam", [np.inf, np.nan, "one"])
def test_it_rejects_a_non_finite_lambda(lam):
    with pytest.raises(ValueError, match="lam"):
        ppi_mean_ci([1.0, 0.0], [1.0, 0.0], [1.0], lam=lam)
    with pytest.raises(ValueError, match="lam"):
        ppi_mean_estimate([1.0, 0.0], [1.0, 0.0], [1.0], lam=lam)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -1.0])
def test_intervals_reject_alpha_outside_0_1(alpha):
    with pytest.raises(ValueError, match="alpha"):
        ppi_mean_ci([1.0, 0.0], [1.0, 0.0], [1.0], alpha=alpha)
    with pytest.raises(ValueError, match="alpha"):
        classical_mean_ci([1.0, 0.0], alpha=alpha)


def test_the_classical_interval_needs_two_values():
    with pytest.raises(ValueError, match="y must hold at least 2 values"):
        classical_mean_ci([1.0])


# -- the Korn–Graubard interval around PPI++ (SPEC §5.2) --------------------------------------


def _kg_reference(point, se, n, alpha):
    """Korn–Graubard limits from scipy.stats, n_eff capped at n, t(n − 1) scaling."""
    spread = point * (1 - point)
    n_eff = min(n, spread / se**2) if spread > 0 and se > 0 else n
    n_eff *= (norm.ppf(1 - alpha / 2) / t_dist.ppf(1 - alpha / 2, n - 1)) ** 2
    x = n_eff * point
    lo = 0.0 if point == 0 else beta_dist.ppf(alpha / 2, x, n_eff - x + 1)
    hi = 1.0 if point == 1 else beta_dist.ppf(1 - alpha / 2, x + 1, n_eff - x)
    return lo, hi


def test_ppi_proportion_ci_with_a_constant_judge_is_exact_on_the_t_scaled_labeled_units():
    # Worked example: 3 defects in 20 labeled units, a judge that scores 0 everywhere, so
    # λ̂ = 0, θ̂ = 0.15, v̂ = 0.15·0.85/20 (binomial): n_eff = 20, scaled by (z/t(19))² to
    # 17.52, x* = 2.628; the limits are the beta quantiles there.
    y = np.array([1.0] * 3 + [0.0] * 17)
    lo, hi = ppi_proportion_ci(y, np.zeros(20), np.zeros(200), alpha=0.05)
    n_star = 20 * (1.959963984540054 / 2.093024054408263) ** 2
    assert n_star == pytest.approx(17.5379, abs=1e-4)
    x = 0.15 * n_star
    assert (lo, hi) == pytest.approx(
        (beta_dist.ppf(0.025, x, n_star - x + 1), beta_dist.ppf(0.975, x + 1, n_star - x)),
        rel=1e-10,
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ppi_proportion_ci_is_korn_graubard_on_ppi_pys_estimate_and_variance(seed):
    rng = np.random.default_rng(seed)
    truth = rng.random(600) < 0.04
    judge = np.where(rng.random(600) < 0.1, ~truth, truth).astype(float)
    labeled = np.zeros(600, dtype=bool)
    labeled[rng.choice(600, 150, replace=False)] = True
    y, yhat, yhat_u = truth[labeled].astype(float), judge[labeled], judge[~labeled]
    lo_n, hi_n = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(y, yhat, yhat_u, 0.1, lam=None))
    point = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=None)))
    se = (hi_n - lo_n) / (2 * 1.6448536269514722)
    got = ppi_proportion_ci(y, yhat, yhat_u, alpha=0.1)
    assert got == pytest.approx(_kg_reference(point, se, 150, 0.1), rel=1e-9)
    assert 0.0 <= got[0] <= point <= got[1] <= 1.0


def test_ppi_proportion_ci_refuses_an_estimate_outside_the_unit_interval():
    # One labeled defect the judge scores 0, and a judge scoring 1 on it elsewhere: with
    # λ = 1 the estimate mean(ŷu) + mean(y − ŷ) = 0 + (0 − 1)/4 is negative.
    with pytest.raises(ValueError, match="outside \\[0, 1\\]"):
        ppi_proportion_ci([0, 0, 0, 0], [1, 0, 0, 0], [0] * 10, lam=1.0)
    with pytest.raises(ValueError, match="y must be labels in \\[0, 1\\]"):
        ppi_proportion_ci([2, 0], [1, 0], [0, 1])
