"""``enterpriseval grades_export`` and ``grades_import``: files out and in, errors by line."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from audit.models import AuditEntry
from charters.models import Role
from charters.services.use_cases import membership_grant
from demo.testing.grading import fill
from grading.models import AssignmentStatus
from grading.services.grades import assignment_submit


def submit_all(world) -> None:
    for grader in world.graders:
        for assignment in world.assignments_of(grader):
            fill(assignment)
            assignment_submit(actor=grader, assignment=assignment)


def export(world, *options: str, actor: str = "demo-owner") -> tuple[str, str]:
    """Run the export as ``actor`` (the charter owner by default); return its output and errors."""
    stdout, stderr = StringIO(), StringIO()
    call_command(
        "grades_export",
        "--use-case",
        world.use_case.key,
        "--session",
        world.session.public_id,
        *options,
        "--as",
        actor,
        stdout=stdout,
        stderr=stderr,
    )
    return stdout.getvalue(), stderr.getvalue()


def person(world, persona: str):
    return world.graders[0] if persona == "grader" else getattr(world, persona)


def import_file(world, path) -> tuple[str, str, CommandError | None]:
    """Run the import as the charter owner; return its output, errors and failure if any."""
    stdout, stderr = StringIO(), StringIO()
    try:
        call_command(
            "grades_import",
            "--use-case",
            world.use_case.key,
            "--session",
            world.session.public_id,
            "--file",
            str(path),
            "--as",
            "demo-owner",
            stdout=stdout,
            stderr=stderr,
        )
    except CommandError as error:
        return stdout.getvalue(), stderr.getvalue(), error
    return stdout.getvalue(), stderr.getvalue(), None


def test_export_writes_one_line_per_assignment_to_stdout_or_a_file(grading_world, tmp_path):
    submit_all(grading_world)
    out, _err = export(grading_world)
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 16 and all(line["submitted"] for line in lines)
    target = tmp_path / "grades.jsonl"
    _out, err = export(grading_world, "--final", "--provenance", "--output", str(target))
    final = [json.loads(line) for line in target.read_text().splitlines()]
    assert len(final) == 8 and {line["kind"] for line in final} == {"output"}
    assert f"{target}: 8 line(s)" in err


def test_an_exported_file_imports_back_as_a_no_op(grading_world, tmp_path):
    submit_all(grading_world)
    target = tmp_path / "grades.jsonl"
    export(grading_world, "--output", str(target))
    out, _err, failure = import_file(grading_world, target)
    assert failure is None and "16 unchanged" in out
    assert AuditEntry.objects.filter(action="grades.import").count() == 1


def test_complete_grades_are_imported_as_the_graders_submissions(grading_world, tmp_path):
    for grader in grading_world.graders:
        for assignment in grading_world.assignments_of(grader):
            fill(assignment)  # autosaved, not submitted
    out, _err = export(grading_world)
    lines = [{**json.loads(line), "submitted": True, "seconds": 75.5} for line in out.splitlines()]
    target = tmp_path / "graded-elsewhere.jsonl"
    target.write_text("".join(json.dumps(line) + "\n" for line in lines))

    out, _err, failure = import_file(grading_world, target)

    assert failure is None and "16 submitted" in out
    session = grading_world.session
    assert set(session.assignments.values_list("status", "seconds_spent")) == {
        (AssignmentStatus.SUBMITTED, 75.5)
    }
    assert AuditEntry.objects.filter(action="assignment.submit").count() == 16


def test_a_bad_file_exits_2_printing_file_line_field_and_message(grading_world, tmp_path):
    submit_all(grading_world)
    out, _err = export(grading_world)
    lines = out.splitlines()
    second = json.loads(lines[1])
    second["grades"]["artefact"]["value_add"] = "9"
    lines[1] = json.dumps(second)
    lines.insert(3, "not json")
    target = tmp_path / "bad.jsonl"
    target.write_text("\n".join(lines) + "\n")
    audit_before = AuditEntry.objects.count()

    _out, err, failure = import_file(grading_world, target)

    assert failure is not None and failure.returncode == 2
    assert "nothing was imported" in str(failure)
    assert err.splitlines() == [
        f"{target}:2: grades.artefact.value_add: value must be one of 0, 1, 2, got '9'",
        f"{target}:4: line: not valid JSON: Expecting value at column 1",
    ]
    assert AuditEntry.objects.count() == audit_before


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"--use-case": "NOPE"}, "--use-case: no use case 'NOPE'"),
        ({"--session": "nope"}, "--session: no grading session 'nope'"),
        ({"--as": "nobody"}, "--as: no user 'nobody'"),
        ({"--as": "demo-reviewer"}, "--as: This needs one of these roles"),
        ({"--file": "/nonexistent/grades.jsonl"}, "--file:"),
    ],
)
def test_bad_options_exit_2_naming_the_option(grading_world, tmp_path, arguments, fragment):
    target = tmp_path / "grades.jsonl"
    target.write_text("{}\n")
    options = {
        "--use-case": grading_world.use_case.key,
        "--session": grading_world.session.public_id,
        "--file": str(target),
        "--as": "demo-owner",
        **arguments,
    }
    with pytest.raises(CommandError) as raised:
        call_command(
            "grades_import", *[x for pair in options.items() for x in pair], stderr=StringIO()
        )
    assert raised.value.returncode == 2
    assert fragment in str(raised.value)


PROVENANCE_KEYS = {"kind", "run", "sigma", "stratum", "inclusion_probability"}


@pytest.mark.parametrize("persona", ["owner", "reviewer", "adjudicator"])
def test_the_owner_reviewer_and_adjudicator_export_with_provenance(grading_world, persona):
    submit_all(grading_world)
    out, _err = export(
        grading_world, "--final", "--provenance", actor=person(grading_world, persona).username
    )
    lines = [json.loads(line) for line in out.splitlines()]
    # 4 outputs sampled from each of the 2 runs, one line per artefact under --final.
    assert len(lines) == 8
    assert all(line.keys() >= PROVENANCE_KEYS for line in lines)
    assert {line["sigma"] for line in lines} == {
        run.configuration.name for run in grading_world.runs
    }


NEEDS_A_ROLE = (
    "--as: This needs one of these roles on {key}: Adjudicator, Charter owner, "
    "Second-line reviewer / risk committee."
)


@pytest.mark.parametrize("provenance", [False, True])
@pytest.mark.parametrize(
    ("persona", "message"),
    [
        ("grader", NEEDS_A_ROLE),
        ("model_owner", NEEDS_A_ROLE),
        ("outsider", "--as: outsider holds no role on {key}"),
    ],
)
def test_a_grader_the_model_owner_and_an_outsider_are_refused_and_nothing_is_written(
    grading_world, tmp_path, persona, message, provenance
):
    submit_all(grading_world)
    target = tmp_path / "grades.jsonl"
    options = ["--final", "--provenance"] if provenance else []
    for output in (["--output", str(target)], []):
        with pytest.raises(CommandError) as raised:
            export(grading_world, *options, *output, actor=person(grading_world, persona).username)
        assert raised.value.returncode == 2
        assert str(raised.value) == message.format(key=grading_world.use_case.key)
        assert not target.exists()


def test_a_grader_who_also_adjudicates_on_the_use_case_is_refused_provenance(
    grading_world, tmp_path
):
    grader = grading_world.graders[1]
    membership_grant(
        actor=grading_world.owner,
        use_case=grading_world.use_case,
        user=grader,
        role=Role.ADJUDICATOR,
    )
    target = tmp_path / "grades.jsonl"
    with pytest.raises(CommandError) as raised:
        export(grading_world, "--provenance", "--output", str(target), actor=grader.username)
    assert raised.value.returncode == 2
    assert str(raised.value).startswith(
        f"--as: Graders do not act in other roles on {grading_world.use_case.key}"
    )
    assert not target.exists()


def test_an_unknown_user_exits_2_naming_as(grading_world, tmp_path):
    target = tmp_path / "grades.jsonl"
    with pytest.raises(CommandError) as raised:
        export(grading_world, "--output", str(target), actor="nobody")
    assert raised.value.returncode == 2 and str(raised.value) == "--as: no user 'nobody'"
    assert not target.exists()


def test_export_without_as_is_a_usage_error(grading_world):
    with pytest.raises(CommandError, match="--as"):
        call_command(
            "grades_export",
            "--use-case",
            grading_world.use_case.key,
            "--session",
            grading_world.session.public_id,
            stdout=StringIO(),
        )


#: (page, API, command) for grades with provenance: who may have them, and how others are told.
ADMITTED = {
    "owner": (200, 200, True),
    "reviewer": (200, 200, True),
    "adjudicator": (200, 200, True),
    "model_owner": (403, 403, False),
    "grader": (403, 403, False),
    "outsider": (404, 404, False),
}


@pytest.mark.parametrize("persona", sorted(ADMITTED))
def test_the_command_gives_provenance_to_exactly_whom_the_page_and_the_api_give_it(
    grading_world, persona
):
    submit_all(grading_world)
    user = person(grading_world, persona)
    args = [grading_world.use_case.key, grading_world.session.public_id]
    page_client = Client()
    page_client.force_login(user)
    page = page_client.get(
        reverse("grading-session-export", args=args), {"final": "1", "provenance": "1"}
    )
    api_client = APIClient()
    api_client.force_authenticate(user)
    api = api_client.get(
        reverse("api-grading-session-grades", args=args), {"final": "1", "provenance": "1"}
    )
    try:
        out, _err = export(grading_world, "--final", "--provenance", actor=user.username)
    except CommandError as error:
        assert error.returncode == 2
        out = None
    assert (page.status_code, api.status_code, out is not None) == ADMITTED[persona]
    if out is not None:
        assert out.encode() == b"".join(page.streaming_content)
        assert out.encode() == b"".join(api.streaming_content)
