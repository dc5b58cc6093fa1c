"""The charter document (pure): its shape, charter files with line numbers, the form, the diff."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from audit.canonical import canonical_json
from charters.charter_document import (
    CharterDocumentError,
    charter_document,
    document_content,
    document_diff,
    document_from_form,
    document_from_text,
    document_normalise,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "charter.yaml"
USE_CASE = SimpleNamespace(key="CREDIT-MEMO-B", autonomy=1, consequence=3)


def charter(**fields):
    defaults = dict(
        version=2,
        nu_max=3.0,
        confidence=0.95,
        kappa_target=0.6,
        repeats_k=1,
        alternative_weights={},
        baseline="Manual drafting.",
        measurement_mode="estimated",
        value_inputs={},
        reevaluation_triggers=["New σ"],
        next_review_date=dt.date(2027, 3, 31),
    )
    return SimpleNamespace(**(defaults | fields))


def metric(metric_id, **fields):
    defaults = dict(
        metric_id=metric_id,
        treatment="gated",
        theta_out=10.0,
        theta_in=5.0,
        weight=1.0,
        harm_statement="harm",
        planned_n=800,
        reason="",
    )
    return SimpleNamespace(**(defaults | fields))


def read(text: str, fmt: str = "yaml") -> dict:
    return document_from_text(text, fmt=fmt, source="charter.yaml")


def problems(text: str, fmt: str = "yaml") -> list[tuple[int | None, str, str]]:
    with pytest.raises(CharterDocumentError) as raised:
        read(text, fmt)
    return [(i.line, i.field, i.message) for i in raised.value.issues]


def test_the_document_has_the_stable_shape_with_direction_from_the_catalogue():
    document = charter_document(
        charter(),
        [
            metric("hallucination_rate"),
            metric("citation_recall", treatment="informational", reason="judge only"),
        ],
        USE_CASE,
    )
    assert list(document) == [
        "version",
        "use_case",
        "autonomy",
        "consequence",
        "intensity",
        "metrics",
        "nu_max",
        "confidence",
        "kappa_target",
        "repeats_k",
        "alternative_weights",
        "baseline",
        "measurement_mode",
        "value_inputs",
        "reevaluation_triggers",
        "next_review_date",
    ]
    assert (document["autonomy"], document["consequence"], document["intensity"]) == (
        "A1",
        "C3",
        "E2",
    )
    assert document["metrics"][0] == {
        "id": "hallucination_rate",
        "treatment": "gated",
        "direction": "lower",
        "theta_out": 10.0,
        "theta_in": 5.0,
        "weight": 1.0,
        "harm_statement": "harm",
        "planned_n": 800,
        "reason": "",
    }
    assert document["metrics"][1]["direction"] == "higher"
    assert document["next_review_date"] == "2027-03-31"


def test_the_canonical_json_of_a_document_is_byte_stable():
    first = canonical_json(charter_document(charter(), [metric("hallucination_rate")], USE_CASE))
    second = canonical_json(charter_document(charter(), [metric("hallucination_rate")], USE_CASE))
    assert first == second
    assert '"theta_in":5,' in first  # integral floats are written as integers


def test_the_example_file_reads_into_the_shape_with_defaults_and_dates(tmp_path):
    document = read(EXAMPLE.read_text(encoding="utf-8"))
    assert document["use_case"] == "CREDIT-MEMO-B" and document["version"] is None
    assert document["next_review_date"] == "2027-03-31"
    assert document["alternative_weights"] == {
        "fidelity_heavy": {"hallucination_rate": 0.30, "citation_precision_lenient": 0.25}
    }
    irrelevance = next(m for m in document["metrics"] if m["id"] == "irrelevance_rate")
    assert (irrelevance["theta_out"], irrelevance["theta_in"], irrelevance["direction"]) == (
        50,
        45,
        "lower",
    )
    assert len(document["metrics"]) == 13


def test_json_and_yaml_of_the_same_charter_read_the_same():
    yaml_document = read(EXAMPLE.read_text(encoding="utf-8"))
    as_json = json.dumps(yaml_document, indent=2)
    assert read(as_json, "json") == yaml_document


def test_a_document_read_back_from_its_canonical_json_keeps_its_content():
    document = charter_document(charter(), [metric("hallucination_rate")], USE_CASE)
    again = document_normalise(json.loads(canonical_json(document)))
    assert canonical_json(document_content(again)) == canonical_json(document_content(document))


def test_errors_name_the_line_and_field_path():
    text = (
        "metrics:\n"
        "  - id: hallucination_rate\n"
        "    treatment: gated\n"
        "    theta_out: ten\n"
        "    theta_in: 5\n"
        "nu_max: [3]\n"
        "next_review_date: 31/03/2027\n"
    )
    assert problems(text) == [
        (4, "metrics[0].theta_out", "hallucination_rate: expected a number, got 'ten'"),
        (6, "nu_max", "expected a number, got [3]"),
        (7, "next_review_date", "expected a date YYYY-MM-DD, got '31/03/2027'"),
    ]


def test_the_exception_message_names_file_line_and_field():
    with pytest.raises(CharterDocumentError, match=r"^charter\.yaml, line 2, nu_mx: unknown field"):
        read("metrics: []\nnu_mx: 3\n")


def test_unknown_fields_are_refused_with_a_suggestion():
    [(line, field, message)] = problems(
        "metrics:\n  - id: hallucination_rate\n    treatment: gated\n    theta_inn: 5\n"
    )
    assert (line, field) == (4, "metrics[0].theta_inn")
    assert "did you mean 'theta_in'?" in message


def test_duplicate_keys_are_refused_instead_of_keeping_the_last():
    assert problems("metrics: []\nnu_max: 3\nnu_max: 5\n") == [
        (3, "nu_max", "duplicate key 'nu_max': each field appears once")
    ]
    assert problems('{"metrics": [],\n "nu_max": 3,\n "nu_max": 5}', "json") == [
        (2, "nu_max", "duplicate key 'nu_max': each field appears once")
    ]


def test_yes_in_a_charter_is_text_not_a_boolean():
    # YAML 1.2 booleans (enterpriseval.documents): YAML 1.1 read ``yes`` as True.
    assert problems("metrics:\n  - id: hallucination_rate\n    treatment: yes\n") == [
        (
            3,
            "metrics[0].treatment",
            "hallucination_rate: expected 'gated' or 'informational', got 'yes' (leave the "
            "metric out to not use it)",
        )
    ]
    document = read("metrics: []\nbaseline: no\nvalue_inputs:\n  reviewed: yes\n")
    assert (document["baseline"], document["value_inputs"]) == ("no", {"reviewed": "yes"})


def test_a_metric_listed_twice_is_refused():
    text = (
        "metrics:\n  - {id: irrelevance_rate, treatment: gated}\n"
        "  - {id: irrelevance_rate, treatment: informational}\n"
    )
    [(line, field, message)] = problems(text)
    assert (line, field) == (3, "metrics[1].id")
    assert "appears twice (also metrics[0])" in message


def test_yaml_and_json_syntax_errors_give_the_line():
    [(line, field, message)] = problems("metrics:\n  - id: [unclosed\nnu_max: 3\n")
    assert (line, field) == (3, "") and message.startswith("not valid YAML")
    [(line, field, message)] = problems('{\n"metrics": [],\n"nu_max": 3,\n}', "json")
    assert (line, field) == (4, "") and message.startswith("not valid JSON")


def test_a_file_that_is_not_a_mapping_is_refused():
    assert problems("- a\n- b\n") == [(None, "", "a charter is a mapping of fields, got a list")]


def test_values_the_database_cannot_hold_are_refused():
    text = (
        "repeats_k: -1\nmetrics:\n  - {id: hallucination_rate, treatment: gated, planned_n: 2.5}\n"
    )
    fields = [field for _, field, _ in problems(text)]
    assert fields == ["metrics[0].planned_n", "repeats_k"]


def test_a_bad_treatment_is_refused_naming_the_metric():
    [(_, field, message)] = problems("metrics:\n  - {id: catch_rate, treatment: not used}\n")
    assert field == "metrics[0].treatment"
    assert "catch_rate: expected 'gated' or 'informational'" in message


# --------------------------------------------------------------------------- diff


def test_the_diff_matches_metrics_by_id_and_lists_changed_fields_in_document_order():
    before = charter_document(
        charter(version=1),
        [metric("hallucination_rate"), metric("irrelevance_rate", theta_out=50.0, theta_in=45.0)],
        USE_CASE,
    )
    after = charter_document(
        charter(version=2, nu_max=2.5, alternative_weights={"f": {"hallucination_rate": 0.3}}),
        [
            metric("irrelevance_rate", theta_out=50, theta_in=40.0),
            metric("hallucination_rate"),
            metric("catch_rate", treatment="informational", reason="no study"),
        ],
        USE_CASE,
    )
    diff = document_diff(before, after)
    assert [change["path"] for change in diff] == [
        "metrics[irrelevance_rate].theta_in",
        "metrics[catch_rate]",
        "metrics.order",
        "nu_max",
        "alternative_weights.f",
    ]
    assert diff[0] == {"path": "metrics[irrelevance_rate].theta_in", "before": 45.0, "after": 40.0}
    assert diff[1]["before"] is None and diff[1]["after"]["reason"] == "no study"
    assert diff[2]["after"] == ["irrelevance_rate", "hallucination_rate"]
    assert diff[4] == {
        "path": "alternative_weights.f",
        "before": None,
        "after": {"hallucination_rate": 0.3},
    }


def test_identical_documents_have_an_empty_diff_and_integral_floats_equal_integers():
    document = charter_document(charter(), [metric("hallucination_rate")], USE_CASE)
    assert document_diff(document, json.loads(canonical_json(document))) == []


def test_a_removed_metric_appears_with_its_former_entry():
    before = charter_document(
        charter(), [metric("hallucination_rate"), metric("catch_rate")], USE_CASE
    )
    after = charter_document(charter(), [metric("hallucination_rate")], USE_CASE)
    [change] = document_diff(before, after)
    assert change["path"] == "metrics[catch_rate]" and change["after"] is None
    assert change["before"]["id"] == "catch_rate"


# --------------------------------------------------------------------------- editor form


def form(**fields):
    base = {
        "treatment-hallucination_rate": "gated",
        "theta_out-hallucination_rate": "10",
        "theta_in-hallucination_rate": "5",
        "weight-hallucination_rate": "1",
        "planned_n-hallucination_rate": "800",
        "harm_statement-hallucination_rate": "harm",
        "treatment-catch_rate": "",
        "nu_max": "3",
        "confidence": "0.95",
        "kappa_target": "0.6",
        "repeats_k": "1",
        "measurement_mode": "estimated",
        "next_review_date": "2027-03-31",
        "reevaluation_triggers": "New σ\n\n  Deviation  \n",
        "alternative_weights": "f:\n  hallucination_rate: 0.3\n",
        "value_inputs": "",
    }
    return base | fields


def test_the_form_reads_into_the_document_with_unused_rows_left_out():
    document, issues = document_from_form(form(), ["hallucination_rate", "catch_rate"])
    assert issues == []
    assert [m["id"] for m in document["metrics"]] == ["hallucination_rate"]
    assert document["metrics"][0]["theta_in"] == 5.0 and document["metrics"][0]["planned_n"] == 800
    assert document["reevaluation_triggers"] == ["New σ", "Deviation"]
    assert document["alternative_weights"] == {"f": {"hallucination_rate": 0.3}}


def test_unreadable_form_values_are_reported_not_dropped_silently():
    document, issues = document_from_form(
        form(
            **{
                "theta_in-hallucination_rate": "five",
                "planned_n-hallucination_rate": "2.5",
                "alternative_weights": "f: [unclosed\n",
            }
        ),
        ["hallucination_rate"],
    )
    assert [(i.field, i.message) for i in issues][:2] == [
        (
            "metrics[hallucination_rate].theta_in",
            "metrics[hallucination_rate].theta_in: expected a number, got 'five'",
        ),
        (
            "metrics[hallucination_rate].planned_n",
            "metrics[hallucination_rate].planned_n: expected a whole number, got '2.5'",
        ),
    ]
    assert issues[2].field == "alternative_weights" and "YAML" in issues[2].message
    assert document["metrics"][0]["theta_in"] is None


def test_a_structural_problem_in_a_form_text_area_is_reported_and_the_rest_kept():
    document, issues = document_from_form(
        form(value_inputs="- not a mapping\n"), ["hallucination_rate"]
    )
    assert [(i.field, i.message) for i in issues] == [
        ("value_inputs", "expected a mapping, got a list")
    ]
    assert document["value_inputs"] == {} and document["metrics"][0]["theta_out"] == 10.0
