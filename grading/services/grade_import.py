"""Writes for grades made elsewhere: importing a grades file into a session's assignments.

For firms that grade in their own tools (docs/formats.md "Grades (JSONL)"). Each line is one
grader's complete grades of one artefact, applied through the same services as grading in the
browser (:func:`~grading.services.grades.grades_save`, then
:func:`~grading.services.grades.assignment_submit`), so every submission and revision is
audited as if the grader had made it; the import itself is audited with the importer, the
file's SHA-256 and what it changed.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import BinaryIO

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from audit.services import audit_record
from charters.models import Role
from charters.permissions import require_role
from enterpriseval.errors import ImmutableError, ServiceError
from enterpriseval.limits import UploadKind, upload_stream
from grading.grade_io import (
    SECONDS_TOLERANCE,
    GradeFileReader,
    GradeRecord,
    grades_differences,
)
from grading.models import Assignment, Grade, GradingSession, SessionStatus
from grading.selectors.sessions import grade_catalogue
from grading.services.grades import GradeChange, assignment_submit, grades_save
from grading.services.sequential import sequential_after_final

IMPORT_ROLES = (Role.CHARTER_OWNER,)
_LISTED = 5

Stored = dict[int, dict[str, dict[str, str]]]


@dataclass(frozen=True, slots=True)
class GradeImportResult:
    """What an import did: assignments submitted, saved as drafts, revised, left as they were."""

    sha256: str
    lines: int
    submitted: int
    drafts: int
    revised: int
    revisions: int
    unchanged: int


@transaction.atomic
def grades_import(
    *, actor: AbstractBaseUser, session: GradingSession, fileobj: BinaryIO, filename: str
) -> GradeImportResult:
    """Import a grades file into the session's assignments, all or nothing.

    The file is read once, a line at a time. Lines are applied while every line so far is
    valid, each as its grader through :func:`grades_save` and :func:`assignment_submit`
    (whose audit entries record every submission and revision). If any line is bad
    (against the rubric, the session, or the grades already submitted), nothing is kept
    and the ServiceError lists every bad line in ``details`` (line, field, message). A line
    equal to what is stored changes nothing.
    """
    require_role(actor, session.use_case, IMPORT_ROLES)
    locked = GradingSession.objects.select_for_update().get(pk=session.pk)
    if locked.status == SessionStatus.CLOSED:
        raise ImmutableError(
            "The grading session is closed; it accepts no grades.", field="session"
        )
    filename = os.path.basename(filename or "")[:255] or "grades.jsonl"
    fileobj = upload_stream(kind=UploadKind.GRADES, fileobj=fileobj, filename=filename)
    artefacts, graders = grade_catalogue(session=locked)
    assignments = {
        (a.artefact.public_id, a.grader.get_username()): a
        for a in Assignment.objects.select_for_update(of=("self",))
        .filter(session=locked)
        .select_related("session", "artefact", "artefact__task", "artefact__output", "grader")
    }
    stored: Stored = {}
    for assignment_id, unit_key, field, value in Grade.objects.filter(
        assignment__session=locked
    ).values_list("assignment_id", "unit_key", "field", "value"):
        stored.setdefault(assignment_id, {}).setdefault(unit_key, {})[field] = value

    reader = GradeFileReader(fileobj, artefacts=artefacts, graders=graders)
    importer = _Importer(reader, stored, note=f"imported by {actor.get_username()} from {filename}")
    for record in reader:
        assignment = assignments[(record.artefact, record.grader)]
        # Conflicts with stored grades are checked on every line, so all are listed; writing
        # stops at the first error of any kind, and the transaction then rolls back.
        if importer.fits(record, assignment) and not reader.has_errors:
            try:
                importer.write(record, assignment)
            except ServiceError as error:
                reader.add_error(record.line, error.field or "line", error.message)
    report = reader.report()
    if not report.ok:
        raise ServiceError(report.refusal(filename), field="file", details=report.details())
    result = GradeImportResult(sha256=report.sha256, lines=report.record_count, **importer.counts)
    audit_record(
        actor=actor,
        action="grades.import",
        target=locked,
        payload={"session": locked.public_id, "filename": filename, **asdict(result)},
    )
    sequential_after_final(actor=actor, session=locked)
    return result


class _Importer:
    """Applies valid lines, and reports on the reader the lines that conflict with the store."""

    def __init__(self, reader: GradeFileReader, stored: Stored, *, note: str) -> None:
        self.reader = reader
        self.stored = stored
        self.note = note
        self.counts = dict.fromkeys(("submitted", "drafts", "revised", "revisions", "unchanged"), 0)

    def fits(self, record: GradeRecord, assignment: Assignment) -> bool:
        """Report on the reader, and return False, if the line conflicts with stored grades."""
        if not assignment.is_submitted:
            return True
        differences = grades_differences(self.stored.get(assignment.pk, {}), record.grades)
        return _submitted_line_fits(record, assignment, differences, self.reader)

    def write(self, record: GradeRecord, assignment: Assignment) -> None:
        """Apply a line that fits through the grading services, as its grader."""
        differences = grades_differences(self.stored.get(assignment.pk, {}), record.grades)
        changes = [GradeChange(unit_key, field, new) for unit_key, field, _old, new in differences]
        grader = assignment.grader
        if assignment.is_submitted:
            if changes:
                reason = f"{record.reason} ({self.note}, line {record.line})"
                grades_save(actor=grader, assignment=assignment, changes=changes, reason=reason)
                self.counts["revised"] += 1
                self.counts["revisions"] += len(changes)
            else:
                self.counts["unchanged"] += 1
            return
        seconds_changed = record.seconds is not None and not _same_seconds(
            record.seconds, assignment.seconds_spent
        )
        if not (changes or seconds_changed or record.submitted):
            self.counts["unchanged"] += 1
            return
        if changes:
            grades_save(actor=grader, assignment=assignment, changes=changes)
        if seconds_changed:
            Assignment.objects.filter(pk=assignment.pk).update(seconds_spent=record.seconds)
        if record.submitted:
            assignment_submit(actor=grader, assignment=assignment, evaluate=False)
            self.counts["submitted"] += 1
        else:
            self.counts["drafts"] += 1


def _submitted_line_fits(
    record: GradeRecord,
    assignment: Assignment,
    differences: list[tuple[str, str, str, str]],
    reader: GradeFileReader,
) -> bool:
    line = record.line
    when = assignment.submitted_at.isoformat() if assignment.submitted_at else "earlier"
    fits = True
    if not record.submitted:
        reader.add_error(
            line,
            "submitted",
            f"this assignment was submitted ({when}); a submission cannot be withdrawn",
        )
        fits = False
    if record.seconds is not None and not _same_seconds(record.seconds, assignment.seconds_spent):
        reader.add_error(
            line,
            "seconds",
            f"this assignment was submitted with {assignment.seconds_spent:.1f} s on the "
            f"artefact; the time of a submitted assignment is not changed by an import "
            "(leave seconds out or give the recorded time)",
        )
        fits = False
    if differences and not record.revise:
        unit_key, field = differences[0][:2]
        listed = ", ".join(
            f"{k} {f} {old or '(none)'} → {new or '(none)'}"
            for k, f, old, new in differences[:_LISTED]
        )
        more = f" and {len(differences) - _LISTED} more" if len(differences) > _LISTED else ""
        reader.add_error(
            line,
            f"grades.{unit_key}.{field}",
            f"{len(differences)} grade(s) differ from those submitted ({when}): {listed}{more}; "
            'to change submitted grades set "revise": true and give a "reason" (each change is '
            "a logged revision)",
        )
        fits = False
    return fits


def _same_seconds(given: float, recorded: float) -> bool:
    return abs(given - recorded) <= SECONDS_TOLERANCE
