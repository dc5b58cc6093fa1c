"""Grades: autosave, submission, logged revisions, adjudication of disagreements."""

from __future__ import annotations

import pytest

from audit.models import AuditEntry
from demo.testing.grading import fill, first_values
from enterpriseval.errors import ConflictError, ImmutableError, ServiceError
from grading.models import Adjudication, AssignmentStatus, Grade, GradeRevision
from grading.selectors.artefacts import grades_of, submitted_field_values
from grading.services.grades import (
    MAX_ELAPSED_PER_CALL,
    GradeChange,
    adjudication_record,
    assignment_submit,
    grades_save,
)
from grading.services.sessions import session_close


def _shared_artefact(world):
    first, second = world.graders[:2]
    mine = {a.artefact_id: a for a in world.assignments_of(first)}
    for theirs in world.assignments_of(second):
        if theirs.artefact_id in mine:
            return mine[theirs.artefact_id], theirs
    raise AssertionError("the first two graders share no artefact")


def test_autosave_keeps_every_change_and_counts_time(grading_world):
    assignment = grading_world.assignments_of(grading_world.graders[0])[0]
    grader = assignment.grader
    saved = grades_save(
        actor=grader,
        assignment=assignment,
        changes=[GradeChange("s1", "assertive", "Y"), GradeChange("s1", "supported", "partially")],
        elapsed_seconds=12.5,
    )
    assert saved.status == AssignmentStatus.IN_PROGRESS
    assert saved.seconds_spent == pytest.approx(12.5)
    grades_save(
        actor=grader,
        assignment=assignment,
        changes=[GradeChange("s1", "supported", "not")],
        elapsed_seconds=10_000,
    )
    assert grades_of(assignment) == {"s1": {"assertive": "Y", "supported": "not"}}
    assignment.refresh_from_db()
    assert assignment.seconds_spent == pytest.approx(12.5 + MAX_ELAPSED_PER_CALL)
    grades_save(actor=grader, assignment=assignment, changes=[GradeChange("s1", "supported", "")])
    assert grades_of(assignment) == {"s1": {"assertive": "Y"}}
    assert not AuditEntry.objects.filter(action__startswith="grade").exists()


def test_it_refuses_a_value_the_rubric_does_not_have(grading_world):
    assignment = grading_world.assignments_of(grading_world.graders[0])[0]
    with pytest.raises(ServiceError, match="supported: value must be one of fully"):
        grades_save(
            actor=assignment.grader,
            assignment=assignment,
            changes=[GradeChange("s1", "supported", "maybe")],
        )
    with pytest.raises(ServiceError, match="not a unit of this artefact"):
        grades_save(
            actor=assignment.grader,
            assignment=assignment,
            changes=[GradeChange("s99", "assertive", "Y")],
        )
    assert not Grade.objects.exists()


def test_another_grader_cannot_write_to_an_assignment(grading_world):
    assignment = grading_world.assignments_of(grading_world.graders[0])[0]
    with pytest.raises(ServiceError, match="another grader"):
        grades_save(
            actor=grading_world.graders[1],
            assignment=assignment,
            changes=[GradeChange("s1", "assertive", "Y")],
        )


def test_submit_needs_every_asked_field_and_is_audited(grading_world):
    assignment = grading_world.assignments_of(grading_world.graders[0])[0]
    grades_save(
        actor=assignment.grader,
        assignment=assignment,
        changes=[GradeChange("s1", "assertive", "N")],
    )
    with pytest.raises(ServiceError, match="grade\\(s\\) missing") as raised:
        assignment_submit(actor=assignment.grader, assignment=assignment)
    assert {"unit_key": "s1", "field": "relevant"} in raised.value.details
    assert {"unit_key": "s1", "field": "supported"} not in raised.value.details
    fill(assignment)
    submitted = assignment_submit(actor=assignment.grader, assignment=assignment)
    assert submitted.status == AssignmentStatus.SUBMITTED
    entry = AuditEntry.objects.get(action="assignment.submit")
    assert entry.payload["artefact"] == assignment.artefact.public_id
    with pytest.raises(ConflictError):
        assignment_submit(actor=assignment.grader, assignment=assignment)


def test_a_change_after_submission_is_a_logged_revision_with_a_reason(grading_world):
    assignment = grading_world.assignments_of(grading_world.graders[0])[0]
    fill(assignment)
    assignment_submit(actor=assignment.grader, assignment=assignment)
    with pytest.raises(ServiceError, match="say why"):
        grades_save(
            actor=assignment.grader,
            assignment=assignment,
            changes=[GradeChange("s1", "relevant", "N")],
        )
    grades_save(
        actor=assignment.grader,
        assignment=assignment,
        changes=[GradeChange("s1", "relevant", "N")],
        reason="misread the task",
    )
    revision = GradeRevision.objects.get()
    assert (revision.old_value, revision.new_value) == ("Y", "N")
    entry = AuditEntry.objects.get(action="grade.revise")
    assert entry.payload["reason"] == "misread the task"
    assert grades_of(assignment)["s1"]["relevant"] == "N"


def test_disagreements_go_to_the_adjudicator_whose_value_is_final(grading_world):
    mine, theirs = _shared_artefact(grading_world)
    fill(mine)
    fill(
        theirs,
        lambda key, field: "N" if (key, field) == ("s1", "relevant") else first_values(key, field),
    )
    assignment_submit(actor=mine.grader, assignment=mine)
    assert not submitted_field_values([mine.artefact])  # the second grader has not submitted
    assignment_submit(actor=theirs.grader, assignment=theirs)
    values = submitted_field_values([mine.artefact])
    disputed = [v for v in values if not v.agreed]
    assert [(v.unit_key, v.field) for v in disputed] == [("s1", "relevant")]
    assert disputed[0].final is None
    with pytest.raises(ConflictError, match="agree"):
        adjudication_record(
            actor=grading_world.adjudicator,
            artefact=mine.artefact,
            unit_key="s1",
            field="assertive",
            value="Y",
        )
    with pytest.raises(ServiceError, match="named adjudicators"):
        adjudication_record(
            actor=grading_world.graders[2],
            artefact=mine.artefact,
            unit_key="s1",
            field="relevant",
            value="N",
        )
    adjudication_record(
        actor=grading_world.adjudicator,
        artefact=mine.artefact,
        unit_key="s1",
        field="relevant",
        value="N",
        note="the sentence restates the facility size",
    )
    final = {(v.unit_key, v.field): v.final for v in submitted_field_values([mine.artefact])}
    assert final[("s1", "relevant")] == "N"
    with pytest.raises(ImmutableError, match="final"):
        adjudication_record(
            actor=grading_world.adjudicator,
            artefact=mine.artefact,
            unit_key="s1",
            field="relevant",
            value="Y",
        )
    assert Adjudication.objects.count() == 1
    assert AuditEntry.objects.filter(action="adjudication.record").count() == 1


def test_a_closed_session_accepts_no_grade(grading_world):
    assignment = grading_world.assignments_of(grading_world.graders[0])[0]
    session_close(actor=grading_world.owner, session=grading_world.session)
    with pytest.raises(ImmutableError, match="closed"):
        grades_save(
            actor=assignment.grader,
            assignment=assignment,
            changes=[GradeChange("s1", "assertive", "Y")],
        )
