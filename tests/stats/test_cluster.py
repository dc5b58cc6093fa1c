import dataclasses

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from enterpriseval.stats import Estimate, cluster_mean_ci, cluster_ratio_ci


def clustered_rates(
    rng: np.random.Generator, n_units: int, n_clusters: int
) -> tuple[np.ndarray, np.ndarray]:
    """Binary unit scores whose rate varies by cluster, unbalanced cluster sizes."""
    weights = rng.dirichlet(np.full(n_clusters, 2.0))
    labels = rng.choice(n_clusters, size=n_units, p=weights)
    cluster_rate = rng.beta(2.0, 5.0, size=n_clusters)
    values = (rng.random(n_units) < cluster_rate[labels]).astype(float)
    return values, labels


def statsmodels_cluster(values, labels, alpha):
    _, codes = np.unique(labels, return_inverse=True)
    fit = sm.OLS(values, np.ones_like(values)).fit(
        cov_type="cluster",
        cov_kwds={"groups": codes, "use_correction": True, "df_correction": True},
        use_t=True,
    )
    lo, hi = fit.conf_int(alpha)[0]
    return fit.params[0], lo, hi, fit.bse[0], fit.df_resid_inference


@pytest.mark.parametrize("alpha", [0.05, 0.1])
@pytest.mark.parametrize(
    ("n_units", "n_clusters"), [(10, 2), (60, 5), (1_000, 40), (50_000, 2_000)]
)
def test_it_matches_statsmodels_ols_cluster_across_sizes(n_units, n_clusters, alpha):
    rng = np.random.default_rng(n_units + n_clusters)
    values, labels = clustered_rates(rng, n_units, n_clusters)

    estimate = cluster_mean_ci(values, labels, alpha=alpha)

    point, lo, hi, se, df = statsmodels_cluster(values, labels, alpha)
    g = len(np.unique(labels))
    assert df == g - 1  # statsmodels uses t with G - 1 df here
    assert estimate.point == pytest.approx(point, rel=1e-12)
    assert estimate.se == pytest.approx(se, rel=1e-9)
    assert estimate.lo == pytest.approx(lo, rel=1e-9, abs=1e-12)
    assert estimate.hi == pytest.approx(hi, rel=1e-9, abs=1e-12)
    assert (estimate.n, estimate.n_clusters) == (n_units, g)


def test_it_matches_statsmodels_on_continuous_scores_with_string_labels():
    rng = np.random.default_rng(11)
    values, labels = clustered_rates(rng, 400, 25)
    values = values + rng.normal(0.0, 0.3, size=values.size)
    names = [f"output-{label:03d}" for label in labels]

    estimate = cluster_mean_ci(values, names, alpha=0.05)

    point, lo, hi, se, _ = statsmodels_cluster(values, labels, 0.05)
    assert (estimate.point, estimate.lo, estimate.hi, estimate.se) == pytest.approx(
        (point, lo, hi, se), rel=1e-9
    )


def test_the_interval_uses_the_t_quantile_with_g_minus_1_degrees_of_freedom():
    values = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    clusters = ["a", "a", "b", "b", "c", "c"]

    estimate = cluster_mean_ci(values, clusters, alpha=0.05)

    # Residual sums by cluster: -1/3, -1/3, 2/3; CR1 factor 3/2; so se = 1/6.
    se = np.sqrt(1.5 * (1 / 9 + 1 / 9 + 4 / 9)) / 6
    assert estimate.point == pytest.approx(2 / 3, rel=1e-15)
    assert estimate.se == pytest.approx(se, rel=1e-12)
    assert estimate.hi - estimate.point == pytest.approx(stats.t.ppf(0.975, 2) * se, rel=1e-12)
    assert estimate.lo == pytest.approx(2 / 3 - 4.302652729749464 / 6, abs=1e-12)


def test_the_ratio_gives_the_hand_computed_linearised_interval():
    estimate = cluster_ratio_ci([1, 0, 2], [4, 3, 5], alpha=0.05)

    # R = 3/12; z = (y - R x) / 4 = (0, -0.1875, 0.1875); se² = 3/2 · Σz² / 3².
    se = np.sqrt(1.5 * 2 * 0.1875**2 / 9)
    assert estimate.point == 0.25
    assert estimate.se == pytest.approx(se, rel=1e-12)
    assert estimate.se == pytest.approx(0.1082531755, abs=1e-10)
    assert estimate.hi == pytest.approx(0.25 + 4.302652729749464 * se, rel=1e-12)
    assert (estimate.n, estimate.n_clusters) == (12, 3)


