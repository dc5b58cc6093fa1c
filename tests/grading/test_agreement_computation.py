"""Agreement per rubric field, metric eligibility, grader statistics and judge calibration.

The pure :mod:`grading.agreement`, checked against scikit-learn, the ``krippendorff``
package and hand computations.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from charters.catalogue import catalogue
from enterpriseval.stats import cluster_mean_ci
from grading.agreement import (
    COHEN_KAPPA,
    JUDGE_CRITERIA,
    KRIPPENDORFF_ALPHA,
    METRIC_FIELDS,
    ORDINAL_ORDER,
    AgreementRule,
    UnitRatings,
    cluster_bootstrap,
    compared_text,
    field_agreement,
    grader_statistics,
    human_criterion_scores,
    judge_calibration,
    metric_agreements,
    metric_eligibility,
    percent_agreement,
    rating_matrix,
    session_agreement,
)
from grading.rubric import FIELDS, FIELDS_BY_NAME

SUPPORTED = ("not", "partially", "fully")


def rows_of(field, pairs, *, per_artefact=1, raters=("ann", "bob")):
    """Rows of ``field`` rated by ``raters`` (a tuple per unit), ``per_artefact`` units each."""
    return [
        UnitRatings(
            artefact=i // per_artefact,
            unit_key=f"s{i}",
            field=field,
            ratings=dict(zip(raters, labels, strict=True)),
        )
        for i, labels in enumerate(pairs)
    ]


def simulated(field, *, n_artefacts, units_each, error, seed, raters=3, per_unit=2):
    """Rows where each unit's ``per_unit`` graders (rotating) mislabel with rate ``error``."""
    rng = np.random.default_rng(seed)
    values = FIELDS_BY_NAME[field].values
    rows = []
    for artefact in range(n_artefacts):
        graders = rng.choice(raters, size=per_unit, replace=False)
        for unit in range(units_each):
            truth = values[rng.integers(len(values))]
            ratings = {
                int(g): values[rng.integers(len(values))] if rng.random() < error else truth
                for g in graders
            }
            rows.append(UnitRatings(artefact, f"s{unit}", field, ratings, truth))
    return rows


def test_two_graders_on_every_unit_get_cohens_kappa_as_scikit_learn_computes_it():
    rng = np.random.default_rng(7)
    a = rng.choice(["Y", "N"], size=60)
    b = np.where(rng.random(60) < 0.8, a, rng.choice(["Y", "N"], size=60))
    matrix = rating_matrix(rows_of("relevant", zip(a, b, strict=True), per_artefact=5), "relevant")
    result = field_agreement(matrix, n_resamples=50)
    assert result.statistic == COHEN_KAPPA and result.weights is None
    assert result.label == "Cohen's κ"
    assert result.point == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert (result.n_units, result.n_artefacts, result.n_raters) == (60, 12, 2)
    assert result.percent_agreement == pytest.approx(100 * np.mean(a == b))


def test_an_ordinal_field_gets_quadratic_weights_in_scale_order():
    rng = np.random.default_rng(8)
    a = rng.choice(SUPPORTED, size=80)
    b = np.where(rng.random(80) < 0.7, a, rng.choice(SUPPORTED, size=80))
    result = field_agreement(
        rating_matrix(rows_of("supported", zip(a, b, strict=True), per_artefact=4), "supported"),
        n_resamples=50,
    )
    expected = cohen_kappa_score(a, b, labels=list(SUPPORTED), weights="quadratic")
    assert result.statistic == COHEN_KAPPA and result.weights == "quadratic"
    assert result.point == pytest.approx(expected, abs=1e-12)


def test_a_hand_made_table_gives_the_kappa_of_the_textbook_formula():
    # 4 YY, 4 NN, 1 YN, 1 NY: p_o = 0.8, p_e = 0.5·0.5 + 0.5·0.5 = 0.5, κ = 0.3 / 0.5 = 0.6
    pairs = [("Y", "Y")] * 4 + [("N", "N")] * 4 + [("Y", "N"), ("N", "Y")]
    result = field_agreement(rating_matrix(rows_of("assertive", pairs), "assertive"))
    assert result.point == pytest.approx(0.6, abs=1e-12)
    assert result.percent_agreement == pytest.approx(80.0)
    assert result.passes(0.6) and not result.passes(0.61)


