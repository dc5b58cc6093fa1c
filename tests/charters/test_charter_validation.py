"""Charter validation (pure): thresholds, weights, coverage, intensity, planning (SPEC §5.3, §6)."""

from __future__ import annotations

import copy
import datetime as dt
import math
import subprocess
import sys
from pathlib import Path

import pytest

from charters.charter_document import document_from_text
from charters.validation import TaskSetSupply, charter_validate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "credit_memo" / "charter.yaml"
TODAY = dt.date(2026, 6, 1)


@pytest.fixture
def document() -> dict:
    return document_from_text(EXAMPLE.read_text(encoding="utf-8"), fmt="yaml")


def validate(document: dict, *, autonomy: int = 1, consequence: int = 3):
    return charter_validate(document, autonomy=autonomy, consequence=consequence, today=TODAY)


def metric(document: dict, metric_id: str) -> dict:
    return next(m for m in document["metrics"] if m["id"] == metric_id)


def errors_at(report, field: str) -> list[str]:
    return [issue.message for issue in report.errors if issue.field == field]


def test_the_credit_memo_example_charter_validates_with_no_errors_or_warnings(document):
    report = validate(document)
    assert report.ok, [issue.message for issue in report.errors]
    assert report.warnings == []
    assert report.intensity == 2
    assert report.normalised_weights == pytest.approx(
        {
            m: 1 / 6
            for m in (
                "citation_precision_lenient",
                "key_element_capture",
                "irrelevance_rate",
                "hallucination_rate",
                "guidance_precision",
                "guidance_recall",
            )
        }
    )
    assert report.alternative_weights["fidelity_heavy"] == pytest.approx(
        {
            "citation_precision_lenient": 0.25,
            "key_element_capture": 0.1125,
            "irrelevance_rate": 0.1125,
            "hallucination_rate": 0.30,
            "guidance_precision": 0.1125,
            "guidance_recall": 0.1125,
        }
    )
    assert report.requirements[1].startswith("E2: human grading with ≥ 2 graders")


def test_the_irrelevance_pair_printed_in_the_paper_is_an_inverted_pair(document):
    # SPEC §11: seed 003 Table 4 prints θout < 50, θin < 55 for a lower-is-better metric.
    metric(document, "irrelevance_rate")["theta_in"] = 55
    report = validate(document)
    assert not report.ok
    [message] = errors_at(report, "metrics[irrelevance_rate].theta_in")
    assert "irrelevance_rate" in message and "inverted pair" in message
    assert "θout = 50, θin = 55" in message
    assert "lower is better, so θin must be strictly below θout" in message


def test_the_corrected_irrelevance_pair_passes(document):
    assert metric(document, "irrelevance_rate")["theta_in"] == 45
    assert errors_at(validate(document), "metrics[irrelevance_rate].theta_in") == []


def test_an_equal_pair_is_refused_as_an_equal_pair(document):
    metric(document, "guidance_recall")["theta_in"] = 75
    [message] = errors_at(validate(document), "metrics[guidance_recall].theta_in")
    assert "equal pair" in message and "strictly above" in message


def test_an_inverted_higher_is_better_pair_says_theta_in_must_be_above(document):
    metric(document, "citation_precision_lenient")["theta_in"] = 60
    [message] = errors_at(validate(document), "metrics[citation_precision_lenient].theta_in")
    assert "inverted pair" in message and "higher is better" in message


def test_a_gated_metric_needs_both_thresholds(document):
    metric(document, "hallucination_rate")["theta_out"] = None
    report = validate(document)
    assert errors_at(report, "metrics[hallucination_rate].theta_out") == [
        "hallucination_rate is gated and needs θout"
    ]


@pytest.mark.parametrize("weight", [0, -1, None])
def test_a_gated_metric_needs_a_positive_weight(document, weight):
    metric(document, "guidance_precision")["weight"] = weight
    report = validate(document)
    [message] = errors_at(report, "metrics[guidance_precision].weight")
    assert "needs a weight > 0" in message
    assert "guidance_precision" not in report.normalised_weights
    assert sum(report.normalised_weights.values()) == pytest.approx(1.0)


def test_weights_are_normalised_to_sum_to_one(document):
    metric(document, "hallucination_rate")["weight"] = 3
    weights = validate(document).normalised_weights
    assert weights["hallucination_rate"] == pytest.approx(3 / 8)
    assert weights["irrelevance_rate"] == pytest.approx(1 / 8)