@pytest.mark.parametrize("n_clusters", [2, 5, 80, 3_000])
def test_the_ratio_matches_statsmodels_wls_through_the_origin_with_hc1(n_clusters):
    # WLS of y_g on x_g with weights 1/x_g gives β = Σy/Σx, and its HC1 variance
    # G/(G-1) · Σ(y_g - β x_g)² / (Σx)² is the linearised ratio variance.
    rng = np.random.default_rng(n_clusters)
    sizes = rng.integers(1, 40, size=n_clusters)
    numerators = rng.binomial(sizes, rng.beta(2.0, 8.0, size=n_clusters)).astype(float)

    estimate = cluster_ratio_ci(numerators, sizes, alpha=0.1)

    fit = sm.WLS(numerators, sizes.astype(float), weights=1.0 / sizes).fit(
        cov_type="HC1", use_t=True
    )
    lo, hi = fit.conf_int(0.1)[0]
    assert fit.df_resid == n_clusters - 1
    assert estimate.point == pytest.approx(fit.params[0], rel=1e-12)
    assert estimate.se == pytest.approx(fit.bse[0], rel=1e-9)
    assert (estimate.lo, estimate.hi) == pytest.approx((lo, hi), rel=1e-9, abs=1e-12)


def test_the_ratio_of_cluster_totals_equals_the_clustered_mean_of_units():
    rng = np.random.default_rng(3)
    values, labels = clustered_rates(rng, 2_000, 60)
    codes = np.unique(labels, return_inverse=True)[1]

    unit_level = cluster_mean_ci(values, labels)
    totals = cluster_ratio_ci(np.bincount(codes, weights=values), np.bincount(codes))

    assert dataclasses.astuple(totals) == pytest.approx(dataclasses.astuple(unit_level), rel=1e-9)


def test_a_cluster_with_no_units_still_counts_as_a_sampled_cluster():
    with_empty = cluster_ratio_ci([1, 0, 2, 0], [4, 3, 5, 0])
    without = cluster_ratio_ci([1, 0, 2], [4, 3, 5])

    assert with_empty.point == without.point
    assert with_empty.n_clusters == 4
    assert with_empty.n == without.n == 12
    # se² = G/(G-1) · Σ(y_g - R x_g)² / (Σx)²: only the CR1 factor moves, 3/2 -> 4/3.
    assert with_empty.se == pytest.approx(without.se * np.sqrt((4 / 3) / 1.5), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_clusters=st.integers(2, 30))
def test_relabelling_and_reordering_clusters_does_not_change_the_result(seed, n_clusters):
    rng = np.random.default_rng(seed)
    values, labels = clustered_rates(rng, 5 * n_clusters, n_clusters)
    if len(np.unique(labels)) < 2:
        labels[0], labels[1] = 0, 1
    renamed = {old: f"doc-{new}" for new, old in enumerate(rng.permutation(n_clusters))}
    order = rng.permutation(values.size)

    original = cluster_mean_ci(values, labels)
    relabelled = cluster_mean_ci(values[order], [renamed[label] for label in labels[order]])

    assert dataclasses.astuple(relabelled) == pytest.approx(
        dataclasses.astuple(original), rel=1e-9, abs=1e-15
    )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_clusters=st.integers(2, 40),
    alpha=st.floats(0.01, 0.5),
)
def test_both_estimates_lie_inside_their_intervals(seed, n_clusters, alpha):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 20, size=n_clusters)
    sizes[0] = max(sizes[0], 1)
    numerators = rng.binomial(sizes, 0.3)

    ratio = cluster_ratio_ci(numerators, sizes, alpha=alpha)
    mean = cluster_mean_ci(rng.random(3 * n_clusters), np.arange(3 * n_clusters) % n_clusters)

    for estimate in (ratio, mean):
        assert estimate.lo <= estimate.point <= estimate.hi
        assert estimate.se >= 0.0


def test_identical_values_give_a_zero_width_interval():
    estimate = cluster_mean_ci([0.0, 0.0, 0.0, 0.0], [1, 1, 2, 3])

    assert (estimate.point, estimate.lo, estimate.hi, estimate.se) == (0.0, 0.0, 0.0, 0.0)


