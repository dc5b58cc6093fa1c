"""Reads of sampled artefacts: their text, units and the grades on them, blind to provenance."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.http import Http404

from charters.models import GuidanceItem, KeyElement, Role, SourceChunk, Task, TaskSet
from grading.models import (
    Adjudication,
    ArtefactKind,
    Assignment,
    AssignmentStatus,
    Grade,
    GradingSession,
    SessionArtefact,
)
from grading.rubric import (
    ARTEFACT_KEY,
    LABEL_KEY,
    OPTIONAL_FIELDS,
    is_asked,
    is_moot,
    unit_kind_of,
)
from runs.models import Run, Unit
from runs.segment import build_units


@dataclass(frozen=True, slots=True)
class ArtefactUnit:
    """A gradable unit of an artefact (``runs.segment.UnitSpec`` without provenance)."""

    key: str
    kind: str
    position: int
    text: str
    ref_id: str
    sentence_position: int | None


ARTEFACT_UNIT = ArtefactUnit(ARTEFACT_KEY, "artefact", 1, "", "", None)
#: The artefact-level unit asking each optional rubric field (``SessionArtefact.asks``).
OPTIONAL_UNITS = {
    name: ArtefactUnit(key, unit_kind_of(key), 1, "", "", None)
    for name, key in OPTIONAL_FIELDS.items()
}


def artefact_text(artefact: SessionArtefact) -> str:
    """Return the text a grader grades: the output's text or the task's reference artefact."""
    if artefact.kind == ArtefactKind.OUTPUT:
        assert artefact.output is not None
        return artefact.output.text
    return artefact.task.reference


def label_choices(artefact: SessionArtefact) -> tuple[str, ...]:
    """Return the label set an open rubric field (``correct_label``) of the artefact offers:
    its task set's, in declared order (one query, only when the artefact asks for it)."""
    if LABEL_KEY not in [OPTIONAL_FIELDS.get(name) for name in artefact.asks or ()]:
        return ()
    label_set = (
        TaskSet.objects.filter(tasks__pk=artefact.task_id)
        .values_list("label_set", flat=True)
        .first()
    )
    return tuple(label_set or ())


def artefact_label(artefact: SessionArtefact) -> str | None:
    """Return the label the artefact gives (SPEC §4.1): the output's (imported or parsed), or
    the reference artefact's, which is its task's gold label; ``None`` when none is known."""
    if artefact.kind == ArtefactKind.OUTPUT:
        assert artefact.output is not None
        return artefact.output.label
    return artefact.task.gold_label


UNITS_MEMO = "_grading_units"


def units_of(artefacts: Sequence[SessionArtefact]) -> dict[int, list[ArtefactUnit]]:
    """Return each artefact's units (by artefact pk) in grading order, artefact units last.

    The artefact-level units are the optional ones the session asks of it (its ``asks``,
    frozen from the charter's ``rubric_fields``: ``label``, ``acceptable``) and then the
    value-add unit.

    Output artefacts read their stored ``runs.Unit`` rows (one query for all); baseline
    artefacts are segmented on the fly with the same :func:`runs.segment.build_units`. Units
    never change once imported (audit/db_guards.py), so each artefact instance keeps its list:
    an autosave that checks its changes and then reports what is missing reads them once.
    """
    known = {a.pk: a.__dict__[UNITS_MEMO] for a in artefacts if UNITS_MEMO in a.__dict__}
    fresh = [a for a in artefacts if a.pk not in known]
    result = _units_read(fresh) if fresh else {}
    for artefact in fresh:
        artefact.__dict__[UNITS_MEMO] = result[artefact.pk]
    found = {**known, **result}
    return {a.pk: list(found[a.pk]) for a in artefacts}


