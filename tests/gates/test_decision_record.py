"""Recorded decisions: built from metric estimates, hashed, audited, immutable, unblinding."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, transaction

from audit.canonical import sha256_hex
from audit.models import AuditEntry
from charters.models import Charter, UnblindingEvent
from demo.testing.decisions import load_example_estimates
from demo.testing.grading import make_world
from enterpriseval.errors import ServiceError
from gates.algorithm import gate_evaluate
from gates.models import Decision
from gates.services import decision_record, gate_input_for


@pytest.fixture
def world(db):
    return make_world()


def _decide(world, actor=None, mode="conservative"):
    charter = Charter.objects.get(use_case=world.use_case)
    estimates = load_example_estimates("gemini-2.5")
    gate = gate_evaluate(
        gate_input_for(charter=charter, estimates={e.metric_id: e for e in estimates}), mode=mode
    )
    return decision_record(
        actor=actor or world.owner,
        charter=charter,
        run=world.runs[0],
        estimates=estimates,
        gate=gate,
        evidence={"charter_sha256": charter.sha256},
    )


def test_the_decision_follows_the_gate_on_the_charters_thresholds(world):
    decision = _decide(world)
    # Table 4's Gemini 2.5 estimates with the example's illustrative CIs: the lower bound of
    # guidance recall (80, CI lower bound below 75) fails θout on conservative bounds.
    assert decision.status == "Reject"
    assert decision.binding_metric == "guidance_recall"
    gated = [m["id"] for m in decision.record["gate"]["metrics"]]
    assert gated == [
        "citation_precision_lenient",
        "key_element_capture",
        "irrelevance_rate",
        "hallucination_rate",
        "guidance_precision",
        "guidance_recall",
    ]


def test_the_stored_hash_is_the_sha256_of_the_canonical_record(world):
    decision = _decide(world)
    assert decision.sha256 == sha256_hex(decision.canonical_json)
    entry = AuditEntry.objects.get(action="decision.record")
    assert entry.payload["sha256"] == decision.sha256
    assert UnblindingEvent.objects.filter(use_case=world.use_case).count() == 1


def test_a_recorded_decision_cannot_be_changed(world):
    decision = _decide(world)
    with pytest.raises(DatabaseError), transaction.atomic():
        Decision.objects.filter(pk=decision.pk).update(status="Scale")
    decision.refresh_from_db()
    assert decision.status == "Reject"


def test_only_the_charter_owner_or_a_reviewer_records_a_decision(world):
    with pytest.raises(PermissionDenied):
        _decide(world, actor=world.model_owner)
    with pytest.raises(PermissionDenied):
        _decide(world, actor=world.graders[0])
    assert not Decision.objects.exists()


def test_point_mode_is_never_recorded(world):
    with pytest.raises(ServiceError, match="conservative"):
        _decide(world, mode="point")


def test_a_gated_metric_without_an_estimate_makes_the_decision_undetermined(world):
    charter = Charter.objects.get(use_case=world.use_case)
    estimates = [
        e for e in load_example_estimates("gemini-2.5") if e.metric_id != "hallucination_rate"
    ]
    gate = gate_evaluate(
        gate_input_for(charter=charter, estimates={e.metric_id: e for e in estimates}),
        mode="conservative",
    )
    decision = decision_record(
        actor=world.owner,
        charter=charter,
        run=world.runs[0],
        estimates=estimates,
        gate=gate,
        evidence={},
    )
    assert decision.status == "Undetermined"
    assert any("hallucination_rate" in reason for reason in decision.record["gate"]["reasons"])
