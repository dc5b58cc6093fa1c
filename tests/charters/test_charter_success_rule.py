"""The charter states its success rule and pass^k's gated k (SPEC §4, §4.1)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from audit.canonical import canonical_json
from charters.charter_document import (
    CharterDocumentError,
    charter_document,
    document_from_form,
    document_from_text,
)
from charters.models import CharterMetric
from charters.selectors.charters import charter_document_build
from charters.services.charters import charter_create

RULE_YAML = """
repeats_k: 4
success_rule: {rule}
metrics:
  - id: pass_hat_k
    treatment: gated
    theta_out: 60
    theta_in: 80
    weight: 1
    k: {k}
"""


def test_a_charter_file_states_the_success_rule_and_the_gated_k():
    document = document_from_text(RULE_YAML.format(rule="label_equals_gold", k=2), fmt="yaml")
    assert document["success_rule"] == "label_equals_gold"
    assert document["metrics"][0]["k"] == 2


@pytest.mark.parametrize(
    ("rule", "k", "field", "words"),
    [
        ("looks_right", 2, "success_rule", "expected one of label_equals_gold"),
        ("recorded", 0, "metrics[0].k", "k must be a whole number ≥ 1"),
        ("recorded", "two", "metrics[0].k", "pass_hat_k"),
    ],
)
def test_a_bad_rule_or_k_is_refused_naming_the_field_and_line(rule, k, field, words):
    with pytest.raises(CharterDocumentError) as raised:
        document_from_text(RULE_YAML.format(rule=rule, k=k), fmt="yaml", source="charter.yaml")
    [issue] = raised.value.issues
    assert issue.field == field and words in issue.message
    assert issue.line in (3, 10)


def charter_like(**fields):
    base = {
        "version": 1,
        "nu_max": 3.0,
        "confidence": 0.95,
        "kappa_target": 0.6,
        "repeats_k": 4,
        "alternative_weights": {},
        "baseline": "",
        "measurement_mode": "estimated",
        "value_inputs": {},
        "reevaluation_triggers": [],
        "next_review_date": None,
    }
    return SimpleNamespace(**{**base, **fields})


def test_without_a_rule_or_k_the_canonical_json_is_what_it_was_before_they_existed():
    use_case = SimpleNamespace(key="CONTROLS-A", autonomy=2, consequence=3)
    row = CharterMetric(metric_id="pass_hat_k", treatment="gated", theta_out=60, theta_in=80)
    plain = canonical_json(charter_document(charter_like(), [row], use_case))
    assert '"success_rule"' not in plain and '"k"' not in plain
    assert (
        canonical_json(charter_document(charter_like(success_rule=None), [row], use_case)) == plain
    )
    row.k = 2
    stated = charter_document(charter_like(success_rule="recorded"), [row], use_case)
    assert stated["success_rule"] == "recorded" and stated["metrics"][0]["k"] == 2
    assert canonical_json(stated) != plain


def test_the_rule_and_k_are_stored_and_read_back_through_the_service(personas):
    document = document_from_text(RULE_YAML.format(rule="recorded", k=2), fmt="yaml")
    draft = charter_create(actor=personas.owner, use_case=personas.use_case, document=document)
    assert draft.success_rule == "recorded"
    assert CharterMetric.objects.get(charter=draft, metric_id="pass_hat_k").k == 2
    built = charter_document_build(charter=draft)
    assert built["success_rule"] == "recorded" and built["metrics"][0]["k"] == 2


def test_the_editor_form_reads_the_rule_and_k():
    fields = {
        "treatment-pass_hat_k": "gated",
        "theta_out-pass_hat_k": "60",
        "theta_in-pass_hat_k": "80",
        "weight-pass_hat_k": "1",
        "k-pass_hat_k": "2",
        "success_rule": "label_equals_gold",
        "repeats_k": "4",
    }
    document, issues = document_from_form(fields, ["pass_hat_k"])
    assert issues == []
    assert document["success_rule"] == "label_equals_gold"
    assert document["metrics"][0]["k"] == 2
    blank, _issues = document_from_form(
        {**fields, "success_rule": "", "k-pass_hat_k": ""}, ["pass_hat_k"]
    )
    assert "success_rule" not in blank and "k" not in blank["metrics"][0]


def test_updating_a_draft_keeps_the_success_rule(personas):
    from charters.services.charters import charter_update

    document = document_from_text(RULE_YAML.format(rule="recorded", k=2), fmt="yaml")
    draft = charter_create(actor=personas.owner, use_case=personas.use_case, document=document)
    changed = charter_update(
        actor=personas.owner,
        charter=draft,
        document={**document, "success_rule": "human_acceptable"},
    )
    changed.refresh_from_db()
    assert changed.success_rule == "human_acceptable"
    without = charter_update(
        actor=personas.owner,
        charter=draft,
        document={k: v for k, v in document.items() if k != "success_rule"},
    )
    without.refresh_from_db()
    assert without.success_rule is None


def test_a_charter_asks_optional_rubric_fields_in_rubric_order_and_stores_them(personas):
    text = RULE_YAML.format(rule="human_acceptable", k=4) + (
        "rubric_fields: [acceptable, label_correct]\n"
    )
    document = document_from_text(text, fmt="yaml")
    assert document["rubric_fields"] == ["label_correct", "acceptable"]
    draft = charter_create(actor=personas.owner, use_case=personas.use_case, document=document)
    draft.refresh_from_db()
    assert draft.rubric_fields == ["label_correct", "acceptable"]
    assert charter_document_build(charter=draft)["rubric_fields"] == ["label_correct", "acceptable"]
    # The editor's checkboxes give the same list.
    fields = {
        "treatment-pass_hat_k": "gated",
        "theta_out-pass_hat_k": "60",
        "theta_in-pass_hat_k": "80",
        "weight-pass_hat_k": "1",
        "repeats_k": "4",
        "rubric_field_acceptable": "on",
    }
    from_form, issues = document_from_form(fields, ["pass_hat_k"])
    assert issues == [] and from_form["rubric_fields"] == ["acceptable"]


def test_a_charter_without_rubric_fields_keeps_its_canonical_json(personas):
    document = document_from_text(RULE_YAML.format(rule="recorded", k=2), fmt="yaml")
    draft = charter_create(actor=personas.owner, use_case=personas.use_case, document=document)
    assert "rubric_fields" not in canonical_json(charter_document_build(charter=draft))


@pytest.mark.parametrize(
    ("value", "field", "words"),
    [
        ("[sensible]", "rubric_fields[0]", "expected one of label_correct, acceptable"),
        ("[acceptable, acceptable]", "rubric_fields[1]", "acceptable is listed twice"),
        ("{acceptable: true}", "rubric_fields", "expected a list of field names"),
    ],
)
def test_an_unknown_or_repeated_rubric_field_is_refused_naming_it(value, field, words):
    text = RULE_YAML.format(rule="recorded", k=2) + f"rubric_fields: {value}\n"
    with pytest.raises(CharterDocumentError) as raised:
        document_from_text(text, fmt="yaml", source="charter.yaml")
    [issue] = raised.value.issues
    assert issue.field == field and words in issue.message
    assert issue.line == 11
