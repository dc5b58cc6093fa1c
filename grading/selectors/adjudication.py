"""Reads for adjudication: a session's disagreements, blind to provenance (SPEC §5.1).

An adjudicator judges the content, not the person: the graders of an artefact are shown as
"Grader 1", "Grader 2", … in an order drawn from the assignments' random public ids, so the
numbers carry neither names nor the order in which graders were assigned. Artefacts are
listed by public id, never by primary key (pk order follows the sample's strata).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import Http404

from charters.models import GuidanceItem, KeyElement, Role, SourceChunk, UseCase
from charters.permissions import use_case_for, user_roles
from grading.adjudication_io import ArtefactDisputes, dump_line
from grading.models import (
    Adjudication,
    Assignment,
    AssignmentStatus,
    GradingSession,
    SessionArtefact,
    SessionStatus,
)
from grading.rubric import (
    CITED_CHUNK,
    DEPENDS_ON,
    FIELDS,
    FIELDS_BY_NAME,
    GUIDANCE_ITEM,
    KEY_ELEMENT,
    SENTENCE,
    asking_values,
    field_for,
    unit_kind_of,
)
from grading.selectors.artefacts import (
    ArtefactUnit,
    FieldValues,
    artefact_text,
    label_choices,
    submitted_field_values,
    units_of,
)

READ_ONLY_ROLES = (Role.CHARTER_OWNER, Role.REVIEWER)
NOT_ASKED = "not asked"
FIELD_ORDER = {spec.name: n for n, spec in enumerate(FIELDS)}


@dataclass(frozen=True, slots=True)
class AdjudicationAccess:
    """What the user may do with a session's adjudication queue."""

    use_case: UseCase
    session: GradingSession
    is_adjudicator: bool

    @property
    def can_adjudicate(self) -> bool:
        return self.is_adjudicator and self.session.status == SessionStatus.OPEN


def adjudication_access(
    user: AbstractBaseUser | AnonymousUser, key: str, session_public_id: str, *, write: bool = False
) -> AdjudicationAccess:
    """Return the session if ``user`` may read its queue (``write``: resolve it).

    The session's named adjudicators resolve; the charter owner and the reviewer read.
    Outsiders (and unknown sessions) get 404, every other member 403.
    """
    use_case = use_case_for(user, key)
    session = GradingSession.objects.filter(use_case=use_case, public_id=session_public_id).first()
    if session is None:
        raise Http404("No such grading session.")
    # The queue is blind by design: a grader's adjudicator role counts here (docs/security.md).
    held = user_roles(user, use_case, blind=True)
    named = Role.ADJUDICATOR in held and session.adjudicators.filter(pk=user.pk).exists()
    if named:
        return AdjudicationAccess(use_case, session, True)
    if write:
        raise PermissionDenied("Only the session's named adjudicators resolve its disagreements.")
    if Role.GRADER in held or not held & {str(role) for role in READ_ONLY_ROLES}:
        raise PermissionDenied(
            "The adjudication queue is for the session's named adjudicators; the charter "
            "owner and the reviewer may read it."
        )
    return AdjudicationAccess(use_case, session, False)


@dataclass(frozen=True, slots=True)
class GraderValue:
    """One grader's value of a disputed field, the grader anonymised for this artefact."""

    grader: str
    value: str | None
    label: str
    number: int


@dataclass(frozen=True, slots=True)
class CitedSource:
    chunk_id: str
    source: str
    text: str


@dataclass(frozen=True, slots=True)
class Dispute:
    """A field of a unit the graders disagreed on, with its final value once adjudicated."""

    unit_key: str
    unit_kind: str
    field: str
    question: str
    choices: tuple[tuple[str, str], ...]
    unit_text: str
    cited_source: CitedSource | None
    values: tuple[GraderValue, ...]
    final: str | None
    final_label: str
    adjudicator: str
    adjudicated_at: datetime | None
    note: str
    #: A dependent field whose parent is pending on the same artefact: the parent field, and
    #: the parent's values that ask for this one (offered only once the parent's choice does).
    depends_on: str = ""
    asked_when: tuple[str, ...] = ()

    @property
    def pending(self) -> bool:
        return self.final is None