def test_an_unknown_metric_id_is_an_error_with_a_suggestion(document):
    document["metrics"].append({"id": "halucination_rate", "treatment": "gated"})
    [message] = errors_at(validate(document), f"metrics[{len(document['metrics']) - 1}].id")
    assert "unknown metric id 'halucination_rate'" in message
    assert "did you mean 'hallucination_rate'" in message


def test_an_informational_metric_needs_a_reason(document):
    metric(document, "catch_rate")["reason"] = " "
    report = validate(document)
    [message] = errors_at(report, "metrics[catch_rate].reason")
    assert "catch_rate is informational and needs the reason" in message
    # It is not also listed as missing: the reason error says what to do.
    assert errors_at(report, "metrics") == []


def test_every_metric_at_or_below_the_autonomy_level_must_be_covered(document):
    document["metrics"] = [
        m for m in document["metrics"] if m["id"] not in ("review_burden", "catch_rate")
    ]
    [message] = errors_at(validate(document), "metrics")
    assert "missing: catch_rate, review_burden" in message
    assert "at autonomy A1" in message


def test_at_a2_the_a2_metrics_become_required(document):
    report = validate(document, autonomy=2, consequence=3)
    [message] = errors_at(report, "metrics")
    assert message.endswith(
        "missing: completeness, classification_accuracy, classification_macro_f1, "
        "pass_hat_k, dispersion"
    )


def test_a_direction_contrary_to_the_catalogue_is_an_error(document):
    metric(document, "hallucination_rate")["direction"] = "higher"
    [message] = errors_at(validate(document), "metrics[hallucination_rate].direction")
    assert "the catalogue says lower is better" in message


def test_automatic_grading_is_refused_where_the_catalogue_does_not_allow_it(document):
    metric(document, "guidance_recall")["grading"] = ["A"]
    metric(document, "review_burden")["grading"] = ["A"]
    report = validate(document)
    [message] = errors_at(report, "metrics[guidance_recall].grading")
    assert message == "guidance_recall cannot be graded automatically (A): the catalogue allows H"
    assert errors_at(report, "metrics[review_burden].grading") == []


@pytest.mark.parametrize(
    ("weights", "fragment"),
    [
        ({"completeness": 0.5}, "'completeness', which is not a gated metric"),
        ({"citation_precision_strict": 0.5}, "not a gated metric"),
        ({"hallucination_rate": -0.1}, "needs a weight ≥ 0"),
        ({"hallucination_rate": 0.7, "irrelevance_rate": 0.4}, "sum to 1.1, more than 1"),
    ],
)
def test_alternative_weightings_follow_the_gates_rule(document, weights, fragment):
    document["alternative_weights"] = {"bad": weights}
    report = validate(document)
    assert any(fragment in issue.message for issue in report.errors), report.errors
    assert "bad" not in report.alternative_weights


def test_a_weighting_naming_every_metric_is_normalised_like_the_gate(document):
    ids = list(validate(document).normalised_weights)
    document["alternative_weights"] = {"all": dict.fromkeys(ids, 0.1)}
    resolved = validate(document).alternative_weights["all"]
    assert resolved == pytest.approx(dict.fromkeys(ids, 1 / 6))


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("nu_max", 0, "ν_max must be a number > 0"),
        ("confidence", 1.0, "open interval (0, 1)"),
        ("confidence", 0, "open interval (0, 1)"),
        ("kappa_target", 1.2, "κ target must be in [-1, 1]"),
        ("repeats_k", 0, "K repeats must be a whole number ≥ 1"),
    ],
)
def test_scalar_parameters_are_range_checked(document, field, value, fragment):
    document[field] = value
    [message] = errors_at(validate(document), field)
    assert fragment in message


def test_e3_needs_at_least_four_repeats(document):
    # A2/C3 → E3 (SPEC §2); add the A2 metrics so only the repeats are at fault.
    for name in ("autonomy", "intensity"):
        document.pop(name)
    for metric_id in (
        "completeness",
        "classification_accuracy",
        "classification_macro_f1",
        "pass_hat_k",
        "dispersion",
    ):
        document["metrics"].append(
            {"id": metric_id, "treatment": "informational", "reason": "not a classifier"}
        )
    report = validate(document, autonomy=2, consequence=3)
    assert report.intensity == 3
    [message] = [issue.message for issue in report.errors]
    assert message.startswith("at E3 the evaluation needs K ≥ 4 repeats")
    document["repeats_k"] = 4
    assert validate(document, autonomy=2, consequence=3).ok


