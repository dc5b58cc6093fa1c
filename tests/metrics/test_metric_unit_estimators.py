"""The unit-level metric estimators: per-output counts, human-only, judge-only and PPI++
ratios, the gated record (SPEC §4, §5.2, §5.3)."""

from __future__ import annotations

import math

import numpy as np
import ppi_py
import pytest
from statsmodels.stats.proportion import proportion_confint

from metrics.estimate import MIN_OUTPUTS_FOR_PPI_GATE, MetricEstimate
from metrics.unit_estimators import (
    UNIT_METRICS,
    OutputUnits,
    citation_precision_counts,
    citation_recall_counts,
    estimate_unit_metric,
    guidance_counts,
    hallucination_counts,
    human_only_ratio,
    irrelevance_counts,
    judge_only_ratio,
    key_element_counts,
    ppi_ratio,
    unit_metric_intervals,
)

T3 = 3.1824463052837086  # t quantile, 3 df, 0.975
T4 = 2.7764451051977943  # t quantile, 4 df, 0.975
Z90 = 1.6448536269514722  # normal quantile 0.95
Z95 = 1.959963984540054  # normal quantile 0.975
NAN = np.nan


def kg_reference(point, se, units, df, alpha):
    """Korn–Graubard limits built from scipy.stats (Korn and Graubard 1998, Eqs. 2.2–2.3)."""
    from scipy.stats import beta, norm, t

    spread = point * (1 - point)
    n_eff = min(units, spread / se**2) if spread > 0 and se > 0 else units
    n_eff *= (norm.ppf(1 - alpha / 2) / t.ppf(1 - alpha / 2, df)) ** 2
    x = n_eff * point
    lo = 0.0 if point == 0 else beta.ppf(alpha / 2, x, n_eff - x + 1)
    hi = 1.0 if point == 1 else beta.ppf(1 - alpha / 2, x + 1, n_eff - x)
    return lo, hi


def squeezed(pair):
    return tuple(float(np.squeeze(v)) for v in pair)


def simulated_outputs(seed: int, big_n: int, n: int, *, strata: int = 1) -> dict:
    """Sentences per output, true and judged hallucination counts, a uniform sample."""
    rng = np.random.default_rng(seed)
    d = rng.integers(2, 12, size=big_n).astype(float)
    truth = rng.binomial(d.astype(int), 0.08).astype(float)
    false_alarms = rng.binomial((d - truth).astype(int), 0.04)
    misses = rng.binomial(truth.astype(int), 0.25)
    judge = truth + false_alarms - misses
    labeled = np.zeros(big_n, dtype=bool)
    labeled[rng.choice(big_n, size=n, replace=False)] = True
    return {
        "d": d,
        "truth": truth,
        "judge": judge,
        "labeled": labeled,
        "stratum": np.arange(big_n) % strata,
    }


def units_from(sim: dict, **extra) -> OutputUnits:
    return OutputUnits(
        output_id=np.arange(sim["d"].size),
        labeled=sim["labeled"],
        d=sim["d"],
        f_num=sim["judge"],
        h_num=np.where(sim["labeled"], sim["truth"], NAN),
        **extra,
    )


def assert_no_nan(record: MetricEstimate) -> None:
    for value in (record.point, record.lo, record.hi):
        assert value is None or math.isfinite(value)
    for interval in (record.human_only, record.judge_only):
        if interval is not None:
            assert all(math.isfinite(v) for v in (interval.point, interval.lo, interval.hi))


# -- per-output counts from unit scores ---------------------------------------------------


def test_hallucination_counts_an_assertive_unsupported_sentence_only():
    # Output 0: assertive+supported, assertive+not supported, not assertive (supported not
    # asked: NaN). Output 1: assertive+partially (score 1). Output 2: no sentence.
    counts = hallucination_counts(
        output_index=[0, 0, 0, 1],
        assertive=[1, 1, 0, 1],
        supported=[1, 0, NAN, 1],
        n_outputs=3,
    )
    assert counts.numerator.tolist() == [1.0, 0.0, 0.0]
    assert counts.denominator.tolist() == [3.0, 1.0, 0.0]


def test_hallucination_counts_needs_a_support_score_for_every_assertive_sentence():
    with pytest.raises(ValueError, match="supported"):
        hallucination_counts(output_index=[0], assertive=[1], supported=[NAN], n_outputs=1)


def test_irrelevance_and_citation_precision_count_their_units():
    irrelevant = irrelevance_counts(output_index=[0, 0, 1], relevant=[1, 0, 0], n_outputs=2)
    assert irrelevant.numerator.tolist() == [1.0, 1.0]
    assert irrelevant.denominator.tolist() == [2.0, 1.0]
    # Chunks graded strict, lenient, not: lenient precision counts 2 of 3, strict 1 of 3.
    lenient = citation_precision_counts(output_index=[0, 0, 0], used=[1, 1, 0], n_outputs=1)
    strict = citation_precision_counts(output_index=[0, 0, 0], used=[1, 0, 0], n_outputs=1)
    assert (lenient.numerator[0], lenient.denominator[0]) == (2.0, 3.0)
    assert (strict.numerator[0], strict.denominator[0]) == (1.0, 3.0)


