"""``assignments_list``, ``assignment_show``, ``assignment_grade``: the workspace API by command.

Each command's JSON is checked against the API's answer for the same user, and each write
against what the API call writes on an identical world (the same world, the API's call rolled
back before the command runs).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction
from django.test import Client, override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from audit.models import AuditEntry
from charters.models import Role
from charters.services.use_cases import membership_grant, membership_revoke
from demo.testing.grading import (
    EXAMPLES,
    GRADED_TASKS,
    fill,
    first_values,
    grade_queue_by_command,
    make_world,
    sequential_session,
)
from grading.models import Assignment, AssignmentStatus, SequentialDraw, SessionArtefact
from grading.rubric import FIELDS_BY_KIND, is_asked, missing_fields
from grading.selectors.artefacts import grades_of, units_of
from grading.services.grades import assignment_submit
from grading.services.sessions import session_close, session_create
from runs.models import JudgeScore
from runs.services.judging import judge_get_or_create, judge_run
from runs.services.outputs import output_import

pytestmark = pytest.mark.django_db

# The API's links start with the test client's host; the command's with the site's address.
SITE = override_settings(ENTERPRISEVAL_SITE_URL="http://testserver")
#: A raw terminal control character: what no command may print.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def world(db):
    return make_world()


@pytest.fixture
def grader(world):
    return world.graders[1]


def run(command: str, actor: str, *options: str) -> str:
    """Return what ``command`` prints acting as ``actor``."""
    out = io.StringIO()
    call_command(command, *options, "--as", actor, stdout=out)
    return out.getvalue()


def as_json(command: str, actor: str, *options: str) -> Any:
    return json.loads(run(command, actor, *options, "--format", "json"))


def refused(command: str, actor: str, *options: str) -> str:
    """Return the message of ``command``'s refusal (exit status 2)."""
    with pytest.raises(CommandError) as caught:
        run(command, actor, *options)
    assert caught.value.returncode == 2
    return str(caught.value)


def grade(assignment: Assignment, *options: str, actor: str | None = None) -> str:
    return run(
        "assignment_grade",
        actor or assignment.grader.username,
        "--assignment",
        assignment.public_id,
        *options,
    )


def grade_refused(assignment: Assignment, elapsed: str, *options: str) -> str:
    """Return the refusal of ``assignment_grade`` on ``assignment`` by its grader."""
    return refused(
        "assignment_grade",
        assignment.grader.username,
        "--assignment",
        assignment.public_id,
        "--elapsed-seconds",
        elapsed,
        *options,
    )


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def api_detail(user, assignment: Assignment) -> Any:
    response = api(user).get(f"/api/v1/grading/assignments/{assignment.public_id}/")
    assert response.status_code == 200, response.json()
    return response.json()


def every_value(assignment: Assignment, choose=first_values) -> dict[str, dict[str, str]]:
    """Return a complete grading of ``assignment`` as ``{unit: {field: value}}`` (as ``fill``)."""
    grades: dict[str, dict[str, str]] = {}
    for unit in units_of([assignment.artefact])[assignment.artefact_id]:
        unit_grades = grades.setdefault(unit.key, {})
        for spec in FIELDS_BY_KIND[unit.kind]:
            if is_asked(spec.name, unit_grades):
                unit_grades[spec.name] = choose(unit.key, spec.name)
    return grades


def as_changes(grades: dict[str, dict[str, str]]) -> list[dict[str, str]]:
    return [
        {"unit_key": unit_key, "field": field, "value": value}
        for unit_key, fields in grades.items()
        for field, value in fields.items()
    ]


def written(assignment: Assignment) -> dict[str, Any]:
    """Return what a save or submit wrote: the grades, the assignment's state, the audit log."""
    row = Assignment.objects.get(pk=assignment.pk)
    return {
        "grades": grades_of(row),
        "status": row.status,
        "seconds_spent": row.seconds_spent,
        "submitted": row.submitted_at is not None,
        "audit": [
            (e.actor_username, e.action, e.target_type, e.target_id, e.payload)
            for e in AuditEntry.objects.order_by("sequence")
        ],
    }


def rolled_back(call: Callable[[], Any]) -> Any:
    """Return what ``call`` returns, and undo what it wrote."""
    with transaction.atomic():
        result = call()
        transaction.set_rollback(True)
    return result


