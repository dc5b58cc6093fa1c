"""Read and write grades files (JSONL; docs/formats.md "Grades (JSONL)").

Pure: no Django import. A grades file has one line per assignment, that is per (artefact,
grader) pair of a grading session: the grader's grades of every unit of the artefact, the
time spent on it and whether the grades are submitted. :class:`GradeFileReader` reads a
binary file object one line at a time (never the whole file), checks each line against the
session's artefacts (their unit keys, their task and their graders) and the rubric
(:mod:`grading.rubric`), yields each valid line as a :class:`GradeRecord`, collects every
problem as a :class:`~enterpriseval.jsonl.LineError` naming the line and the field, and
hashes the bytes as they pass.

Every check is made when its line is read; a repeated (artefact, grader) pair is found
with one entry per pair seen, so memory is one line plus the session's catalogue, whatever
the length of the file. A caller that writes can therefore read once, write while no error
has been seen (``has_errors``) and roll back at the end if one was. Checks against stored
state (a submitted assignment whose grades would change) are the caller's: it reports them
with :meth:`GradeFileReader.add_error`, so they are listed and counted with the others.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from enterpriseval.jsonl import DEFAULT_MAX_ERRORS, JsonlReader, JsonlReport
from enterpriseval.values import json_kind, json_shown
from grading.rubric import field_for, is_asked, missing_fields

FIELDS = ("artefact", "grader", "grades", "seconds", "submitted", "revise", "reason", "task_id")
#: Written by an export for management and estimation; read back and ignored by an import.
EXPORT_FIELDS = ("submitted_at",)
PROVENANCE_FIELDS = (
    "kind",
    "run",
    "sigma",
    "sigma_version",
    "model_ref",
    "repeat",
    "stratum",
    "inclusion_probability",
)
IGNORED_FIELDS = frozenset(EXPORT_FIELDS + PROVENANCE_FIELDS)
MAX_LINE_BYTES = 1024 * 1024
MAX_SECONDS = 24 * 3600.0
MAX_REASON_LENGTH = 2000
SECONDS_TOLERANCE = 0.05
"""Exports round time on an artefact to 0.1 s: a re-import within this of the stored time is
the same time."""
_LISTED = 5
#: When a conditional field is asked (grading.rubric.is_asked), and the field that decides it.
_ASKED_ONLY = {
    "supported": ("of assertive sentences", "assertive"),
    "severity": ("of breaches (guidance TP or FN)", "guidance"),
    "correct_label": ("of a label graded not correct", "label_correct"),
}

__all__ = [
    "ArtefactSpec",
    "GradeFileReader",
    "GradeFileReport",
    "GradeRecord",
    "dump_line",
    "grades_differences",
]

Grades = dict[str, dict[str, str]]


@dataclass(frozen=True, slots=True)
class ArtefactSpec:
    """What a line about one artefact is checked against: its task, units and graders."""

    task_id: str
    unit_keys: tuple[str, ...]
    graders: frozenset[str]
    #: The values of an open field (the right label): the task set's label set, if asked.
    labels: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GradeRecord:
    """One valid line: ``grader``'s complete grades of ``artefact`` (``{unit: {field: value}}``)."""

    line: int
    artefact: str
    grader: str
    grades: Grades
    seconds: float | None
    submitted: bool
    revise: bool
    reason: str


@dataclass(frozen=True)
class GradeFileReport(JsonlReport):
    """What one full read of a grades file found."""

    record_count: int