def test_citation_recall_counts_supported_sentences_citing_a_supporting_chunk():
    # Sentences: s0 (out 0) assertive+supported, cites c0 not and c1 lenient -> counts;
    # s1 (out 0) assertive+supported, cites nothing -> in denominator only;
    # s2 (out 0) assertive, not supported, cites c2 strict -> in neither;
    # s3 (out 1) not assertive, cites c3 strict -> in neither;
    # s4 (out 1) assertive+supported, cites c4 not -> denominator only.
    counts = citation_recall_counts(
        output_index=[0, 0, 0, 1, 1],
        assertive=[1, 1, 1, 0, 1],
        supported=[1, 1, 0, NAN, 1],
        chunk_sentence=[0, 0, 2, 3, 4],
        chunk_used=[0, 1, 1, 1, 0],
        n_outputs=2,
    )
    assert counts.numerator.tolist() == [1.0, 0.0]
    assert counts.denominator.tolist() == [2.0, 1.0]


def test_key_element_and_guidance_counts():
    # Key elements: output 0 has present_correct, present_wrong (0), absent (0); output 1 one
    # present_correct.
    kec = key_element_counts(output_index=[0, 0, 0, 1], captured=[1, 0, 0, 1], n_outputs=2)
    assert kec.numerator.tolist() == [1.0, 1.0]
    assert kec.denominator.tolist() == [3.0, 1.0]
    # Guidance items graded TP, FP, FN, correct in one output: flagged 1,1,0,0; breached
    # 1,0,1,0. Precision TP/(TP+FP) = 1/2, recall TP/(TP+FN) = 1/2.
    kwargs = {"output_index": [0, 0, 0, 0], "flagged": [1, 1, 0, 0], "breached": [1, 0, 1, 0]}
    precision = guidance_counts(**kwargs, n_outputs=1, measure="precision")
    recall = guidance_counts(**kwargs, n_outputs=1, measure="recall")
    assert (precision.numerator[0], precision.denominator[0]) == (1.0, 2.0)
    assert (recall.numerator[0], recall.denominator[0]) == (1.0, 2.0)
    with pytest.raises(ValueError, match="measure"):
        guidance_counts(**kwargs, n_outputs=1, measure="f1")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"output_index": [0, 3], "relevant": [1, 1], "n_outputs": 2}, "output_index"),
        ({"output_index": [0.5], "relevant": [1], "n_outputs": 1}, "output_index"),
        ({"output_index": [0], "relevant": [2], "n_outputs": 1}, "relevant"),
        ({"output_index": [0, 0], "relevant": [1], "n_outputs": 1}, "relevant"),
        ({"output_index": [0], "relevant": [1], "n_outputs": 0}, "n_outputs"),
    ],
)
def test_counts_reject_malformed_units_naming_the_argument(kwargs, field):
    with pytest.raises(ValueError, match=field):
        irrelevance_counts(**kwargs)


# -- the input dataclass --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"output_id": ["a", "a", "c"]}, "output_id"),
        ({"labeled": [True, False]}, "labeled"),
        ({"d": [3, 2.5, 4]}, "d"),
        ({"d": [3, -1, 4]}, "d"),
        ({"f_num": [0, NAN, 1]}, "f_num"),
        ({"f_num": [0, 3, 1]}, "f_num"),  # above its denominator d = 2
        ({"h_num": [0.5, NAN, NAN]}, "h_num"),  # human counts are whole
        ({"h_num": [NAN, NAN, NAN]}, "h_num"),  # labeled output without a human value
        ({"h_num": None}, "h_num"),
        ({"stratum": ["x", "y"]}, "stratum"),
        ({"f_den": [1, 1, 1], "d": None}, "f_den"),
    ],
)
def test_output_units_reject_malformed_fields_naming_them(changes, field):
    fields = {
        "output_id": ["a", "b", "c"],
        "labeled": [True, False, False],
        "d": [3, 2, 4],
        "f_num": [0, 1, 1],
        "h_num": [1, NAN, NAN],
    }
    fields.update(changes)
    if changes.get("f_den") is not None:
        fields["f_num"] = None
    with pytest.raises(ValueError, match=field):
        OutputUnits(**fields)


def test_output_units_ignore_human_values_of_unlabeled_outputs():
    units = OutputUnits(
        output_id=[7, 8], labeled=[1, 0], d=[2, 2], h_num=[1, NAN], f_num=[1.0, 0.5]
    )
    assert (units.n_outputs, units.n_labeled, units.has_judge) == (2, 1, True)
    assert units.labeled.dtype == bool


# -- human-only and judge-only ratios --------------------------------------------------------


