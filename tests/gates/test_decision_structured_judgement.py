"""A decision on a structured judgement keeps its classification and success basis (SPEC §4.1),
which the scorecard (web, PDF, export) shows and the comparison page reads."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import jsonschema
import pytest
from django.test import Client
from pypdf import PdfReader

from charters.models import Charter
from demo.testing.grading import make_world
from demo.testing.scorecards import draft_scorecard
from demo.testing.structured import labelled_run, labelled_task_set
from gates.formatting import format_structured
from gates.selectors import _success_difference, decision_comparison
from gates.services import decision_compute

LABELS = ["compliant", "partially compliant", "non-compliant"]
C, P, N = LABELS
GOLD = {"C-1": C, "C-2": P, "C-3": N, "C-4": C, "C-5": N}
GIVEN = {"C-1": C, "C-2": P, "C-3": N, "C-4": P, "C-5": None}  # repeat 0; C-5 no label
SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "scorecards" / "export_schema.json").read_text()
)


@pytest.fixture
def world(db):
    return make_world()


def labelled(world):
    task_set = labelled_task_set(world, labels=LABELS, gold=GOLD)
    return labelled_run(world, task_set, {t: [label] for t, label in GIVEN.items()})


def charter_of(world):
    return Charter.objects.get(use_case=world.use_case, version=1)


def test_the_record_keeps_the_confusion_matrix_and_per_class_scores(world):
    decision = decision_compute(actor=world.owner, charter=charter_of(world), run=labelled(world))
    classification = decision.record["classification"]
    assert classification["columns"] == [*LABELS, "unknown"]
    # by hand: gold C → C-1 given C, C-4 given P; gold P → C-2 P; gold N → C-3 N, C-5 unknown
    assert classification["confusion"] == [[1, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1]]
    assert classification["unknown"] == 1 and classification["n"] == 5
    by_label = {row["label"]: row for row in classification["classes"]}
    assert by_label[P]["precision"] == pytest.approx(50.0)
    assert by_label[N]["recall"] == pytest.approx(50.0)
    # the example charter's rule is `recorded`; these imported outputs carry no flag
    success = decision.record["success"]
    assert success["rule"] == "recorded"
    assert "no success flag imported" in success["reason"]


def test_a_decision_without_a_label_set_records_no_classification(world):
    decision = decision_compute(actor=world.owner, charter=charter_of(world), run=world.runs[0])
    assert "classification" not in decision.record
    assert decision.record["success"]["reason"] == ""  # the example's flags are imported


def test_the_scorecard_shows_per_class_scores_and_the_confusion_matrix_web_pdf_export(world):
    decision = decision_compute(actor=world.owner, charter=charter_of(world), run=labelled(world))
    scorecard = draft_scorecard(world, decision)
    client = Client()
    client.force_login(world.reviewer)
    base = f"/use-cases/{world.use_case.key}/scorecards/{scorecard.pk}/"
    html = client.get(base).content.decode()
    assert 'id="scorecard-class-scores"' in html
    assert '<td class="id">partially compliant</td><td>1</td><td>2</td><td>50.00</td>' in html
    assert "Confusion matrix of the structured judgement" in html
    reader = PdfReader(io.BytesIO(client.get(base + "scorecard.pdf").content))
    text = re.sub(r"\s+", " ", " ".join(page.extract_text() or "" for page in reader.pages))
    assert "Structured judgement: per-class precision and recall" in text
    assert "Confusion matrix of the structured judgement" in text
    data = client.get(f"/api/v1/use-cases/{world.use_case.key}/scorecards/{scorecard.pk}/").json()
    jsonschema.validate(data, SCHEMA)
    assert data["content"]["classification"]["confusion"][2] == [0, 0, 1, 1]


def test_the_comparison_says_when_success_was_determined_differently(world):
    charter = charter_of(world)
    flagged = decision_compute(actor=world.owner, charter=charter, run=world.runs[0])
    unflagged = decision_compute(actor=world.owner, charter=charter, run=labelled(world))
    comparison = decision_comparison(use_case=world.use_case, a=flagged.pk, b=unflagged.pk)
    [success] = [d for d in comparison.run_differences if d.startswith("how task success")]
    assert "A by success flag imported with each output;" in success
    assert "B by success flag imported with each output (undetermined:" in success
    assert not comparison.attributable_to_model_alone
    same = decision_compute(actor=world.owner, charter=charter, run=world.runs[1])
    alike = decision_comparison(use_case=world.use_case, a=flagged.pk, b=same.pk)
    assert not [d for d in alike.run_differences if d.startswith("how task success")]


def test_success_by_label_beside_success_recorded_is_named():
    by_label = {
        "rule": "label_equals_gold",
        "method": "label parsed from each executed output by σ's label format, compared with "
        "the gold label",
        "reason": "",
    }
    recorded = {
        "rule": "recorded",
        "method": "success flag imported with each output",
        "reason": "",
    }
    words = _success_difference(by_label, recorded)
    assert words.startswith("how task success was determined: A by label parsed")
    assert "B by success flag imported" in words
    assert _success_difference(by_label, dict(by_label)) == ""
    assert _success_difference(None, recorded) == ""


def test_the_terminal_text_prints_the_per_class_table_and_confusion_matrix(world):
    # What `enterpriseval decide` prints below the gate (E2 needs a grading session to
    # record one from the command; the text is that of the recorded record).
    decision = decision_compute(actor=world.owner, charter=charter_of(world), run=labelled(world))
    printed = format_structured(decision.record)
    assert "structured judgement: 5 tasks at their first repeat, 1 without a label" in printed
    assert re.search(r"partially compliant +1 +2 +50\.00 +100\.00 +66\.67", printed)
    assert re.search(r"non-compliant +0 +0 +1 +1$", printed, re.MULTILINE)
    assert "success rule: recorded — success flag imported with each output" in printed
    assert format_structured({"gate": {}}) == ""
