"""Agreement on each metric's criterion, its prevalence profile and Gwet's AC1 (SPEC §5.1).

Checked against scikit-learn and the ``krippendorff`` package on the collapsed categories,
2 × 2 tables worked by hand, Gwet's (2008) two-rater formula computed separately here, and the
closed form of the kappa paradox.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from charters.catalogue import catalogue
from grading.agreement import (
    COHEN_KAPPA,
    KRIPPENDORFF_ALPHA,
    AgreementRule,
    UnitRatings,
    agreement_rule,
    at_least_text,
    below_text,
    binary_profile,
    compared_text,
    criterion_agreement,
    metric_agreements,
    metric_criteria,
    metric_eligibility,
    rating_matrix,
)
from grading.rubric import FIELDS_BY_NAME


def rows_of(field, pairs, *, per_artefact=1, raters=("ann", "bob")):
    return [
        UnitRatings(
            artefact=i // per_artefact,
            unit_key=f"s{i}",
            field=field,
            ratings=dict(zip(raters, labels, strict=True)),
        )
        for i, labels in enumerate(pairs)
    ]


def criterion(metric_id, name):
    return next(c for c in metric_criteria(metric_id) if c.name == name)


def two_by_two(a, b, c, d):
    """Pairs for a 2 × 2 table: a both positive, b only the first, c only the second, d neither."""
    return [(1, 1)] * a + [(1, 0)] * b + [(0, 1)] * c + [(0, 0)] * d


def gwet_ac1_two_raters(first, second):
    """Gwet (2008) Eq. 17 for two raters and two categories, from the 2 × 2 table."""
    first, second = np.asarray(first), np.asarray(second)
    p_a = np.mean(first == second)
    q = (first.mean() + second.mean()) / 2  # mean share positive of the two raters
    p_e = 2 * q * (1 - q)
    return (p_a - p_e) / (1 - p_e)


# --------------------------------------------------------------------------- criteria table


def test_every_criterion_names_a_rubric_field_and_values_of_that_field():
    for metric in catalogue().values():
        for item in metric.criteria:
            values = set(FIELDS_BY_NAME[item.field].values)
            assert item.positive and item.positive < values, (metric.id, item.name)


def test_the_criteria_are_the_ones_each_metric_uses():
    assert {c.name: c.positive for c in metric_criteria("hallucination_rate")} == {
        "assertive": {"Y"},
        "supported": {"fully", "partially"},
    }
    assert criterion("citation_precision_lenient", "citation_used").positive == {
        "strict",
        "lenient",
    }
    assert criterion("citation_precision_strict", "citation_strict").positive == {"strict"}
    assert metric_criteria("completeness") == ()
    # the optional artefact fields (SPEC §4.1): read only when the charter asks them
    assert {c.field: c.positive for c in metric_criteria("pass_hat_k")} == {"acceptable": {"Y"}}
    assert criterion("classification_accuracy", "label_correct").positive == {"Y"}


# --------------------------------------------------------------------------- collapsed agreement


def test_hallucination_rate_reads_partially_as_supported_not_the_three_level_scale():
    rng = np.random.default_rng(11)
    truth = rng.choice(["fully", "partially", "not"], size=300, p=[0.6, 0.3, 0.1])
    swap = {"fully": "partially", "partially": "fully", "not": "not"}
    second = np.where(rng.random(300) < 0.3, [swap[t] for t in truth], truth)
    second = np.where(rng.random(300) < 0.05, "not", second)
    rows = rows_of("supported", zip(truth, second, strict=True), per_artefact=6)
    matrix = rating_matrix(rows, "supported")
    result = criterion_agreement(
        matrix, criterion("hallucination_rate", "supported"), metric_id="hallucination_rate"
    )
    first_bin = truth != "not"
    second_bin = second != "not"
    assert result.statistic == COHEN_KAPPA
    assert result.point == pytest.approx(cohen_kappa_score(first_bin, second_bin), abs=1e-12)
    # the fully/partially swaps do not count against the criterion
    full_scale = cohen_kappa_score(truth, second)
    assert result.point > full_scale + 0.2


def test_lenient_precision_ignores_the_strict_lenient_split_that_strict_precision_uses():
    pairs = [("strict", "lenient")] * 30 + [("strict", "strict")] * 20
    pairs += [("not", "not")] * 15 + [("lenient", "not")] * 5
    matrix = rating_matrix(rows_of("citation", pairs, per_artefact=5), "citation")
    lenient = criterion_agreement(
        matrix,
        criterion("citation_precision_lenient", "citation_used"),
        metric_id="citation_precision_lenient",
    )
    strict = criterion_agreement(
        matrix,
        criterion("citation_precision_strict", "citation_strict"),
        metric_id="citation_precision_strict",
    )
    first = np.array([p[0] for p in pairs])
    second = np.array([p[1] for p in pairs])
    assert lenient.point == pytest.approx(
        cohen_kappa_score(first != "not", second != "not"), abs=1e-12
    )
    assert strict.point == pytest.approx(
        cohen_kappa_score(first == "strict", second == "strict"), abs=1e-12
    )
    assert lenient.point > 0.7 > strict.point


def test_missing_ratings_give_nominal_alpha_on_the_collapsed_values_as_krippendorff_does():
    rng = np.random.default_rng(5)
    values = ["fully", "partially", "not"]
    rows = []
    data = np.full((3, 90), np.nan)
    for unit in range(90):
        graders = rng.choice(3, size=2, replace=False)
        ratings = {}
        for g in graders:
            label = values[rng.integers(3)] if rng.random() < 0.3 else values[unit % 3]
            ratings[int(g)] = label
            data[g, unit] = float(label != "not")
        rows.append(UnitRatings(unit // 3, f"s{unit}", "supported", ratings))
    result = criterion_agreement(
        rating_matrix(rows, "supported"),
        criterion("hallucination_rate", "supported"),
        metric_id="hallucination_rate",
        n_resamples=20,
    )
    assert result.statistic == KRIPPENDORFF_ALPHA
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert result.point == pytest.approx(expected, abs=1e-9)


# --------------------------------------------------------------------------- profile and AC1


def test_prevalence_and_positive_and_negative_agreement_match_the_two_by_two_table():
    a, b, c, d = 6, 3, 5, 86
    codes = np.asarray(two_by_two(a, b, c, d), dtype=float)
    profile = binary_profile(codes)
    assert profile.prevalence == pytest.approx((2 * a + b + c) / (2 * (a + b + c + d)))
    assert profile.positive_agreement == pytest.approx(2 * a / (2 * a + b + c))
    assert profile.negative_agreement == pytest.approx(2 * d / (2 * d + b + c))
    assert profile.percent_agreement == pytest.approx(100 * (a + d) / (a + b + c + d))


def test_ac1_matches_gwets_two_rater_formula_computed_separately():
    rng = np.random.default_rng(3)
    first = (rng.random(250) < 0.07).astype(int)
    second = np.where(rng.random(250) < 0.05, 1 - first, first)
    profile = binary_profile(np.column_stack([first, second]).astype(float))
    assert profile.ac1 == pytest.approx(gwet_ac1_two_raters(first, second), abs=1e-12)


def test_ac1_of_a_table_worked_by_hand_where_kappa_is_negative():
    # Two raters, 2 × 2 table a = 118, b = 5, c = 2, d = 0 (n = 125), Gwet (2008) Eq. 17:
    # p_a = 0.944, q = (123/125 + 120/125)/2 = 0.972, p_e = 2·0.972·0.028 = 0.054432,
    # AC1 = (0.944 − 0.054432)/(1 − 0.054432) ≈ 0.9408 while κ ≈ −0.0236.
    codes = np.asarray(two_by_two(118, 5, 2, 0), dtype=float)
    profile = binary_profile(codes)
    assert profile.ac1 == pytest.approx((0.944 - 0.054432) / (1 - 0.054432), abs=1e-12)
    assert profile.ac1 == pytest.approx(0.9408, abs=5e-5)
    kappa = cohen_kappa_score(codes[:, 0], codes[:, 1])
    assert kappa < 0 < profile.ac1


def test_the_kappa_paradox_two_accurate_graders_at_two_percent_prevalence_have_kappa_048():
    prevalence, error = 0.02, 0.02
    # closed form: each grader flips the true label with probability e, independently
    positive = prevalence * (1 - error) + (1 - prevalence) * error
    observed = (1 - error) ** 2 + error**2
    expected = positive**2 + (1 - positive) ** 2
    closed_kappa = (observed - expected) / (1 - expected)
    closed_ac1 = (observed - 2 * positive * (1 - positive)) / (1 - 2 * positive * (1 - positive))
    assert closed_kappa == pytest.approx(0.48, abs=0.005)

    rng = np.random.default_rng(2026)
    n = 200_000
    truth = rng.random(n) < prevalence
    graders = [np.where(rng.random(n) < error, ~truth, truth) for _ in range(2)]
    labels = [np.where(g, "not", "fully") for g in graders]  # the defect: not supported
    rows = rows_of("supported", zip(*labels, strict=True), per_artefact=n // 2)
    result = criterion_agreement(
        rating_matrix(rows, "supported"),
        criterion("hallucination_rate", "supported"),
        metric_id="hallucination_rate",
        n_resamples=1,
    )
    assert result.point == pytest.approx(closed_kappa, abs=0.02)
    assert result.profile.ac1 == pytest.approx(closed_ac1, abs=0.005)
    assert result.profile.ac1 > 0.95
    assert result.low_prevalence
    assert result.profile.prevalence == pytest.approx(1 - positive, abs=0.002)  # "fully" share


# --------------------------------------------------------------------------- rules and text


def test_rounding_never_contradicts_the_comparison():
    assert below_text(0.5986, 0.6) == "0.599 < 0.60"
    assert below_text(0.59999, 0.6) == "0.59999 < 0.60"
    assert below_text(0.41, 0.6) == "0.41 < 0.60"
    assert at_least_text(0.6, 0.6) == "0.60 ≥ 0.60"
    assert at_least_text(0.6049, 0.6) == "0.60 ≥ 0.60"
    assert compared_text(0.5986, 0.6) == "0.599"
    assert below_text(0.62, 0.625) == "0.62 < 0.625"
    with pytest.raises(ValueError, match="not below"):
        below_text(0.6, 0.6)


def test_the_ac1_rule_reads_ac1_and_the_kappa_rule_reads_kappa():
    rng = np.random.default_rng(9)
    n = 2000
    truth = rng.random(n) < 0.02
    first = np.where(rng.random(n) < 0.02, ~truth, truth)
    second = np.where(rng.random(n) < 0.02, ~truth, truth)
    rows = rows_of(
        "relevant",
        zip(np.where(first, "N", "Y"), np.where(second, "N", "Y"), strict=True),
        per_artefact=20,
    )
    (relevant,) = metric_agreements(rows, ["irrelevance_rate"], n_resamples=50)["irrelevance_rate"]
    assert relevant.point < 0.6 < relevant.profile.ac1
    by_kappa = metric_eligibility("irrelevance_rate", [relevant], AgreementRule("kappa", 0.6))
    by_ac1 = metric_eligibility("irrelevance_rate", [relevant], AgreementRule("ac1", 0.8))
    assert not by_kappa.eligible and by_ac1.eligible
    assert by_ac1.reasons == (f"relevant AC1 = {compared_text(relevant.profile.ac1, 0.8)} ≥ 0.80",)
    record = by_ac1.to_dict()
    assert record["rule"] == "ac1" and record["threshold"] == 0.8 and record["eligible"]
    assert record["criteria"][0]["ac1"] == pytest.approx(relevant.profile.ac1, abs=1e-6)
    assert record["criteria"][0]["low_prevalence"] is True


def test_no_agreement_figure_is_not_eligible():
    verdict = metric_eligibility("irrelevance_rate", [], AgreementRule("kappa", 0.6))
    assert not verdict.eligible
    assert "no agreement figure" in verdict.reason


def test_a_charter_without_a_rule_reads_the_default_kappa_rule():
    assert agreement_rule(None, 0.7) == AgreementRule("kappa", 0.7)
    assert agreement_rule({"rule": "kappa"}, 0.6) == AgreementRule("kappa", 0.6)
    assert agreement_rule({"rule": "ac1", "threshold": 0.8}, 0.6) == AgreementRule("ac1", 0.8)