def test_human_only_ratio_is_the_cr1_cluster_ratio_over_the_labeled_outputs():
    # Labeled y = [1, 0, 2, 1], d = [4, 5, 6, 5]; two unlabeled outputs are ignored.
    # R = 4/20 = 0.2, x̄ = 5, z = (y − R d)/x̄ = [0.04, −0.2, 0.16, 0], Σz² = 0.0672,
    # se² = (4/3)·0.0672/16 = 0.0056; Korn–Graubard: n_eff = min(20, 0.16/0.0056) = 20
    # units (design effect below 1, floored), scaled by (z/t(3))².
    data = OutputUnits(
        output_id=np.arange(6),
        labeled=[True, True, True, True, False, False],
        d=[4, 5, 6, 5, 7, 3],
        h_num=[1, 0, 2, 1, NAN, NAN],
    )
    estimate = human_only_ratio(data, alpha=0.05)
    assert (estimate.point, estimate.se) == pytest.approx((0.2, math.sqrt(0.0056)), abs=1e-12)
    lo, hi = kg_reference(0.2, math.sqrt(0.0056), 20, 3, 0.05)
    assert (estimate.lo, estimate.hi) == pytest.approx((lo, hi), abs=1e-12)
    # With n_eff = 20·(1.96/3.18)² = 7.6 units and x* = 1.5: [1.5 %, 61.6 %], where the old
    # Wald interval was [−3.8 %, 43.8 %].
    assert (estimate.lo, estimate.hi) == pytest.approx((0.01515, 0.6159), abs=1e-4)
    assert (estimate.n, estimate.n_clusters) == (20, 4)
    assert "CR1" in estimate.method and "Korn–Graubard (n_eff 20.0 of 20 units, t(3))" in (
        estimate.method
    )


def test_human_only_ratio_of_a_stratified_sample_weights_strata_by_n_h_over_n():
    # Stratum A: 4 outputs, 2 labeled (π = 1/2): y = [1, 0], d = [4, 6].
    # Stratum B: 6 outputs, 4 labeled (π = 2/3): y = [2, 1, 0, 1], d = [5, 5, 5, 5].
    # W = [0.4, 0.6]; ȳ = [0.5, 1], x̄ = [5, 5]; R = (0.2 + 0.6)/5 = 0.16
    # (= Σ y/π / Σ d/π = (2·1 + 1.5·4)/(2·10 + 1.5·20) = 8/50).
    # z = (y − 0.16 d)/5: A [0.072, −0.192] (mean −0.06, s² = 2·0.132² = 0.034848);
    # B [0.24, 0.04, −0.16, 0.04] (mean 0.04, s² = 0.08/3).
    # var = 0.16·0.034848/2 + 0.36·(0.08/3)/4 = 0.00278784 + 0.0024 = 0.00518784, df 6 − 2.
    data = OutputUnits(
        output_id=np.arange(10),
        labeled=[True, True, False, False, True, True, True, True, False, False],
        stratum=["A"] * 4 + ["B"] * 6,
        d=[4, 6, 5, 5, 5, 5, 5, 5, 5, 5],
        h_num=[1, 0, NAN, NAN, 2, 1, 0, 1, NAN, NAN],
    )
    estimate = human_only_ratio(data, alpha=0.05)
    assert (estimate.point, estimate.se) == pytest.approx((0.16, math.sqrt(0.00518784)), abs=1e-12)
    # n_eff = 0.16·0.84/0.00518784 = 25.9 units, under the 30 graded: design effect 1.16.
    lo, hi = kg_reference(0.16, math.sqrt(0.00518784), 30, 4, 0.05)
    assert (estimate.lo, estimate.hi) == pytest.approx((lo, hi), abs=1e-12)
    assert "n_eff 25.9 of 30 units, t(4)" in estimate.method


def test_human_only_ratio_of_a_stratum_with_one_graded_output_is_refused():
    data = OutputUnits(
        output_id=np.arange(5),
        labeled=[True, False, True, True, False],
        stratum=["A", "A", "B", "B", "B"],
        d=[3] * 5,
        h_num=[1, NAN, 0, 1, NAN],
    )
    with pytest.raises(ValueError, match="stratum: 'A' has 1"):
        human_only_ratio(data)


def test_mean_of_shares_is_the_cluster_mean_of_per_output_shares():
    # Key elements captured/|K| = 2/2, 1/2, 3/4, 3/3: shares [1, .5, .75, 1], mean 0.8125;
    # deviations [.1875, −.3125, −.0625, .1875], Σ² = 0.171875, sd² = 0.171875/3,
    # se = sd/√4; Korn–Graubard on 11 key elements, t(3).
    data = OutputUnits(
        output_id=np.arange(4), labeled=[True] * 4, d=[2, 2, 4, 3], h_num=[2, 1, 3, 3]
    )
    estimate = human_only_ratio(data, alpha=0.05, mean_of_shares=True)
    se = math.sqrt(0.171875 / 3) / 2
    assert (estimate.point, estimate.se) == pytest.approx((0.8125, se), abs=1e-12)
    lo, hi = kg_reference(0.8125, se, 11, 3, 0.05)
    assert (estimate.lo, estimate.hi) == pytest.approx((lo, hi), abs=1e-12)
    assert estimate.n == 11


