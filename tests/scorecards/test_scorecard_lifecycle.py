"""Scorecards: assembled from a decision, draft until complete and signed off, then immutable."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, transaction

from audit.canonical import canonical_json, sha256_hex
from audit.models import AuditEntry
from charters.models import Stage, UseCase
from demo.testing.decisions import load_example_estimates
from demo.testing.grading import make_world
from demo.testing.scorecards import (
    COMMITTEE_FIELDS,
    draft_scorecard,
    final_scorecard,
    recorded_decision,
)
from enterpriseval.errors import ConflictError, ImmutableError, ServiceError
from scorecards.fields import TABLE_11
from scorecards.models import Scorecard, ScorecardStatus
from scorecards.selectors import scorecard_content, scorecard_view
from scorecards.services import scorecard_create, scorecard_sign_off, scorecard_update


@pytest.fixture
def world(db):
    return make_world()


def test_a_draft_takes_its_triggers_and_review_date_from_the_charter(world):
    scorecard = draft_scorecard(world)
    charter = scorecard.decision.charter
    assert scorecard.status == ScorecardStatus.DRAFT
    assert scorecard.reevaluation_triggers == charter.reevaluation_triggers
    assert len(scorecard.reevaluation_triggers) == 5
    assert scorecard.next_review_date == dt.date(2027, 3, 31)
    entry = AuditEntry.objects.get(action="scorecard.create")
    assert entry.payload["decision_sha256"] == scorecard.decision.sha256


def test_one_scorecard_per_decision(world):
    scorecard = draft_scorecard(world)
    with pytest.raises(ConflictError, match="already has a scorecard"):
        scorecard_create(actor=world.owner, decision=scorecard.decision)


def test_every_table_11_field_is_assembled_and_only_the_committee_fields_are_missing(world):
    scorecard = draft_scorecard(world)
    content = scorecard_content(scorecard=scorecard)
    assert {key for key, _label in TABLE_11} <= set(content)
    missing = [(row["field"], row["why"]) for row in content["missing"]]
    assert missing == [
        ("failure_modes", "no failure modes recorded"),
        ("failure_modes", "no conditions of use recorded"),
        ("failure_modes", "no compensating controls recorded"),
    ]


def test_gated_metrics_carry_the_decisions_numbers(world):
    scorecard = draft_scorecard(world)
    content = scorecard_content(scorecard=scorecard)
    expected = {e.metric_id: e for e in load_example_estimates("gemini-2.5")}
    gate = {m["id"]: m for m in scorecard.decision.record["gate"]["metrics"]}
    assert [row["id"] for row in content["gated_metrics"]] == list(gate)
    for row in content["gated_metrics"]:
        estimate = expected[row["id"]]
        assert row["estimate"] == pytest.approx(estimate.point)
        assert row["ci"] == pytest.approx([estimate.lo, estimate.hi])
        assert row["nu"] == pytest.approx(gate[row["id"]]["nu"])
        assert row["grading"] == estimate.mode
    # Table 4 (seed 003): Gemini 2.5's hallucination rate 4.0 against θout < 10, θin < 5.
    hallucination = next(r for r in content["gated_metrics"] if r["id"] == "hallucination_rate")
    assert (hallucination["theta_out"], hallucination["theta_in"]) == (10, 5)


def test_identity_names_the_members_by_role(world):
    content = scorecard_content(scorecard=draft_scorecard(world))
    identity = content["identity"]
    assert identity["use_case"] == "CREDIT-MEMO-B"
    assert identity["business_owner"] == ["demo-owner"]
    assert identity["model_owner"] == ["demo-model-owner"]
    assert identity["second_line_reviewer"] == ["demo-reviewer"]
    assert content["risk_tier"] == {
        "autonomy": "A1",
        "autonomy_label": "A1 assistive drafting (human edits every output)",
        "consequence": "C3",
        "consequence_label": "C3 high (material financial, customer or regulatory harm)",
        "intensity": 2,
    }


def test_sign_off_is_refused_while_a_field_is_missing_and_names_it(world):
    scorecard = draft_scorecard(world, failure_modes="Two memos omitted covenants.")
    with pytest.raises(ConflictError) as error:
        scorecard_sign_off(actor=world.reviewer, scorecard=scorecard)
    assert "no conditions of use recorded" in error.value.message
    assert "no compensating controls recorded" in error.value.message
    scorecard.refresh_from_db()
    assert scorecard.status == ScorecardStatus.DRAFT


def test_only_a_second_line_reviewer_signs_off(world):
    scorecard = draft_scorecard(world, **COMMITTEE_FIELDS)
    for user in (world.owner, world.model_owner, world.adjudicator, world.graders[0]):
        with pytest.raises(PermissionDenied):
            scorecard_sign_off(actor=user, scorecard=scorecard)


def test_sign_off_freezes_the_content_with_its_hash_and_advances_the_lifecycle(world):
    scorecard = final_scorecard(world)
    assert scorecard.status == ScorecardStatus.FINAL
    assert scorecard.signed_off_by == world.reviewer
    assert scorecard.content["missing"] == []
    assert scorecard.content["sign_off"]["username"] == "demo-reviewer"
    assert scorecard.content["identity"]["second_line_reviewer"] == ["demo-reviewer"]
    # The SHA-256 is recomputable from the content alone (sorted keys, no spaces, UTF-8).
    text = json.dumps(scorecard.content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert scorecard.sha256 == sha256_hex(text) == sha256_hex(canonical_json(scorecard.content))
    entry = AuditEntry.objects.get(action="scorecard.sign_off")
    assert entry.payload["sha256"] == scorecard.sha256
    assert UseCase.objects.get(pk=world.use_case.pk).stage == Stage.DECIDE
    # Reading it back gives the frozen content, not a re-assembly.
    assert scorecard_content(scorecard=Scorecard.objects.get(pk=scorecard.pk)) == scorecard.content


def test_a_final_scorecard_cannot_be_edited_through_the_service(world):
    scorecard = final_scorecard(world)
    with pytest.raises(ImmutableError, match="is final"):
        scorecard_update(
            actor=world.owner, scorecard=scorecard, changes={"conditions_of_use": "None."}
        )
    with pytest.raises(ImmutableError, match="already final"):
        scorecard_sign_off(actor=world.reviewer, scorecard=scorecard)


def test_the_database_refuses_to_change_a_final_scorecard(world):
    scorecard = final_scorecard(world)
    with pytest.raises(DatabaseError, match="final scorecard is immutable"), transaction.atomic():
        Scorecard.objects.filter(pk=scorecard.pk).update(conditions_of_use="None.")
    scorecard.refresh_from_db()
    assert scorecard.conditions_of_use == COMMITTEE_FIELDS["conditions_of_use"]


def test_a_draft_can_still_change_through_the_database(world):
    scorecard = draft_scorecard(world)
    assert Scorecard.objects.filter(pk=scorecard.pk).update(conditions_of_use="x") == 1


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"next_review_date": "31/03/2027"}, "next_review_date", "is not a date"),
        ({"reevaluation_triggers": [1, 2]}, "reevaluation_triggers", "list of strings"),
        ({"failure_modes": 3}, "failure_modes", "expected text"),
        ({"status": "final"}, "status", "not an editable scorecard field"),
    ],
)
def test_bad_edits_name_the_field(world, changes, field, message):
    scorecard = draft_scorecard(world)
    with pytest.raises(ServiceError, match=message) as error:
        scorecard_update(actor=world.owner, scorecard=scorecard, changes=changes)
    assert error.value.field == field


def test_edits_are_audited_with_before_and_after(world):
    scorecard = draft_scorecard(world)
    scorecard_update(
        actor=world.owner,
        scorecard=scorecard,
        changes={"next_review_date": "2027-06-30", "conditions_of_use": "Pilot team only."},
    )
    entry = AuditEntry.objects.get(action="scorecard.edit")
    assert entry.payload["next_review_date"] == {"before": "2027-03-31", "after": "2027-06-30"}
    assert entry.payload["conditions_of_use"] == {"before": "", "after": "Pilot team only."}


def test_the_view_has_three_things_to_know_and_every_plot(world):
    view = scorecard_view(scorecard=final_scorecard(world))
    assert view.state == "final"
    assert len(view.must_know) == 3
    # Gemini 2.5 on Table 4's illustrative CIs: guidance recall's lower bound is below θout.
    recall = next(
        m for m in view.scorecard.decision.record["gate"]["metrics"] if m["id"] == "guidance_recall"
    )
    assert recall["value_used"] == pytest.approx(66.46, abs=0.005)
    assert view.must_know[0] == (
        "The gate says Reject; the binding metric is Guidance recall with a conservative value "
        "of 66.46 against θout 75 and θin 80."
    )
    titles = [plot.title for plot in view.plots]
    assert titles[:3] == [
        "Metric estimates against their thresholds",
        "ν profile",
        "Efficacy Index and its weight-sensitivity range",
    ]
    assert titles[3] == "Value interval (estimated)"
    assert titles[4] == "pass^k by k"
    kinds = {row.kind for row in view.appendix}
    assert "scorecard" in kinds and "charter" in kinds
    scorecard_rows = [row for row in view.appendix if row.kind == "scorecard"]
    assert {row.sha256 for row in scorecard_rows} == {view.sha256}


def test_a_decision_without_a_value_estimate_keeps_the_scorecard_draft(world):
    decision = recorded_decision(world, value=False)
    scorecard = draft_scorecard(world, decision, **COMMITTEE_FIELDS)
    content = scorecard_content(scorecard=scorecard)
    assert [(row["field"], row["why"]) for row in content["missing"]] == [
        ("value", "no V_annual interval: the charter gives no value inputs")
    ]
    with pytest.raises(ConflictError, match="the charter gives no value inputs"):
        scorecard_sign_off(actor=world.reviewer, scorecard=scorecard)
    assert Scorecard.objects.get(pk=scorecard.pk).status == ScorecardStatus.DRAFT


def test_a_compliance_teams_pack_folder_is_used_without_a_release(world, settings, tmp_path):
    import shutil

    from scorecards.regulatory import DEFAULT_PACK_DIR

    folder = tmp_path / "packs"
    shutil.copytree(DEFAULT_PACK_DIR, folder)
    pack = folder / "sr-11-7.yaml"
    pack.write_text(
        pack.read_text(encoding="utf-8").replace('version: "2026.1"', 'version: "2026.2"'),
        encoding="utf-8",
    )
    settings.SCORECARD_PACK_DIR = str(folder)
    content = scorecard_content(scorecard=draft_scorecard(world))
    versions = {p["id"]: p["version"] for p in content["packs"]}
    assert versions["sr-11-7"] == "2026.2"
    assert versions["eu-ai-act"] == "2026.1"