def test_rotating_graders_get_krippendorffs_alpha_as_the_reference_package_computes_it():
    rows = simulated("supported", n_artefacts=25, units_each=6, error=0.3, seed=3)
    matrix = rating_matrix(rows, "supported")
    result = field_agreement(matrix, n_resamples=50)
    assert result.statistic == KRIPPENDORFF_ALPHA and result.level == "ordinal"
    assert result.label == "Krippendorff's α (ordinal)"
    assert matrix.codes.shape == (150, 3)
    reliability = np.array([[u.ratings.get(g) for u in rows] for g in matrix.raters], dtype=object)
    coded = np.vectorize(lambda v: np.nan if v is None else SUPPORTED.index(v), otypes=[float])(
        reliability
    )
    expected = krippendorff.alpha(
        reliability_data=coded, level_of_measurement="ordinal", value_domain=[0, 1, 2]
    )
    assert result.point == pytest.approx(expected, abs=1e-9)


def test_a_rating_not_asked_of_one_of_two_graders_switches_to_alpha():
    pairs = [("fully", "fully"), ("not", "not"), ("fully", None), ("partially", "fully")] * 5
    matrix = rating_matrix(rows_of("supported", pairs, per_artefact=2), "supported")
    result = field_agreement(matrix, n_resamples=50)
    assert result.statistic == KRIPPENDORFF_ALPHA
    assert result.n_units == 15  # the five units with one rating are not pairable
    coded = np.array(
        [
            [np.nan if v is None else SUPPORTED.index(v) for v in column]
            for column in zip(*pairs, strict=True)
        ]
    )
    expected = krippendorff.alpha(
        reliability_data=coded, level_of_measurement="ordinal", value_domain=[0, 1, 2]
    )
    assert result.point == pytest.approx(expected, abs=1e-9)


def test_percent_agreement_counts_agreeing_pairs_within_each_unit():
    codes = np.array([[0, 0, 1], [1, 1, 1], [0, np.nan, 1], [0, np.nan, np.nan]])
    # unit 1: 1 of 3 pairs agree; unit 2: 3 of 3; unit 3: 0 of 1; unit 4 is not pairable
    assert percent_agreement(codes) == pytest.approx(100 * (1 / 3 + 1 + 0) / 3)
    assert np.isnan(percent_agreement(np.array([[0, np.nan]])))


def test_the_bootstrap_interval_holds_the_point_and_narrows_with_more_artefacts():
    small = field_agreement(
        rating_matrix(
            simulated("relevant", n_artefacts=15, units_each=5, error=0.25, seed=1), "relevant"
        ),
        rng=11,
    )
    large = field_agreement(
        rating_matrix(
            simulated("relevant", n_artefacts=240, units_each=5, error=0.25, seed=1), "relevant"
        ),
        rng=11,
    )
    for result in (small, large):
        assert result.lo <= result.point <= result.hi
        assert result.n_resamples + result.n_degenerate == 1000
    assert (large.hi - large.lo) < 0.5 * (small.hi - small.lo)


def test_the_same_seed_gives_the_same_interval_and_another_seed_another():
    matrix = rating_matrix(
        simulated("citation", n_artefacts=30, units_each=4, error=0.3, seed=5), "citation"
    )
    first = field_agreement(matrix, rng=42, n_resamples=300)
    again = field_agreement(matrix, rng=np.random.default_rng(42), n_resamples=300)
    other = field_agreement(matrix, rng=43, n_resamples=300)
    assert (first.lo, first.hi) == (again.lo, again.hi)
    assert (first.lo, first.hi) != (other.lo, other.hi)
    assert first.point == other.point