def test_no_defect_in_the_sample_gives_a_clopper_pearson_upper_limit_on_the_t_scaled_units():
    # No hallucination in 3 outputs of 40 sentences: every output's ratio is 0, the design
    # effect is undefined and taken as 1, so n_eff = 40·(z/t(2))² and the upper limit is
    # Clopper–Pearson's 1 − (α/2)^(1/n_eff) (the beta quantile at 0 successes).
    data = OutputUnits(output_id=np.arange(3), labeled=[True] * 3, d=[10, 20, 10], h_num=[0, 0, 0])
    estimate = human_only_ratio(data, alpha=0.1)
    n_eff = 40 * (Z90 / 2.919985580355516) ** 2
    assert (estimate.lo, estimate.hi) == pytest.approx((0.0, 1 - 0.05 ** (1 / n_eff)), abs=1e-12)
    assert estimate.hi > proportion_confint(0, 40, alpha=0.1, method="beta")[1]
    assert estimate.point == 0.0


def test_judge_only_ratio_is_the_cluster_ratio_of_the_judge_over_all_outputs():
    # Judge f = [1, 0, 1], d = [2, 2, 4]: R = 2/8 = 0.25, x̄ = 8/3,
    # z = (f − R d)/x̄ = [0.5, −0.5, 0]·3/8 = [0.1875, −0.1875, 0], Σz² = 0.0703125,
    # se² = (3/2)·0.0703125/9 = 0.01171875; Korn–Graubard on 8 units, t(2).
    data = OutputUnits(output_id=np.arange(3), labeled=[False] * 3, d=[2, 2, 4], f_num=[1, 0, 1])
    estimate = judge_only_ratio(data, alpha=0.05)
    se = math.sqrt(0.01171875)
    assert (estimate.point, estimate.se) == pytest.approx((0.25, se), abs=1e-12)
    assert (estimate.lo, estimate.hi) == pytest.approx(
        kg_reference(0.25, se, 8, 2, 0.05), abs=1e-12
    )
    assert (estimate.n, estimate.n_clusters) == (8, 3)


# -- PPI++ ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("seed", "big_n", "n"), [(1, 200, 40), (2, 1_000, 120), (3, 60, 25)])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_uniform_ppi_mean_numerator_equals_ppi_py(seed, big_n, n, alpha):
    # SPEC §5.4 convention: ppi_py's unlabeled set is the outputs not in the human sample.
    sim = simulated_outputs(seed, big_n, n)
    lab = sim["labeled"]
    y, yhat, yhat_u = sim["truth"][lab], sim["judge"][lab], sim["judge"][~lab]
    estimate = ppi_ratio(units_from(sim), alpha=alpha)
    d_bar = sim["d"].mean()
    lo, hi = squeezed(ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=None))
    reference_point = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=None)))
    z = float(np.squeeze(__import__("scipy.stats").stats.norm.ppf(1 - alpha / 2)))
    assert estimate.se * d_bar == pytest.approx((hi - lo) / (2 * z), rel=1e-9)
    assert estimate.point * d_bar == pytest.approx(reference_point, rel=1e-9)
    assert estimate.n == int(sim["d"][lab].sum()) and estimate.n_clusters == n
    # The gated limits: Korn–Graubard on ppi_py's variance, n_eff capped at the graded units.
    expected = kg_reference(estimate.point, estimate.se, estimate.n, n - 1, alpha)
    assert (estimate.lo, estimate.hi) == pytest.approx(expected, rel=1e-9)


def test_uniform_ppi_of_a_mean_of_shares_equals_ppi_py_on_the_shares():
    sim = simulated_outputs(4, 300, 60)
    lab = sim["labeled"]
    share_h, share_f = sim["truth"] / sim["d"], sim["judge"] / sim["d"]
    estimate = ppi_ratio(units_from(sim), alpha=0.1, mean_of_shares=True)
    lo, hi = squeezed(
        ppi_py.ppi_mean_ci(share_h[lab], share_f[lab], share_f[~lab], alpha=0.1, lam=None)
    )
    assert (estimate.point, estimate.se) == pytest.approx(((lo + hi) / 2, (hi - lo) / (2 * Z90)))
    expected = kg_reference(estimate.point, estimate.se, int(sim["d"][lab].sum()), 59, 0.1)
    assert (estimate.lo, estimate.hi) == pytest.approx(expected, rel=1e-9)


def test_a_constant_judge_gives_the_classical_interval_with_lambda_zero():
    sim = simulated_outputs(5, 150, 50)
    sim["judge"] = np.zeros_like(sim["judge"])
    lab = sim["labeled"]
    estimate = ppi_ratio(units_from(sim), alpha=0.1)
    d_bar = sim["d"].mean()
    lo, hi = squeezed(ppi_py.classical_mean_ci(sim["truth"][lab], alpha=0.1))
    assert estimate.point * d_bar == pytest.approx((lo + hi) / 2, rel=1e-9)
    assert estimate.se * d_bar == pytest.approx((hi - lo) / (2 * Z90), rel=1e-9)
    assert estimate.lambdas == (0.0,)


