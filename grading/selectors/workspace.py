"""Reads for a grader's own work: the queue of sessions and the workspace of one assignment.

Everything here is blind (SPEC §5.1): sessions by name, assignments and sessions by
``public_id``, the artefact as text and units; never its kind, stratum, output or run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, OuterRef, QuerySet, Subquery

from charters.models import SourceChunk
from grading.models import Assignment, AssignmentStatus, SessionStatus
from grading.rubric import (
    ACCEPTABILITY,
    CITED_CHUNK,
    FIELDS_BY_KIND,
    GUIDANCE_ITEM,
    KEY_ELEMENT,
    LABEL,
    SENTENCE,
    Field,
    is_asked,
    missing_fields,
)
from grading.selectors.artefacts import (
    ArtefactUnit,
    TaskContext,
    artefact_label,
    artefact_text,
    graders_own,
    grades_of,
    label_choices,
    task_context,
    units_of,
)

#: Keys the workspace keeps for itself (next/previous unit, submit, reason, help): a rubric
#: letter that collides with one (citation "s"trict) is reached by its digit only.
RESERVED_KEYS = frozenset({"j", "k", "s", "r", "?"})

FIELD_TITLES = {
    "assertive": "Assertive",
    "supported": "Supported",
    "relevant": "Relevant",
    "citation": "Citation used",
    "key_element": "In the artefact",
    "guidance": "Guidance",
    "severity": "Severity",
    "value_add": "Value added",
    "label_correct": "Classification correct",
    "correct_label": "Right label",
    "acceptable": "Acceptable as is",
}


@dataclass(frozen=True, slots=True)
class QueueSession:
    """One open session in a grader's queue, with the grader's progress in it."""

    public_id: str
    name: str
    use_case_key: str
    use_case_name: str
    total: int
    submitted: int
    seconds_spent: float
    continue_id: str  # the first unsubmitted assignment in blind order, else the first

    @property
    def done(self) -> bool:
        return self.submitted == self.total

    @property
    def time_spent(self) -> str:
        return seconds_label(self.seconds_spent)


def grading_queue(*, user: AbstractBaseUser | AnonymousUser) -> list[QueueSession]:
    """Return the open sessions in which ``user`` has assignments, oldest session first.

    One query whatever the number of sessions and assignments.
    """
    if not user.is_authenticated:
        return []
    rows = (
        graders_own(user)
        .filter(session__status=SessionStatus.OPEN)
        .exclude(status=AssignmentStatus.WITHDRAWN)
        .order_by("session__created_at", "session_id", "position")
        .values_list(
            "session__public_id",
            "session__name",
            "session__use_case__key",
            "session__use_case__name",
            "public_id",
            "status",
            "seconds_spent",
        )
    )
    heads: dict[str, tuple[str, str, str]] = {}
    work: dict[str, list[tuple[str, str, float]]] = {}
    for session_id, name, key, use_case_name, public_id, status, seconds in rows:
        heads.setdefault(session_id, (name, key, use_case_name))
        work.setdefault(session_id, []).append((public_id, status, seconds))
    queue = []
    for session_id, assignments in work.items():
        name, key, use_case_name = heads[session_id]
        open_ids = [p for p, status, _ in assignments if status != AssignmentStatus.SUBMITTED]
        queue.append(
            QueueSession(
                public_id=session_id,
                name=name,
                use_case_key=key,
                use_case_name=use_case_name,
                total=len(assignments),
                submitted=len(assignments) - len(open_ids),
                seconds_spent=sum(seconds for _, _, seconds in assignments),
                continue_id=open_ids[0] if open_ids else assignments[0][0],
            )
        )
    return queue


@dataclass(frozen=True, slots=True)
class EndedSession:
    """A session that ended while ``withdrawn`` of the grader's outputs were not submitted."""

    name: str
    use_case_key: str
    withdrawn: int


def ended_sessions(*, user: AbstractBaseUser | AnonymousUser) -> list[EndedSession]:
    """Return the sessions that ended with some of ``user``'s work withdrawn (one query).

    The queue says only that the session ended; never why (a grader must not learn how the
    grades so far read, SPEC §5.1, §5.5).
    """
    if not user.is_authenticated:
        return []
    rows = (
        graders_own(user)
        .filter(status=AssignmentStatus.WITHDRAWN)
        .values("session__name", "session__use_case__key", "session__created_at")
        .annotate(n=Count("pk"))
        .order_by("-session__created_at")
    )
    return [
        EndedSession(row["session__name"], row["session__use_case__key"], row["n"]) for row in rows
    ]