def test_an_estimate_is_immutable():
    estimate = cluster_mean_ci([1.0, 0.0, 1.0], ["a", "b", "b"])

    assert isinstance(estimate, Estimate)
    with pytest.raises(dataclasses.FrozenInstanceError):
        estimate.point = 0.5  # type: ignore[misc]


@pytest.mark.parametrize(
    ("values", "clusters", "message"),
    [
        ([1.0, 0.0, 1.0], ["a", "a", "a"], "clusters must hold at least two clusters"),
        ([1.0, 0.0], ["a", "b", "c"], "values has 2, clusters has 3"),
        ([], [], "values is empty"),
        ([1.0, float("nan")], ["a", "b"], "values contains NaN"),
        ([1.0, float("inf")], ["a", "b"], "values must be finite"),
        ([1.0, 0.0], [1.0, float("nan")], "clusters contains NaN"),
        ([1.0, 0.0], [[1, 2]], "clusters must be one-dimensional"),
        ([1.0, 0.0], np.array([1, None], dtype=object), "clusters must be labels"),
    ],
)
def test_cluster_mean_rejects_malformed_input_naming_the_argument(values, clusters, message):
    with pytest.raises(ValueError, match=message):
        cluster_mean_ci(values, clusters)


@pytest.mark.parametrize(
    ("numerators", "denominators", "message"),
    [
        ([1.0, 2.0], [0, 0], "denominators must have a positive total"),
        ([1.0], [3], "numerators must hold at least two clusters"),
        ([1.0, 2.0], [3, -1], "denominators must be non-negative"),
        ([1.0, 2.0], [3, 2.5], "denominators must be whole numbers"),
        ([1.0, 2.0, 3.0], [3, 4], "numerators has 3, denominators has 2"),
        ([], [], "numerators is empty"),
        ([1.0, float("inf")], [3, 4], "numerators must be finite"),
    ],
)
def test_cluster_ratio_rejects_malformed_input_naming_the_argument(
    numerators, denominators, message
):
    with pytest.raises(ValueError, match=message):
        cluster_ratio_ci(numerators, denominators)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 2.0])
def test_both_reject_alpha_outside_0_1(alpha):
    with pytest.raises(ValueError, match="alpha"):
        cluster_mean_ci([1.0, 0.0], ["a", "b"], alpha=alpha)
    with pytest.raises(ValueError, match="alpha"):
        cluster_ratio_ci([1.0, 0.0], [2, 2], alpha=alpha)


@pytest.mark.slow
def test_the_ratio_interval_covers_the_true_rate_at_the_nominal_level():
    # 40 outputs per evaluation, sentence counts 1..30, per-output hallucination
    # rates from a beta distribution; the population rate is the ratio of expected
    # totals, E[x p] / E[x] = E[p] here because sizes and rates are independent.
    rng = np.random.default_rng(20240501)
    n_clusters, reps, true_rate = 40, 4_000, 2.0 / (2.0 + 18.0)
    covered = 0
    for _ in range(reps):
        sizes = rng.integers(1, 31, size=n_clusters)
        rates = rng.beta(2.0, 18.0, size=n_clusters)
        numerators = rng.binomial(sizes, rates)
        estimate = cluster_ratio_ci(numerators, sizes, alpha=0.05)
        covered += estimate.lo <= true_rate <= estimate.hi
    coverage = covered / reps
    # Monte Carlo standard error is about 0.0035; the t(G-1) interval should sit
    # close to 95 %, slightly under because the ratio is skewed at G = 40.
    assert 0.93 <= coverage <= 0.965, coverage


@pytest.mark.parametrize("offset", [10**9, -5])
def test_small_integer_ids_counted_give_what_far_apart_or_negative_ids_sorted_give(offset):
    # Output ids from 0 up take the counting path; ids far apart or below 0 the sorting one.
    rng = np.random.default_rng(7)
    values, labels = clustered_rates(rng, 400, 37)
    labels = labels.astype(np.int64) * 3  # gaps: some ids unused
    dense = cluster_mean_ci(values, labels)
    shifted = cluster_mean_ci(values, labels + offset)
    assert dense.n_clusters == len(np.unique(labels)) == shifted.n_clusters
    assert dataclasses.astuple(dense) == pytest.approx(dataclasses.astuple(shifted), rel=1e-12)
