"""The charter pre-registers the agreement rule of each human-graded metric (SPEC §5.1)."""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from types import SimpleNamespace

import pytest

from audit.canonical import canonical_json, sha256_hex
from charters.charter_document import (
    CharterDocumentError,
    charter_document,
    document_from_form,
    document_from_text,
)
from charters.models import CharterMetric
from charters.selectors.charters import charter_document_build
from charters.services.charters import charter_create
from charters.validation import charter_validate
from grading.agreement import AgreementRule, agreement_rule

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "charter.yaml"


def example() -> dict:
    return document_from_text(EXAMPLE.read_text(encoding="utf-8"), fmt="yaml")


def with_rule(document: dict, metric_id: str, rule) -> dict:
    changed = copy.deepcopy(document)
    for metric in changed["metrics"]:
        if metric["id"] == metric_id:
            metric["agreement"] = rule
    return changed


def errors_of(text: str) -> list[tuple[str, str]]:
    with pytest.raises(CharterDocumentError) as raised:
        document_from_text(text, fmt="yaml", source="charter.yaml")
    return [(issue.field, issue.message) for issue in raised.value.issues]


RULE_YAML = """
kappa_target: 0.6
metrics:
  - id: irrelevance_rate
    treatment: gated
    theta_out: 45
    theta_in: 40
    weight: 1
    agreement: {rule_text}
"""


def test_a_charter_states_an_ac1_rule_with_its_threshold():
    document = document_from_text(
        RULE_YAML.format(rule_text="{rule: ac1, threshold: 0.8}"), fmt="yaml"
    )
    assert document["metrics"][0]["agreement"] == {"rule": "ac1", "threshold": 0.8}
    assert agreement_rule(document["metrics"][0]["agreement"], 0.6) == AgreementRule("ac1", 0.8)


@pytest.mark.parametrize(
    ("rule_text", "field", "message"),
    [
        ("{rule: ac1}", "metrics[0].agreement.threshold", "needs a threshold in (-1, 1]"),
        ("{rule: ac1, threshold: 1.5}", "metrics[0].agreement.threshold", "got 1.5"),
        ("{rule: kappa, threshold: 0.7}", "metrics[0].agreement.threshold", "kappa_target"),
        ("{rule: bias}", "metrics[0].agreement.rule", "expected one of kappa, ac1"),
        ("{rule: ac1, treshold: 0.8}", "metrics[0].agreement.treshold", "did you mean"),
        ("[ac1]", "metrics[0].agreement", "expected a mapping"),
    ],
)
def test_a_malformed_rule_is_refused_naming_the_metric_and_field(rule_text, field, message):
    found = errors_of(RULE_YAML.format(rule_text=rule_text))
    assert any(f == field and message in m for f, m in found), found


def test_errors_name_the_line_of_the_rule():
    with pytest.raises(CharterDocumentError) as raised:
        document_from_text(
            RULE_YAML.format(rule_text="{rule: ac1}"), fmt="yaml", source="charter.yaml"
        )
    assert raised.value.issues[0].line == 9
    assert str(raised.value).startswith("charter.yaml, line 9, metrics[0].agreement.threshold")


def test_validation_refuses_a_rule_on_a_metric_that_is_not_human_graded():
    document = with_rule(example(), "cost_per_successful_task", {"rule": "ac1", "threshold": 0.8})
    report = charter_validate(document, autonomy=1, consequence=3, today=dt.date(2026, 12, 1))
    assert any(
        issue.field == "metrics[cost_per_successful_task].agreement"
        and "not human-graded" in issue.message
        for issue in report.errors
    )


def test_a_charter_without_a_rule_keeps_its_canonical_json_and_hash():
    document = example()
    assert all("agreement" not in metric for metric in document["metrics"])
    rows = [
        CharterMetric(
            metric_id=m["id"],
            treatment=m["treatment"],
            theta_out=m["theta_out"],
            theta_in=m["theta_in"],
            weight=m["weight"],
            harm_statement=m["harm_statement"],
            planned_n=m["planned_n"],
            reason=m["reason"],
        )
        for m in document["metrics"]
    ]
    charter = SimpleNamespace(
        version=1,
        **{k: document[k] for k in ("nu_max", "confidence", "kappa_target", "repeats_k")},
        alternative_weights=document["alternative_weights"],
        baseline=document["baseline"],
        measurement_mode=document["measurement_mode"],
        value_inputs=document["value_inputs"],
        reevaluation_triggers=document["reevaluation_triggers"],
        next_review_date=dt.date.fromisoformat(document["next_review_date"])
        if document["next_review_date"]
        else None,
    )
    use_case = SimpleNamespace(key="CREDIT-MEMO-B", autonomy=1, consequence=3)
    built = charter_document(charter, rows, use_case)
    assert all("agreement" not in metric for metric in built["metrics"])
    text = canonical_json(built)
    assert '"agreement"' not in text
    rows[0].agreement = {"rule": "ac1", "threshold": 0.8}
    with_ac1 = charter_document(charter, rows, use_case)
    assert with_ac1["metrics"][0]["agreement"] == {"rule": "ac1", "threshold": 0.8}
    assert sha256_hex(canonical_json(with_ac1)) != sha256_hex(text)


def test_the_rule_is_stored_and_read_back_through_the_service(personas):
    document = with_rule(example(), "hallucination_rate", {"rule": "ac1", "threshold": 0.75})
    draft = charter_create(actor=personas.owner, use_case=personas.use_case, document=document)
    stored = CharterMetric.objects.get(charter=draft, metric_id="hallucination_rate")
    assert stored.agreement == {"rule": "ac1", "threshold": 0.75}
    built = charter_document_build(charter=draft)
    by_id = {m["id"]: m for m in built["metrics"]}
    assert by_id["hallucination_rate"]["agreement"] == {"rule": "ac1", "threshold": 0.75}
    assert "agreement" not in by_id["irrelevance_rate"]


def test_the_editor_form_reads_the_rule_and_puts_errors_on_the_metrics_row():
    fields = {
        "treatment-irrelevance_rate": "gated",
        "theta_out-irrelevance_rate": "45",
        "theta_in-irrelevance_rate": "40",
        "weight-irrelevance_rate": "1",
        "agreement_rule-irrelevance_rate": "ac1",
        "agreement_threshold-irrelevance_rate": "0.8",
        "treatment-hallucination_rate": "gated",
        "theta_out-hallucination_rate": "10",
        "theta_in-hallucination_rate": "5",
        "weight-hallucination_rate": "1",
        "agreement_rule-hallucination_rate": "ac1",
    }
    document, issues = document_from_form(fields, ["irrelevance_rate", "hallucination_rate"])
    by_id = {m["id"]: m for m in document["metrics"]}
    assert by_id["irrelevance_rate"]["agreement"] == {"rule": "ac1", "threshold": 0.8}
    assert "agreement" not in by_id["hallucination_rate"]
    assert [(i.field, "needs a threshold" in i.message) for i in issues] == [
        ("metrics[hallucination_rate].agreement.threshold", True)
    ]
