"""The example's simulated graders: true labels from the planted truth, known error rates."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from examples.credit_memo import make_grades
from grading.rubric import FIELDS_BY_KIND, is_asked, unit_kind_of


def _all_truths():
    guidance = make_grades.task_guidance()
    truths = []
    for sigma in ("gemini-2-5", "llama-4"):
        for (task_id, _repeat), record in sorted(make_grades.truth_records(sigma).items()):
            truths.append((record, make_grades.true_grades(record, guidance[task_id])))
    return truths


def test_true_labels_follow_the_planted_defects():
    for record, truth in _all_truths():
        unsupported = sum(1 for s in record["sentences"] if s["defect"] == "unsupported")
        assert unsupported == sum(
            1 for key, unit in truth.items() if key.startswith("s") and unit["supported"] == "not"
        )
        wrong = sum(1 for s in record["sentences"] if s["citation_lenient"] is False)
        assert wrong == sum(1 for unit in truth.values() if unit.get("citation") == "not")
        for item_id, item in record["guidance"].items():
            label = truth[f"g:{item_id}"]["guidance"]
            assert (label in ("TP", "FN")) == item["breached"]
            assert (label in ("TP", "FP")) == item["flagged"]
        for key, unit in truth.items():
            assert {spec.name for spec in FIELDS_BY_KIND[unit_kind_of(key)]} >= set(unit)


def test_a_simulated_grader_errs_at_its_stated_rate():
    rng = np.random.default_rng(7)
    truths = [truth for _record, truth in _all_truths()]
    for rate in (0.04, 0.15):
        asked = flipped = 0
        for truth in truths:
            answers = make_grades.simulate(truth, rate, rng)
            for key, unit in answers.items():
                for field, value in unit.items():
                    if field in ("supported", "severity") and not is_asked(field, truth[key]):
                        continue  # asked only because an earlier answer was wrong
                    asked += 1
                    flipped += value != truth[key][field]
        interval = binomtest(flipped, asked, rate).proportion_ci(confidence_level=0.999)
        assert interval.low <= rate <= interval.high, (rate, flipped / asked)


def test_the_expected_alpha_of_a_binary_field_matches_the_hand_calculation():
    """Large-sample nominal α of two graders with error rates e1, e2 on prevalence π:
    1 − P(disagree) / (2·p̄·(1 − p̄)) with p̄ the pooled share of "Y"."""
    truths = [truth for _record, truth in _all_truths()]
    first, second = make_grades.GRADERS[0], make_grades.GRADERS[2]
    draws = make_grades.expected_agreement_draws(
        truths, [(first, second)] * len(truths), ["relevant"], draws=60
    )["relevant"]
    labels = [unit["relevant"] for t in truths for key, unit in t.items() if key.startswith("s")]
    prevalence = labels.count("Y") / len(labels)
    e1, e2 = first.error_rate, second.error_rate
    q1 = (1 - e1) * prevalence + e1 * (1 - prevalence)
    q2 = (1 - e2) * prevalence + e2 * (1 - prevalence)
    pooled = (q1 + q2) / 2
    expected = 1 - (e1 * (1 - e2) + e2 * (1 - e1)) / (2 * pooled * (1 - pooled))
    assert draws.mean() == pytest.approx(expected, abs=0.02)
    assert draws.std() > 0


def test_the_same_grader_on_the_same_output_answers_the_same_way():
    grader = make_grades.GRADERS[1]
    first = make_grades.grader_answers(grader, "llama-4", "G1-transaction_overview", 0)
    second = make_grades.grader_answers(grader, "llama-4", "G1-transaction_overview", 0)
    assert first == second