TIMES = ("started_at", "submitted_at")


def timeless(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key not in TIMES}


@SITE
def test_the_list_is_the_api_list_for_each_grader(world):
    for grader in world.graders:
        data = as_json("assignments_list", grader.username)
        assert data == api(grader).get("/api/v1/grading/assignments/").json()
        mine = world.assignments_of(grader)
        assert data["count"] == len(mine)
        assert [r["public_id"] for r in data["results"]] == [a.public_id for a in mine]
    paged = as_json("assignments_list", grader.username, "--limit", "2", "--offset", "1")
    assert paged == api(grader).get("/api/v1/grading/assignments/?limit=2&offset=1").json()
    assert paged["next"] == "http://testserver/api/v1/grading/assignments/?limit=2&offset=3"
    assert [r["position"] for r in paged["results"]] == [2, 3]


def test_the_list_table_gives_position_session_status_id_and_time(world, grader):
    first = world.assignments_of(grader)[0]
    fill(first)  # 30 s
    out = run("assignments_list", grader.username)
    lines = out.splitlines()
    total = len(world.assignments_of(grader))
    assert lines[0] == f"{total} assignment(s) of {grader.username}, newest session first."
    assert lines[1].split() == ["#", "session", "status", "assignment", "seconds"]
    rows = [line.split() for line in lines[3:]]
    assert [row[0] for row in rows] == [f"{n}/{total}" for n in range(1, total + 1)]
    assert rows[0][1] == world.session.public_id
    assert (rows[0][-3], rows[0][-2], rows[0][-1]) == ("in_progress", first.public_id, "30")
    assert [row[-2] for row in rows] == [a.public_id for a in world.assignments_of(grader)]


def test_session_and_status_keep_the_api_lists_rows_of_that_session_or_status(world, grader):
    mine = world.assignments_of(grader)
    fill(mine[2])
    assignment_submit(actor=grader, assignment=mine[2])
    everything = api(grader).get("/api/v1/grading/assignments/").json()["results"]
    submitted = as_json("assignments_list", grader.username, "--status", "submitted")
    assert submitted["count"] == 1
    assert submitted["results"] == [r for r in everything if r["status"] == "submitted"]
    session = as_json("assignments_list", grader.username, "--session", world.session.public_id)
    assert session["results"] == everything
    other = as_json("assignments_list", grader.username, "--session", "no-such-session")
    assert other == {"count": 0, "next": None, "previous": None, "results": []}


def test_the_list_takes_as_many_queries_whatever_the_number_of_assignments(
    world, grader, django_assert_num_queries
):
    # The user, the count, the page (each row's session total is a subquery).
    with django_assert_num_queries(3):
        before = as_json("assignments_list", grader.username)
    hostile_session(world)  # two more assignments each
    with django_assert_num_queries(3):
        after = as_json("assignments_list", grader.username)
    assert after["count"] > before["count"]
    assert after["count"] == Assignment.objects.filter(grader=grader).count()


def test_show_is_the_api_detail_before_and_after_grading(world, grader):
    assignment = world.assignments_of(grader)[1]
    assert as_json("assignment_show", grader.username, "--assignment", assignment.public_id) == (
        api_detail(grader, assignment)
    )
    fill(assignment)
    data = as_json("assignment_show", grader.username, "--assignment", assignment.public_id)
    assert data == api_detail(grader, assignment)
    assert data["grades"] == grades_of(assignment) and data["missing"] == []


def test_the_show_table_gives_the_task_text_rubric_values_and_saved_values(world, grader):
    assignment = world.assignments_of(grader)[0]
    saved = grade(assignment, "--elapsed-seconds", "5", "--value", "s1.assertive=N")
    detail = api_detail(grader, assignment)
    first_five = ", ".join(f"{m['unit_key']} {m['field']}" for m in detail["missing"][:5])
    assert saved.strip() == (
        f"Saved 1 value(s) on assignment {assignment.public_id}: in_progress, 5 s spent; "
        f"{len(detail['missing'])} missing: {first_five} and {len(detail['missing']) - 5} more."
    )
    out = run("assignment_show", grader.username, "--assignment", assignment.public_id)
    position = f"{detail['position']}/{detail['total']}"
    assert out.startswith(f"assignment {assignment.public_id}: {position} of session ")
    assert detail["task"]["input"] in out
    for source in detail["task"]["sources"]:
        assert f"[{source['id']}] {source['source']}: {source['text']}" in out
    for line in detail["text"].splitlines():
        assert line in out
    assert "  assertive (sentence): " in out and "      values: Y (Yes), N (No)" in out
    assert "      values: fully (Fully), partially (Partially), not (Not)" in out
    # s1 is not assertive: supported is not asked of it, relevance still is.
    assert "  s1 (sentence): assertive=N supported=— relevant=—" in out
    missing = ", ".join(f"{m['unit_key']} {m['field']}" for m in detail["missing"])
    assert f"Missing: {missing}" in out
    assert "s1 supported" not in missing and "s1 relevant" in missing


