"""The charter pre-registers a bias-bound agreement rule (SPEC §5.1): document, editor, API, CLI."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from charters.charter_document import CharterDocumentError, document_from_form, document_from_text
from charters.models import Charter, CharterMetric
from charters.validation import charter_validate
from grading.agreement import AgreementRule, agreement_rule

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "charter.yaml"
RULE = "    weight: 1\n    harm_statement: >-\n      An assertive statement not supported"
WITH_RULE = (
    "    weight: 1\n    agreement: {rule: bias_bound, fraction: 0.5}\n" + RULE.split("\n", 1)[1]
)

RULE_YAML = """
kappa_target: 0.6
metrics:
  - id: irrelevance_rate
    treatment: {treatment}
    theta_out: 45
    theta_in: 40
    weight: 1
    agreement: {rule_text}
"""


def example_with_rule() -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert RULE in text
    return text.replace(RULE, WITH_RULE, 1)


def errors_of(text: str) -> list[tuple[str, str]]:
    with pytest.raises(CharterDocumentError) as raised:
        document_from_text(text, fmt="yaml", source="charter.yaml")
    return [(issue.field, issue.message) for issue in raised.value.issues]


def test_a_charter_states_a_bias_bound_with_its_fraction():
    text = RULE_YAML.format(treatment="gated", rule_text="{rule: bias_bound, fraction: 0.5}")
    document = document_from_text(text, fmt="yaml")
    stated = document["metrics"][0]["agreement"]
    assert stated == {"rule": "bias_bound", "fraction": 0.5}
    # the limit is half the 5-point gap between θout = 45 and θin = 40
    assert agreement_rule(stated, 0.6, gap=5.0) == AgreementRule("bias_bound", 2.5, 0.5, 5.0)


@pytest.mark.parametrize(
    ("rule_text", "field", "message"),
    [
        ("{rule: bias_bound}", "metrics[0].agreement.fraction", "needs a fraction"),
        ("{rule: bias_bound, fraction: 0}", "metrics[0].agreement.fraction", "got 0"),
        ("{rule: bias_bound, fraction: 1.5}", "metrics[0].agreement.fraction", "(0, 1]"),
        ("{rule: bias_bound, threshold: 0.5}", "metrics[0].agreement.threshold", "fraction"),
        ("{rule: ac1, threshold: 0.7, fraction: 0.5}", "metrics[0].agreement.fraction", "belongs"),
        ("{rule: bias}", "metrics[0].agreement.rule", "ac1, bias_bound"),
    ],
)
def test_a_malformed_bias_bound_is_refused_naming_the_field(rule_text, field, message):
    found = errors_of(RULE_YAML.format(treatment="gated", rule_text=rule_text))
    assert any(f == field and message in m for f, m in found), found


def test_validation_refuses_a_bias_bound_without_both_thresholds():
    document = document_from_text(example_with_rule(), fmt="yaml")
    entry = next(m for m in document["metrics"] if m["id"] == "hallucination_rate")
    entry["treatment"], entry["theta_in"], entry["theta_out"] = "informational", None, None
    entry["reason"], entry["weight"], entry["harm_statement"] = "shown only", None, ""
    report = charter_validate(document, autonomy=1, consequence=3, today=dt.date(2026, 12, 1))
    assert any(
        issue.field == "metrics[hallucination_rate].agreement"
        and "needs both thresholds" in issue.message
        for issue in report.errors
    ), report.errors


def test_the_example_with_a_bias_bound_validates_clean():
    document = document_from_text(example_with_rule(), fmt="yaml")
    report = charter_validate(document, autonomy=1, consequence=3, today=dt.date(2026, 12, 1))
    assert not report.errors, report.errors


def test_the_editor_form_reads_the_fraction_from_the_rows_number_box():
    fields = {
        "treatment-irrelevance_rate": "gated",
        "theta_out-irrelevance_rate": "45",
        "theta_in-irrelevance_rate": "40",
        "weight-irrelevance_rate": "1",
        "agreement_rule-irrelevance_rate": "bias_bound",
        "agreement_threshold-irrelevance_rate": "0.25",
        "treatment-hallucination_rate": "gated",
        "theta_out-hallucination_rate": "10",
        "theta_in-hallucination_rate": "5",
        "weight-hallucination_rate": "1",
        "agreement_rule-hallucination_rate": "bias_bound",
    }
    document, issues = document_from_form(fields, ["irrelevance_rate", "hallucination_rate"])
    by_id = {m["id"]: m for m in document["metrics"]}
    assert by_id["irrelevance_rate"]["agreement"] == {"rule": "bias_bound", "fraction": 0.25}
    assert "agreement" not in by_id["hallucination_rate"]
    assert [(i.field, "needs a fraction" in i.message) for i in issues] == [
        ("metrics[hallucination_rate].agreement.fraction", True)
    ]


def test_the_editor_page_offers_the_rule_and_shows_the_stored_fraction(personas, client):
    body = example_with_rule().encode()
    created = _api(personas.owner).post(
        "/api/v1/use-cases/CREDIT-MEMO-B/charters/", body, content_type="application/yaml"
    )
    assert created.status_code == 201, created.json()
    client.force_login(personas.owner)
    page = client.get("/use-cases/CREDIT-MEMO-B/charter/edit/")
    text = page.content.decode()
    assert '<option value="bias_bound" selected>' in text
    assert 'name="agreement_threshold-hallucination_rate" value="0.5"' in text


def _api(user) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


def test_the_api_stores_the_rule_and_returns_it(personas):
    response = _api(personas.owner).post(
        "/api/v1/use-cases/CREDIT-MEMO-B/charters/",
        example_with_rule().encode(),
        content_type="application/yaml",
    )
    assert response.status_code == 201, response.json()
    metrics = {m["id"]: m for m in response.json()["document"]["metrics"]}
    assert metrics["hallucination_rate"]["agreement"] == {"rule": "bias_bound", "fraction": 0.5}
    stored = CharterMetric.objects.get(metric_id="hallucination_rate")
    assert stored.agreement == {"rule": "bias_bound", "fraction": 0.5}


def test_the_api_refuses_a_bad_fraction_with_its_line(personas):
    text = example_with_rule().replace("fraction: 0.5", "fraction: 2", 1)
    response = _api(personas.owner).post(
        "/api/v1/use-cases/CREDIT-MEMO-B/charters/", text.encode(), content_type="application/yaml"
    )
    assert response.status_code == 400
    assert "metrics[3].agreement.fraction" in str(response.json())
    assert not Charter.objects.exists()


def test_the_cli_creates_a_charter_with_the_rule_and_refuses_a_bad_one(personas, tmp_path):
    good = tmp_path / "charter.yaml"
    good.write_text(example_with_rule(), encoding="utf-8")
    out = io.StringIO()
    call_command(
        "charter_create", "--use-case", "CREDIT-MEMO-B", "--file", str(good), "--as", "owner",
        stdout=out,
    )  # fmt: skip
    assert "0 error(s)" in out.getvalue()
    stored = CharterMetric.objects.get(metric_id="hallucination_rate")
    assert stored.agreement == {"rule": "bias_bound", "fraction": 0.5}
    bad = tmp_path / "bad.yaml"
    bad.write_text(example_with_rule().replace("fraction: 0.5", "fraction: 0"), encoding="utf-8")
    with pytest.raises(CommandError) as error:
        call_command(
            "charter_update", "--use-case", "CREDIT-MEMO-B", "--charter", "1", "--file", str(bad),
                "--as", "owner",
            stdout=io.StringIO(),
        )  # fmt: skip
    assert error.value.returncode == 2
    assert "metrics[3].agreement.fraction" in str(error.value)
