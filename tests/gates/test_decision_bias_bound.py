"""A decision under a pre-registered bias-bound rule: its figures on the record, page and scorecard.

Recorded as users record (``decision_create`` on a closed session). The charter of the demo
world is signed with the default κ/α rule, so its document as the agreement selector reads
it is given the bias-bound rule for hallucination rate (fraction 0.5 of |θin − θout| = 5).
"""

from __future__ import annotations

import copy

import pytest

import grading.selectors.agreement as agreement_selectors
from charters.models import Charter
from demo.testing.grading import fill, make_world
from gates.services import decision_create
from grading.agreement import metric_bias_bound
from grading.models import Assignment
from grading.selectors.agreement import session_ratings
from grading.services.grades import assignment_submit
from scorecards.services import scorecard_create


@pytest.fixture
def world(db, monkeypatch):
    built = agreement_selectors.charter_document_build

    def with_bias_bound(*, charter):
        document = copy.deepcopy(built(charter=charter))
        for entry in document["metrics"]:
            if entry["id"] == "hallucination_rate":
                entry["agreement"] = {"rule": "bias_bound", "fraction": 0.5}
        return document

    monkeypatch.setattr(agreement_selectors, "charter_document_build", with_bias_bound)
    made = make_world(sample_size=8)
    for assignment in Assignment.objects.filter(session=made.session).order_by("public_id"):
        fill(assignment)  # both graders give the same labels: no disagreement to adjudicate
        assignment_submit(actor=assignment.grader, assignment=assignment)
    return made


def test_the_decision_records_and_shows_the_bias_bound(world, client):
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    decision = decision_create(
        actor=world.owner, charter=charter, run=world.runs[0], session=world.session
    )
    gated = {m["id"]: m for m in decision.record["gate"]["metrics"]}
    verdict = gated["hallucination_rate"]["agreement"]
    assert verdict["rule"] == "bias_bound"
    assert (verdict["fraction"], verdict["gap"], verdict["threshold"]) == (0.5, 5.0, 2.5)
    rows = session_ratings(session=world.session).rows
    expected = metric_bias_bound(rows, "hallucination_rate", confidence=1 - (1 - 0.95) / 2)
    assert charter.confidence == 0.95
    assert verdict["bias"]["upper"] == pytest.approx(expected.upper, abs=1e-6)
    assert verdict["bias"]["n_denominator"] == expected.n_denominator > 0
    assert verdict["eligible"] is (expected.upper < 2.5)
    assert gated["hallucination_rate"]["eligible"] is verdict["eligible"]
    # the other human-graded metrics keep the default κ/α rule
    assert gated["citation_precision_lenient"]["agreement"]["rule"] == "kappa"

    client.force_login(world.owner)
    page = client.get(f"/use-cases/{world.use_case.key}/decisions/{decision.pk}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "bias bound: upper limit of the final labels" in text
    assert "bias of the final labels: ≤ " in text and "97.5 % one-sided upper limit" in text

    scorecard = scorecard_create(actor=world.owner, decision=decision)
    card = client.get(f"/use-cases/{world.use_case.key}/scorecards/{scorecard.pk}/")
    assert card.status_code == 200
    card_text = card.content.decode()
    assert "Hallucination rate — agreement rule: bias bound — upper limit" in card_text
    assert "× |θin − θout| = 2.5 points (bound " in card_text
    assert "97.5 % one-sided, from graders' error rates on" in card_text
