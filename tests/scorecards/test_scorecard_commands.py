"""``enterpriseval scorecard_draft|scorecard_fill|scorecard_sign_off|scorecard_pdf``: a
scorecard from a recorded decision to a signed PDF, through the services the pages call."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.canonical import canonical_json, sha256_hex
from audit.models import AuditEntry
from demo.testing.grading import make_world
from demo.testing.scorecards import COMMITTEE_FIELDS, draft_scorecard, recorded_decision
from scorecards.models import Scorecard, ScorecardStatus


@pytest.fixture
def world(db):
    return make_world()


def run(command: str, world, *args: str) -> str:
    out = io.StringIO()
    call_command(command, f"--use-case={world.use_case.key}", *args, stdout=out)
    return out.getvalue()


def refused(command: str, world, *args: str) -> str:
    with pytest.raises(CommandError) as error:
        run(command, world, *args)
    assert error.value.returncode == 2
    return str(error.value)


def committee_file(tmp_path, **overrides) -> str:
    fields = {
        **COMMITTEE_FIELDS,
        "reevaluation_triggers": ["σ's model version changes", "Hallucination above 5%"],
        "next_review_date": "2027-06-30",
        **overrides,
    }
    path = tmp_path / "committee.yaml"
    path.write_text(
        "\n".join(f"{name}: {json.dumps(value)}" for name, value in fields.items()) + "\n",
        encoding="utf-8",
    )
    return str(path)


def test_draft_starts_the_scorecard_of_the_decision(world):
    decision = recorded_decision(world)
    printed = run("scorecard_draft", world, f"--decision={decision.pk}", "--as=demo-owner")
    scorecard = Scorecard.objects.get(decision=decision)
    assert scorecard.status == ScorecardStatus.DRAFT
    assert scorecard.reevaluation_triggers == list(decision.charter.reevaluation_triggers)
    entry = AuditEntry.objects.get(action="scorecard.create")
    assert entry.payload == {"decision": decision.pk, "decision_sha256": decision.sha256}
    assert f"Scorecard {scorecard.pk} of decision {decision.pk}" in printed
    assert (
        "3 field(s) to fill before sign-off: Observed failure modes; conditions of use" in printed
    )
    again = refused("scorecard_draft", world, f"--decision={decision.pk}", "--as=demo-owner")
    assert again == f"--decision: Decision {decision.pk} already has a scorecard; edit that one."
    assert Scorecard.objects.count() == 1


@pytest.mark.parametrize(
    ("actor", "start"),
    [
        ("demo-model-owner", "--as: This needs one of these roles"),
        ("demo-grader", "--as: Graders do not see scorecards"),
        ("outsider", "--as: outsider holds no role on"),
    ],
)
def test_draft_is_for_the_charter_owner_and_reviewer(world, actor, start):
    decision = recorded_decision(world)
    message = refused("scorecard_draft", world, f"--decision={decision.pk}", f"--as={actor}")
    assert message.startswith(start)
    assert not Scorecard.objects.exists()


def test_fill_writes_the_files_fields_with_options_winning_and_records_the_edit(world, tmp_path):
    scorecard = draft_scorecard(world)
    path = committee_file(tmp_path)
    printed = run(
        "scorecard_fill",
        world,
        f"--scorecard={scorecard.pk}",
        f"--file={path}",
        "--conditions-of-use=Analyst edits every section.",
        "--as=demo-reviewer",
    )
    scorecard.refresh_from_db()
    assert scorecard.failure_modes == COMMITTEE_FIELDS["failure_modes"]
    assert scorecard.conditions_of_use == "Analyst edits every section."
    assert scorecard.reevaluation_triggers == [
        "σ's model version changes",
        "Hallucination above 5%",
    ]
    assert scorecard.next_review_date == dt.date(2027, 6, 30)
    entry = AuditEntry.objects.get(action="scorecard.edit")
    assert entry.payload["conditions_of_use"]["after"] == "Analyst edits every section."
    assert entry.payload["next_review_date"]["after"] == "2027-06-30"
    assert "complete, ready for sign-off" in printed


def test_fill_refuses_a_bad_field_in_the_file_naming_its_line(world, tmp_path):
    scorecard = draft_scorecard(world)
    path = committee_file(tmp_path, next_review_date="next spring")
    message = refused(
        "scorecard_fill", world, f"--scorecard={scorecard.pk}", f"--file={path}", "--as=demo-owner"
    )
    assert message.startswith(f"{path}:5: next_review_date: ")
    scorecard.refresh_from_db()
    assert scorecard.failure_modes == "" and not AuditEntry.objects.filter(action="scorecard.edit")


def test_fill_refuses_an_unknown_field_and_a_bad_option(world, tmp_path):
    scorecard = draft_scorecard(world)
    path = tmp_path / "extra.yaml"
    path.write_text("failure_modes: x\nverdict: go\n", encoding="utf-8")
    message = refused(
        "scorecard_fill", world, f"--scorecard={scorecard.pk}", f"--file={path}", "--as=demo-owner"
    )
    assert message.startswith(f"{path}:2: verdict: not a scorecard field")
    message = refused(
        "scorecard_fill",
        world,
        f"--scorecard={scorecard.pk}",
        "--next-review-date=31/12/2027",
        "--as=demo-owner",
    )
    assert message.startswith("--next-review-date: ")
    message = refused("scorecard_fill", world, f"--scorecard={scorecard.pk}", "--as=demo-owner")
    assert message.startswith("--file: give a file or at least one field option")


def test_sign_off_freezes_a_complete_scorecard_and_its_hash_is_recomputable(world):
    scorecard = draft_scorecard(world, **COMMITTEE_FIELDS)
    printed = run("scorecard_sign_off", world, f"--scorecard={scorecard.pk}", "--as=demo-reviewer")
    scorecard.refresh_from_db()
    assert scorecard.status == ScorecardStatus.FINAL
    assert scorecard.sha256 == sha256_hex(canonical_json(scorecard.content))
    entry = AuditEntry.objects.get(action="scorecard.sign_off")
    assert entry.payload["sha256"] == scorecard.sha256 and entry.actor.username == "demo-reviewer"
    assert f"final, SHA-256 {scorecard.sha256}" in printed
    message = refused(
        "scorecard_fill",
        world,
        f"--scorecard={scorecard.pk}",
        "--failure-modes=x",
        "--as=demo-owner",
    )
    assert f"Scorecard {scorecard.pk} is final" in message


def test_sign_off_is_refused_to_the_owner_and_while_fields_are_missing(world):
    scorecard = draft_scorecard(world)
    message = refused("scorecard_sign_off", world, f"--scorecard={scorecard.pk}", "--as=demo-owner")
    assert message.startswith("--as: This needs one of these roles")
    message = refused(
        "scorecard_sign_off", world, f"--scorecard={scorecard.pk}", "--as=demo-reviewer"
    )
    assert message.startswith("The scorecard cannot be final while fields are missing")
    scorecard.refresh_from_db()
    assert scorecard.status == ScorecardStatus.DRAFT
    message = refused("scorecard_sign_off", world, "--scorecard=999999", "--as=demo-reviewer")
    assert message == f"--scorecard: no scorecard 999999 in {world.use_case.key}"


def test_pdf_writes_the_pdf_kept_at_sign_off(world, tmp_path):
    scorecard = draft_scorecard(world, **COMMITTEE_FIELDS)
    run("scorecard_sign_off", world, f"--scorecard={scorecard.pk}", "--as=demo-reviewer")
    scorecard.refresh_from_db()
    out = tmp_path / "scorecard.pdf"
    printed = run(
        "scorecard_pdf", world, f"--scorecard={scorecard.pk}", f"--out={out}", "--as=demo-owner"
    )
    data = out.read_bytes()
    assert data.startswith(b"%PDF") and hashlib.sha256(data).hexdigest() == scorecard.pdf_sha256
    assert f"SHA-256 {scorecard.pdf_sha256}" in printed and "(final)" in printed


def test_pdf_of_a_draft_is_rendered_and_refused_to_graders(world, tmp_path):
    scorecard = draft_scorecard(world)
    out = tmp_path / "draft.pdf"
    run("scorecard_pdf", world, f"--scorecard={scorecard.pk}", f"--out={out}", "--as=demo-reviewer")
    assert out.read_bytes().startswith(b"%PDF")
    message = refused(
        "scorecard_pdf", world, f"--scorecard={scorecard.pk}", f"--out={out}", "--as=demo-grader"
    )
    assert message.startswith("--as: Graders do not see scorecards")
    message = refused(
        "scorecard_pdf",
        world,
        f"--scorecard={scorecard.pk}",
        f"--out={tmp_path}/missing/dir/x.pdf",
        "--as=demo-owner",
    )
    assert message.startswith("--out: ")


def test_the_documented_committee_file_fills_every_field(world, tmp_path):
    text = Path(__file__).resolve().parents[2].joinpath("docs", "formats.md").read_text()
    section = text[text.index("## Scorecard committee fields") :]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "committee.yaml"
    path.write_text(example, encoding="utf-8")
    scorecard = draft_scorecard(world)
    run("scorecard_fill", world, f"--scorecard={scorecard.pk}", f"--file={path}", "--as=demo-owner")
    scorecard.refresh_from_db()
    assert scorecard.next_review_date == dt.date(2027, 6, 30)
    assert len(scorecard.reevaluation_triggers) == 2
    assert scorecard.compensating_controls.startswith("Figures checked against spreads")