def test_the_bootstrap_resamples_whole_artefacts():
    codes = np.arange(10, dtype=float)[:, np.newaxis]
    clusters = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 3])
    values, dropped = cluster_bootstrap(
        codes, clusters, lambda c: float(c.sum()), n_resamples=200, rng=np.random.default_rng(9)
    )
    draws = np.random.default_rng(9).integers(0, 4, size=(200, 4))
    totals = np.array([codes[clusters == g].sum() for g in range(4)])
    assert dropped == 0
    np.testing.assert_allclose(values, totals[draws].sum(axis=1))


def test_resamples_where_the_statistic_is_undefined_are_dropped_and_counted():
    # Only artefact 0 holds an "N": a resample that misses it has one category, κ undefined.
    pairs = [("N", "N"), ("Y", "N"), ("Y", "Y"), ("Y", "Y"), ("Y", "Y"), ("Y", "Y")]
    result = field_agreement(
        rating_matrix(rows_of("relevant", pairs, per_artefact=2), "relevant"), rng=4
    )
    assert result.n_degenerate + result.n_resamples == 1000
    assert result.n_degenerate == pytest.approx(1000 * (2 / 3) ** 3, rel=0.25)
    assert np.isfinite(result.lo) and np.isfinite(result.hi)


def test_undefined_agreement_has_no_interval_and_blocks_its_metrics():
    everyone_yes = [("Y", "Y")] * 8
    rows = rows_of("relevant", everyone_yes, per_artefact=2)
    agreements = session_agreement(rows)
    relevant = agreements["relevant"]
    assert np.isnan(relevant.point) and not relevant.has_interval and not relevant.passes(0.0)
    assert relevant.n_resamples == relevant.n_degenerate == 0
    assert agreements["guidance"].n_units == 0
    measured = metric_agreements(rows, ["irrelevance_rate"])["irrelevance_rate"]
    verdict = metric_eligibility("irrelevance_rate", measured, AgreementRule("kappa", 0.6))
    assert not verdict.eligible
    assert verdict.reason == (
        "rubric needs revision: relevant κ undefined (8 units with two ratings)"
    )


def test_a_metric_is_eligible_only_if_every_criterion_it_uses_reaches_the_target():
    good = simulated("assertive", n_artefacts=40, units_each=5, error=0.05, seed=2)
    poor = simulated("supported", n_artefacts=40, units_each=5, error=0.6, seed=2)
    measured = metric_agreements(
        good + poor, ["hallucination_rate", "completeness"], n_resamples=100
    )
    assert set(measured) == {"hallucination_rate"}
    assertive, supported = measured["hallucination_rate"]
    assert assertive.point >= 0.6 > supported.point
    hallucination = metric_eligibility(
        "hallucination_rate", measured["hallucination_rate"], AgreementRule("kappa", 0.6)
    )
    assert not hallucination.eligible and hallucination.blocking == ("supported",)
    alpha = supported.point
    assert f"supported α = {compared_text(alpha, 0.6)} < 0.60" in hallucination.reason
    lenient = metric_eligibility(
        "hallucination_rate", measured["hallucination_rate"], AgreementRule("kappa", alpha - 0.01)
    )
    assert lenient.eligible and lenient.blocking == ()


def test_the_seed_fixes_every_field_independently_of_the_others():
    relevant = simulated("relevant", n_artefacts=20, units_each=3, error=0.2, seed=6)
    extra = simulated("citation", n_artefacts=50, units_each=3, error=0.2, seed=7)
    alone = session_agreement(relevant, n_resamples=100, seed=5)["relevant"]
    together = session_agreement(relevant + extra, n_resamples=100, seed=5)["relevant"]
    assert (alone.lo, alone.hi) == (together.lo, together.hi)