def test_stratified_ppi_by_hand_with_a_constant_judge_in_each_stratum():
    # λ̂ = 0 in both strata (constant judge), so each stratum's estimate is classical:
    # A: 4 outputs, labeled y = [1, 3] -> θ_A = 2, var_A = var₀([1, 3])/2 = 1/2;
    # B: 6 outputs, labeled y = [0, 1, 2] -> θ_B = 1, var_B = (2/3)/3 = 2/9.
    # W = [0.4, 0.6]: θ = 0.8 + 0.6 = 1.4, var = 0.16·0.5 + 0.36·2/9 = 0.16, se = 0.4.
    # d = 5 everywhere: R = 1.4/5 = 0.28, se_R = 0.08; Korn–Graubard: n_eff =
    # 0.28·0.72/0.0064 = 31.5 > the 25 graded sentences, so 25, scaled by (z/t(3))².
    data = OutputUnits(
        output_id=np.arange(10),
        labeled=[True, True, False, False, True, True, True, False, False, False],
        stratum=["A"] * 4 + ["B"] * 6,
        d=[5] * 10,
        f_num=[2] * 4 + [1] * 6,
        h_num=[1, 3, NAN, NAN, 0, 1, 2, NAN, NAN, NAN],
    )
    estimate = ppi_ratio(data, alpha=0.1)
    assert (estimate.point, estimate.se) == pytest.approx((0.28, 0.08), abs=1e-12)
    assert (estimate.lo, estimate.hi) == pytest.approx(
        kg_reference(0.28, 0.08, 25, 3, 0.1), abs=1e-12
    )
    assert estimate.lambdas == (0.0, 0.0)
    assert "stratified (2 strata" in estimate.method


def test_stratified_ppi_combines_per_stratum_ppi_py_results_with_weights_n_h_over_n():
    # Three strata (runs) of 90, 150 and 60 outputs with 30, 30 and 30 graded: π differs.
    rng = np.random.default_rng(6)
    sizes, graded = (90, 150, 60), (30, 30, 30)
    parts = [
        simulated_outputs(int(rng.integers(1_000)), s, g)
        for s, g in zip(sizes, graded, strict=True)
    ]
    sim = {key: np.concatenate([p[key] for p in parts]) for key in ("d", "truth", "judge")}
    sim["labeled"] = np.concatenate([p["labeled"] for p in parts])
    stratum = np.repeat([0, 1, 2], sizes)
    estimate = ppi_ratio(units_from(sim, stratum=stratum), alpha=0.1)
    # By hand from ppi_py per stratum: θ = Σ W_h θ_h, se² = Σ W_h² se_h², se_h = width/2z.
    weights = np.array(sizes) / sum(sizes)
    thetas, variances = [], []
    for p in parts:
        lab = p["labeled"]
        args = (p["truth"][lab], p["judge"][lab], p["judge"][~lab])
        lo, hi = squeezed(ppi_py.ppi_mean_ci(*args, alpha=0.1, lam=None))
        thetas.append(float(np.squeeze(ppi_py.ppi_mean_pointestimate(*args, lam=None))))
        variances.append(((hi - lo) / (2 * Z90)) ** 2)
    theta = float(weights @ np.array(thetas))
    se = math.sqrt(float(weights**2 @ np.array(variances)))
    d_bar = sim["d"].mean()
    assert estimate.point == pytest.approx(theta / d_bar, rel=1e-9)
    assert estimate.se == pytest.approx(se / d_bar, rel=1e-9)
    assert len(estimate.lambdas) == 3


def test_graded_denominator_delta_method_by_hand():
    # A constant judge (f_num = 1, f_den = 2) gives λ̂ = 0 for both means, so on the 4
    # labeled outputs a = [1, 0, 2, 1], b = [2, 2, 3, 1]: θ_a = 1, θ_b = 2, R = 0.5;
    # var(θ_a) = var₀(a)/4 = 0.5/4, var(θ_b) = 0.5/4, cov = cov₀(a, b)/4 = 0.25/4;
    # var(R) = (0.125 − 2·0.5·0.0625 + 0.25·0.125)/2² = 0.0234375.
    data = OutputUnits(
        output_id=np.arange(6),
        labeled=[True, True, True, True, False, False],
        f_num=[1] * 6,
        f_den=[2] * 6,
        h_num=[1, 0, 2, 1, NAN, NAN],
        h_den=[2, 2, 3, 1, NAN, NAN],
    )
    estimate = ppi_ratio(data, alpha=0.05)
    se = math.sqrt(0.0234375)
    assert (estimate.point, estimate.se) == pytest.approx((0.5, se), abs=1e-12)
    assert (estimate.lo, estimate.hi) == pytest.approx(kg_reference(0.5, se, 8, 3, 0.05))
    assert estimate.lambdas == (0.0,) and estimate.lambdas_den == (0.0,)
    assert estimate.n == 8  # graded denominator units in the human sample