def test_e2_needs_a_planned_n_for_human_graded_gated_metrics(document):
    metric(document, "guidance_recall")["planned_n"] = None
    [message] = errors_at(validate(document), "metrics[guidance_recall].planned_n")
    assert "human-graded and at E2 needs a planned n" in message
    # At E1 (A0/C1) the same charter needs no planned n.
    low = validate(document, autonomy=0, consequence=1)
    assert errors_at(low, "metrics[guidance_recall].planned_n") == []


def test_an_estimated_baseline_is_noted_before_any_value_claim(document):
    notes = [i.message for i in validate(document).infos if i.field == "measurement_mode"]
    assert notes and "value claim needs an observed baseline" in notes[0]
    document["measurement_mode"] = "observed"
    assert not [i for i in validate(document).infos if i.field == "measurement_mode"]


def test_planning_warns_with_the_sample_size_that_would_suffice(document):
    # Irrelevance rate θout 50, θin 45 (lower is better), planned n = 200, 95% confidence.
    # Half-width at n = 200 with p = θin = 0.45: 1.959964 · √(0.45 · 0.55 / 200) = 0.068948,
    # i.e. ±6.89 points > the 5-point gap. n = ⌈1.959964² · 0.2475 / 0.05²⌉ = ⌈380.30⌉ = 381.
    metric(document, "irrelevance_rate")["planned_n"] = 200
    report = validate(document)
    [warning] = [i for i in report.warnings if i.field == "metrics[irrelevance_rate].planned_n"]
    assert "±6.89 points" in warning.message
    assert "planned n = 200" in warning.message and "p = θin = 0.45" in warning.message
    assert "about n = 381 units would suffice" in warning.message
    row = next(r for r in report.planning if r.metric_id == "irrelevance_rate")
    z = 1.959963984540054
    assert row.half_width == pytest.approx(z * math.sqrt(0.45 * 0.55 / 200) * 100)
    assert row.sufficient_n == 381 == math.ceil(z**2 * 0.45 * 0.55 / 0.05**2)
    assert not row.enough


def test_planning_states_the_half_width_when_the_planned_n_is_enough(document):
    report = validate(document)
    row = next(r for r in report.planning if r.metric_id == "hallucination_rate")
    # p = 0.05, n = 800: 1.959964 · √(0.05 · 0.95 / 800) = 0.015103 → ±1.51 points < 5.
    assert row.half_width == pytest.approx(1.5103, abs=1e-4) and row.enough
    [note] = [i for i in report.infos if i.field == "metrics[hallucination_rate].planned_n"]
    assert "±1.51 points" in note.message


def test_planning_uses_the_charter_confidence_level(document):
    metric(document, "irrelevance_rate")["planned_n"] = 500
    assert validate(document).warnings == []  # ±4.36 at 95% is within the 5-point gap
    document["confidence"] = 0.99
    [warning] = [
        i for i in validate(document).warnings if i.field == "metrics[irrelevance_rate].planned_n"
    ]
    # z(0.995) = 2.575829: ±5.73 points; n = ⌈2.575829² · 0.2475 / 0.0025⌉ = ⌈656.85⌉ = 657.
    assert "99% CI half-width ±5.73 points" in warning.message
    assert "about n = 657 units" in warning.message


def test_a_past_review_date_is_a_warning(document):
    document["next_review_date"] = "2026-01-31"
    [warning] = validate(document).warnings
    assert warning.field == "next_review_date"
    assert "2026-01-31 is in the past" in warning.message


def test_value_inputs_are_checked_against_the_value_model(document):
    document["value_inputs"] = {
        "tasks_per_year": -5,
        "t_manual": {"low": 3, "mode": 2, "high": 5},
        "hallucination": {"successes": 1, "n": 10},
        "hourly_cots": 90,
    }
    report = validate(document)
    assert errors_at(report, "value_inputs.tasks_per_year") == [
        "tasks_per_year cannot be negative, got -5"
    ]
    assert "low ≤ mode ≤ high" in errors_at(report, "value_inputs.t_manual")[0]
    assert (
        "comes from the graded hallucination counts"
        in errors_at(report, "value_inputs.hallucination")[0]
    )
    assert "did you mean 'hourly_cost'" in errors_at(report, "value_inputs.hourly_cots")[0]


