"""Importing grades made in another tool: applied through the grading services, all or nothing."""

from __future__ import annotations

import io
import json

import pytest
from django.core.exceptions import PermissionDenied

from audit.models import AuditEntry
from demo.testing.grading import fill
from enterpriseval.errors import ImmutableError, ServiceError
from grading.grade_io import dump_line
from grading.models import Assignment, AssignmentStatus, Grade, GradeRevision
from grading.selectors.artefacts import grades_of
from grading.selectors.sessions import grades_file
from grading.services.grade_import import grades_import
from grading.services.grades import GradeChange, assignment_submit, grades_save
from grading.services.sessions import session_close, session_create


def submit_all(world) -> None:
    for grader in world.graders:
        for assignment in world.assignments_of(grader):
            fill(assignment)
            assignment_submit(actor=grader, assignment=assignment)


def exported(session, **options) -> list[dict]:
    return [json.loads(line) for line in grades_file(session=session, **options)]


def as_file(lines: list[dict]) -> io.BytesIO:
    return io.BytesIO(b"".join(dump_line(line) for line in lines))


def run_import(world, session, lines: list[dict], actor=None):
    return grades_import(
        actor=actor or world.owner, session=session, fileobj=as_file(lines), filename="g.jsonl"
    )


def twin_session(world):
    """Return a second session drawing the same sample, assigned to the same graders."""
    session = world.session
    return session_create(
        actor=world.owner,
        use_case=world.use_case,
        name="Credit memo round 1 (graded elsewhere)",
        runs=world.runs,
        graders=world.graders,
        adjudicators=[world.adjudicator],
        design=session.design,
        sample_size=session.arms[0]["sampled"],
        seed=session.seed,
    )


def retargeted(lines: list[dict], source, target) -> list[dict]:
    """Point each line at the target session's artefact of the same output."""
    by_output = dict(target.artefacts.values_list("output_id", "public_id"))
    source_output = dict(source.artefacts.values_list("public_id", "output_id"))
    return [{**line, "artefact": by_output[source_output[line["artefact"]]]} for line in lines]


def grades_by_output(session) -> dict[tuple[int, str], dict]:
    return {
        (a.artefact.output_id, a.grader.username): grades_of(a)
        for a in Assignment.objects.filter(session=session).select_related("artefact", "grader")
    }


def test_a_file_graded_elsewhere_submits_every_assignment_as_its_grader(grading_world):
    submit_all(grading_world)
    source = grading_world.session
    target = twin_session(grading_world)
    lines = retargeted(exported(source), source, target)
    submissions_before = AuditEntry.objects.filter(action="assignment.submit").count()

    result = run_import(grading_world, target, lines)

    assert (result.lines, result.submitted, result.drafts, result.unchanged) == (16, 16, 0, 0)
    assert grades_by_output(target) == grades_by_output(source)
    statuses = set(target.assignments.values_list("status", "seconds_spent"))
    assert statuses == {(AssignmentStatus.SUBMITTED, 30.0)}
    submissions = AuditEntry.objects.filter(action="assignment.submit").order_by("pk")
    new = list(submissions[submissions_before:])
    assert len(new) == 16
    assert {entry.payload["session"] for entry in new} == {target.public_id}
    assert {entry.actor_username for entry in new} == {g.username for g in grading_world.graders}
    entry = AuditEntry.objects.get(action="grades.import")
    assert entry.actor_username == "demo-owner"
    assert entry.payload["sha256"] == result.sha256 and entry.payload["submitted"] == 16


def test_re_importing_the_export_changes_nothing(grading_world):
    submit_all(grading_world)
    session = grading_world.session
    grades_before = list(Grade.objects.order_by("pk").values_list("pk", "value", "updated_at"))
    audit_before = AuditEntry.objects.count()

    result = run_import(grading_world, session, exported(session))

    assert (result.unchanged, result.submitted, result.revised) == (16, 0, 0)
    assert list(Grade.objects.order_by("pk").values_list("pk", "value", "updated_at")) == (
        grades_before
    )
    assert not GradeRevision.objects.exists()
    new = AuditEntry.objects.order_by("pk")[audit_before:]
    assert [entry.action for entry in new] == ["grades.import"]


def test_one_bad_line_writes_nothing_and_records_nothing(grading_world):
    submit_all(grading_world)
    source = grading_world.session
    target = twin_session(grading_world)
    lines = retargeted(exported(source), source, target)
    lines[-1]["grades"]["artefact"]["value_add"] = "3"
    audit_before = AuditEntry.objects.count()

    with pytest.raises(ServiceError) as raised:
        run_import(grading_world, target, lines)

    assert raised.value.field == "file"
    assert "nothing was imported" in raised.value.message
    assert [(d["line"], d["field"]) for d in raised.value.details] == [
        (16, "grades.artefact.value_add")
    ]
    assert not Grade.objects.filter(assignment__session=target).exists()
    assert set(target.assignments.values_list("status", flat=True)) == {AssignmentStatus.PENDING}
    assert AuditEntry.objects.count() == audit_before


