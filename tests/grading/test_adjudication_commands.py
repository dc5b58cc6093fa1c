"""``enterpriseval adjudications_export``, ``adjudications_import`` and ``adjudication_take``."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from charters.models import Role
from charters.services.use_cases import membership_grant, membership_revoke
from demo.testing.grading import grade_apart
from grading.adjudication_io import dump_line
from grading.models import Adjudication
from grading.selectors.sessions import session_detail


def first(world):
    return world.session.artefacts.order_by("public_id").first()


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_export_fill_and_import(grading_world, tmp_path):
    artefact = first(grading_world)
    grade_apart(artefact)
    exported = tmp_path / "pending.jsonl"
    _out, err = run(
        "adjudications_export",
        "--session",
        grading_world.session.public_id,
        "--output",
        str(exported),
        "--as",
        grading_world.adjudicator.username,
    )
    assert "5 pending field(s)" in err
    lines = [json.loads(raw) for raw in exported.read_text().splitlines()]
    for line in lines:
        line["value"] = line["grader_values"]["Grader 1"]
    filled = tmp_path / "filled.jsonl"
    filled.write_bytes(b"".join(dump_line(line) for line in lines))
    out, _err = run(
        "adjudications_import",
        "--session",
        grading_world.session.public_id,
        "--file",
        str(filled),
        "--as",
        grading_world.adjudicator.username,
    )
    assert "5 final value(s) recorded on 1 artefact(s)" in out
    assert Adjudication.objects.filter(artefact=artefact).count() == 5
    stdout, _ = run(
        "adjudications_export",
        "--session",
        grading_world.session.public_id,
        "--as",
        grading_world.adjudicator.username,
    )
    assert stdout == ""


def export_as(world, username: str, *options: str) -> tuple[str, str]:
    return run(
        "adjudications_export", "--session", world.session.public_id, *options, "--as", username
    )


def person(world, persona: str):
    return world.graders[0] if persona == "grader" else getattr(world, persona)


@pytest.mark.parametrize("persona", ["adjudicator", "owner", "reviewer"])
def test_the_named_adjudicator_the_owner_and_the_reviewer_export_the_pending_fields(
    grading_world, persona
):
    artefact = first(grading_world)
    grade_apart(artefact)
    out, _err = export_as(grading_world, person(grading_world, persona).username)
    lines = [json.loads(raw) for raw in out.splitlines()]
    # DISSENT's four fields, and s2 supported: asked of Grader 1 only (s2 "not assertive").
    assert {(line["unit_key"], line["field"]) for line in lines} == {
        ("s1", "relevant"),
        ("s2", "assertive"),
        ("s2", "supported"),
        ("k:ke1", "key_element"),
        ("artefact", "value_add"),
    }
    assert {line["artefact"] for line in lines} == {artefact.public_id}
    assert all(line["value"] is None for line in lines)


QUEUE_REFUSAL = (
    "--as: The adjudication queue is for the session's named adjudicators; the charter "
    "owner and the reviewer may read it."
)


@pytest.mark.parametrize("persona", ["grader", "model_owner", "unnamed_adjudicator", "outsider"])
def test_graders_other_members_and_outsiders_are_refused_and_nothing_is_written(
    grading_world, tmp_path, persona
):
    grade_apart(first(grading_world))
    session = grading_world.session.public_id
    if persona == "unnamed_adjudicator":
        user = get_user_model().objects.create_user(username="ada", password="pw-ada")
        membership_grant(
            actor=grading_world.owner,
            use_case=grading_world.use_case,
            user=user,
            role=Role.ADJUDICATOR,
        )
    else:
        user = person(grading_world, persona)
    # To an outsider the session does not exist: the same answer as an unknown id.
    expected = (
        f"--session: no grading session {session!r}" if persona == "outsider" else QUEUE_REFUSAL
    )
    target = tmp_path / "pending.jsonl"
    for output in (["--output", str(target)], []):
        with pytest.raises(CommandError) as raised:
            export_as(grading_world, user.username, *output)
        assert raised.value.returncode == 2 and str(raised.value) == expected
        assert not target.exists()


def test_every_grader_of_the_disputed_artefact_is_refused(grading_world):
    assignments = grade_apart(first(grading_world))
    for assignment in assignments:
        with pytest.raises(CommandError) as raised:
            export_as(grading_world, assignment.grader.username)
        assert raised.value.returncode == 2 and str(raised.value) == QUEUE_REFUSAL


def test_export_refusals_name_the_option(grading_world):
    with pytest.raises(CommandError) as raised:
        export_as(grading_world, "nobody")
    assert raised.value.returncode == 2 and str(raised.value) == "--as: no user 'nobody'"
    with pytest.raises(CommandError) as raised:
        run("adjudications_export", "--session", "nosuch", "--as", grading_world.owner.username)
    assert raised.value.returncode == 2
    assert str(raised.value) == "--session: no grading session 'nosuch'"
    with pytest.raises(CommandError, match="--as"):
        run("adjudications_export", "--session", grading_world.session.public_id)


#: (page, API, command) for the pending fields file: who may have it.
ADMITTED = {
    "adjudicator": (200, 200, True),
    "owner": (200, 200, True),
    "reviewer": (200, 200, True),
    "model_owner": (403, 403, False),
    "grader": (403, 403, False),
    "outsider": (404, 404, False),
}


@pytest.mark.parametrize("persona", sorted(ADMITTED))
def test_the_command_admits_exactly_whom_the_page_and_the_api_admit(grading_world, persona):
    grade_apart(first(grading_world))
    user = person(grading_world, persona)
    args = [grading_world.use_case.key, grading_world.session.public_id]
    page_client = Client()
    page_client.force_login(user)
    page = page_client.get(reverse("grading-adjudication-export", args=args))
    api_client = APIClient()
    api_client.force_authenticate(user)
    api = api_client.get(reverse("api-grading-adjudication-export", args=args))
    try:
        out, _err = export_as(grading_world, user.username)
    except CommandError as error:
        assert error.returncode == 2
        out = None
    assert (page.status_code, api.status_code, out is not None) == ADMITTED[persona]
    if out is not None:
        assert out.encode() == b"".join(page.streaming_content)
        assert out.encode() == b"".join(api.streaming_content)


def test_a_bad_file_prints_every_error_with_its_line_and_exits_2(grading_world, tmp_path):
    artefact = first(grading_world)
    grade_apart(artefact)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(
        dump_line(
            {"artefact": artefact.public_id, "unit_key": "s1", "field": "relevant", "value": "N"}
        )
        + dump_line(
            {"artefact": artefact.public_id, "unit_key": "s1", "field": "assertive", "value": "Y"}
        )
    )
    err = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command(
            "adjudications_import",
            "--session",
            grading_world.session.public_id,
            str(bad),
            "--as",
            grading_world.adjudicator.username,
            stderr=err,
        )
    assert raised.value.returncode == 2
    assert f"{bad}:2: field: The graders agree on s1 assertive" in err.getvalue()
    assert not Adjudication.objects.exists()


def test_import_refusals_name_the_option(grading_world, tmp_path):
    session = grading_world.session.public_id
    adjudicator = grading_world.adjudicator.username
    for args, message in (
        (["--session", "nosuch", "x.jsonl", "--as", adjudicator], "--session: no grading session"),
        (["--session", session, "x.jsonl", "--as", "nobody"], "--as: no user"),
        (["--session", session, str(tmp_path / "absent.jsonl"), "--as", adjudicator], "FILE:"),
        (["--session", session, str(tmp_path), "--as", adjudicator], "FILE:"),
        (["--session", session, "--as", adjudicator], "--file: give the adjudications file once"),
        (
            ["--session", session, "--file", "a.jsonl", "b.jsonl", "--as", adjudicator],
            "--file: give the adjudications file once",
        ),
    ):
        with pytest.raises(CommandError, match=message) as raised:
            run("adjudications_import", *args)
        assert raised.value.returncode == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(CommandError, match="named adjudicators"):
        run(
            "adjudications_import",
            "--session",
            session,
            str(empty),
            "--as",
            grading_world.owner.username,
        )


@pytest.mark.parametrize("command", ["adjudications_import", "adjudication_take"])
def test_a_named_adjudicator_whose_role_was_revoked_resolves_nothing(
    grading_world, tmp_path, command
):
    # Named on the session but no longer an adjudicator of the use case: the web refuses
    # (adjudication_access, write), and so must the commands, before reading anything.
    artefact = first(grading_world)
    grade_apart(artefact)
    adjudicator = grading_world.adjudicator
    membership_revoke(
        actor=grading_world.owner,
        use_case=grading_world.session.use_case,
        user=adjudicator,
        role=Role.ADJUDICATOR,
    )
    assert grading_world.session.adjudicators.filter(pk=adjudicator.pk).exists()
    session = grading_world.session.public_id
    filled = tmp_path / "filled.jsonl"
    filled.write_bytes(b"")
    args = (
        [session, str(filled)]
        if command == "adjudications_import"
        else [session, "--artefact", artefact.public_id, "--grader", "1"]
    )
    with pytest.raises(CommandError) as raised:
        run(command, "--session", *args, "--as", adjudicator.username)
    assert raised.value.returncode == 2
    assert str(raised.value) in (
        "--as: Only the session's named adjudicators resolve its disagreements.",
        f"--session: no grading session {session!r}",
    )
    assert not Adjudication.objects.exists()


def test_take_a_graders_values_for_fields_or_all(grading_world):
    artefact = first(grading_world)
    grade_apart(artefact)
    base = [
        "adjudication_take",
        "--session",
        grading_world.session.public_id,
        "--artefact",
        artefact.public_id,
        "--as",
        grading_world.adjudicator.username,
    ]
    out, _ = run(*base, "--grader", "2", "--field", "s1.relevant", "--note", "cli")
    assert "1 field(s): s1 relevant = N" in out
    with pytest.raises(CommandError, match="choose s2 assertive first") as raised:
        run(*base, "--grader", "1", "--field", "s2.supported")
    assert raised.value.returncode == 2
    out, _ = run(*base, "--grader", "2")
    assert "s2 assertive = N" in out and "Left pending" not in out
    assert "No longer asked, given the final values: s2 supported." in out
    with pytest.raises(CommandError, match="already adjudicated") as raised:
        run(*base, "--grader", "1", "--field", "s1.relevant")
    assert raised.value.returncode == 2
    with pytest.raises(CommandError, match=r"--field: expected UNIT_KEY\.FIELD"):
        run(*base, "--grader", "1", "--field", "relevant")
    with pytest.raises(CommandError, match="is not asked once s2 assertive is 'N'"):
        run(*base, "--grader", "1", "--field", "s2.supported")
    assert Adjudication.objects.filter(artefact=artefact).count() == 4
    assert session_detail(session=grading_world.session).disputes_pending == 0