def _units_read(artefacts: Sequence[SessionArtefact]) -> dict[int, list[ArtefactUnit]]:
    result: dict[int, list[ArtefactUnit]] = {a.pk: [] for a in artefacts}
    by_output = {a.output_id: a.pk for a in artefacts if a.output_id is not None}
    order = {"sentence": 0, "cited_chunk": 1, "key_element": 2, "guidance_item": 3}
    rows = Unit.objects.filter(output_id__in=list(by_output)).values_list(
        "output_id", "key", "kind", "position", "text", "ref_id", "sentence_position"
    )
    for output_id, key, kind, position, text, ref_id, sentence_position in rows:
        result[by_output[output_id]].append(
            ArtefactUnit(key, kind, position, text, ref_id, sentence_position)
        )
    baselines = [a for a in artefacts if a.kind == ArtefactKind.BASELINE]
    if baselines:
        gold = _gold_ids([a.task_id for a in baselines])
        for artefact in baselines:
            elements, items = gold[artefact.task_id]
            result[artefact.pk] = [
                ArtefactUnit(u.key, u.kind, u.position, u.text, u.ref_id, u.sentence_position)
                for u in build_units(
                    artefact.task.reference, key_element_ids=elements, guidance_item_ids=items
                )
            ]
    for artefact in artefacts:
        units = result[artefact.pk]
        units.sort(key=lambda u: (order[u.kind], u.position))
        asked = artefact.asks or ()
        units.extend(OPTIONAL_UNITS[name] for name in OPTIONAL_FIELDS if name in asked)
        units.append(ARTEFACT_UNIT)
    return result


def _gold_ids(task_pks: Iterable[int]) -> dict[int, tuple[list[str], list[str]]]:
    pks = list(task_pks)
    gold: dict[int, tuple[list[str], list[str]]] = {pk: ([], []) for pk in pks}
    for task_id, element_id in (
        KeyElement.objects.filter(task_id__in=pks)
        .order_by("pk")
        .values_list("task_id", "element_id")
    ):
        gold[task_id][0].append(element_id)
    for task_id, item_id in (
        GuidanceItem.objects.filter(task_id__in=pks)
        .order_by("pk")
        .values_list("task_id", "item_id")
    ):
        gold[task_id][1].append(item_id)
    return gold


def graders_own(user: AbstractBaseUser) -> QuerySet[Assignment]:
    """Return ``user``'s assignments on the use cases where they still hold the grader role.

    A grader whose role is revoked loses every assignment of that use case at once, in the
    web app, the API and the command line: each is then a 404, as anyone else's is. Grades
    already submitted stay in the record (they were given under the role). One join, no
    further query.
    """
    return Assignment.objects.filter(
        grader=user,
        session__use_case__memberships__user=user,
        session__use_case__memberships__role=Role.GRADER,
    )


def assignment_for_grader(
    user: AbstractBaseUser | AnonymousUser, public_id: str, *, for_write: bool = False
) -> Assignment:
    """Return the grader's own assignment; anyone else's (or none) is a 404 (SPEC §5.1).

    Own means given to ``user`` on a use case where they still hold the grader role
    (:func:`graders_own`). ``for_write``: only its key, for a service that locks the row and
    reads what it needs (an autosave then builds no artefact, output or task it would not use).
    """
    if not user.is_authenticated:
        raise Http404("No such assignment.")
    mine = graders_own(user).filter(public_id=public_id)
    if for_write:
        mine = mine.only("pk", "grader_id")
    else:
        mine = mine.select_related(
            "session", "session__use_case", "artefact", "artefact__output", "artefact__task"
        )
    assignment = mine.first()
    if assignment is None:
        raise Http404("No such assignment.")
    return assignment


def grades_of(assignment: Assignment) -> dict[str, dict[str, str]]:
    """Return the assignment's grades as ``{unit_key: {field: value}}``."""
    grades: dict[str, dict[str, str]] = defaultdict(dict)
    for unit_key, field, value in assignment.grades.values_list("unit_key", "field", "value"):
        grades[unit_key][field] = value
    return dict(grades)


@dataclass(frozen=True, slots=True)
class TaskContext:
    """What a grader needs besides the artefact: the task input, sources and gold."""

    input: str
    sources: list[SourceChunk]
    key_elements: list[KeyElement]
    guidance_items: list[GuidanceItem]


def task_context(task: Task) -> TaskContext:
    """Return the task's input, permitted source chunks, key elements and guidance items."""
    return TaskContext(
        input=task.input,
        sources=list(task.source_chunks.order_by("pk")),
        key_elements=list(task.key_elements.order_by("pk")),
        guidance_items=list(task.guidance_items.order_by("pk")),
    )