def dump_line(obj: Mapping[str, Any]) -> bytes:
    """Return one line of a grades file: compact JSON in UTF-8 and a newline."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def grades_differences(stored: Grades, wanted: Grades) -> list[tuple[str, str, str, str]]:
    """Return ``(unit_key, field, stored, wanted)`` for each value that differs ("" = none)."""
    differences = []
    for unit_key in sorted(stored.keys() | wanted.keys()):
        old_unit, new_unit = stored.get(unit_key, {}), wanted.get(unit_key, {})
        for name in sorted(old_unit.keys() | new_unit.keys()):
            old, new = old_unit.get(name, ""), new_unit.get(name, "")
            if old != new:
                differences.append((unit_key, name, old, new))
    return differences


class GradeFileReader(JsonlReader[GradeRecord]):
    """Read a grades file line by line: yield every valid line and collect every error.

    ``artefacts`` maps the public id of each artefact of the session to its
    :class:`ArtefactSpec`; ``graders`` holds the user names of the session's graders.
    Iterate once, then call :meth:`report`. Only the ``max_errors`` errors with the lowest
    line numbers are kept (``error_count`` counts them all).
    """

    what = "grades file"
    empty_message = "the file holds no grades: expected one JSON object per (artefact, grader)"
    long_line_hint = " (a line holds one assignment)"

    def __init__(
        self,
        fileobj: BinaryIO,
        *,
        artefacts: Mapping[str, ArtefactSpec],
        graders: frozenset[str],
        max_errors: int = DEFAULT_MAX_ERRORS,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        super().__init__(fileobj, max_errors=max_errors, max_line_bytes=max_line_bytes)
        self._artefacts = artefacts
        self._graders = graders
        self._first_line: dict[tuple[str, str], int] = {}
        self._record_count = 0

    def report(self) -> GradeFileReport:
        """Return what the read found; call it after iterating."""
        return GradeFileReport(**self._report_fields(), record_count=self._record_count)

    # Validation of one line

    def _record(self, number: int, obj: dict[str, Any]) -> GradeRecord | None:
        record = self._grade_line(number, obj)
        if record is not None:
            self._record_count += 1
        return record

    def _grade_line(self, number: int, obj: dict[str, Any]) -> GradeRecord | None:
        errors_before = self._error_count
        for key in obj:
            if key not in FIELDS and key not in IGNORED_FIELDS:
                self.add_error(number, key, f"unknown field; the fields are {', '.join(FIELDS)}")
        artefact = self._text(number, obj, "artefact", "the public id of an artefact")
        grader = self._text(number, obj, "grader", "the user name of the grader")
        spec = self._artefacts.get(artefact) if artefact is not None else None
        if artefact is not None and spec is None:
            self.add_error(
                number, "artefact", f"unknown artefact {json_shown(artefact)}: not in this session"
            )
        if grader is not None and grader not in self._graders:
            self.add_error(
                number,
                "grader",
                f"{json_shown(grader)} is not a grader of this session (its graders: "
                f"{_listed(self._graders)})",
            )
        elif grader is not None and spec is not None and grader not in spec.graders:
            self.add_error(
                number,
                "grader",
                f"{json_shown(grader)} is not assigned to artefact {json_shown(artefact)} "
                f"(its graders: {_listed(spec.graders)})",
            )
        if spec is not None and "task_id" in obj and obj["task_id"] != spec.task_id:
            self.add_error(
                number,
                "task_id",
                f"artefact {json_shown(artefact)} is task {json_shown(spec.task_id)}, not "
                f"{json_shown(obj['task_id'])}",
            )
        submitted = self._boolean(number, obj, "submitted", default=True)
        revise = self._boolean(number, obj, "revise", default=False)
        reason = self._reason(number, obj, revise)
        if revise and submitted is False:
            self.add_error(
                number, "revise", 'a revision changes submitted grades: it needs "submitted": true'
            )
        seconds = self._seconds(number, obj)
        grades = self._grades(number, obj, spec, submitted is not False)
        if artefact is not None and grader is not None:
            first = self._first_line.setdefault((artefact, grader), number)
            if first != number:
                self.add_error(
                    number,
                    "artefact",
                    f"duplicate assignment: line {first} is also artefact {json_shown(artefact)} "
                    f"graded by {json_shown(grader)}; give each (artefact, grader) once",
                )
        if self._error_count != errors_before:
            return None
        assert artefact is not None and grader is not None and grades is not None
        assert submitted is not None and revise is not None and reason is not None
        return GradeRecord(number, artefact, grader, grades, seconds, submitted, revise, reason)

    def _text(self, number: int, obj: dict[str, Any], key: str, what: str) -> str | None:
        if key not in obj:
            self.add_error(number, key, f"required: {what}")
            return None
        value = obj[key]
        if not isinstance(value, str) or not value:
            self.add_error(number, key, f"expected {what} (a string), got {json_kind(value)}")
            return None
        return value

    def _boolean(self, number: int, obj: dict[str, Any], key: str, *, default: bool) -> bool | None:
        value = obj.get(key, default)
        if not isinstance(value, bool):
            self.add_error(number, key, f"expected true or false, got {json_kind(value)}")
            return None
        return value

    def _reason(self, number: int, obj: dict[str, Any], revise: bool | None) -> str | None:
        value = obj.get("reason", "")
        if not isinstance(value, str) or len(value) > MAX_REASON_LENGTH or "\x00" in value:
            self.add_error(
                number,
                "reason",
                f"expected a text of at most {MAX_REASON_LENGTH:,} characters, "
                f"got {json_kind(value)}",
            )
            return None
        if revise and not value.strip():
            self.add_error(
                number, "reason", 'required with "revise": true: say why the grades change'
            )
            return None
        if value and not revise:
            self.add_error(number, "reason", 'a reason goes with "revise": true; remove it')
            return None
        return value.strip()

    def _seconds(self, number: int, obj: dict[str, Any]) -> float | None:
        value = obj.get("seconds")
        if value is None:
            return None
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if not (numeric and math.isfinite(value) and 0 <= value <= MAX_SECONDS):
            self.add_error(
                number,
                "seconds",
                f"expected the seconds spent on the artefact, 0 to {MAX_SECONDS:,.0f}, or null; "
                f"got {json_kind(value)}",
            )
            return None
        return float(value)

    def _grades(
        self, number: int, obj: dict[str, Any], spec: ArtefactSpec | None, submitting: bool
    ) -> Grades | None:
        if "grades" not in obj:
            self.add_error(number, "grades", 'required: {"<unit key>": {"<field>": "<value>"}}')
            return None
        value = obj["grades"]
        if not isinstance(value, dict):
            self.add_error(number, "grades", f"expected an object of units, got {json_kind(value)}")
            return None
        grades: Grades = {}
        known = set(spec.unit_keys) if spec is not None else None
        for unit_key, unit in value.items():
            path = f"grades.{unit_key}"
            if known is not None and unit_key not in known:
                self.add_error(
                    number, path, f"not a unit of this artefact (its units: {_units(spec)})"
                )
                continue
            if not isinstance(unit, dict):
                self.add_error(number, path, f"expected an object of fields, got {json_kind(unit)}")
                continue
            labels = spec.labels if spec is not None else ()
            grades[unit_key] = self._unit(number, path, unit_key, unit, labels)
        if not submitting:
            return grades
        for unit_key, unit in grades.items():
            for name in [name for name in unit if not is_asked(name, unit)]:
                when, decider = _ASKED_ONLY[name]
                self.add_error(
                    number,
                    f"grades.{unit_key}.{name}",
                    f"asked only {when}, and {decider} is {json_shown(unit.get(decider))}; "
                    "leave it out",
                )
        if spec is None or self.line_has_error(number):
            return grades
        if missing := missing_fields(spec.unit_keys, grades):
            listed = ", ".join(f"{k} {f}" for k, f in missing[:_LISTED])
            more = f" and {len(missing) - _LISTED} more" if len(missing) > _LISTED else ""
            self.add_error(
                number,
                f"grades.{missing[0][0]}.{missing[0][1]}",
                f"{len(missing)} grade(s) missing to submit: {listed}{more}; grade them, or set "
                '"submitted": false to keep the grades as a draft',
            )
        return grades

    def _unit(
        self,
        number: int,
        path: str,
        unit_key: str,
        unit: dict[str, Any],
        labels: tuple[str, ...] = (),
    ) -> dict[str, str]:
        values: dict[str, str] = {}
        for name, value in unit.items():
            try:
                spec = field_for(unit_key, name)
            except ValueError as error:
                self.add_error(number, f"{path}.{name}", str(error).partition(": ")[2])
                continue
            if not isinstance(value, str):
                self.add_error(
                    number,
                    f"{path}.{name}",
                    f"expected one of {', '.join(spec.values)}, got {json_kind(value)}",
                )
                continue
            try:
                spec.check(value, labels)
            except ValueError as error:
                self.add_error(number, f"{path}.{name}", str(error).partition(": ")[2])
                continue
            values[name] = value
        return values


def _listed(names: frozenset[str]) -> str:
    shown = sorted(names)[:_LISTED]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "") if shown else "none"


def _units(spec: ArtefactSpec | None) -> str:
    assert spec is not None
    keys = list(spec.unit_keys)
    shown = ", ".join(keys[: _LISTED * 2])
    more = len(keys) - _LISTED * 2
    return shown + (f" and {more} more" if more > 0 else "")