def assignment_list(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Assignment]:
    """Return ``user``'s own assignments with each session's size (``session_total``)."""
    if not user.is_authenticated:
        return Assignment.objects.none()
    sizes = (
        Assignment.objects.filter(session=OuterRef("session"), grader=user)
        .order_by()
        .values("session")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return (
        graders_own(user)
        .select_related("session")
        .annotate(session_total=Subquery(sizes))
        .order_by("-session__created_at", "-session_id", "position")
    )


@dataclass(frozen=True, slots=True)
class Choice:
    """One value of a field as the workspace offers it, with its shortcut keys."""

    value: str
    label: str
    digit: str
    letter: str
    checked: bool


@dataclass(frozen=True, slots=True)
class FieldView:
    """One rubric question of one unit, with the grader's current answer."""

    unit_key: str
    name: str
    title: str
    question: str
    value: str
    asked: bool
    choices: list[Choice]

    @property
    def input_name(self) -> str:
        return f"{self.unit_key}|{self.name}"


@dataclass(slots=True)
class UnitView:
    """A unit as the workspace shows it: its text and its fields.

    Sentences carry the cited chunks that cite them (``cited``); a cited chunk carries the
    permitted source chunk it names (``chunk``, ``None`` if the task has no such chunk).
    """

    key: str
    kind: str
    number: int
    text: str
    fields: list[FieldView]
    ref_id: str = ""
    mandatory: bool = False
    chunk: SourceChunk | None = None
    cited: list[UnitView] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Neighbour:
    public_id: str
    position: int
    submitted: bool


@dataclass(frozen=True, slots=True)
class Workspace:
    """Everything the workspace page and the API detail show of one assignment."""

    assignment: Assignment
    siblings: list[Neighbour]
    task_id: str
    task: TaskContext
    text: str
    units: list[ArtefactUnit]
    sentences: list[UnitView]
    key_elements: list[UnitView]
    guidance_items: list[UnitView]
    artefact: UnitView
    grades: dict[str, dict[str, str]]
    missing: list[tuple[str, str]]
    verdicts: list[UnitView] = field(default_factory=list)
    #: The labels an open field (the right label) offers; empty unless the label is asked.
    label_set: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return len(self.siblings)

    @property
    def submitted(self) -> int:
        return sum(n.submitted for n in self.siblings)

    @property
    def previous(self) -> Neighbour | None:
        earlier = [n for n in self.siblings if n.position < self.assignment.position]
        return earlier[-1] if earlier else None

    @property
    def next(self) -> Neighbour | None:
        later = [n for n in self.siblings if n.position > self.assignment.position]
        return later[0] if later else None

    @property
    def asked(self) -> int:
        return sum(f.asked for unit in self.all_units() for f in unit.fields)

    @property
    def answered(self) -> int:
        return self.asked - len(self.missing)

    def all_units(self) -> list[UnitView]:
        """Return every unit in the order the workspace shows (and navigates) them."""
        ordered: list[UnitView] = []
        for sentence in self.sentences:
            ordered.append(sentence)
            ordered.extend(sentence.cited)
        return [
            *ordered,
            *self.key_elements,
            *self.guidance_items,
            *self.verdicts,
            self.artefact,
        ]


def assignment_siblings(assignment: Assignment) -> list[Neighbour]:
    """Return the grader's assignments in the same session, in blind order (one query)."""
    return [
        Neighbour(public_id, position, status == AssignmentStatus.SUBMITTED)
        for public_id, position, status in Assignment.objects.filter(
            session_id=assignment.session_id, grader_id=assignment.grader_id
        )
        .order_by("position")
        .values_list("public_id", "position", "status")
    ]


def next_open_of(siblings: list[Neighbour], position: int) -> Neighbour | None:
    """Return the first unsubmitted assignment after ``position``, wrapping round."""
    ordered = sorted(siblings, key=lambda n: (n.position <= position, n.position))
    return next((n for n in ordered if not n.submitted and n.position != position), None)


def choice_keys(spec: Field) -> list[tuple[str, str]]:
    """Return each value's ``(digit, letter)`` shortcut.

    The digit is the value's place (1, 2, …) unless the rubric's own keys are digits
    (value-add 0/1/2 is typed as itself); the letter is the rubric key when it is a letter
    the workspace does not reserve.
    """
    numeric = all(key.isdigit() for key in spec.keys)
    return [
        (
            key if numeric else str(n),
            "" if numeric or key in RESERVED_KEYS else key,
        )
        for n, key in enumerate(spec.keys, start=1)
    ]


def _fields(
    unit_key: str, kind: str, unit_grades: dict[str, str], labels: tuple[str, ...] = ()
) -> list[FieldView]:
    views = []
    for spec in FIELDS_BY_KIND[kind]:
        value = unit_grades.get(spec.name, "")
        # an open field offers the task set's label set, typed by its place (1, 2, ...)
        values = spec.values or labels
        keys = (
            choice_keys(spec) if spec.values else [(str(n), "") for n in range(1, len(labels) + 1)]
        )
        views.append(
            FieldView(
                unit_key=unit_key,
                name=spec.name,
                title=FIELD_TITLES[spec.name],
                question=spec.question,
                value=value,
                asked=is_asked(spec.name, unit_grades),
                choices=[
                    Choice(v, label, digit, letter, v == value)
                    for v, label, (digit, letter) in zip(
                        values, spec.labels or values, keys, strict=True
                    )
                ],
            )
        )
    return views


def assignment_workspace(*, assignment: Assignment) -> Workspace:
    """Return the blind workspace of one assignment (the caller checked it is the user's).

    A fixed number of queries whatever the number of units.
    """
    artefact = assignment.artefact
    units = [
        # the label unit shows the label the artefact gives (SPEC §4.1), nothing of its source
        replace(unit, text=artefact_label(artefact) or "") if unit.kind == LABEL else unit
        for unit in units_of([artefact])[artefact.pk]
    ]
    context = task_context(artefact.task)
    grades = grades_of(assignment)
    chunks = {chunk.chunk_id: chunk for chunk in context.sources}
    elements = {element.element_id: element.text for element in context.key_elements}
    items = {item.item_id: item for item in context.guidance_items}

    labels = label_choices(artefact)

    def view(unit: ArtefactUnit) -> UnitView:
        return UnitView(
            key=unit.key,
            kind=unit.kind,
            number=unit.position,
            text=unit.text,
            fields=_fields(unit.key, unit.kind, grades.get(unit.key, {}), labels),
            ref_id=unit.ref_id,
        )

    sentences: dict[int, UnitView] = {}
    key_elements: list[UnitView] = []
    guidance_items: list[UnitView] = []
    verdicts: list[UnitView] = []
    artefact_view = None
    for unit in units:
        shown = view(unit)
        if unit.kind == SENTENCE:
            sentences[unit.position] = shown
        elif unit.kind == CITED_CHUNK:
            shown.chunk = chunks.get(unit.ref_id)
            assert unit.sentence_position is not None
            sentences[unit.sentence_position].cited.append(shown)
        elif unit.kind == KEY_ELEMENT:
            shown.text = elements.get(unit.ref_id, "")
            key_elements.append(shown)
        elif unit.kind == GUIDANCE_ITEM:
            item = items.get(unit.ref_id)
            shown.text = item.text if item else ""
            shown.mandatory = bool(item and item.mandatory)
            guidance_items.append(shown)
        elif unit.kind in (LABEL, ACCEPTABILITY):
            verdicts.append(shown)
        else:
            artefact_view = shown
    assert artefact_view is not None
    return Workspace(
        assignment=assignment,
        siblings=assignment_siblings(assignment),
        task_id=artefact.task.external_id,
        task=context,
        text=artefact_text(artefact),
        units=units,
        sentences=list(sentences.values()),
        key_elements=key_elements,
        guidance_items=guidance_items,
        artefact=artefact_view,
        grades=grades,
        missing=missing_fields([u.key for u in units], grades),
        verdicts=verdicts,
        label_set=labels,
    )


def assignment_grading_state(
    *, assignment: Assignment
) -> tuple[dict[str, dict[str, str]], list[tuple[str, str]]]:
    """Return the assignment's grades and the asked fields still missing."""
    grades = grades_of(assignment)
    keys = [unit.key for unit in units_of([assignment.artefact])[assignment.artefact_id]]
    return grades, missing_fields(keys, grades)


def seconds_label(seconds: float) -> str:
    """Return a duration as the queue shows it: "45 s", "12 min", "1 h 05 min"."""
    total = round(seconds)
    if total < 60:
        return f"{total} s"
    minutes = total // 60
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"