@dataclass(frozen=True, slots=True)
class QueueItem:
    """An artefact with disputed fields."""

    public_id: str
    task_id: str
    disputes: tuple[Dispute, ...]

    @property
    def disputed(self) -> int:
        return len(self.disputes)

    @property
    def pending(self) -> int:
        return sum(d.pending for d in self.disputes)

    @property
    def resolved(self) -> int:
        return self.disputed - self.pending


@dataclass(frozen=True, slots=True)
class QueueProgress:
    disputed: int
    resolved: int

    @property
    def pending(self) -> int:
        return self.disputed - self.resolved


def queue_progress(items: Sequence[QueueItem]) -> QueueProgress:
    """Return how many disputed fields the queue holds and how many are resolved."""
    return QueueProgress(sum(i.disputed for i in items), sum(i.resolved for i in items))


def adjudication_queue(*, session: GradingSession) -> list[QueueItem]:
    """Return the artefacts whose graders all submitted and disagree, pending first.

    A flat number of queries whatever the size of the session.
    """
    artefacts = list(session.artefacts.select_related("task").order_by("public_id"))
    disputes, _units = _disputes_of(artefacts)
    items = [
        QueueItem(a.public_id, a.task.external_id, disputes[a.pk])
        for a in artefacts
        if a.pk in disputes
    ]
    return sorted(items, key=lambda item: item.pending == 0)


def artefacts_awaiting_grades(*, session: GradingSession) -> int:
    """Return how many artefacts still wait for a grader's submission."""
    return (
        session.artefacts.filter(
            assignments__status__in=[AssignmentStatus.PENDING, AssignmentStatus.IN_PROGRESS]
        )
        .distinct()
        .count()
    )


@dataclass(frozen=True, slots=True)
class ArtefactSentence:
    key: str
    position: int
    text: str
    disputed: bool


@dataclass(frozen=True, slots=True)
class AdjudicationItem:
    """Everything an adjudicator needs to resolve one artefact's disagreements."""

    public_id: str
    task_id: str
    task_input: str
    text: str
    sentences: tuple[ArtefactSentence, ...]
    disputes: tuple[Dispute, ...]

    @property
    def pending(self) -> int:
        return sum(d.pending for d in self.disputes)

    @property
    def resolved(self) -> int:
        return len(self.disputes) - self.pending


def adjudication_item(
    *, session: GradingSession, artefact_public_id: str
) -> AdjudicationItem | None:
    """Return one artefact's disagreements, or None unless it is in the queue."""
    artefact = (
        session.artefacts.select_related("task", "output").filter(public_id=artefact_public_id)
    ).first()
    if artefact is None:
        return None
    disputes, units = _disputes_of([artefact])
    if artefact.pk not in disputes:
        return None
    marked = {
        f"s{u.sentence_position}" if u.kind == CITED_CHUNK else u.key
        for u in units[artefact.pk]
        if u.key in {d.unit_key for d in disputes[artefact.pk]}
    }
    return AdjudicationItem(
        public_id=artefact.public_id,
        task_id=artefact.task.external_id,
        task_input=artefact.task.input,
        text=artefact_text(artefact),
        sentences=tuple(
            ArtefactSentence(u.key, u.position, u.text, u.key in marked)
            for u in units[artefact.pk]
            if u.kind == SENTENCE
        ),
        disputes=disputes[artefact.pk],
    )


def next_pending_artefact(*, session: GradingSession, after: str = "") -> str | None:
    """Return the public id of the next artefact in the queue with a pending field.

    ``after``: the artefact being left; the next one after it in public-id order, wrapping
    round, other than itself. Without it, the first pending artefact. Four queries.
    """
    return artefact_neighbours(session=session, public_id=after).next_pending


@dataclass(frozen=True, slots=True)
class Neighbours:
    previous: str | None
    next_pending: str | None


def artefact_neighbours(*, session: GradingSession, public_id: str) -> Neighbours:
    """Return the artefact with disputes just before ``public_id``, and the next pending one.

    In public-id order (the queue's); the next pending one wraps round. Four queries.
    """
    artefacts = list(session.artefacts.only("pk", "public_id", "session"))
    by_pk = {a.pk: a.public_id for a in artefacts}
    disputed: set[str] = set()
    pending: set[str] = set()
    for values in submitted_field_values(artefacts):
        if values.disputed:
            disputed.add(by_pk[values.artefact_id])
            if values.pending:
                pending.add(by_pk[values.artefact_id])
    earlier = [p for p in disputed if p < public_id]
    following = sorted(p for p in pending if p > public_id) + sorted(
        p for p in pending if p < public_id
    )
    return Neighbours(max(earlier) if earlier else None, following[0] if following else None)