def test_value_inputs_name_their_currency_as_an_iso_4217_code(document):
    assert errors_at(validate(document), "value_inputs.currency") == []
    assert document["value_inputs"]["currency"] == "GBP"
    del document["value_inputs"]["currency"]
    missing = errors_at(validate(document), "value_inputs.currency")
    assert len(missing) == 1 and "ISO 4217" in missing[0] and "currency: GBP" in missing[0]
    for code, fragment in [
        ("XYZ", "not an active ISO 4217 currency code"),
        ("gbp", "write 'GBP'"),
        ("XAU", "not an active ISO 4217"),
        (826, "three-letter ISO 4217 currency code"),
    ]:
        document["value_inputs"]["currency"] = code
        assert fragment in errors_at(validate(document), "value_inputs.currency")[0], code


def test_a_classification_that_differs_from_the_use_case_is_an_error(document):
    report = validate(document, autonomy=2, consequence=3)
    assert "the use case is A2" in errors_at(report, "autonomy")[0]
    assert "the use case is E3" in errors_at(report, "intensity")[0]
    assert errors_at(report, "consequence") == []


def test_thresholds_outside_the_percent_scale_are_errors_and_fractions_are_flagged(document):
    metric(document, "key_element_capture")["theta_in"] = 120
    assert (
        "percent scale (0–100)"
        in errors_at(validate(document), "metrics[key_element_capture].theta_in")[0]
    )
    metric(document, "key_element_capture").update(theta_out=0.5, theta_in=0.55)
    warnings = [i.message for i in validate(document).warnings]
    assert any("did you give fractions?" in w for w in warnings)


def test_validation_does_not_modify_the_document(document):
    before = copy.deepcopy(document)
    validate(document)
    assert document == before


