"""Recorded decisions: built from metric estimates, hashed, audited, immutable, unblinding."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, transaction

from audit.canonical import canonical_json, sha256_hex
from audit.models import AuditEntry
from charters.models import Charter, CharterMetric, UnblindingEvent
from demo.testing.decisions import load_example_estimates
from demo.testing.grading import make_world
from enterpriseval.errors import ConflictError, ServiceError
from gates.algorithm import gate_evaluate
from gates.models import Decision
from gates.services import decision_record, gate_input_for, value_for


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


def _estimates():
    return {e.metric_id: e for e in load_example_estimates("gemini-2.5")}


def _signed_metric(charter, metric_id, **fields):
    """Return ``charter`` (in memory) with fields of one metric in its signed content changed."""
    document = json.loads(charter.canonical_json)
    entry = next(m for m in document["metrics"] if m["id"] == metric_id)
    entry.update(fields)
    charter.canonical_json = canonical_json(document)
    return charter


def test_the_gate_reads_the_signed_content_not_the_charter_metric_rows(world, triggers_lifted):
    charter = Charter.objects.get(use_case=world.use_case)
    signed = gate_input_for(charter=charter, estimates=_estimates())
    with triggers_lifted("charters_chartermetric"):
        rows = CharterMetric.objects.filter(charter=charter)
        rows.filter(metric_id="hallucination_rate").update(theta_out=99.0, theta_in=98.0, weight=7)
        rows.filter(metric_id="guidance_recall").delete()
    charter = Charter.objects.get(pk=charter.pk)
    assert gate_input_for(charter=charter, estimates=_estimates()) == signed
    hallucination = next(m for m in signed.metrics if m.id == "hallucination_rate")
    assert (hallucination.theta_out, hallucination.theta_in, hallucination.weight) == (10, 5, 1)
    assert _decide(world).binding_metric == "guidance_recall"


def test_the_gate_takes_the_direction_from_the_signed_content_not_the_catalogue(world):
    charter = Charter.objects.get(use_case=world.use_case)
    charter = _signed_metric(
        charter, "hallucination_rate", direction="higher", theta_out=5, theta_in=10
    )
    gate_input = gate_input_for(charter=charter, estimates=_estimates())
    hallucination = next(m for m in gate_input.metrics if m.id == "hallucination_rate")
    assert (hallucination.direction, hallucination.theta_out, hallucination.theta_in) == (
        "higher",
        5.0,
        10.0,
    )


@pytest.mark.parametrize("name", ["theta_out", "theta_in", "weight", "direction"])
def test_a_value_missing_from_the_signed_content_is_refused_naming_it(world, name):
    charter = _signed_metric(
        Charter.objects.get(use_case=world.use_case), "hallucination_rate", **{name: None}
    )
    with pytest.raises(ConflictError) as raised:
        gate_input_for(charter=charter, estimates=_estimates())
    assert raised.value.field == f"metrics[hallucination_rate].{name}"
    assert raised.value.message == (
        f"Charter v1 of {world.use_case.key}: the signed content has no {name} for "
        "hallucination_rate, which the gate needs; sign a revised charter that states it."
    )


def test_a_draft_charter_is_not_gated(world):
    charter = Charter.objects.get(use_case=world.use_case)
    charter.frozen_at = None
    with pytest.raises(ConflictError, match="v1 is a draft: a decision needs the signed charter"):
        gate_input_for(charter=charter, estimates=_estimates())


def test_the_value_estimate_reads_the_signed_value_inputs_not_the_charter_row(world):
    charter = Charter.objects.get(use_case=world.use_case)
    assert charter.value_inputs, "the example charter states value inputs"
    signed = value_for(charter=charter, run=world.runs[0], session=None, judge=None, study=None)
    assert "unavailable" not in signed
    charter.value_inputs = {}
    charter.measurement_mode = "other"
    assert (
        value_for(charter=charter, run=world.runs[0], session=None, judge=None, study=None)
        == signed
    )
    document = json.loads(charter.canonical_json)
    document["value_inputs"] = {}
    charter.canonical_json = canonical_json(document)
    assert value_for(charter=charter, run=world.runs[0], session=None, judge=None, study=None) == {
        "unavailable": "the charter gives no value inputs"
    }