def guidance_population(rng: np.random.Generator, big_n: int) -> dict:
    """Guidance recall per output: items breached (graded), flagged among them, a judge."""
    items = rng.integers(1, 7, size=big_n)
    breached = rng.binomial(items, 0.35)
    caught = rng.binomial(breached, 0.7)
    judge_breached = breached + rng.binomial(items - breached, 0.1) - rng.binomial(breached, 0.1)
    judge_caught = np.minimum(judge_breached, caught + rng.binomial(breached - caught, 0.15))
    return {
        "num": caught.astype(float),
        "den": breached.astype(float),
        "f_num": judge_caught.astype(float),
        "f_den": judge_breached.astype(float),
    }


def test_the_delta_method_standard_error_matches_the_monte_carlo_spread():
    # Seeded superpopulation: recall = E[caught]/E[breached] = 0.7. 2,000 evaluations of
    # N = 400 outputs with n = 120 graded; the spread of the PPI++ ratio must match the mean
    # delta-method se (within 6 %), and the estimate be unbiased to within 0.005.
    rng = np.random.default_rng(7)
    points, ses = [], []
    for _ in range(2_000):
        pop = guidance_population(rng, 400)
        labeled = np.zeros(400, dtype=bool)
        labeled[rng.choice(400, size=120, replace=False)] = True
        data = OutputUnits(
            output_id=np.arange(400),
            labeled=labeled,
            f_num=pop["f_num"],
            f_den=pop["f_den"],
            h_num=np.where(labeled, pop["num"], NAN),
            h_den=np.where(labeled, pop["den"], NAN),
        )
        estimate = ppi_ratio(data, alpha=0.1)
        points.append(estimate.point)
        ses.append(estimate.se)
    spread = float(np.std(points, ddof=1))
    assert float(np.mean(ses)) == pytest.approx(spread, rel=0.06)
    assert float(np.mean(points)) == pytest.approx(0.7, abs=0.005)


def test_ppi_needs_an_unlabeled_output_and_two_graded_outputs_per_stratum():
    sim = simulated_outputs(8, 20, 20)
    with pytest.raises(ValueError, match="no unlabeled output"):
        ppi_ratio(units_from(sim))
    sim = simulated_outputs(8, 20, 5)
    stratum = np.where(sim["labeled"], 0, 1)
    stratum[np.flatnonzero(~sim["labeled"])[0]] = 0
    stratum[np.flatnonzero(sim["labeled"])[0]] = 1  # stratum 1 now has one graded output
    with pytest.raises(ValueError, match="stratum: 1 has 1"):
        ppi_ratio(units_from(sim, stratum=stratum))


# -- the gated record ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_graded", "mode"), [(MIN_OUTPUTS_FOR_PPI_GATE - 1, "H"), (MIN_OUTPUTS_FOR_PPI_GATE, "PPI")]
)
def test_fewer_than_100_graded_outputs_gate_on_the_human_only_interval(n_graded, mode):
    sim = simulated_outputs(9, 600, n_graded)
    data = units_from(sim)
    record = estimate_unit_metric("hallucination_rate", data, confidence=0.9, planned_n=10_000)
    human = human_only_ratio(data, alpha=0.1).interval(100.0)
    ppi = ppi_ratio(data, alpha=0.1).interval(100.0)
    judge = judge_only_ratio(data, alpha=0.1).interval(100.0)
    assert record.mode == mode
    gated = human if mode == "H" else ppi
    assert (record.point, record.lo, record.hi) == pytest.approx(
        (gated.point, gated.lo, gated.hi), rel=1e-12
    )
    for side, expected in ((record.human_only, human), (record.judge_only, judge)):
        assert (side.point, side.lo, side.hi) == pytest.approx(
            (expected.point, expected.lo, expected.hi), rel=1e-12
        )
        assert 0.0 <= side.lo <= side.hi <= 100.0
    assert record.n_clusters == n_graded and record.n == int(sim["d"][sim["labeled"]].sum())
    assert record.under_sampled and record.planned_n == 10_000
    assert record.confidence == 0.9 and record.reason == ""
    if mode == "H":
        assert record.notes[0].startswith("PPI++ (shown, not gated")
        assert f"{ppi.point:.2f} [{ppi.lo:.2f}, {ppi.hi:.2f}]" in record.notes[0]
        assert "gated: fewer than 100" in record.estimator
    else:
        assert record.estimator.startswith("PPI++")
    assert any(note.startswith("judge bias") for note in record.notes)
    assert_no_nan(record)


def test_without_human_grades_the_judge_only_value_is_informational():
    sim = simulated_outputs(10, 50, 1)
    sim["labeled"][:] = False
    record = estimate_unit_metric("hallucination_rate", units_from(sim), confidence=0.95)
    judge = judge_only_ratio(units_from(sim), alpha=0.05).interval(100.0)
    assert record.mode == "J"
    assert (record.point, record.lo, record.hi) == pytest.approx(
        (judge.point, max(judge.lo, 0.0), judge.hi), rel=1e-12
    )
    assert "informational" in record.reason and "never gated" in record.reason
    assert record.human_only is None and record.n_clusters == 50
    assert_no_nan(record)


