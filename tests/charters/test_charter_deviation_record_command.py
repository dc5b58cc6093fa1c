"""``enterpriseval charter_deviation_record``: the "Record deviation" form from the command
line, through the service and access check of ``POST …/charters/<version>/deviation/``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient

from audit.models import AuditEntry
from charters.charter_document import document_from_text
from charters.models import Charter, Deviation, Role
from charters.services.charters import (
    charter_create,
    charter_revise,
    charter_sign,
    use_case_unblind,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "credit_memo" / "charter.yaml"
KEY = "CREDIT-MEMO-B"
SIGNERS = (
    ("owner", Role.CHARTER_OWNER),
    ("model_owner", Role.MODEL_OWNER),
    ("reviewer", Role.REVIEWER),
)


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(
        "charter_deviation_record", "--use-case", KEY, *args, stdout=out, stderr=io.StringIO()
    )
    return out.getvalue()


def refused(*args: str) -> str:
    with pytest.raises(CommandError) as error:
        run(*args)
    assert error.value.returncode == 2
    return str(error.value)


def nothing_recorded() -> bool:
    return (
        not Deviation.objects.exists()
        and not AuditEntry.objects.filter(action="charter.deviation").exists()
    )


@pytest.fixture
def signed(personas) -> Charter:
    document = document_from_text(EXAMPLE.read_text(encoding="utf-8"), fmt="yaml")
    charter = charter_create(actor=personas.owner, use_case=personas.use_case, document=document)
    for name, role in SIGNERS:
        charter_sign(actor=personas.by_name(name), charter=charter, role=role)
    charter.refresh_from_db()
    return charter


@pytest.fixture
def revision(personas, signed) -> Charter:
    """A draft v2 started while results were blind."""
    return charter_revise(actor=personas.owner, charter=signed, reason="")


@pytest.fixture
def unblinded(personas, revision) -> Charter:
    """Results are shown while v2 is still a draft: v2 is now an unrecorded deviation."""
    use_case_unblind(actor=personas.reviewer, use_case=personas.use_case, reason="committee")
    return revision


def test_it_records_the_deviation_and_the_draft_can_then_be_signed(personas, signed, unblinded):
    printed = run("--charter", "2", "--reason", "  Late threshold change. ", "--as", "owner")
    deviation = Deviation.objects.get()
    assert (deviation.charter_id, deviation.previous_id) == (unblinded.pk, signed.pk)
    assert deviation.reason == "Late threshold change."
    assert deviation.created_by_id == personas.owner.pk
    entry = AuditEntry.objects.get(action="charter.deviation")
    assert entry.actor_id == personas.owner.pk and entry.target_id == str(unblinded.pk)
    assert entry.payload == {
        "from_version": 1,
        "to_version": 2,
        "previous_sha256": signed.sha256,
        "reason": "Late threshold change.",
    }
    assert printed == (
        "Deviation of charter v2 of CREDIT-MEMO-B from v1 recorded with the reason "
        "'Late threshold change.'; the draft may now be signed.\n"
    )
    for name, role in SIGNERS:
        charter_sign(actor=personas.by_name(name), charter=unblinded, role=role)
    unblinded.refresh_from_db()
    assert unblinded.is_frozen


def test_json_is_the_version_as_the_api_returns_it(personas, unblinded):
    data = json.loads(
        run("--charter", "2", "--reason", "Late change.", "--as", "owner", "--format", "json")
    )
    assert (data["version"], data["status"]) == (2, "draft")
    assert data["deviation"]["reason"] == "Late change."
    client = APIClient()
    client.force_authenticate(personas.owner)
    response = client.get(reverse("api-charter-detail", kwargs={"key": KEY, "version": 2}))
    assert response.status_code == 200
    assert data == response.json()


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("outsider", "--as: outsider holds no role on CREDIT-MEMO-B"),
        ("grader", "--as: This needs one of these roles on CREDIT-MEMO-B: Charter owner."),
        ("reviewer", "--as: This needs one of these roles on CREDIT-MEMO-B: Charter owner."),
        ("model_owner", "--as: This needs one of these roles on CREDIT-MEMO-B: Charter owner."),
    ],
)
def test_only_a_charter_owner_may_record_it(personas, unblinded, persona, expected):
    message = refused("--charter", "2", "--reason", "Late change.", "--as", persona)
    assert message == expected
    assert nothing_recorded()


def test_it_refuses_an_unknown_user_use_case_and_version(personas, unblinded):
    assert refused("--charter", "2", "--reason", "x", "--as", "nobody") == (
        "--as: no user 'nobody'"
    )
    with pytest.raises(CommandError) as error:
        call_command(
            "charter_deviation_record",
            "--use-case",
            "NOPE",
            "--charter",
            "2",
            "--reason",
            "x",
            "--as",
            "owner",
            stdout=io.StringIO(),
        )
    assert error.value.returncode == 2 and str(error.value) == "--use-case: no use case 'NOPE'"
    assert refused("--charter", "9", "--reason", "x", "--as", "owner") == (
        "--charter: CREDIT-MEMO-B has no charter v9"
    )
    assert nothing_recorded()


def test_a_blank_reason_is_refused_naming_the_option(personas, unblinded):
    assert refused("--charter", "2", "--reason", "   ", "--as", "owner") == (
        "--reason: a deviation needs a reason (SPEC §2)"
    )
    assert nothing_recorded()


def test_it_refuses_what_is_not_a_pending_deviation(personas, signed, revision):
    assert refused("--charter", "2", "--reason", "x", "--as", "owner") == (
        "--charter: results of CREDIT-MEMO-B have not been shown: v2 is a revision, not a deviation"
    )
    assert refused("--charter", "1", "--reason", "x", "--as", "owner") == (
        "--charter: charter v1 is signed and frozen"
    )
    use_case_unblind(actor=personas.reviewer, use_case=personas.use_case, reason="committee")
    run("--charter", "2", "--reason", "Late change.", "--as", "owner")
    assert refused("--charter", "2", "--reason", "Again.", "--as", "owner") == (
        "--charter: the deviation of charter v2 is already recorded"
    )
    assert Deviation.objects.count() == 1
    assert AuditEntry.objects.filter(action="charter.deviation").count() == 1
