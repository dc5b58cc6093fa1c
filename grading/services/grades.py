"""Writes for grades: autosave, time on artefact, submission, revision, adjudication (SPEC §5.1).

Before submission a grader's changes are saved as they are made (autosave) and are nobody's
business but the grader's; submission freezes them and is audited with a hash of the grades;
after submission every change is a :class:`~grading.models.GradeRevision` with a reason and
an audit entry. Adjudication records the final value of a field the graders disagreed on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from audit.canonical import canonical_json, sha256_hex
from audit.services import audit_record
from enterpriseval.errors import ConflictError, ImmutableError, ServiceError
from grading.models import (
    Adjudication,
    Assignment,
    AssignmentStatus,
    Grade,
    GradeRevision,
    SessionArtefact,
    SessionStatus,
)
from grading.rubric import field_for, is_asked, missing_fields
from grading.selectors.artefacts import grades_of, label_choices, units_of
from grading.services.adjudication import FinalValue, adjudications_record
from grading.services.sequential import sequential_after_final

#: Most seconds one save or heartbeat may add: a tab left open overnight is not grading time.
MAX_ELAPSED_PER_CALL = 120.0


@dataclass(frozen=True, slots=True)
class GradeChange:
    """Set ``field`` of ``unit_key`` to ``value``; an empty value clears it."""

    unit_key: str
    field: str
    value: str


def _locked(assignment: Assignment, actor: AbstractBaseUser) -> Assignment:
    locked = (
        Assignment.objects.select_for_update()
        .select_related("session", "artefact")
        .get(pk=assignment.pk)
    )
    if locked.grader_id != actor.pk:
        raise ServiceError("This assignment is another grader's.", field="assignment")
    if locked.session.status == SessionStatus.CLOSED:
        raise ImmutableError("The grading session is closed.", field="session")
    return locked


def _elapsed(seconds: float) -> float:
    if seconds != seconds or seconds < 0:  # NaN or negative
        raise ServiceError("elapsed_seconds must be a non-negative number.", field="elapsed")
    return min(float(seconds), MAX_ELAPSED_PER_CALL)


def _check_changes(assignment: Assignment, changes: Sequence[GradeChange]) -> None:
    keys = {u.key for u in units_of([assignment.artefact])[assignment.artefact_id]}
    labels: tuple[str, ...] = ()
    for n, change in enumerate(changes):
        if change.unit_key not in keys:
            raise ServiceError(
                f"changes[{n}].unit_key: {change.unit_key!r} is not a unit of this artefact.",
                field=f"changes[{n}].unit_key",
            )
        try:
            spec = field_for(change.unit_key, change.field)
            if spec.open and change.value and not labels:
                labels = label_choices(assignment.artefact)
            if change.value:
                spec.check(change.value, labels)
        except ValueError as error:
            raise ServiceError(f"changes[{n}].{error}", field=f"changes[{n}]") from None


@transaction.atomic
def grades_save(
    *,
    actor: AbstractBaseUser,
    assignment: Assignment,
    changes: Sequence[GradeChange],
    elapsed_seconds: float = 0.0,
    reason: str = "",
) -> Assignment:
    """Save grade changes (autosave), adding the time spent since the last save.

    On a submitted assignment each change is a revision: ``reason`` is required, the old
    and new values are kept, and the revision is audited.
    """
    locked = _locked(assignment, actor)
    _check_changes(locked, changes)
    elapsed = _elapsed(elapsed_seconds)
    if locked.is_submitted:
        _revise(locked, actor, changes, reason)
    else:
        _upsert(locked, changes)
    _add_time(locked, elapsed)
    return locked


def _add_time(locked: Assignment, elapsed: float) -> None:
    """Add ``elapsed`` seconds to the locked assignment; the first call starts it.

    The row is held by ``select_for_update`` (:func:`_locked`), so adding in Python loses no
    concurrent save, and the instance stays current without reading it back (autosave is the
    busiest write of the product: ``make bench-load``).
    """
    locked.seconds_spent += elapsed
    fields = ["seconds_spent"]
    if locked.status == AssignmentStatus.PENDING:
        locked.status = AssignmentStatus.IN_PROGRESS
        locked.started_at = timezone.now()
        fields += ["status", "started_at"]
    locked.save(update_fields=fields)


def _upsert(assignment: Assignment, changes: Sequence[GradeChange]) -> None:
    final: dict[tuple[str, str], str] = {}
    for change in changes:
        final[(change.unit_key, change.field)] = change.value
    cleared = [(k, f) for (k, f), v in final.items() if not v]
    for unit_key, field in cleared:
        Grade.objects.filter(assignment=assignment, unit_key=unit_key, field=field).delete()
    kept = [
        Grade(assignment=assignment, unit_key=k, field=f, value=v)
        for (k, f), v in final.items()
        if v
    ]
    if kept:
        Grade.objects.bulk_create(
            kept,
            update_conflicts=True,
            unique_fields=["assignment", "unit_key", "field"],
            update_fields=["value", "updated_at"],
        )


def _revise(
    assignment: Assignment,
    actor: AbstractBaseUser,
    changes: Sequence[GradeChange],
    reason: str,
) -> None:
    reason = reason.strip()
    if not reason:
        raise ServiceError(
            "This assignment was submitted: say why the grade changes (it is a logged revision).",
            field="reason",
        )
    current = grades_of(assignment)
    for change in changes:
        old = current.get(change.unit_key, {}).get(change.field, "")
        if old == change.value:
            continue
        GradeRevision.objects.create(
            assignment=assignment,
            unit_key=change.unit_key,
            field=change.field,
            old_value=old,
            new_value=change.value,
            reason=reason,
            actor=actor,
        )
        _upsert(assignment, [change])
        current.setdefault(change.unit_key, {})[change.field] = change.value
        audit_record(
            actor=actor,
            action="grade.revise",
            target=assignment,
            use_case_id=assignment.session.use_case_id,
            payload={
                "session": assignment.session.public_id,
                "artefact": assignment.artefact.public_id,
                "unit_key": change.unit_key,
                "field": change.field,
                "old": old,
                "new": change.value,
                "reason": reason,
            },
        )
    still_missing = missing_fields(
        [u.key for u in units_of([assignment.artefact])[assignment.artefact_id]], current
    )
    if still_missing:
        unit_key, field = still_missing[0]
        raise ServiceError(
            f"A submitted assignment must stay complete: {unit_key} {field} is now required.",
            field=f"{unit_key}.{field}",
        )


@transaction.atomic
def assignment_heartbeat(
    *, actor: AbstractBaseUser, assignment: Assignment, elapsed_seconds: float
) -> Assignment:
    """Add time spent on the artefact without changing a grade."""
    locked = _locked(assignment, actor)
    _add_time(locked, _elapsed(elapsed_seconds))
    return locked


def grades_sha256(grades: dict[str, dict[str, str]]) -> str:
    """Return the SHA-256 of the grades in canonical JSON (``audit.canonical``)."""
    return sha256_hex(canonical_json(grades))


@transaction.atomic
def assignment_submit(
    *,
    actor: AbstractBaseUser,
    assignment: Assignment,
    elapsed_seconds: float = 0.0,
    evaluate: bool = True,
) -> Assignment:
    """Submit a complete assignment; drop grades not asked (severity of a sound item).

    In a sequential session the submission may make an output's value final: the stopping
    rule is asked and the draws topped up (``evaluate=False`` leaves that to the caller, as
    an import does once at its end).
    """
    locked = _locked(assignment, actor)
    if locked.is_submitted:
        raise ConflictError("This assignment is already submitted.", field="status")
    keys = [u.key for u in units_of([locked.artefact])[locked.artefact_id]]
    grades = grades_of(locked)
    missing = missing_fields(keys, grades)
    if missing:
        listed = ", ".join(f"{k} {f}" for k, f in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise ServiceError(
            f"{len(missing)} grade(s) missing: {listed}{more}.",
            field=f"{missing[0][0]}.{missing[0][1]}",
            details=[{"unit_key": k, "field": f} for k, f in missing],
        )
    for unit_key, unit in grades.items():
        for field in [f for f in unit if not is_asked(f, unit)]:
            Grade.objects.filter(assignment=locked, unit_key=unit_key, field=field).delete()
            del unit[field]
    now = timezone.now()
    Assignment.objects.filter(pk=locked.pk).update(
        status=AssignmentStatus.SUBMITTED,
        submitted_at=now,
        started_at=locked.started_at or now,
        seconds_spent=F("seconds_spent") + _elapsed(elapsed_seconds),
    )
    locked.refresh_from_db()
    audit_record(
        actor=actor,
        action="assignment.submit",
        target=locked,
        use_case_id=locked.session.use_case_id,
        payload={
            "session": locked.session.public_id,
            "artefact": locked.artefact.public_id,
            "grades": sum(len(unit) for unit in grades.values()),
            "grades_sha256": grades_sha256(grades),
            "seconds_spent": round(locked.seconds_spent, 1),
        },
    )
    if evaluate:
        sequential_after_final(actor=actor, session=locked.session, artefact=locked.artefact)
    return locked


def adjudication_record(
    *,
    actor: AbstractBaseUser,
    artefact: SessionArtefact,
    unit_key: str,
    field: str,
    value: str,
    note: str = "",
) -> Adjudication:
    """Record the final value of a field the artefact's graders disagreed on."""
    outcome = adjudications_record(
        actor=actor, artefact=artefact, values=[FinalValue(unit_key, field, value, note)]
    )
    return outcome.recorded[0]