def test_one_graded_output_gives_no_human_interval_and_says_why():
    sim = simulated_outputs(11, 50, 1)
    record = estimate_unit_metric("irrelevance_rate", units_from(sim), confidence=0.9)
    assert record.mode == "J" and "never gated" in record.reason
    assert any("needs at least 2" in note for note in record.notes)
    assert_no_nan(record)


def test_without_judge_or_human_grades_there_is_no_value_and_a_reason():
    data = OutputUnits(output_id=[1, 2], labeled=[False, False], d=[3, 4])
    record = estimate_unit_metric("hallucination_rate", data, confidence=0.9)
    assert not record.has_value and record.point is None
    assert record.reason == "no human-graded output and no judge scores"


def test_zero_denominators_give_a_record_with_a_reason_not_nan():
    # No output cites a chunk: citation precision is 0/0.
    data = OutputUnits(
        output_id=np.arange(4),
        labeled=[True, True, False, False],
        d=[0, 0, 0, 0],
        f_num=[0, 0, 0, 0],
        h_num=[0, 0, NAN, NAN],
    )
    record = estimate_unit_metric("citation_precision_strict", data, confidence=0.9)
    assert not record.has_value
    assert "0/0" in record.reason
    assert record.human_only is None and record.judge_only is None


def test_no_human_judge_denominator_for_a_graded_metric_is_a_reason_not_nan():
    # Guidance precision: the graded outputs flagged nothing (0 flagged items).
    data = OutputUnits(
        output_id=np.arange(4),
        labeled=[True, True, False, False],
        f_num=[0, 0, 1, 0],
        f_den=[0, 0, 1, 1],
        h_num=[0, 0, NAN, NAN],
        h_den=[0, 0, NAN, NAN],
    )
    record = estimate_unit_metric("guidance_precision", data, confidence=0.9)
    assert record.mode == "J" and record.has_value
    assert any("no human-only interval" in note and "0/0" in note for note in record.notes)
    assert any("no PPI interval" in note for note in record.notes)
    assert_no_nan(record)


def test_guidance_recall_counts_mandatory_items_only_against_a_hand_calculation():
    # Five outputs, four guidance items each: 15 mandatory items breached, 13 of them
    # flagged; 5 non-mandatory items breached, 2 flagged; the rest sound and not flagged.
    # By hand, over mandatory items (SPEC §4): 13 / 15 = 86.67 %; counting every item, as
    # before: (13 + 2) / (15 + 5) = 75.00 %.
    output_index = np.repeat(np.arange(5), 4)
    mandatory = np.tile([1, 1, 1, 0], 5)
    breached = np.tile([1, 1, 1, 1], 5)
    flagged = np.array([1, 1, 1, 1] * 2 + [1, 1, 0, 0] * 2 + [1, 1, 1, 0])
    assert flagged[mandatory == 1].sum() == 13 and flagged[mandatory == 0].sum() == 2
    kwargs = {"output_index": output_index, "flagged": flagged, "breached": breached}
    mandatory_only = guidance_counts(**kwargs, n_outputs=5, measure="recall", mandatory=mandatory)
    every_item = guidance_counts(**kwargs, n_outputs=5, measure="recall")
    assert mandatory_only.numerator.sum() / mandatory_only.denominator.sum() == 13 / 15
    assert every_item.numerator.sum() / every_item.denominator.sum() == 15 / 20
    data = OutputUnits(
        output_id=[f"o{i}" for i in range(5)],
        labeled=[True] * 5,
        h_num=mandatory_only.numerator,
        h_den=mandatory_only.denominator,
    )
    record = estimate_unit_metric("guidance_recall", data, confidence=0.95)
    assert round(record.point, 2) == 86.67 and record.n == 15
    # precision still reads every flagged item: 15 truly breached of 15 flagged
    precision = guidance_counts(**kwargs, n_outputs=5, measure="precision", mandatory=mandatory)
    assert precision.numerator.sum() == precision.denominator.sum() == 15


def test_a_human_only_guidance_recall_record_uses_the_graded_denominator():
    # No judge scored breaches (the LLM judge asks only "flagged"), so human-only:
    # caught/breached = (2 + 1 + 0)/(2 + 2 + 1) = 0.6 over 3 outputs.
    data = OutputUnits(
        output_id=["o1", "o2", "o3"],
        labeled=[True, True, True],
        h_num=[2, 1, 0],
        h_den=[2, 2, 1],
    )
    record = estimate_unit_metric("guidance_recall", data, confidence=0.9, kappa=0.71)
    assert (record.mode, record.point, record.n, record.n_clusters) == ("H", 60.0, 5, 3)
    assert record.kappa == 0.71 and record.judge_only is None
    assert not record.under_sampled


def test_every_output_graded_keeps_the_human_only_interval():
    sim = simulated_outputs(12, 120, 120)
    record = estimate_unit_metric("hallucination_rate", units_from(sim), confidence=0.9)
    assert record.mode == "H"
    assert any("every output is human-graded" in note for note in record.notes)