def test_a_save_writes_what_the_autosave_endpoint_writes(world, grader):
    assignment = world.assignments_of(grader)[0]
    changes = [
        {"unit_key": "s1", "field": "assertive", "value": "Y"},
        {"unit_key": "s1", "field": "supported", "value": "partially"},
        {"unit_key": "artefact", "field": "value_add", "value": "2"},
    ]
    path = f"/api/v1/grading/assignments/{assignment.public_id}/grades/"

    def by_api() -> tuple[Any, dict[str, Any]]:
        response = api(grader).post(
            path, {"changes": changes, "elapsed_seconds": 42.5}, format="json"
        )
        assert response.status_code == 200, response.json()
        return response.json(), written(assignment)

    answer, by_the_api = rolled_back(by_api)
    assert grades_of(assignment) == {}
    data = json.loads(
        grade(
            assignment,
            "--elapsed-seconds",
            "42.5",
            "--value",
            "s1.assertive=Y",
            "--value",
            "s1.supported=partially",
            "--value",
            "artefact.value_add=2",
            "--format",
            "json",
        )
    )
    assert data == answer
    assert written(assignment) == by_the_api
    assert by_the_api["grades"] == {
        "s1": {"assertive": "Y", "supported": "partially"},
        "artefact": {"value_add": "2"},
    }
    assert (by_the_api["status"], by_the_api["seconds_spent"]) == ("in_progress", 42.5)


def test_a_file_and_submit_write_what_the_autosave_and_submit_endpoints_write(
    world, grader, tmp_path
):
    mine = world.assignments_of(grader)
    assignment = mine[0]
    grades = every_value(assignment)
    base = f"/api/v1/grading/assignments/{assignment.public_id}/"

    def by_api() -> tuple[Any, dict[str, Any]]:
        client = api(grader)
        body = {"changes": as_changes(grades), "elapsed_seconds": 90}
        assert client.post(f"{base}grades/", body, format="json").status_code == 200
        response = client.post(f"{base}submit/", {"elapsed_seconds": 0}, format="json")
        assert response.status_code == 200, response.json()
        return response.json(), written(assignment)

    answer, by_the_api = rolled_back(by_api)
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.PENDING
    values = tmp_path / "values.json"
    values.write_text(json.dumps(grades), encoding="utf-8")
    data = json.loads(
        grade(
            assignment,
            "--elapsed-seconds",
            "90",
            "--file",
            str(values),
            "--submit",
            "--format",
            "json",
        )
    )
    assert timeless(data) == timeless(answer)
    assert data["status"] == "submitted" and data["seconds_spent"] == 90
    assert data["next_page"] == reverse("grading-workspace", args=[mine[1].public_id])
    assert written(assignment) == by_the_api
    assert by_the_api["grades"] == grades and by_the_api["submitted"]
    submitted = [entry for entry in by_the_api["audit"] if entry[1] == "assignment.submit"]
    assert [(entry[0], entry[3]) for entry in submitted] == [(grader.username, str(assignment.pk))]
    assert submitted[0][4]["seconds_spent"] == 90 and submitted[0][4]["grades"] == sum(
        len(fields) for fields in grades.values()
    )
    detail = as_json("assignment_show", grader.username, "--assignment", assignment.public_id)
    assert detail == api_detail(grader, assignment)
    assert detail["status"] == "submitted"


def test_the_table_of_a_submission_names_the_next_open_assignment(world, grader, tmp_path):
    first, second = world.assignments_of(grader)[:2]
    values = tmp_path / "values.json"
    values.write_text(json.dumps(every_value(first)), encoding="utf-8")
    out = grade(first, "--elapsed-seconds", "12", "--file", str(values), "--submit")
    assert out.strip() == (
        f"Submitted assignment {first.public_id} (1/{len(world.assignments_of(grader))}), "
        f"12 s spent; next: {second.public_id}."
    )