def dispute_catalogue(artefacts: Sequence[SessionArtefact]) -> dict[int, ArtefactDisputes]:
    """Return, by artefact pk, what an adjudication of the artefact is checked against.

    The graders' values of each field are in "Grader 1", "Grader 2", … order, as shown to
    the adjudicator. A flat number of queries whatever the number of artefacts.
    """
    ids = [a.pk for a in artefacts]
    units = units_of(artefacts)
    numbers = _grader_numbers(ids)
    complete: dict[int, bool] = {pk: True for pk in ids}
    for artefact_id, status in Assignment.objects.filter(artefact_id__in=ids).values_list(
        "artefact_id", "status"
    ):
        complete[artefact_id] &= status == AssignmentStatus.SUBMITTED
    graded: dict[int, dict[tuple[str, str], tuple[str | None, ...]]] = defaultdict(dict)
    final: dict[int, dict[tuple[str, str], str]] = defaultdict(dict)
    for values in submitted_field_values(artefacts):
        ordered = sorted(values.values.items(), key=lambda item: numbers[item[0]])
        graded[values.artefact_id][(values.unit_key, values.field)] = tuple(
            value for _pk, value in ordered
        )
        if values.adjudicated is not None:
            final[values.artefact_id][(values.unit_key, values.field)] = values.adjudicated
    return {
        a.pk: ArtefactDisputes(
            unit_keys=frozenset(u.key for u in units[a.pk]),
            complete=complete[a.pk],
            graded=graded[a.pk],
            final=final[a.pk],
        )
        for a in artefacts
    }


def adjudications_file(*, session: GradingSession) -> Iterator[bytes]:
    """Yield the lines of the session's pending disputed fields, to fill in and import.

    docs/formats.md "Adjudications (JSONL)": ``value`` is null; the question, the allowed
    values, the graders' values ("Grader 1", …) and the unit's text help fill it offline.
    """
    for item in adjudication_queue(session=session):
        for dispute in item.disputes:
            if not dispute.pending:
                continue
            yield dump_line(
                {
                    "artefact": item.public_id,
                    "unit_key": dispute.unit_key,
                    "field": dispute.field,
                    "value": None,
                    "note": "",
                    "task_id": item.task_id,
                    "question": dispute.question,
                    "choices": [value for value, _label in dispute.choices],
                    "grader_values": {given.grader: given.value for given in dispute.values},
                    "unit_text": dispute.unit_text,
                }
            )


@dataclass(frozen=True, slots=True)
class _Gold:
    sources: dict[tuple[int, str], CitedSource]
    texts: dict[tuple[int, str], str]  # (task pk, "k:id" or "g:id") → text


def _disputes_of(
    artefacts: Sequence[SessionArtefact],
) -> tuple[dict[int, tuple[Dispute, ...]], dict[int, list[ArtefactUnit]]]:
    """Return the disputes of each artefact that has any (by pk), and their units."""
    disputed: dict[int, list[FieldValues]] = defaultdict(list)
    for values in submitted_field_values(artefacts):
        if values.disputed:  # a moot field is neither shown nor offered
            disputed[values.artefact_id].append(values)
    chosen = [a for a in artefacts if a.pk in disputed]
    if not chosen:
        return {}, {}
    units = units_of(chosen)
    gold = _gold_of({a.task_id for a in chosen})
    graders = _grader_numbers([a.pk for a in chosen])
    records = {
        (artefact_id, unit_key, field): (username, created_at, note)
        for artefact_id, unit_key, field, username, created_at, note in Adjudication.objects.filter(
            artefact_id__in=[a.pk for a in chosen]
        ).values_list(
            "artefact_id", "unit_key", "field", "adjudicator__username", "created_at", "note"
        )
    }
    result: dict[int, tuple[Dispute, ...]] = {}
    for artefact in chosen:
        by_key = {u.key: u for u in units[artefact.pk]}
        order = {u.key: n for n, u in enumerate(units[artefact.pk])}
        rows = sorted(
            disputed[artefact.pk],
            key=lambda v: (order.get(v.unit_key, len(order)), FIELD_ORDER.get(v.field, 0)),
        )
        waiting = {(v.unit_key, v.field) for v in rows if v.pending}
        # an open field (the right label) offers the task set's label set
        labels = label_choices(artefact) if any(FIELDS_BY_NAME[v.field].open for v in rows) else ()
        result[artefact.pk] = tuple(
            _dispute(
                v, by_key, artefact.task_id, gold, graders, records.get(_key(v)), waiting, labels
            )
            for v in rows
        )
    return result, units