def test_a_rare_defect_under_ppi_gets_an_interval_inside_the_range_and_off_zero():
    # A rare event: 1 hallucination in 110 graded outputs, a judge that flags nothing.
    big_n = 400
    h = np.full(big_n, NAN)
    h[:110] = 0.0
    h[0] = 1.0
    data = OutputUnits(
        output_id=np.arange(big_n),
        labeled=np.arange(big_n) < 110,
        d=np.full(big_n, 5),
        f_num=np.zeros(big_n),
        h_num=h,
    )
    record = estimate_unit_metric("hallucination_rate", data, confidence=0.95)
    # The old normal interval was [−0.17, 0.53] %, clipped at 0; Korn–Graubard on the 550
    # graded sentences (t(109)) puts the upper limit where one defect in 550 puts it.
    assert record.mode == "PPI" and 0.0 < record.lo < record.point < record.hi < 100.0
    # (n_eff = p̂(1 − p̂)/v̂ ≈ 553 is capped at the 550 graded sentences.)
    expected = kg_reference(1 / 550, 0.0, 550, 109, 0.05)
    assert record.hi == pytest.approx(100 * expected[1], rel=0.05)
    assert not any("clipped" in note for note in record.notes)
    assert "λ̂ = 0.00" in record.estimator
    assert record.human_only is not None and record.human_only.lo >= 0.0


def test_key_element_capture_record_is_a_percentage_of_per_output_shares():
    data = OutputUnits(
        output_id=np.arange(4), labeled=[True] * 4, d=[2, 2, 4, 3], h_num=[2, 1, 3, 3]
    )
    record = estimate_unit_metric("key_element_capture", data, confidence=0.95, planned_n=11)
    assert record.point == pytest.approx(81.25)
    assert (record.n, record.under_sampled) == (11, False)


@pytest.mark.parametrize(
    ("metric_id", "changes", "field"),
    [
        ("hallucination_rate", {"d": None}, "d"),
        ("hallucination_rate", {"h_den": [1, NAN]}, "h_den"),
        ("guidance_recall", {}, "d"),
        ("coverage", {}, "metric_id"),
    ],
)
def test_the_record_refuses_fields_that_do_not_fit_the_metric(metric_id, changes, field):
    fields = {"output_id": [1, 2], "labeled": [True, False], "d": [2, 2], "h_num": [1, NAN]}
    fields.update(changes)
    with pytest.raises(ValueError, match=field):
        estimate_unit_metric(metric_id, OutputUnits(**fields), confidence=0.9)


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5])
def test_the_confidence_must_be_in_the_open_unit_interval(confidence):
    data = OutputUnits(output_id=[1, 2], labeled=[True, True], d=[2, 2], h_num=[1, 0])
    with pytest.raises(ValueError, match="confidence"):
        unit_metric_intervals("hallucination_rate", data, confidence=confidence)


def test_every_unit_metric_is_a_percent_metric_of_the_catalogue():
    from charters.catalogue import catalogue_metric

    for metric_id in UNIT_METRICS:
        assert catalogue_metric(metric_id).scale == "percent"


def test_a_ppi_estimate_below_zero_gates_on_the_human_only_interval_and_says_why():
    # 100 graded outputs of one sentence: the judge flags 10, the humans confirm 1; the
    # judge flags none of the 300 others. λ̂ ≈ 0.28, so θ̂ = 0.01 − 0.28·0.10 < 0: no
    # Korn–Graubard interval exists around it, and the gate keeps the human-only one.
    f = np.zeros(400)
    f[:10] = 1.0
    h = np.full(400, NAN)
    h[:100] = 0.0
    h[0] = 1.0
    data = OutputUnits(
        output_id=np.arange(400), labeled=np.arange(400) < 100, d=np.ones(400), f_num=f, h_num=h
    )
    record = estimate_unit_metric("hallucination_rate", data, confidence=0.9)
    human = human_only_ratio(data, alpha=0.1).interval(100.0)
    assert record.mode == "H"
    assert (record.lo, record.hi) == pytest.approx((human.lo, human.hi), rel=1e-12)
    assert any("no PPI interval" in note and "outside [0, 1]" in note for note in record.notes)


def test_ppi_ratio_of_one_unit_per_output_is_the_stats_cores_ppi_proportion_ci():
    from enterpriseval.stats import ppi_proportion_ci

    rng = np.random.default_rng(21)
    truth = (rng.random(500) < 0.05).astype(float)
    judge = np.where(rng.random(500) < 0.08, 1 - truth, truth)
    labeled = np.zeros(500, dtype=bool)
    labeled[rng.choice(500, 120, replace=False)] = True
    data = OutputUnits(
        output_id=np.arange(500),
        labeled=labeled,
        d=np.ones(500),
        f_num=judge,
        h_num=np.where(labeled, truth, NAN),
    )
    estimate = ppi_ratio(data, alpha=0.1)
    expected = ppi_proportion_ci(truth[labeled], judge[labeled], judge[~labeled], alpha=0.1)
    assert (estimate.lo, estimate.hi) == pytest.approx(expected, rel=1e-9)