def nothing_written(assignment: Assignment, before: dict[str, Any]) -> None:
    assert written(assignment) == before
    assert Assignment.objects.get(pk=assignment.pk).status == before["status"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            ["s1.assertive=Y", "s1.certain=Y"],
            "--value s1.certain=Y: field: 'certain' is not a rubric field",
        ),
        (["s1.assertive=maybe"], "--value s1.assertive=maybe: "),
        (["s1.citation=strict"], "--value s1.citation=strict: field: 'citation' is not asked"),
        (
            ["s99.assertive=Y"],
            "--value s99.assertive=Y: unit_key: 's99' is not a unit of this artefact.",
        ),
        (["s1.assertive"], "--value: 's1.assertive' is not UNIT.FIELD=VALUE"),
        (["s1.assertive=" + "Y" * 21], "value: Ensure this field has no more than 20"),
    ],
)
def test_a_bad_value_is_refused_naming_it_and_nothing_is_written(world, grader, values, message):
    assignment = world.assignments_of(grader)[0]
    before = written(assignment)
    options = [part for value in values for part in ("--value", value)]
    assert message in grade_refused(
        assignment,
        "10",
        *options,
    )
    nothing_written(assignment, before)
    assert before["grades"] == {} and before["seconds_spent"] == 0


def test_a_file_value_is_refused_naming_the_file_unit_and_field(world, grader, tmp_path):
    assignment = world.assignments_of(grader)[0]
    values = tmp_path / "values.json"
    values.write_text(json.dumps({"s1": {"assertive": "Y", "relevant": "perhaps"}}), "utf-8")
    before = written(assignment)
    message = grade_refused(
        assignment,
        "10",
        "--file",
        str(values),
    )
    assert message.startswith(f"{values}: s1.relevant: ")
    assert "'perhaps'" in message
    nothing_written(assignment, before)


def test_a_submit_with_a_field_missing_is_refused_naming_it_and_nothing_is_written(world, grader):
    assignment = world.assignments_of(grader)[0]
    before = written(assignment)
    message = grade_refused(
        assignment,
        "10",
        "--value",
        "s1.assertive=Y",
        "--submit",
    )
    keys = [u.key for u in units_of([assignment.artefact])[assignment.artefact_id]]
    missing = missing_fields(keys, {"s1": {"assertive": "Y"}})
    assert message.startswith(f"{missing[0][0]}.{missing[0][1]}: {len(missing)} grade(s) missing")
    assert "s1 supported" in message
    # The values saved before the submission was refused are rolled back with it.
    nothing_written(assignment, before)


def test_elapsed_seconds_is_required_and_checked(world, grader):
    assignment = world.assignments_of(grader)[0]
    with pytest.raises(CommandError, match="--elapsed-seconds"):
        grade(assignment, "--value", "s1.assertive=Y")
    assert "--elapsed-seconds: " in grade_refused(
        assignment,
        "-1",
        "--value",
        "s1.assertive=Y",
    )
    assert grades_of(assignment) == {}


def test_anyone_but_the_grader_is_told_there_is_no_assignment_as_the_api_says(world, grader):
    assignment = world.assignments_of(grader)[0]
    other = world.graders[2]
    before = written(assignment)
    for user in (other, world.outsider, world.owner, world.adjudicator):
        path = f"/api/v1/grading/assignments/{assignment.public_id}/"
        assert api(user).get(path).status_code == 404
        for command, extra in (
            ("assignment_show", []),
            ("assignment_grade", ["--elapsed-seconds", "5", "--value", "s1.assertive=Y"]),
            ("assignment_grade", ["--elapsed-seconds", "5", "--submit"]),
        ):
            message = refused(command, user.username, "--assignment", assignment.public_id, *extra)
            assert message == f"--assignment: no assignment {assignment.public_id!r}"
        listed = as_json("assignments_list", user.username)["results"]
        assert assignment.public_id not in [r["public_id"] for r in listed]
    nothing_written(assignment, before)


