"""Stream an outputs file (JSONL, SPEC §2 "Run"; docs/formats.md "Outputs (JSONL)").

Pure: no Django import. :class:`OutputFileReader` reads a binary file object one line at a
time (never the whole file), checks each line against the tasks of the run's split, yields
each valid output as an :class:`OutputRecord` (not split into sentences: the caller splits
many at once, runs/segment_pool.py), collects
every problem as a :class:`~enterpriseval.jsonl.LineError` naming the line and the field,
and hashes the bytes as they pass.

Every check can be made when its line is read: a repeated (task, repeat) pair is found
with one slot per pair (the line that first filled it, 4 bytes), so memory is one line plus
``4 · tasks · K`` bytes, whatever the length of the file. A caller that writes can
therefore read once, write while no error has been seen, and roll back at the end if one
was (``has_errors`` says when to stop writing).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any, BinaryIO

from charters.task_import import MAX_ID_LENGTH
from enterpriseval.jsonl import (
    DEFAULT_MAX_ERRORS,
    MAX_LINE_BYTES,
    JsonlReader,
    JsonlReport,
    unstorable_in,
    unstorable_text,
)
from enterpriseval.values import json_kind, json_shown
from runs.segment import cited_chunk_ids
from runs.trajectory import trajectory_problems

FIELDS = (
    "task_id",
    "repeat",
    "text",
    "cited_chunk_ids",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "latency_ms",
    "generation_seconds",
    "success",
    "label",
    "error",
    "trajectory",
)
MAX_COUNT = 2_147_483_647  # PostgreSQL integer
MAX_COST = Decimal("999999.999999")
COST_QUANTUM = Decimal("0.000001")
_LISTED_CHUNKS = 8

__all__ = ["OutputFileReader", "OutputFileReport", "OutputRecord"]


@dataclass(frozen=True, slots=True)
class OutputRecord:
    """One valid line: an output of ``task_id`` at ``repeat``; ``error`` set if it failed."""

    line: int
    task_id: str
    repeat: int
    text: str
    cited_chunk_ids: tuple[str, ...]
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: Decimal | None
    latency_ms: int | None
    generation_seconds: float | None
    success: bool | None
    error: str
    trajectory: dict[str, Any] | None
    label: str | None = None

    @property
    def failed(self) -> bool:
        return bool(self.error)


@dataclass(frozen=True)
class OutputFileReport(JsonlReport):
    """What one full read of an outputs file found."""

    output_count: int
    failed_count: int


class OutputFileReader(JsonlReader[OutputRecord]):
    """Read an outputs file line by line: yield every valid output and collect every error.

    ``tasks`` maps each task id of the run's split to the ids of its permitted source
    chunks; ``repeats`` is K (repeats are numbered 0 to K − 1). ``scope`` names the split in
    messages ("task set memo v2, split graded"); ``elsewhere`` maps ids of tasks in other
    splits to their split, so a task of the wrong split is named as such. ``label_set`` is
    the task set's declared labels: an output's ``label`` must be one of them (SPEC §4.1).
    Iterate once, then
    call :meth:`report`. Only the ``max_errors`` errors with the lowest line numbers are
    kept (``error_count`` counts them all).
    """

    what = "outputs file"
    empty_message = "the file holds no outputs: expected one JSON object per line"

    def __init__(
        self,
        fileobj: BinaryIO,
        *,
        tasks: Mapping[str, frozenset[str]],
        repeats: int,
        scope: str = "the run's split",
        elsewhere: Mapping[str, str] | None = None,
        label_set: tuple[str, ...] = (),
        max_errors: int = DEFAULT_MAX_ERRORS,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise ValueError(f"repeats must be an integer of at least 1, got {repeats!r}")
        super().__init__(fileobj, max_errors=max_errors, max_line_bytes=max_line_bytes)
        self._tasks = tasks
        self._slot_of = {task_id: index for index, task_id in enumerate(tasks)}
        self._repeats = repeats
        self._scope = scope
        self._elsewhere = elsewhere or {}
        self._label_set = tuple(label_set)
        self._first_line = array("I", bytes(4 * len(tasks) * repeats))
        self._output_count = 0
        self._failed_count = 0

    def report(self) -> OutputFileReport:
        """Return what the read found; call it after iterating."""
        return OutputFileReport(
            **self._report_fields(),
            output_count=self._output_count,
            failed_count=self._failed_count,
        )

    def _record(self, number: int, obj: dict[str, Any]) -> OutputRecord | None:
        record = self._output(number, obj)
        if record is not None:
            self._output_count += 1
            self._failed_count += record.failed
        return record

    # Validation of one line

    def _output(self, number: int, obj: dict[str, Any]) -> OutputRecord | None:
        errors_before = self._error_count
        for key in obj:
            if key not in FIELDS:
                self.add_error(number, key, f"unknown field; the fields are {', '.join(FIELDS)}")
        task_id = self._task_id(number, obj)
        repeat = self._repeat(number, obj)
        error = self._error_text(number, obj)
        text = self._text(number, obj, failed="error" in obj)
        permitted = self._tasks.get(task_id) if task_id is not None else None
        explicit = self._cited_list(number, obj, permitted, task_id)
        inline: tuple[str, ...] = ()
        if text:
            inline = cited_chunk_ids(text)
            if permitted is not None:
                for chunk_id in inline:
                    if chunk_id not in permitted:
                        self.add_error(
                            number,
                            "text",
                            f"cites chunk {json_shown(chunk_id)}, which is not among the permitted "
                            f"sources of task {json_shown(task_id)} ({_listed(permitted)})",
                        )
        prompt_tokens = self._count(number, obj, "prompt_tokens")
        completion_tokens = self._count(number, obj, "completion_tokens")
        latency_ms = self._count(number, obj, "latency_ms")
        generation_seconds = self._seconds(number, obj)
        cost = self._cost(number, obj)
        success = self._success(number, obj, failed=bool(error))
        label = self._label(number, obj)
        trajectory = self._trajectory(number, obj)

        if task_id is not None and repeat is not None and permitted is not None:
            slot = self._slot_of[task_id] * self._repeats + repeat
            first = self._first_line[slot]
            if first:
                self.add_error(
                    number,
                    "task_id",
                    f"duplicate output: line {first} is also task {json_shown(task_id)} at repeat "
                    f"{repeat}; give each (task_id, repeat) once",
                )
            else:
                self._first_line[slot] = number
        if self._error_count != errors_before or task_id is None or repeat is None:
            return None
        assert text is not None and error is not None
        return OutputRecord(
            line=number,
            task_id=task_id,
            repeat=repeat,
            text=text,
            cited_chunk_ids=explicit if explicit is not None else inline,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=cost,
            latency_ms=latency_ms,
            generation_seconds=generation_seconds,
            success=success,
            error=error,
            trajectory=trajectory,
            label=label,
        )

    def _task_id(self, number: int, obj: dict[str, Any]) -> str | None:
        if "task_id" not in obj:
            self.add_error(number, "task_id", "required: the id of a task of the run's split")
            return None
        value = obj["task_id"]
        if not isinstance(value, str) or not value:
            self.add_error(
                number, "task_id", f"expected a non-empty string, got {json_kind(value)}"
            )
            return None
        if len(value) > MAX_ID_LENGTH:
            self.add_error(
                number, "task_id", f"at most {MAX_ID_LENGTH} characters, got {len(value)}"
            )
            return None
        if value not in self._tasks:
            other = self._elsewhere.get(value)
            where = f"; it is a task of split {other}" if other else ""
            self.add_error(
                number,
                "task_id",
                f"unknown task id {json_shown(value)}: not a task of {self._scope}{where}",
            )
            return None
        return value

    def _repeat(self, number: int, obj: dict[str, Any]) -> int | None:
        value = obj.get("repeat", 0)
        last = self._repeats - 1
        if isinstance(value, bool) or not isinstance(value, int):
            self.add_error(
                number, "repeat", f"expected an integer 0–{last}, got {json_kind(value)}"
            )
            return None
        if not 0 <= value <= last:
            self.add_error(
                number,
                "repeat",
                f"repeat {value} is out of range: the run has K = {self._repeats} "
                f"repeat(s), numbered 0–{last}",
            )
            return None
        return value

    def _error_text(self, number: int, obj: dict[str, Any]) -> str | None:
        if "error" not in obj:
            return ""
        value = obj["error"]
        if not isinstance(value, str) or not value.strip():
            self.add_error(
                number,
                "error",
                "expected a non-empty string saying why the output failed, got "
                f"{json_kind(value)}; omit the field for an output that did not fail",
            )
            return None
        return self._storable(number, "error", value)

    def _text(self, number: int, obj: dict[str, Any], *, failed: bool) -> str | None:
        if "text" not in obj:
            if failed:
                return ""
            self.add_error(number, "text", "required: the output's text (or an error if it failed)")
            return None
        value = obj["text"]
        if not isinstance(value, str):
            self.add_error(number, "text", f"expected a string, got {json_kind(value)}")
            return None
        if not failed and not value.strip():
            self.add_error(
                number, "text", "must not be empty; an output that failed needs an error field"
            )
            return None
        return self._storable(number, "text", value)

    def _cited_list(
        self,
        number: int,
        obj: dict[str, Any],
        permitted: frozenset[str] | None,
        task_id: str | None,
    ) -> tuple[str, ...] | None:
        if "cited_chunk_ids" not in obj:
            return None
        value = obj["cited_chunk_ids"]
        if not isinstance(value, list):
            self.add_error(
                number, "cited_chunk_ids", f"expected a list of chunk ids, got {json_kind(value)}"
            )
            return None
        seen: dict[str, int] = {}
        for index, chunk_id in enumerate(value):
            path = f"cited_chunk_ids[{index}]"
            if not isinstance(chunk_id, str) or not chunk_id:
                self.add_error(
                    number, path, f"expected a chunk id string, got {json_kind(chunk_id)}"
                )
            elif chunk_id in seen:
                self.add_error(
                    number,
                    path,
                    f"duplicate chunk id {json_shown(chunk_id)} "
                    f"(also cited_chunk_ids[{seen[chunk_id]}])",
                )
            else:
                seen[chunk_id] = index
                if permitted is not None and chunk_id not in permitted:
                    self.add_error(
                        number,
                        path,
                        f"chunk {json_shown(chunk_id)} is not among the permitted sources of task "
                        f"{json_shown(task_id)} ({_listed(permitted)})",
                    )
        return tuple(seen)

    def _count(self, number: int, obj: dict[str, Any], key: str) -> int | None:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
            self.add_error(
                number,
                key,
                f"expected a whole number 0–{MAX_COUNT:,} or null, got {json_kind(value)}",
            )
            return None
        return value

    def _seconds(self, number: int, obj: dict[str, Any]) -> float | None:
        value = obj.get("generation_seconds")
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            self.add_error(
                number,
                "generation_seconds",
                f"expected a number of seconds ≥ 0 or null, got {json_kind(value)}",
            )
            return None
        return float(value)

    def _cost(self, number: int, obj: dict[str, Any]) -> Decimal | None:
        value = obj.get("cost_usd")
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            self.add_error(
                number,
                "cost_usd",
                f"expected a cost in US dollars ≥ 0, or null if unknown; got {json_kind(value)}",
            )
            return None
        # repr gives the shortest decimal that reads back as the same float: the file's digits.
        cost = Decimal(repr(value)).quantize(COST_QUANTUM, rounding=ROUND_HALF_EVEN)
        if cost > MAX_COST:
            self.add_error(number, "cost_usd", f"at most {MAX_COST} US dollars per output")
            return None
        return cost

    def _success(self, number: int, obj: dict[str, Any], *, failed: bool) -> bool | None:
        value = obj.get("success")
        if value is None:
            return None
        if not isinstance(value, bool):
            self.add_error(
                number, "success", f"expected true, false or null, got {json_kind(value)}"
            )
            return None
        if value and failed:
            self.add_error(number, "success", "an output with an error cannot be a success")
            return None
        return value

    def _label(self, number: int, obj: dict[str, Any]) -> str | None:
        """Return the output's label; None (unknown) when null or absent (SPEC §4.1)."""
        value = obj.get("label")
        if value is None:
            return None
        if not self._label_set:
            self.add_error(
                number,
                "label",
                "the task set declares no label set, so an output cannot carry a label; "
                'import a task set whose first line is {"label_set": [...]}',
            )
            return None
        if value not in self._label_set:
            shown = ", ".join(json_shown(label) for label in self._label_set)
            self.add_error(
                number,
                "label",
                f"{json_shown(value)} is not in the task set's label set [{shown}]; give one of "
                "them, or null if the output gave no label",
            )
            return None
        assert isinstance(value, str)
        return value

    def _trajectory(self, number: int, obj: dict[str, Any]) -> dict[str, Any] | None:
        if "trajectory" not in obj:
            return None
        value = obj["trajectory"]
        problems = trajectory_problems(value)
        for problem in problems:
            path = f"trajectory.{problem.path}" if problem.path else "trajectory"
            self.add_error(number, path, problem.message)
        if problems:
            return None
        if located := unstorable_in(value):
            self.add_error(number, f"trajectory{located[0]}", located[1])
            return None
        assert isinstance(value, dict)
        return value

    def _storable(self, number: int, field: str, value: str) -> str | None:
        if problem := unstorable_text(value):
            self.add_error(number, field, problem)
            return None
        return value


def _listed(chunk_ids: frozenset[str]) -> str:
    if not chunk_ids:
        return "it has none"
    names = sorted(chunk_ids)
    shown = ", ".join(names[:_LISTED_CHUNKS])
    more = len(names) - _LISTED_CHUNKS
    return f"permitted: {shown}" + (f" and {more} more" if more > 0 else "")
