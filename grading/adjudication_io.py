"""Read adjudications files (JSONL; docs/formats.md "Adjudications (JSONL)"), check one choice.

Pure: no Django import. An adjudications file has one line per disputed field of a grading
session: the artefact's public id, the unit key, the field, the final value and an optional
note. :class:`AdjudicationFileReader` reads a binary file object one line at a time (the
:class:`~enterpriseval.jsonl.JsonlReader` base: limits before parsing, line numbers in every
error), checks each line against the session's disputes (:class:`ArtefactDisputes`) with
:func:`choice_problem` — the same check the per-artefact services make — and yields each
valid line as an :class:`AdjudicationRecord`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any, BinaryIO

from enterpriseval.jsonl import DEFAULT_MAX_ERRORS, JsonlReader, JsonlReport, unstorable_text
from enterpriseval.values import json_kind, json_shown
from grading.rubric import DEPENDS_ON, asking_values, field_for, is_moot

FIELDS = ("artefact", "unit_key", "field", "value", "note")
#: Written by the export to help an adjudicator fill the file offline; ignored by an import.
EXPORT_FIELDS = ("task_id", "question", "choices", "grader_values", "unit_text")
MAX_LINE_BYTES = 256 * 1024
MAX_NOTE_LENGTH = 4000
EMPTY: Mapping[tuple[str, str], str] = MappingProxyType({})

__all__ = [
    "AdjudicationFileReader",
    "AdjudicationFileReport",
    "AdjudicationRecord",
    "ArtefactDisputes",
    "Problem",
    "ProblemKind",
    "choice_problem",
    "dependency_problem",
    "dump_line",
]


class ProblemKind(Enum):
    """Why a choice is refused: a bad value (400), a field not disputed (409), already final."""

    INVALID = "invalid"
    CONFLICT = "conflict"
    FINAL = "final"


@dataclass(frozen=True, slots=True)
class Problem:
    kind: ProblemKind
    field: str
    message: str


@dataclass(frozen=True, slots=True)
class ArtefactDisputes:
    """What a choice on one artefact is checked against.

    ``unit_keys``: the artefact's units; ``complete``: every grader has submitted;
    ``graded``: each graded ``(unit_key, field)`` → the graders' values (None: not asked)
    in grader order; ``final``: the adjudicated value of each field adjudicated so far.
    """

    unit_keys: frozenset[str]
    complete: bool
    graded: Mapping[tuple[str, str], tuple[str | None, ...]]
    final: Mapping[tuple[str, str], str]

    def final_value(
        self, unit_key: str, field: str, chosen: Mapping[tuple[str, str], str] = EMPTY
    ) -> str | None:
        """Return the field's final value: ``chosen`` in this step, adjudicated, or agreed."""
        key = (unit_key, field)
        if key in chosen:
            return chosen[key]
        if key in self.final:
            return self.final[key]
        values = self.graded.get(key)
        return values[0] if values and len(set(values)) == 1 else None

    def is_moot(
        self, unit_key: str, field: str, chosen: Mapping[tuple[str, str], str] = EMPTY
    ) -> bool:
        """Return whether the parent's final value (``chosen`` included) no longer asks it."""
        parent = DEPENDS_ON.get(field)
        if parent is None:
            return False
        return is_moot(field, {parent: self.final_value(unit_key, parent, chosen)})

    def is_pending(self, unit_key: str, field: str) -> bool:
        values = self.graded.get((unit_key, field))
        disputed = values is not None and len(set(values)) > 1
        return (
            disputed and (unit_key, field) not in self.final and not self.is_moot(unit_key, field)
        )


def dependency_problem(
    disputes: ArtefactDisputes,
    unit_key: str,
    field: str,
    chosen: Mapping[tuple[str, str], str],
) -> Problem | None:
    """Return why a dependent field may not be given a final value now, or None.

    ``chosen``: every final value given in the same step (a page, a take, a file). A
    dependent field (``supported``, ``severity``) is adjudicated only once its parent's final
    value — already final or chosen in the same step — asks for it.
    """
    parent = DEPENDS_ON.get(field)
    if parent is None:
        return None
    final = disputes.final_value(unit_key, parent, chosen)
    if final is not None:
        if not is_moot(field, {parent: final}):
            return None
        return Problem(
            ProblemKind.CONFLICT,
            "field",
            f"{unit_key} {field} is not asked once {unit_key} {parent} is {final!r}; "
            "there is nothing to adjudicate.",
        )
    if disputes.is_pending(unit_key, parent):
        return Problem(
            ProblemKind.CONFLICT,
            "field",
            f"{unit_key} {field} is asked only if {unit_key} {parent} is "
            f"{' or '.join(asking_values(field))}, and {parent} is still disputed: choose "
            f"{unit_key} {parent} first, or in the same step.",
        )
    return None


def choice_problem(
    disputes: ArtefactDisputes, unit_key: str, field: str, value: str | None
) -> Problem | None:
    """Return why ``value`` may not become the final value of ``unit_key`` ``field``, or None.

    ``value`` None checks the field alone (an exported line left unfilled).
    """
    if unit_key not in disputes.unit_keys:
        return Problem(
            ProblemKind.INVALID, "unit_key", f"{unit_key!r} is not a unit of this artefact."
        )
    try:
        spec = field_for(unit_key, field)
        if value is not None:
            spec.check(value)
    except ValueError as error:
        return Problem(ProblemKind.INVALID, "value", str(error))
    if not disputes.complete:
        return Problem(
            ProblemKind.CONFLICT,
            "field",
            f"{unit_key} {field} has no submitted grades from every grader yet.",
        )
    values = disputes.graded.get((unit_key, field))
    if values is None:
        return Problem(
            ProblemKind.CONFLICT,
            "field",
            f"{unit_key} {field} was not asked of any grader; there is nothing to adjudicate.",
        )
    if len(set(values)) == 1:
        return Problem(
            ProblemKind.CONFLICT,
            "field",
            f"The graders agree on {unit_key} {field}; there is nothing to adjudicate.",
        )
    if (unit_key, field) not in disputes.final and disputes.is_moot(unit_key, field):
        return dependency_problem(disputes, unit_key, field, EMPTY)
    if (unit_key, field) in disputes.final:
        return Problem(
            ProblemKind.FINAL,
            "field",
            f"{unit_key} {field} is already adjudicated; the adjudicated value is final "
            f"({disputes.final[(unit_key, field)]}).",
        )
    return None