def test_every_bad_line_is_listed_with_its_line_number(grading_world):
    submit_all(grading_world)
    source = grading_world.session
    target = twin_session(grading_world)
    lines = retargeted(exported(source), source, target)
    lines[2]["grader"] = "outsider"
    lines[5]["grades"]["s1"]["relevant"] = "maybe"
    lines[9] = lines[0]
    other_session_artefact = source.artefacts.first().public_id
    lines[12]["artefact"] = other_session_artefact

    with pytest.raises(ServiceError) as raised:
        run_import(grading_world, target, lines)

    assert [(d["line"], d["field"]) for d in raised.value.details] == [
        (3, "grader"),
        (6, "grades.s1.relevant"),
        (10, "artefact"),
        (13, "artefact"),
    ]
    messages = [d["message"] for d in raised.value.details]
    assert "not a grader of this session" in messages[0]
    assert "duplicate assignment: line 1" in messages[2]
    assert "unknown artefact" in messages[3]


def test_changing_submitted_grades_needs_revise_and_a_reason(grading_world):
    submit_all(grading_world)
    session = grading_world.session
    lines = exported(session)
    changed = lines[4]
    changed["grades"]["s1"]["relevant"] = "N"

    with pytest.raises(ServiceError) as raised:
        run_import(grading_world, session, lines)
    (detail,) = raised.value.details
    assert (detail["line"], detail["field"]) == (5, "grades.s1.relevant")
    assert "s1 relevant Y → N" in detail["message"] and '"revise": true' in detail["message"]

    changed.update(revise=True, reason="Misread the task: the sentence is off topic")
    result = run_import(grading_world, session, lines)

    assert (result.revised, result.revisions, result.unchanged) == (1, 1, 15)
    revision = GradeRevision.objects.get()
    assert (revision.unit_key, revision.field, revision.old_value, revision.new_value) == (
        "s1",
        "relevant",
        "Y",
        "N",
    )
    assert revision.reason.startswith("Misread the task")
    assert "imported by demo-owner from g.jsonl, line 5" in revision.reason
    assert revision.actor.username == changed["grader"]
    assert AuditEntry.objects.filter(action="grade.revise").count() == 1


def test_a_submission_cannot_be_withdrawn_nor_its_time_changed(grading_world):
    submit_all(grading_world)
    session = grading_world.session
    lines = exported(session)
    lines[0]["submitted"] = False
    lines[1]["seconds"] = 95.0

    with pytest.raises(ServiceError) as raised:
        run_import(grading_world, session, lines)

    assert [(d["line"], d["field"]) for d in raised.value.details] == [
        (1, "submitted"),
        (2, "seconds"),
    ]
    assert "cannot be withdrawn" in raised.value.details[0]["message"]
    assert "30.0 s" in raised.value.details[1]["message"]


def test_a_draft_line_saves_grades_without_submitting_and_replaces_the_previous_draft(
    grading_world,
):
    assignment = grading_world.assignments_of(grading_world.graders[0])[0]
    grades_save(
        actor=assignment.grader,
        assignment=assignment,
        changes=[GradeChange("s2", "assertive", "Y"), GradeChange("s2", "relevant", "Y")],
    )
    line = {
        "artefact": assignment.artefact.public_id,
        "grader": assignment.grader.username,
        "grades": {"s1": {"assertive": "N", "relevant": "Y"}, "s2": {"assertive": "Y"}},
        "seconds": 42.5,
        "submitted": False,
    }

    result = run_import(grading_world, grading_world.session, [line])

    assert (result.drafts, result.submitted) == (1, 0)
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.IN_PROGRESS
    assert assignment.seconds_spent == 42.5
    assert grades_of(assignment) == line["grades"]
    assert not AuditEntry.objects.filter(action="assignment.submit").exists()


def test_a_line_that_cannot_be_submitted_names_the_first_missing_grade(grading_world):
    assignment = grading_world.assignments_of(grading_world.graders[0])[0]
    line = {
        "artefact": assignment.artefact.public_id,
        "grader": assignment.grader.username,
        "grades": {"artefact": {"value_add": "1"}},
    }
    with pytest.raises(ServiceError) as raised:
        run_import(grading_world, grading_world.session, [line])
    (detail,) = raised.value.details
    assert (detail["line"], detail["field"]) == (1, "grades.s1.assertive")
    assert "missing to submit" in detail["message"]
    assert not Grade.objects.exists()


def test_a_closed_session_takes_no_import_and_only_the_charter_owner_imports(grading_world):
    session = grading_world.session
    line = {"artefact": "x", "grader": "y", "grades": {}}
    with pytest.raises(PermissionDenied):
        run_import(grading_world, session, [line], actor=grading_world.reviewer)
    session_close(actor=grading_world.owner, session=session)
    with pytest.raises(ImmutableError, match="closed"):
        run_import(grading_world, session, [line])
