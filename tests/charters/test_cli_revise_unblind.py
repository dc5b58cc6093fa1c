"""``enterpriseval charter_revise`` and ``use_case_unblind``: the revise button and the
"Show results" confirmation from the command line, through the services the API calls."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient

from audit.models import AuditEntry
from charters.charter_document import document_from_text
from charters.models import Charter, Deviation, Role, UnblindingEvent
from charters.selectors.charters import charter_document_build
from charters.services.charters import charter_create, charter_sign, use_case_unblind

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "credit_memo" / "charter.yaml"
KEY = "CREDIT-MEMO-B"


def run(command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, "--use-case", KEY, *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def refused(command: str, *args: str) -> str:
    with pytest.raises(CommandError) as error:
        run(command, *args)
    assert error.value.returncode == 2
    return str(error.value)


def api_get(user, name: str, **kwargs) -> dict:
    client = APIClient()
    client.force_authenticate(user)
    response = client.get(reverse(name, kwargs={"key": KEY, **kwargs}))
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def draft(personas) -> Charter:
    document = document_from_text(EXAMPLE.read_text(encoding="utf-8"), fmt="yaml")
    return charter_create(actor=personas.owner, use_case=personas.use_case, document=document)


@pytest.fixture
def signed(personas, draft) -> Charter:
    for user, role in (
        (personas.owner, Role.CHARTER_OWNER),
        (personas.model_owner, Role.MODEL_OWNER),
        (personas.reviewer, Role.REVIEWER),
    ):
        charter_sign(actor=user, charter=draft, role=role)
    draft.refresh_from_db()
    return draft


# --------------------------------------------------------------------------- charter_revise


def test_revise_before_unblinding_starts_a_draft_copy_without_a_reason(personas, signed):
    printed = run("charter_revise", "--charter", "1", "--as", "owner")
    revision = Charter.objects.get(use_case=personas.use_case, version=2)
    assert not revision.is_frozen and revision.previous_id == signed.pk
    assert revision.revision_reason == "" and not Deviation.objects.exists()
    before = charter_document_build(charter=signed)
    after = charter_document_build(charter=revision)
    assert after.pop("version") == 2 and before.pop("version") == 1
    assert after == before and revision.metrics.count() == signed.metrics.count() == 13
    entry = AuditEntry.objects.get(action="charter.revise")
    assert entry.actor_id == personas.owner.pk and entry.target_id == str(revision.pk)
    assert entry.payload == {
        "from_version": 1,
        "to_version": 2,
        "previous_sha256": signed.sha256,
        "reason": "",
    }
    assert printed.startswith(
        "Charter v2 of CREDIT-MEMO-B started as a draft copy of signed v1; edit it with "
        "charter_update, then sign it."
    )
    assert "deviation" not in printed


def test_revise_json_is_the_new_version_as_the_api_gives_it(personas, signed):
    printed = run(
        "charter_revise",
        "--charter",
        "1",
        "--reason",
        "Tighter floor.",
        "--as",
        "owner",
        "--format",
        "json",
    )
    data = json.loads(printed)
    assert (data["version"], data["previous_version"], data["status"]) == (2, 1, "draft")
    assert data["revision_reason"] == "Tighter floor." and data["deviation"] is None
    assert data == api_get(personas.owner, "api-charter-detail", version=2)


def test_after_unblinding_revise_needs_a_reason_and_records_a_deviation(personas, signed):
    use_case_unblind(actor=personas.reviewer, use_case=personas.use_case, reason="committee")
    message = refused("charter_revise", "--charter", "1", "--reason", "  ", "--as", "owner")
    assert message.startswith("--reason: results of CREDIT-MEMO-B were first shown on ")
    assert message.endswith("any change is now a deviation and needs a reason (SPEC §2)")
    assert (
        Charter.objects.count() == 1
        and not AuditEntry.objects.filter(
            action__in=["charter.revise", "charter.deviation"]
        ).exists()
    )
    printed = run(
        "charter_revise", "--charter", "1", "--reason", "More guidance items.", "--as", "owner"
    )
    deviation = Deviation.objects.get()
    assert (deviation.charter.version, deviation.previous_id) == (2, signed.pk)
    assert deviation.reason == "More guidance items." and deviation.created_by == personas.owner
    entry = AuditEntry.objects.get(action="charter.deviation")
    assert entry.payload["reason"] == "More guidance items." and entry.payload["to_version"] == 2
    assert "this revision is a deviation, recorded with the reason 'More guidance items.'" in (
        printed
    )
    detail = api_get(personas.owner, "api-charter-detail", version=2)
    assert detail["deviation"]["reason"] == "More guidance items."


def test_revise_refuses_a_draft_an_older_version_and_an_unknown_one(personas, signed):
    run("charter_revise", "--charter", "1", "--as", "owner")
    assert refused("charter_revise", "--charter", "2", "--as", "owner").startswith(
        "--charter: charter v2 of CREDIT-MEMO-B is a draft: edit it"
    )
    assert refused("charter_revise", "--charter", "1", "--as", "owner").startswith(
        "--charter: charter v2 of CREDIT-MEMO-B already exists (a draft); revise the latest"
    )
    assert (
        refused("charter_revise", "--charter", "9", "--as", "owner")
        == "--charter: CREDIT-MEMO-B has no charter v9"
    )
    assert Charter.objects.count() == 2


@pytest.mark.parametrize("actor", ["model_owner", "reviewer", "grader", "adjudicator"])
def test_only_the_charter_owner_revises(personas, signed, actor):
    message = refused("charter_revise", "--charter", "1", "--as", actor)
    assert message.startswith("--as: ")
    assert Charter.objects.count() == 1


def test_revise_refuses_an_outsider_unknown_user_and_a_bad_option(personas, signed):
    assert (
        refused("charter_revise", "--charter", "1", "--as", "outsider")
        == "--as: outsider holds no role on CREDIT-MEMO-B"
    )
    assert refused("charter_revise", "--charter", "1", "--as", "nobody") == "--as: no user 'nobody'"
    with pytest.raises(CommandError) as error:
        run("charter_revise", "--charter", "one", "--as", "owner")
    assert "argument --charter: invalid int value: 'one'" in str(error.value)
    assert Charter.objects.count() == 1


# --------------------------------------------------------------------------- use_case_unblind


def test_the_first_unblinding_fixes_the_charter_and_later_ones_are_recorded(personas, signed):
    printed = run("use_case_unblind", "--reason", "interim results to committee", "--as", "owner")
    event = UnblindingEvent.objects.get()
    assert (event.actor, event.charter_id, event.reason) == (
        personas.owner,
        signed.pk,
        "interim results to committee",
    )
    entry = AuditEntry.objects.get(action="usecase.unblind")
    assert entry.payload == {
        "charter_version": 1,
        "charter_sha256": signed.sha256,
        "reason": "interim results to committee",
        "first": True,
    }
    assert printed.startswith(
        "Results of CREDIT-MEMO-B shown for the first time: signed charter v1 is now fixed as "
        "the pre-registration"
    )
    again = run("use_case_unblind", "--reason", "model risk review", "--as", "reviewer")
    assert UnblindingEvent.objects.count() == 2
    assert [e.payload["first"] for e in AuditEntry.objects.filter(action="usecase.unblind")] == [
        True,
        False,
    ]
    assert again.startswith("Showing of CREDIT-MEMO-B's results recorded (charter v1); they were")
    assert f"first shown on {event.occurred_at:%Y-%m-%d %H:%M} (charter v1)" in again


def test_unblind_json_is_what_the_api_answers(personas, signed):
    data = json.loads(
        run("use_case_unblind", "--reason", "committee", "--as", "reviewer", "--format", "json")
    )
    event = UnblindingEvent.objects.get()
    assert data == {
        "charter_version": 1,
        "reason": "committee",
        "actor": "reviewer",
        "occurred_at": data["occurred_at"],
        "first": True,
    }
    detail = api_get(personas.owner, "api-charter-detail", version=1)
    assert data["occurred_at"] == detail["first_unblinded_at"]
    assert event.occurred_at.isoformat().replace("+00:00", "Z") == data["occurred_at"]
    client = APIClient()
    client.force_authenticate(personas.owner)
    response = client.post(
        reverse("api-use-case-unblind", kwargs={"key": KEY}), {"reason": "x"}, format="json"
    )
    assert response.status_code == 201
    assert set(response.json()) == set(data) and response.json()["first"] is False
    second = json.loads(
        run("use_case_unblind", "--reason", "again", "--as", "owner", "--format", "json")
    )
    assert second["first"] is False


@pytest.mark.parametrize(
    ("reason", "start"),
    [
        ("   ", "--reason: say why and to whom results are shown"),
        ("x" * 301, "--reason: the reason has 301 characters; at most 300"),
    ],
)
def test_unblind_refuses_a_missing_or_long_reason(personas, signed, reason, start):
    assert refused("use_case_unblind", "--reason", reason, "--as", "owner") == start
    assert not UnblindingEvent.objects.exists()


def test_unblind_before_a_signed_charter_is_refused(personas, draft):
    message = refused("use_case_unblind", "--reason", "peek", "--as", "owner")
    assert message.startswith("--use-case: CREDIT-MEMO-B has no signed charter")
    assert (
        not UnblindingEvent.objects.exists()
        and not AuditEntry.objects.filter(action="usecase.unblind").exists()
    )


@pytest.mark.parametrize("actor", ["model_owner", "grader", "adjudicator"])
def test_only_the_charter_owner_or_reviewer_unblinds(personas, signed, actor):
    assert refused("use_case_unblind", "--reason", "peek", "--as", actor).startswith("--as: ")
    assert not UnblindingEvent.objects.exists()


def test_unblind_refuses_an_outsider_and_an_unknown_use_case(personas, signed):
    assert (
        refused("use_case_unblind", "--reason", "peek", "--as", "outsider")
        == "--as: outsider holds no role on CREDIT-MEMO-B"
    )
    with pytest.raises(CommandError) as error:
        call_command(
            "use_case_unblind",
            "--use-case",
            "NOPE",
            "--reason",
            "x",
            "--as",
            "owner",
            stdout=io.StringIO(),
        )
    assert error.value.returncode == 2 and str(error.value) == "--use-case: no use case 'NOPE'"
    assert not UnblindingEvent.objects.exists()


def test_a_missing_reason_exits_2_from_the_command_line_naming_the_option():
    result = subprocess.run(
        [sys.executable, "manage.py", "use_case_unblind", "--use-case", KEY, "--as", "owner"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "the following arguments are required: --reason" in result.stderr