def test_a_closed_session_and_a_submitted_assignment_are_refused_as_the_api_refuses(world, grader):
    first, second = world.assignments_of(grader)[:2]
    fill(first)
    assignment_submit(actor=grader, assignment=first)
    path = f"/api/v1/grading/assignments/{first.public_id}/"
    change = {"changes": [{"unit_key": "s1", "field": "relevant", "value": "N"}]}
    assert api(grader).post(f"{path}grades/", change, format="json").status_code == 400
    assert "--reason: " in grade_refused(
        first,
        "3",
        "--value",
        "s1.relevant=N",
    )
    assert api(grader).post(f"{path}submit/", {}, format="json").status_code == 409
    assert grade_refused(
        first,
        "3",
        "--submit",
    ) == ("--submit: This assignment is already submitted.")
    session_close(actor=world.owner, session=world.session)
    before = written(second)
    api_path = f"/api/v1/grading/assignments/{second.public_id}/grades/"
    response = api(grader).post(api_path, {"changes": []}, format="json")
    assert response.status_code == 409
    assert grade_refused(
        second,
        "3",
        "--value",
        "s1.assertive=Y",
    ) == (f"--assignment: {response.json()['error']['message']}")
    nothing_written(second, before)


def test_a_grader_whose_role_was_revoked_loses_their_assignments_everywhere(world, grader):
    """Revoking the grader role ends access at once (``graders_own``): the page, the API and
    the commands answer as for anyone else's assignment, and nothing more can be saved."""
    assignment = world.assignments_of(grader)[0]
    path = f"/api/v1/grading/assignments/{assignment.public_id}/"
    assert api(grader).get(path).status_code == 200
    membership_revoke(actor=world.owner, use_case=world.use_case, user=grader, role=Role.GRADER)
    assert api(grader).get(path).status_code == 404
    assert api(grader).get("/api/v1/grading/assignments/").json()["count"] == 0
    web = Client()
    web.force_login(grader)
    assert web.get(f"/grading/a/{assignment.public_id}/").status_code == 404
    before = written(assignment)
    for command, *more in (
        ("assignment_show",),
        ("assignment_grade", "--elapsed-seconds", "3", "--value", "s1.assertive=Y"),
    ):
        with pytest.raises(CommandError) as refused:
            call_command(
                command,
                "--as",
                grader.username,
                "--assignment",
                assignment.public_id,
                *more,
                stdout=io.StringIO(),
            )
        assert str(refused.value) == f"--assignment: no assignment {assignment.public_id!r}"
    assert as_json("assignments_list", grader.username)["count"] == 0
    nothing_written(assignment, before)
    # Granted again, the same assignments are theirs again, with what they had saved.
    membership_grant(actor=world.owner, use_case=world.use_case, user=grader, role=Role.GRADER)
    assert api(grader).get(path).status_code == 200


def hostile_session(world):
    """Return a session whose every output opens with terminal control sequences."""
    lines = (EXAMPLES / "outputs-gemini-2-5.jsonl").read_text("utf-8").splitlines()
    records = [json.loads(line) for line in lines[:GRADED_TASKS]]
    for record in records:
        record["text"] = HOSTILE + record["text"]
    run_ = output_import(
        actor=world.model_owner,
        use_case=world.use_case,
        configuration=world.runs[0].configuration,
        task_set=world.runs[0].task_set,
        split="graded",
        repeats=1,
        fileobj=io.BytesIO("\n".join(json.dumps(r) for r in records).encode() + b"\n"),
        filename="hostile.jsonl",
    )
    return session_create(
        actor=world.owner,
        use_case=world.use_case,
        name="Credit memo round 3",
        runs=[run_],
        graders=world.graders[1:],
        adjudicators=[world.adjudicator],
        sample_size=2,
        seed=11,
    )


#: Clear the screen, retitle the window (OSC … BEL), a one-character CSI, a carriage return and
#: a right-to-left override.
HOSTILE = "\x1b[2J\x1b]0;owned\x07 \x9b31m red\r \u202eevil "


def test_control_characters_of_an_output_are_written_out_never_sent_to_the_terminal(world, grader):
    session = hostile_session(world)
    assignment = Assignment.objects.filter(session=session, grader=grader).first()
    table_out = run("assignment_show", grader.username, "--assignment", assignment.public_id)
    json_out = run(
        "assignment_show",
        grader.username,
        "--assignment",
        assignment.public_id,
        "--format",
        "json",
    )
    for out in (table_out, json_out):
        assert not RAW_CONTROL.search(out)
    assert "\\x1b[2J\\x1b]0;owned\\x07 \\x9b31m red\\x0d \\u202eevil " in table_out
    data = json.loads(json_out)
    assert data == api_detail(grader, assignment)
    assert data["text"].startswith(HOSTILE)
    assert not RAW_CONTROL.search(run("assignments_list", grader.username))