def test_grader_statistics_count_labels_and_agreement_with_the_final_value():
    rows = [
        UnitRatings(1, "s1", "supported", {"ann": "not", "bob": "fully"}, "not"),
        UnitRatings(1, "s2", "supported", {"ann": "fully", "bob": "fully"}, "fully"),
        UnitRatings(2, "s1", "supported", {"ann": "not", "bob": None}, None),
        UnitRatings(2, "k:ke1", "key_element", {"ann": "absent", "bob": "absent"}, "absent"),
    ]
    stats = grader_statistics(rows)
    ann, bob = stats["ann"]["supported"], stats["bob"]["supported"]
    assert ann.n_ratings == 3 and ann.rate("not") == pytest.approx(2 / 3)
    assert ann.label_rates == pytest.approx({"not": 2 / 3, "partially": 0.0, "fully": 1 / 3})
    assert (ann.n_with_final, ann.n_agree_final) == (2, 2)
    assert (bob.n_with_final, bob.n_agree_final, bob.agreement_with_final) == (2, 1, 0.5)
    assert stats["bob"]["key_element"].rate("absent") == 1.0


def test_judge_calibration_gives_kappa_and_bias_on_the_units_both_scored():
    rng = np.random.default_rng(12)
    human_rows, judge = [], {}
    for artefact in range(20):
        for unit in range(6):
            label = rng.choice(SUPPORTED)
            human_rows.append(UnitRatings(artefact, f"s{unit}", "supported", {"ann": label}, label))
            h = float(label != "not")
            judge[(artefact, f"s{unit}", "supported")] = h if rng.random() < 0.8 else 1.0
    judge[(99, "s1", "supported")] = 1.0  # never graded by a human: left out
    human = human_criterion_scores(human_rows)
    rows = {row.criterion: row for row in judge_calibration(judge, human, confidence=0.9)}
    assert list(rows) == list(JUDGE_CRITERIA)
    keys = sorted(human)
    f = np.array([judge[k] for k in keys])
    h = np.array([human[k] for k in keys])
    supported = rows["supported"]
    assert (supported.n_units, supported.n_artefacts) == (120, 20)
    assert supported.kappa == pytest.approx(cohen_kappa_score(f, h), abs=1e-12)
    assert supported.bias == pytest.approx(np.mean(f - h)) and supported.bias > 0
    assert supported.percent_agreement == pytest.approx(100 * np.mean(f == h))
    ci = cluster_mean_ci(f - h, [k[0] for k in keys], alpha=0.1)
    assert (supported.bias_lo, supported.bias_hi) == pytest.approx((ci.lo, ci.hi))
    assert rows["assertive"].n_units == 0 and np.isnan(rows["assertive"].kappa)


def test_human_citation_and_guidance_labels_map_to_the_judge_criteria():
    rows = [
        UnitRatings(1, "c2:SRC-1", "citation", {"ann": "lenient"}, "lenient"),
        UnitRatings(1, "g:CP-01", "guidance", {"ann": "FN"}, "FN"),
        UnitRatings(1, "s1", "relevant", {"ann": "N", "bob": "Y"}, None),
    ]
    assert human_criterion_scores(rows) == {
        (1, "c2:SRC-1", "citation_strict"): 0.0,
        (1, "c2:SRC-1", "citation_lenient"): 1.0,
        (1, "g:CP-01", "flagged"): 0.0,
    }


def test_the_ordinal_order_and_the_metric_fields_match_the_rubric_and_the_catalogue():
    ordinal = {spec.name for spec in FIELDS if spec.level == "ordinal"}
    assert set(ORDINAL_ORDER) == ordinal
    for name, order in ORDINAL_ORDER.items():
        assert sorted(order) == sorted(FIELDS_BY_NAME[name].values)
    metrics = catalogue()
    for metric_id, fields in METRIC_FIELDS.items():
        assert metric_id in metrics and set(fields) <= set(FIELDS_BY_NAME)
    rubric_metrics = {
        m.id for m in metrics.values() if m.human_graded and m.unit != "trajectory"
    } - {"catch_rate", "false_acceptance_rate", "pass_hat_k"}
    assert rubric_metrics <= set(METRIC_FIELDS)


def test_a_label_outside_the_scale_is_refused_naming_the_unit():
    with pytest.raises(ValueError, match="supported of unit s0 is 'maybe'"):
        rating_matrix(rows_of("supported", [("maybe", "not")]), "supported")