@dataclass(frozen=True, slots=True)
class FieldValues:
    """The submitted values of one field of one unit of one artefact, and its final value."""

    artefact_id: int
    unit_key: str
    field: str
    values: dict[int, str | None]  # assignment pk → value (None: not asked of that grader)
    adjudicated: str | None
    #: Not asked given the final value of its parent field (``grading.rubric.is_moot``): no
    #: final value, nothing to adjudicate, whatever the graders said.
    moot: bool = False

    @property
    def agreed(self) -> bool:
        return len(set(self.values.values())) == 1

    @property
    def disputed(self) -> bool:
        """The graders disagree on a field that is still asked."""
        return not self.agreed and not self.moot

    @property
    def pending(self) -> bool:
        """Disputed and not adjudicated: the session cannot close while one is."""
        return self.disputed and self.adjudicated is None

    @property
    def final(self) -> str | None:
        if self.moot:
            return None
        if self.adjudicated is not None:
            return self.adjudicated
        return next(iter(self.values.values())) if self.agreed else None


def submitted_field_values(artefacts: Sequence[SessionArtefact]) -> list[FieldValues]:
    """Return every (unit, field) graded on artefacts whose assignments are all submitted.

    A field one grader answered and another was not asked (``supported`` after "not
    assertive") counts as a disagreement, with ``None`` for the grader not asked, until its
    parent field's final value (agreed or adjudicated) decides: if that value does not ask
    for it, the field is ``moot``. Three queries whatever the number of artefacts.
    """
    ids = [a.pk for a in artefacts]
    assignments: dict[int, list[int]] = defaultdict(list)
    complete: dict[int, bool] = defaultdict(lambda: True)
    for pk, artefact_id, status in Assignment.objects.filter(artefact_id__in=ids).values_list(
        "pk", "artefact_id", "status"
    ):
        assignments[artefact_id].append(pk)
        complete[artefact_id] &= status == AssignmentStatus.SUBMITTED
    ready = {a for a in assignments if complete[a]}
    grades: dict[tuple[int, str], dict[int, dict[str, str]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for assignment_id, artefact_id, unit_key, field, value in Grade.objects.filter(
        assignment__artefact_id__in=ready
    ).values_list("assignment_id", "assignment__artefact_id", "unit_key", "field", "value"):
        grades[(artefact_id, unit_key)][assignment_id][field] = value
    adjudicated = {
        (artefact_id, unit_key, field): value
        for artefact_id, unit_key, field, value in Adjudication.objects.filter(
            artefact_id__in=ready
        ).values_list("artefact_id", "unit_key", "field", "value")
    }
    result: list[FieldValues] = []
    for (artefact_id, unit_key), per_assignment in sorted(grades.items()):
        fields = sorted({f for unit in per_assignment.values() for f in unit})
        unit_values: list[FieldValues] = []
        for field in fields:
            values: dict[int, str | None] = {}
            for assignment_id in sorted(assignments[artefact_id]):
                unit = per_assignment.get(assignment_id, {})
                values[assignment_id] = unit.get(field) if is_asked(field, unit) else None
            unit_values.append(
                FieldValues(
                    artefact_id,
                    unit_key,
                    field,
                    values,
                    adjudicated.get((artefact_id, unit_key, field)),
                )
            )
        finals = {fv.field: fv.final for fv in unit_values}
        result += [
            replace(fv, moot=True) if is_moot(fv.field, finals) else fv for fv in unit_values
        ]
    return result


def output_field_finals(
    *, session: GradingSession, run: Run, unit_key: str, fields: Sequence[str]
) -> dict[int, dict[str, str | None]]:
    """Return, per output of ``run`` the session sampled and graded completely, the final
    values (agreed or adjudicated) of the artefact-level ``fields`` of its unit ``unit_key``:
    ``None`` while the graders' disagreement awaits its adjudicator; a field not asked (moot)
    is absent. An output not in the map was not graded (not sampled, or an assignment not
    submitted). Four queries.
    """
    artefacts = list(SessionArtefact.objects.filter(session=session, output__run=run))
    output_of = {artefact.pk: artefact.output_id for artefact in artefacts}
    finals: dict[int, dict[str, str | None]] = {}
    for value in submitted_field_values(artefacts):
        output = output_of[value.artefact_id]
        if value.unit_key == unit_key and value.field in fields and output is not None:
            unit = finals.setdefault(output, {})
            if not value.moot:
                unit[value.field] = value.final
    return finals