def blinded_world() -> Any:
    """Return the world with a sequential session on its first run, drawn by a judge's scores."""
    world = make_world()
    judge = judge_get_or_create(kind="offline")
    judge_run(actor=world.model_owner, run=world.runs[0], judge=judge, purpose="gated")
    sequential_session(world, judge=judge)
    return world


def forbidden(world, grader) -> list[re.Pattern[str]]:
    """Return what would tell a grader where an artefact came from or why it came next."""
    others = [g.username for g in world.graders if g != grader]
    literal = [*world.provenance, *others]
    artefacts = SessionArtefact.objects.filter(assignments__grader=grader)
    weights = {
        *artefacts.values_list("inclusion_probability", flat=True),
        *SequentialDraw.objects.filter(artefact__in=artefacts).values_list("q", flat=True),
        *JudgeScore.objects.filter(unit__output__run__in=world.runs).values_list(
            "score", flat=True
        ),
    }
    literal += [repr(w) for w in weights if len(repr(w)) > 4]  # 0.0, 1.0, 0.5 say nothing
    literal += [s for s in artefacts.values_list("stratum", flat=True) if s]
    found = [re.compile(re.escape(text), re.I) for text in literal]
    found += [re.compile(rf"\brun[ /:#-]*{run.pk}\b", re.I) for run in world.runs]
    keys = ("σ", "sigma", "configuration", "judge", "score", "stratum", "q", "pi", "weight")
    found += [re.compile(rf'"{key}"\s*:', re.I) for key in keys]
    found += [re.compile(r"inclusion|probability|provenance|baseline", re.I)]
    return found


def outputs_of(grader, assignments: list[Assignment]) -> Iterator[str]:
    for form in ("table", "json"):
        yield run("assignments_list", grader.username, "--format", form)
        for assignment in assignments:
            yield run(
                "assignment_show",
                grader.username,
                "--assignment",
                assignment.public_id,
                "--format",
                form,
            )


def test_no_output_names_sigma_the_run_the_judge_score_or_the_sampling_weight(db, tmp_path):
    world = blinded_world()
    sessions = set()
    for grader in world.graders:
        mine = list(Assignment.objects.filter(grader=grader).order_by("session_id", "position"))
        sessions |= {a.session_id for a in mine}
        said = list(outputs_of(grader, mine))
        for assignment in mine[:2]:
            values = tmp_path / f"{assignment.public_id}.json"
            values.write_text(json.dumps(every_value(assignment)), encoding="utf-8")
            for form in ("table", "json"):
                said.append(
                    grade(
                        assignment,
                        "--elapsed-seconds",
                        "4",
                        "--file",
                        str(values),
                        "--format",
                        form,
                    )
                )
            said.append(grade(assignment, "--elapsed-seconds", "4", "--submit", "--format", "json"))
        patterns = forbidden(world, grader)
        for text in said:
            for pattern in patterns:
                assert not pattern.search(text), (pattern.pattern, text[:300])
    assert len(sessions) == 2  # the fixed and the sequential session were both read


def test_a_grader_grades_their_whole_queue_by_command_and_the_session_status_shows_it(world):
    grader = world.graders[1]
    session = world.session.public_id
    graded = grade_queue_by_command(grader.username, session)
    mine = world.assignments_of(grader)
    assert graded == len(mine)
    assert all(a.status == AssignmentStatus.SUBMITTED for a in mine)
    assert all(grades_of(a) == every_value(a) for a in mine)
    status = json.loads(
        run(
            "session_status",
            world.owner.username,
            "--use-case",
            world.use_case.key,
            "--session",
            session,
            "--format",
            "json",
        )
    )
    row = next(g for g in status["graders"] if g["grader"] == grader.username)
    assert (row["assigned"], row["submitted"], row["not_submitted"]) == (len(mine), len(mine), 0)
    others = sum(len(world.assignments_of(g)) for g in world.graders if g != grader)
    assert status["assignments_not_submitted"] == others and status["open"]
