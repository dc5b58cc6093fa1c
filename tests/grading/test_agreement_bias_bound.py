"""A metric's bias bound from its criteria and the rule's verdict (SPEC §5.1)."""

from __future__ import annotations

import numpy as np
import pytest

from enterpriseval.stats import label_error_bound
from grading.agreement import (
    UnitRatings,
    agreement_rule,
    metric_bias_bound,
    metric_eligibility,
)


def relevance_rows(n: int, a_wrong: int, b_wrong: int) -> list[UnitRatings]:
    """n sentences all truly relevant; A says N on the first ``a_wrong``, B on the next."""
    rows = []
    for i in range(n):
        a = "N" if i < a_wrong else "Y"
        b = "N" if a_wrong <= i < a_wrong + b_wrong else "Y"
        rows.append(UnitRatings(artefact=i // 10, unit_key=f"s{i}", field="relevant",
                                ratings={"A": a, "B": b}, final="Y"))  # fmt: skip
    return rows


def test_the_metric_bound_is_the_criterion_bound_in_points_over_its_denominator():
    rows = relevance_rows(200, 2, 1)
    bias = metric_bias_bound(rows, "irrelevance_rate", confidence=0.975)
    ratings = np.array([[0.0 if i < 2 else 1.0, 0.0 if i == 2 else 1.0] for i in range(200)])
    direct = label_error_bound(ratings, np.ones(200), alpha=0.025)  # one criterion: all of α
    assert bias.upper == pytest.approx(100.0 * direct.upper_share, rel=1e-12)
    assert bias.point == pytest.approx(100.0 * direct.share, rel=1e-12)
    assert (bias.n_denominator, bias.factor) == (200, 1)
    record = bias.to_dict()
    assert record["criteria"][0]["errors"] == 3 and record["confidence_percent"] == 97.5


def test_two_criteria_share_alpha_and_add_their_wrong_labels():
    rows = []
    for i in range(100):
        rows.append(UnitRatings(i, f"s{i}", "assertive", {"A": "Y", "B": "Y"}, "Y"))
        rows.append(UnitRatings(i, f"s{i}", "supported", {"A": "fully", "B": "fully"}, "fully"))
    bias = metric_bias_bound(rows, "hallucination_rate", confidence=0.975)
    level = 0.025 / 2 / 2  # α/2 per criterion, then over the two graders' rates of one class
    zero_error = 1 - level ** (1 / 100)
    corrected = zero_error / (1 - zero_error)
    assert bias.upper == pytest.approx(100.0 * 2 * corrected**2, rel=1e-9)


def test_the_rule_reads_the_bound_against_the_fraction_of_the_gap():
    rows = relevance_rows(400, 1, 0)
    bias = metric_bias_bound(rows, "irrelevance_rate", confidence=0.975)
    tight = agreement_rule({"rule": "bias_bound", "fraction": 0.5}, 0.6, gap=5.0)
    verdict = metric_eligibility("irrelevance_rate", (), tight, bias=bias)
    assert bias.upper < 2.5 and verdict.eligible
    assert verdict.reasons[0].startswith("bias of the final labels ≤ ")
    assert "limit 0.50 × |θin − θout| = 2.50" in verdict.reasons[0]
    strict = agreement_rule({"rule": "bias_bound", "fraction": 0.001}, 0.6, gap=5.0)
    refused = metric_eligibility("irrelevance_rate", (), strict, bias=bias)
    assert not refused.eligible and "not below 0.001 × |θin − θout| = 0.005" in refused.reason
    record = verdict.to_dict()
    assert (record["rule"], record["threshold"], record["fraction"]) == ("bias_bound", 2.5, 0.5)
    assert record["bias"]["upper"] == pytest.approx(bias.upper, abs=1e-6)


def test_no_double_graded_unit_means_no_bound_and_not_eligible():
    rows = [UnitRatings(0, "s0", "relevant", {"A": "Y"}, "Y")]
    bias = metric_bias_bound(rows, "irrelevance_rate", confidence=0.975)
    assert not bias.defined and "no unit with two ratings" in bias.reason
    rule = agreement_rule({"rule": "bias_bound", "fraction": 0.5}, 0.6, gap=5.0)
    verdict = metric_eligibility("irrelevance_rate", (), rule, bias=bias)
    assert not verdict.eligible and "no bias bound" in verdict.reason
