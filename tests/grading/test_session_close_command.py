"""``enterpriseval session_close``: the "Close session" button from the command line, through
the access check, service and output of ``POST …/grading/sessions/<id>/close/``."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient

from audit.models import AuditEntry
from grading.models import GradingSession

OWNER_ONLY = "--as: This needs one of these roles on CREDIT-MEMO-B: Charter owner."


def run(world, *args: str) -> str:
    out = io.StringIO()
    call_command(
        "session_close",
        f"--use-case={world.use_case.key}",
        f"--session={world.session.public_id}",
        *args,
        stdout=out,
    )
    return out.getvalue()


def refused(world, *args: str) -> str:
    with pytest.raises(CommandError) as error:
        run(world, *args)
    assert error.value.returncode == 2
    return str(error.value)


def status(world) -> tuple[str, object, int]:
    session = GradingSession.objects.get(pk=world.session.pk)
    closes = AuditEntry.objects.filter(action="grading_session.close").count()
    return session.status, session.closed_at, closes


def test_the_owner_closes_the_session_once(grading_world):
    printed = run(grading_world, "--as=demo-owner")
    session = GradingSession.objects.get(pk=grading_world.session.pk)
    assert session.status == "closed" and session.closed_at is not None
    entry = AuditEntry.objects.get(action="grading_session.close")
    assert entry.actor_id == grading_world.owner.pk and entry.target_id == str(session.pk)
    assert printed == (
        f"Grading session {session.public_id} (Credit memo round 1) of CREDIT-MEMO-B is closed: "
        "no more grades, revisions or adjudications are accepted.\n"
    )
    assert refused(grading_world, "--as=demo-owner") == (
        "--session: The session is already closed."
    )
    assert AuditEntry.objects.filter(action="grading_session.close").count() == 1


def test_json_is_the_session_as_the_close_endpoint_returns_it(grading_world):
    data = json.loads(run(grading_world, "--as=demo-owner", "--format=json"))
    assert data["status"] == "closed" and data["public_id"] == grading_world.session.public_id
    client = APIClient()
    client.force_authenticate(grading_world.owner)
    detail = client.get(
        reverse(
            "api-grading-session-detail",
            args=[grading_world.use_case.key, grading_world.session.public_id],
        )
    )
    assert detail.status_code == 200 and data == detail.json()


@pytest.mark.parametrize(
    ("actor", "expected"),
    [
        ("outsider", "--as: outsider holds no role on CREDIT-MEMO-B"),
        ("demo-grader", OWNER_ONLY),
        ("demo-reviewer", OWNER_ONLY),
        ("demo-adjudicator", OWNER_ONLY),
        ("demo-model-owner", OWNER_ONLY),
    ],
)
def test_only_the_charter_owner_may_close_it(grading_world, actor, expected):
    before = status(grading_world)
    assert refused(grading_world, f"--as={actor}") == expected
    assert status(grading_world) == before == ("open", None, 0)


def test_an_unknown_session_or_user_is_refused_naming_the_option(grading_world):
    with pytest.raises(CommandError) as error:
        call_command(
            "session_close",
            f"--use-case={grading_world.use_case.key}",
            "--session=nope",
            "--as=demo-owner",
            stdout=io.StringIO(),
        )
    assert error.value.returncode == 2
    assert str(error.value) == "--session: no grading session 'nope' in CREDIT-MEMO-B"
    assert refused(grading_world, "--as=nobody") == "--as: no user 'nobody'"
    assert status(grading_world) == ("open", None, 0)