@dataclass(frozen=True, slots=True)
class AdjudicationRecord:
    """One valid line: the final ``value`` of ``unit_key`` ``field`` of ``artefact``."""

    line: int
    artefact: str
    unit_key: str
    field: str
    value: str
    note: str


@dataclass(frozen=True)
class AdjudicationFileReport(JsonlReport):
    """What one full read of an adjudications file found."""

    record_count: int
    left_blank: int


def dump_line(obj: Mapping[str, Any]) -> bytes:
    """Return one line of an adjudications file: compact JSON in UTF-8 and a newline."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


class AdjudicationFileReader(JsonlReader[AdjudicationRecord]):
    """Read an adjudications file line by line: yield every valid line, collect every error.

    ``artefacts`` maps the public id of each artefact of the session to its
    :class:`ArtefactDisputes`. A line whose ``value`` is ``null`` (an exported field left
    unfilled) is checked, counted in ``left_blank`` and not yielded.
    """

    what = "adjudications file"
    empty_message = "the file holds no adjudications: expected one JSON object per disputed field"
    long_line_hint = " (a line holds one disputed field)"

    def __init__(
        self,
        fileobj: BinaryIO,
        *,
        artefacts: Mapping[str, ArtefactDisputes],
        max_errors: int = DEFAULT_MAX_ERRORS,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        super().__init__(fileobj, max_errors=max_errors, max_line_bytes=max_line_bytes)
        self._artefacts = artefacts
        self._first_line: dict[tuple[str, str, str], int] = {}
        self._record_count = 0
        self._left_blank = 0

    def report(self) -> AdjudicationFileReport:
        """Return what the read found; call it after iterating."""
        return AdjudicationFileReport(
            **self._report_fields(),
            record_count=self._record_count,
            left_blank=self._left_blank,
        )

    def _record(self, number: int, obj: dict[str, Any]) -> AdjudicationRecord | None:
        errors_before = self._error_count
        for key in obj:
            if key not in FIELDS and key not in EXPORT_FIELDS:
                self.add_error(number, key, f"unknown field; the fields are {', '.join(FIELDS)}")
        artefact = self._text(number, obj, "artefact", "the public id of an artefact")
        unit_key = self._text(number, obj, "unit_key", "a unit key (s3, c3:chunk, k:id, artefact)")
        field = self._text(number, obj, "field", "a rubric field (relevant, supported, …)")
        note = self._note(number, obj)
        if "value" not in obj:
            self.add_error(number, "value", "required: the final value, or null to leave it")
        value = obj.get("value")
        if value is not None and not isinstance(value, str):
            self.add_error(number, "value", f"expected a string or null, got {json_kind(value)}")
        disputes = self._artefacts.get(artefact) if artefact is not None else None
        if artefact is not None and disputes is None:
            self.add_error(
                number, "artefact", f"unknown artefact {json_shown(artefact)}: not in this session"
            )
        if disputes is not None and unit_key is not None and field is not None:
            problem = _field_problem(unit_key, field) or choice_problem(
                disputes, unit_key, field, value if isinstance(value, str) else None
            )
            if problem is not None:
                self.add_error(number, problem.field, problem.message)
        if artefact is not None and unit_key is not None and field is not None:
            first = self._first_line.setdefault((artefact, unit_key, field), number)
            if first != number:
                self.add_error(
                    number,
                    "field",
                    f"duplicate: line {first} is also {unit_key} {field} of artefact "
                    f"{json_shown(artefact)}; give each disputed field once",
                )
        if self._error_count != errors_before:
            return None
        if value is None:
            self._left_blank += 1
            return None
        assert artefact is not None and unit_key is not None and field is not None
        self._record_count += 1
        return AdjudicationRecord(number, artefact, unit_key, field, value, note or "")

    def _text(self, number: int, obj: dict[str, Any], key: str, what: str) -> str | None:
        if key not in obj:
            self.add_error(number, key, f"required: {what}")
            return None
        value = obj[key]
        if not isinstance(value, str) or not value:
            self.add_error(number, key, f"expected {what} (a string), got {json_kind(value)}")
            return None
        return value

    def _note(self, number: int, obj: dict[str, Any]) -> str | None:
        value = obj.get("note", "")
        if value is None:
            return ""
        if not isinstance(value, str) or len(value) > MAX_NOTE_LENGTH:
            self.add_error(
                number,
                "note",
                f"expected a text of at most {MAX_NOTE_LENGTH:,} characters, "
                f"got {json_kind(value)}",
            )
            return None
        if problem := unstorable_text(value, "the note"):
            self.add_error(number, "note", problem)
            return None
        return value.strip()


def _field_problem(unit_key: str, field: str) -> Problem | None:
    """Return the problem of a field name not asked of the unit (named as ``field``)."""
    try:
        field_for(unit_key, field)
    except ValueError as error:
        if str(error).startswith("field:"):
            return Problem(ProblemKind.INVALID, "field", str(error).partition(": ")[2])
    return None
