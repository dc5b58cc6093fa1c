"""Writes for adjudication: the final values of disputed fields, one artefact or a file at once.

Every path — one field, an artefact's page, "take Grader N's value", a file — checks each
choice with :func:`grading.adjudication_io.choice_problem` against the same catalogue
(:func:`grading.selectors.adjudication.dispute_catalogue`) and writes one
:class:`~grading.models.Adjudication` and one ``adjudication.record`` audit entry per field,
all or nothing. Graders are named only by their number on the artefact ("Grader 1").
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import BinaryIO, Literal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from audit.services import audit_record
from enterpriseval.errors import ConflictError, ImmutableError, ServiceError
from enterpriseval.limits import UploadKind, upload_stream
from grading.adjudication_io import (
    AdjudicationFileReader,
    ArtefactDisputes,
    Problem,
    ProblemKind,
    choice_problem,
    dependency_problem,
)
from grading.models import Adjudication, GradingSession, SessionArtefact, SessionStatus
from grading.selectors.adjudication import dispute_catalogue
from grading.services.sequential import sequential_after_final

ALL: Literal["all"] = "all"
Problem3 = tuple[str, str, Problem]
_ERRORS: dict[ProblemKind, type[ServiceError]] = {
    ProblemKind.INVALID: ServiceError,
    ProblemKind.CONFLICT: ConflictError,
    ProblemKind.FINAL: ImmutableError,
}


@dataclass(frozen=True, slots=True)
class FinalValue:
    """Make ``value`` the final value of ``unit_key`` ``field``."""

    unit_key: str
    field: str
    value: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class AdjudicationOutcome:
    """What was recorded, the fields left pending because the grader taken was not asked,
    and the dependent fields closed as moot (their parent's final value no longer asks them).
    """

    recorded: list[Adjudication]
    not_asked: list[tuple[str, str]]
    moot: list[tuple[str, str]] = field(default_factory=list)


def _check_adjudicator(actor: AbstractBaseUser, session: GradingSession) -> GradingSession:
    locked = GradingSession.objects.select_for_update().get(pk=session.pk)
    if not locked.adjudicators.filter(pk=actor.pk).exists():
        raise ServiceError(
            "Only the session's named adjudicators resolve its disagreements.",
            field="adjudicator",
        )
    if locked.status == SessionStatus.CLOSED:
        raise ImmutableError("The grading session is closed.", field="session")
    return locked


def _refuse(problems: Sequence[tuple[str, str, Problem]]) -> None:
    """Raise the first problem's error, listing every problem in ``details``."""
    if not problems:
        return
    _unit_key, _field, first = problems[0]
    raise _ERRORS[first.kind](
        first.message,
        field=first.field,
        details=[
            {"unit_key": unit_key, "field": field, "message": problem.message}
            for unit_key, field, problem in problems
        ],
    )


def _taken(
    disputes: ArtefactDisputes,
    grader: int,
    fields: Sequence[tuple[str, str]] | Literal["all"],
    chosen: Sequence[FinalValue] = (),
) -> tuple[list[FinalValue], list[tuple[str, str]], list[tuple[str, str]], list[Problem3]]:
    """Return grader ``grader``'s values of ``fields`` (or every pending field).

    Returns the values taken, the fields left pending because the grader was not asked
    them, the dependent fields made moot by the values taken (or by ``chosen``, the values
    given in the same step), and the problems. A dependent field the grader was not asked
    because of their own parent value is moot once that value is taken.
    """
    counts = {len(values) for values in disputes.graded.values()}
    graders = max(counts, default=0)
    if not 1 <= grader <= max(graders, 1):
        raise ServiceError(
            f"grader: there is no Grader {grader} on this artefact (its graders: 1 to {graders}).",
            field="grader",
        )
    given = {(v.unit_key, v.field) for v in chosen}
    wanted = (
        sorted(key for key in disputes.graded if disputes.is_pending(*key) and key not in given)
        if fields == ALL
        else list(fields)
    )
    values: list[FinalValue] = []
    unanswered: list[tuple[str, str]] = []
    problems: list[Problem3] = []
    for unit_key, field_name in wanted:
        answers = disputes.graded.get((unit_key, field_name))
        value = answers[grader - 1] if answers is not None and grader <= len(answers) else None
        if answers is not None and value is None:
            unanswered.append((unit_key, field_name))
            continue
        values.append(FinalValue(unit_key, field_name, value or ""))
    final = {(v.unit_key, v.field): v.value for v in [*chosen, *values]}
    moot = [key for key in unanswered if disputes.is_moot(*key, final)]
    moot += [
        (v.unit_key, v.field)
        for v in values
        if fields == ALL and disputes.is_moot(v.unit_key, v.field, final)
    ]
    values = [v for v in values if (v.unit_key, v.field) not in moot]
    not_asked = [key for key in unanswered if key not in moot]
    if fields != ALL:
        problems += [
            (
                unit_key,
                field_name,
                Problem(
                    ProblemKind.INVALID,
                    "grader",
                    f"Grader {grader} was not asked {unit_key} {field_name}; choose its final "
                    "value.",
                ),
            )
            for unit_key, field_name in not_asked
        ]
        not_asked = []
    return values, not_asked, moot, problems


def _problems(disputes: ArtefactDisputes, values: Sequence[FinalValue]) -> list[Problem3]:
    """Check every value, its dependent fields against the final values of the same step."""
    final = {(v.unit_key, v.field): v.value for v in values}
    problems: list[Problem3] = []
    for v in values:
        problem = choice_problem(disputes, v.unit_key, v.field, v.value) or dependency_problem(
            disputes, v.unit_key, v.field, final
        )
        if problem is not None:
            problems.append((v.unit_key, v.field, problem))
    return problems


def _write(
    actor: AbstractBaseUser,
    session: GradingSession,
    artefact: SessionArtefact,
    disputes: ArtefactDisputes,
    values: Sequence[FinalValue],
    *,
    via: str,
) -> list[Adjudication]:
    recorded = Adjudication.objects.bulk_create(
        Adjudication(
            artefact=artefact,
            unit_key=v.unit_key,
            field=v.field,
            value=v.value,
            note=v.note,
            adjudicator=actor,
        )
        for v in values
    )
    for value, adjudication in zip(values, recorded, strict=True):
        audit_record(
            actor=actor,
            action="adjudication.record",
            target=adjudication,
            use_case_id=session.use_case_id,
            payload={
                "session": session.public_id,
                "artefact": artefact.public_id,
                "unit_key": value.unit_key,
                "field": value.field,
                "value": value.value,
                "grader_values": sorted(
                    v or "" for v in disputes.graded[(value.unit_key, value.field)]
                ),
                "note": value.note,
                "via": via,
            },
        )
    return recorded


@transaction.atomic
def adjudications_record(
    *,
    actor: AbstractBaseUser,
    artefact: SessionArtefact,
    values: Sequence[FinalValue],
    take_rest_from: int | None = None,
    via: str = "form",
) -> AdjudicationOutcome:
    """Record the final values of disputed fields of one artefact, all or nothing.

    ``take_rest_from``: every other pending field takes Grader N's value (a field Grader N
    was not asked stays pending, listed in ``not_asked``). Every choice is checked first;
    if any is refused nothing is written and the error's ``details`` lists them all.
    """
    session = _check_adjudicator(actor, artefact.session)
    disputes = dispute_catalogue([artefact])[artefact.pk]
    chosen = list(values)
    problems: list[Problem3] = []
    seen: set[tuple[str, str]] = set()
    for v in chosen:
        if (v.unit_key, v.field) in seen:
            problems.append(
                (
                    v.unit_key,
                    v.field,
                    Problem(
                        ProblemKind.INVALID, "field", f"{v.unit_key} {v.field} is given twice."
                    ),
                )
            )
        seen.add((v.unit_key, v.field))
    not_asked: list[tuple[str, str]] = []
    moot: list[tuple[str, str]] = []
    if take_rest_from is not None:
        taken, not_asked, moot, _none = _taken(disputes, take_rest_from, ALL, chosen)
        chosen += taken
    problems += _problems(disputes, chosen)
    _refuse(problems)
    if not chosen:
        raise ServiceError("Choose a final value for at least one pending field.", field="values")
    recorded = _write(actor, session, artefact, disputes, chosen, via=via)
    moot += _made_moot(disputes, chosen, moot)
    sequential_after_final(actor=actor, session=session, artefact=artefact)
    return AdjudicationOutcome(recorded, not_asked, moot)


def _made_moot(
    disputes: ArtefactDisputes, chosen: Sequence[FinalValue], known: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """Return the pending fields the values ``chosen`` close as moot, besides ``known``."""
    final = {(v.unit_key, v.field): v.value for v in chosen}
    return [
        key
        for key in sorted(disputes.graded)
        if key not in known
        and key not in final
        and disputes.is_pending(*key)
        and disputes.is_moot(*key, final)
    ]


@transaction.atomic
def adjudication_take(
    *,
    actor: AbstractBaseUser,
    artefact: SessionArtefact,
    grader: int,
    fields: Sequence[tuple[str, str]] | Literal["all"] = ALL,
    note: str = "",
) -> AdjudicationOutcome:
    """Make Grader ``grader``'s values final for ``fields`` (``"all"``: every pending field).

    Under ``"all"`` a field Grader N was not asked stays pending (``not_asked``); named in
    ``fields`` it is refused. All or nothing.
    """
    session = _check_adjudicator(actor, artefact.session)
    disputes = dispute_catalogue([artefact])[artefact.pk]
    values, not_asked, moot, problems = _taken(disputes, grader, fields)
    values = [FinalValue(v.unit_key, v.field, v.value, note) for v in values]
    problems += _problems(disputes, values)
    _refuse(problems)
    if not values:
        raise ConflictError(
            f"No pending field of this artefact has a value from Grader {grader}.",
            field="fields",
        )
    recorded = _write(actor, session, artefact, disputes, values, via=f"take Grader {grader}")
    moot += _made_moot(disputes, values, moot)
    sequential_after_final(actor=actor, session=session, artefact=artefact)
    return AdjudicationOutcome(recorded, not_asked, moot)


@dataclass(frozen=True, slots=True)
class AdjudicationImportResult:
    """What an import did: the file's hash, its lines, fields adjudicated, lines left blank."""

    sha256: str
    lines: int
    adjudicated: int
    artefacts: int
    left_blank: int


@transaction.atomic
def adjudications_import(
    *, actor: AbstractBaseUser, session: GradingSession, fileobj: BinaryIO, filename: str
) -> AdjudicationImportResult:
    """Import an adjudications file (docs/formats.md "Adjudications (JSONL)"), all or nothing.

    The file is read once, a line at a time, each line checked against the session's
    disputes; if any line is bad nothing is written and the ServiceError lists every bad
    line in ``details`` (line, field, message). Each field is recorded as on the artefact's
    page (one ``adjudication.record`` entry each); the import is audited as
    ``adjudications.import`` with the file's SHA-256.
    """
    locked = _check_adjudicator(actor, session)
    filename = os.path.basename(filename or "")[:255] or "adjudications.jsonl"
    fileobj = upload_stream(kind=UploadKind.ADJUDICATIONS, fileobj=fileobj, filename=filename)
    artefacts = {a.public_id: a for a in locked.artefacts.select_related("task", "output")}
    by_pk = dispute_catalogue(list(artefacts.values()))
    catalogue = {public_id: by_pk[a.pk] for public_id, a in artefacts.items()}
    reader = AdjudicationFileReader(fileobj, artefacts=catalogue)
    chosen: dict[str, list[FinalValue]] = defaultdict(list)
    lines: dict[tuple[str, str, str], int] = {}
    for record in reader:
        chosen[record.artefact].append(
            FinalValue(record.unit_key, record.field, record.value, record.note)
        )
        lines[(record.artefact, record.unit_key, record.field)] = record.line
    for public_id, values in chosen.items():
        final = {(v.unit_key, v.field): v.value for v in values}
        for v in values:
            problem = dependency_problem(catalogue[public_id], v.unit_key, v.field, final)
            if problem is not None:
                reader.add_error(
                    lines[(public_id, v.unit_key, v.field)], problem.field, problem.message
                )
    report = reader.report()
    if not report.ok:
        raise ServiceError(report.refusal(filename), field="file", details=report.details())
    for public_id, values in chosen.items():
        _write(
            actor,
            locked,
            artefacts[public_id],
            catalogue[public_id],
            values,
            via=f"import {filename}",
        )
    result = AdjudicationImportResult(
        sha256=report.sha256,
        lines=report.record_count + report.left_blank,
        adjudicated=report.record_count,
        artefacts=len(chosen),
        left_blank=report.left_blank,
    )
    audit_record(
        actor=actor,
        action="adjudications.import",
        target=locked,
        payload={"session": locked.public_id, "filename": filename, **asdict(result)},
    )
    sequential_after_final(actor=actor, session=locked)
    return result