def test_validation_and_the_document_module_import_without_django():
    code = (
        "import sys, charters.validation, charters.charter_document; "
        "print(','.join(m for m in ('django', 'rest_framework', 'celery') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_the_pure_treatments_are_the_models_treatment_values():
    from charters.models.charters import Treatment
    from charters.validation import GATED, INFORMATIONAL, TREATMENTS

    assert (Treatment.GATED, Treatment.INFORMATIONAL) == (GATED, INFORMATIONAL)
    assert list(TREATMENTS) == Treatment.values


# --- success rule, pass^k's k and what the task sets supply (SPEC §4, §4.1) ----------------


def a2_document(document: dict, *, pass_hat_k: dict, accuracy: dict) -> dict:
    """The credit-memo charter at A2/C3 with K = 4 and the A2 metrics added."""
    for name in ("autonomy", "intensity"):
        document.pop(name)
    document["repeats_k"] = 4
    document["metrics"] += [
        {"id": "completeness", "treatment": "informational", "reason": "r"},
        {"id": "classification_accuracy", **accuracy},
        {"id": "classification_macro_f1", "treatment": "informational", "reason": "r"},
        {"id": "pass_hat_k", **pass_hat_k},
        {"id": "dispersion", "treatment": "informational", "reason": "r"},
    ]
    return document


GATE = {
    "treatment": "gated",
    "theta_out": 60,
    "theta_in": 70,
    "weight": 0.1,
    "planned_n": 400,
    "harm_statement": "A wrong judgement reaches the control owner.",
}
INFO = {"treatment": "informational", "reason": "reported"}


def supply(**facts) -> TaskSetSupply:
    fields = {"name": "controls v1", "label_set": False, "gold_labels": False}
    return TaskSetSupply(**{**fields, "key_elements": True, **facts})


def test_gating_pass_hat_k_without_a_success_rule_is_an_error_naming_success_rule(document):
    a2 = a2_document(document, pass_hat_k=GATE, accuracy=INFO)
    a2.pop("success_rule")
    report = validate(a2, autonomy=2, consequence=3)
    [message] = errors_at(report, "success_rule")
    assert message.startswith("pass_hat_k counts successful tasks, but the charter states no")
    assert "completion, not success" in message
    a2["success_rule"] = "recorded"
    assert validate(a2, autonomy=2, consequence=3).ok


def test_an_unknown_success_rule_or_a_misplaced_k_is_an_error(document):
    a2 = a2_document(document, pass_hat_k={**GATE, "k": 5}, accuracy=INFO)
    a2["success_rule"] = "looks_right"
    metric(a2, "dispersion")["k"] = 2
    report = validate(a2, autonomy=2, consequence=3)
    assert errors_at(report, "success_rule")[0].startswith("success_rule must be one of")
    assert (
        "needs at least 5 repeats, but repeats_k is 4"
        in errors_at(report, "metrics[pass_hat_k].k")[0]
    )
    assert errors_at(report, "metrics[dispersion].k") == [
        "k belongs to pass_hat_k only; remove it from dispersion"
    ]


def test_gating_accuracy_needs_a_task_set_with_gold_labels_named_in_the_error(document):
    a2 = a2_document(document, pass_hat_k=INFO, accuracy=GATE)
    a2["success_rule"] = "label_equals_gold"
    report = charter_validate(a2, autonomy=2, consequence=3, today=TODAY, task_sets=[supply()])
    [accuracy] = errors_at(report, "metrics[classification_accuracy]")
    assert accuracy.startswith("classification_accuracy needs gold_label on every graded task")
    assert "(controls v1)" in accuracy
    [rule] = errors_at(report, "success_rule")
    assert rule.startswith("label_equals_gold needs a label_set")
    labelled = supply(name="controls v2", label_set=True, gold_labels=True)
    assert charter_validate(
        a2, autonomy=2, consequence=3, today=TODAY, task_sets=[supply(), labelled]
    ).ok
    # Before any task set is imported the check waits for the decision.
    assert validate(a2, autonomy=2, consequence=3).ok


def test_gating_pass_hat_k_on_human_acceptable_needs_the_acceptable_field_asked(document):
    a2 = a2_document(document, pass_hat_k=GATE, accuracy=INFO)
    a2["success_rule"] = "human_acceptable"
    [message] = errors_at(validate(a2, autonomy=2, consequence=3), "rubric_fields")
    assert message.startswith("pass_hat_k reads success by human_acceptable")
    assert "does not ask 'acceptable'" in message and "add acceptable to rubric_fields" in message
    a2["rubric_fields"] = ["acceptable"]
    report = validate(a2, autonomy=2, consequence=3)
    assert report.ok
    [census] = [i.message for i in report.issues if i.field == "metrics[pass_hat_k]"]
    assert "all K repeats of each task" in census and "no estimate" in census


def test_informational_success_metrics_on_human_acceptable_only_warn(document):
    a2 = a2_document(document, pass_hat_k=INFO, accuracy=INFO)
    a2["success_rule"] = "human_acceptable"
    report = validate(a2, autonomy=2, consequence=3)
    assert report.ok
    warned = [i for i in report.issues if i.field == "rubric_fields" and i.level == "warning"]
    assert {i.message.split()[0] for i in warned} == {
        "pass_hat_k",
        "dispersion",
        "cost_per_successful_task",
    }


def test_classification_graded_by_humans_needs_label_correct_and_a_label_set(document):
    a2 = a2_document(document, pass_hat_k=INFO, accuracy={**GATE, "grading": ["H"]})
    [message] = errors_at(validate(a2, autonomy=2, consequence=3), "rubric_fields")
    assert message.startswith("classification_accuracy is graded by humans (grading H)")
    a2["rubric_fields"] = ["label_correct"]
    assert validate(a2, autonomy=2, consequence=3).ok
    # Graded by humans, accuracy needs no gold label, but graders must be shown a label.
    report = charter_validate(
        a2, autonomy=2, consequence=3, today=TODAY, task_sets=[supply(label_set=True)]
    )
    assert report.ok
    [missing] = errors_at(
        charter_validate(a2, autonomy=2, consequence=3, today=TODAY, task_sets=[supply()]),
        "metrics[classification_accuracy]",
    )
    assert "needs a label_set" in missing and "controls v1" in missing


def test_human_graded_accuracy_needs_a_planned_n_only_when_humans_grade_it(document):
    automatic = a2_document(document, pass_hat_k=INFO, accuracy={**GATE, "planned_n": None})
    assert validate(automatic, autonomy=2, consequence=3).ok
    automatic["rubric_fields"] = ["label_correct"]
    [message] = errors_at(
        validate(automatic, autonomy=2, consequence=3), "metrics[classification_accuracy].planned_n"
    )
    assert "is human-graded" in message


def test_label_correct_asked_without_a_classification_metric_warns(document):
    document["rubric_fields"] = ["label_correct"]
    report = validate(document)
    assert report.ok
    [warning] = [i.message for i in report.issues if i.field == "rubric_fields"]
    assert warning.startswith("label_correct is asked of graders, but the charter has no")