def _key(values: FieldValues) -> tuple[int, str, str]:
    return (values.artefact_id, values.unit_key, values.field)


def _dispute(
    values: FieldValues,
    units: dict[str, ArtefactUnit],
    task_pk: int,
    gold: _Gold,
    graders: dict[int, int],
    record: tuple[str, datetime, str] | None,
    waiting: set[tuple[str, str]],
    label_set: tuple[str, ...] = (),
) -> Dispute:
    spec = field_for(values.unit_key, values.field)
    offered = (
        tuple(zip(spec.values, spec.labels, strict=True))
        if spec.values
        else tuple((label, label) for label in label_set)
    )
    labels = dict(offered)
    kind = unit_kind_of(values.unit_key)
    unit = units.get(values.unit_key)
    cited = None
    unit_text = unit.text if unit is not None else ""
    if kind == CITED_CHUNK and unit is not None:
        cited = gold.sources.get((task_pk, unit.ref_id), CitedSource(unit.ref_id, "", ""))
    elif kind in (KEY_ELEMENT, GUIDANCE_ITEM):
        unit_text = gold.texts.get((task_pk, values.unit_key), "")
    shown = sorted(
        (graders[assignment_id], value, labels.get(value, value) if value else NOT_ASKED)
        for assignment_id, value in values.values.items()
    )
    username, adjudicated_at, note = record if record is not None else ("", None, "")
    final = values.adjudicated
    parent = DEPENDS_ON.get(values.field, "")
    if final is not None or (values.unit_key, parent) not in waiting:
        parent = ""
    return Dispute(
        unit_key=values.unit_key,
        unit_kind=kind,
        field=values.field,
        question=spec.question,
        choices=offered,
        unit_text=unit_text,
        cited_source=cited,
        values=tuple(GraderValue(f"Grader {n}", value, label, n) for n, value, label in shown),
        final=final,
        final_label=labels.get(final, final) if final is not None else "",
        adjudicator=username,
        adjudicated_at=adjudicated_at,
        note=note,
        depends_on=parent,
        asked_when=asking_values(values.field) if parent else (),
    )


def _grader_numbers(artefact_ids: Sequence[int]) -> dict[int, int]:
    """Return the grader number of each assignment pk, per artefact in public-id order."""
    by_artefact: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for pk, artefact_id, public_id in Assignment.objects.filter(
        artefact_id__in=artefact_ids
    ).values_list("pk", "artefact_id", "public_id"):
        by_artefact[artefact_id].append((public_id, pk))
    numbers: dict[int, int] = {}
    for assignments in by_artefact.values():
        for n, (_public_id, pk) in enumerate(sorted(assignments), start=1):
            numbers[pk] = n
    return numbers


def _gold_of(task_pks: set[int]) -> _Gold:
    pks = list(task_pks)
    sources = {
        (task_id, chunk_id): CitedSource(chunk_id, source, text)
        for task_id, chunk_id, source, text in SourceChunk.objects.filter(
            task_id__in=pks
        ).values_list("task_id", "chunk_id", "source", "text")
    }
    texts: dict[tuple[int, str], str] = {}
    for task_id, element_id, text in KeyElement.objects.filter(task_id__in=pks).values_list(
        "task_id", "element_id", "text"
    ):
        texts[(task_id, f"k:{element_id}")] = text
    for task_id, item_id, text in GuidanceItem.objects.filter(task_id__in=pks).values_list(
        "task_id", "item_id", "text"
    ):
        texts[(task_id, f"g:{item_id}")] = text
    return _Gold(sources, texts)
