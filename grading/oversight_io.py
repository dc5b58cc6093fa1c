"""Read oversight decisions files (JSONL; docs/formats.md "Oversight decisions (JSONL)").

Pure: no Django import. A decisions file has one line per copy of a reviewer's queue: the
item's public id, accept or reject, the units marked at fault, an optional comment, the
seconds spent on it and, to change a decision already made, a reason — what the review page
and ``POST /api/v1/oversight/items/<id>/decision/`` take for one item.
:class:`DecisionFileReader` reads a binary file object one line at a time (the
:class:`~enterpriseval.jsonl.JsonlReader` base: limits before parsing, line numbers in every
error), checks each line against the reviewer's items (:class:`ItemState`) as the service
checks one decision, and yields each line to record as a :class:`DecisionRecord`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from enterpriseval.jsonl import DEFAULT_MAX_ERRORS, JsonlReader, JsonlReport, unstorable_text
from enterpriseval.values import json_kind, json_shown

FIELDS = ("item", "decision", "flags", "comment", "elapsed_seconds", "reason")
#: Written by the export so a reviewer can decide offline; ignored by an import.
EXPORT_FIELDS = (
    "study",
    "position",
    "task_id",
    "task_input",
    "text",
    "sentences",
    "key_elements",
    "sources",
    "guidance",
)
#: A line holds one copy with its task's sources, as exported.
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_TEXT_LENGTH = 4000

__all__ = [
    "DecisionFileReader",
    "DecisionFileReport",
    "DecisionRecord",
    "ItemState",
    "dump_line",
]


@dataclass(frozen=True, slots=True)
class ItemState:
    """What a line about one item is checked against.

    ``flag_keys``: the units the reviewer may mark, in page order (sentences, then key
    elements); ``open``: the study accepts decisions; ``decision``, ``flags``, ``comment``:
    what is recorded now (``decision`` "" when undecided).
    """

    flag_keys: tuple[str, ...]
    open: bool
    decision: str
    flags: tuple[str, ...]
    comment: str


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """One line to record: ``revising`` when it changes a decision already made."""

    line: int
    item: str
    decision: str
    flags: list[str]
    comment: str
    elapsed_seconds: float
    reason: str
    revising: bool


@dataclass(frozen=True)
class DecisionFileReport(JsonlReport):
    """What one full read of a decisions file found."""

    record_count: int
    revised: int
    unchanged: int
    left_blank: int


def dump_line(obj: Mapping[str, Any]) -> bytes:
    """Return one line of a decisions file: compact JSON in UTF-8 and a newline."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


class DecisionFileReader(JsonlReader[DecisionRecord]):
    """Read a decisions file line by line: yield every line to record, collect every error.

    ``items`` maps the public id of each item of the reviewer's queue to its
    :class:`ItemState`; ``decisions`` are the accepted values of ``decision``. A line whose
    ``decision`` is ``null`` (an exported item left undecided) is counted in ``left_blank``;
    one that repeats what is recorded (decision, marked units and comment) in ``unchanged``;
    neither is yielded.
    """

    what = "oversight decisions file"
    empty_message = "the file holds no decisions: expected one JSON object per item"
    long_line_hint = " (a line holds one item)"

    def __init__(
        self,
        fileobj: BinaryIO,
        *,
        items: Mapping[str, ItemState],
        decisions: Sequence[str],
        max_errors: int = DEFAULT_MAX_ERRORS,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        super().__init__(fileobj, max_errors=max_errors, max_line_bytes=max_line_bytes)
        self._items = items
        self._decisions = tuple(decisions)
        self._first_line: dict[str, int] = {}
        self._record_count = 0
        self._revised = 0
        self._unchanged = 0
        self._left_blank = 0

    def report(self) -> DecisionFileReport:
        """Return what the read found; call it after iterating."""
        return DecisionFileReport(
            **self._report_fields(),
            record_count=self._record_count,
            revised=self._revised,
            unchanged=self._unchanged,
            left_blank=self._left_blank,
        )

    def _record(self, number: int, obj: dict[str, Any]) -> DecisionRecord | None:
        errors_before = self._error_count
        for key in obj:
            if key not in FIELDS and key not in EXPORT_FIELDS:
                self.add_error(number, key, f"unknown field; the fields are {', '.join(FIELDS)}")
        item_id = self._item_id(number, obj)
        state = self._items.get(item_id) if item_id is not None else None
        if item_id is not None and state is None:
            self.add_error(
                number, "item", f"unknown item {json_shown(item_id)}: not in your review queue"
            )
        if "decision" not in obj:
            self.add_error(
                number, "decision", f"required: {' or '.join(self._decisions)}, or null to leave it"
            )
        decision = obj.get("decision")
        if decision is not None and decision not in self._decisions:
            self.add_error(
                number,
                "decision",
                f"expected {' or '.join(self._decisions)}, or null, got {json_shown(decision)}",
            )
        flags = self._flags(number, obj, state)
        comment = self._text(number, obj, "comment")
        reason = self._text(number, obj, "reason")
        if item_id is not None:
            first = self._first_line.setdefault(item_id, number)
            if first != number:
                self.add_error(
                    number,
                    "item",
                    f"duplicate: line {first} is also item {json_shown(item_id)}; give each "
                    "item once",
                )
        if decision is None:
            if self._error_count == errors_before and state is not None:
                self._left_blank += 1
            return None
        if (
            self._error_count == errors_before
            and state is not None
            and (decision, tuple(flags or ()), comment)
            == (state.decision, state.flags, state.comment)
        ):
            self._unchanged += 1
            return None
        elapsed = self._elapsed(number, obj)
        if state is not None and not state.open:
            self.add_error(number, "item", "the oversight study is closed: no decision is accepted")
        revising = state is not None and bool(state.decision)
        if state is not None and revising and reason == "":
            self.add_error(
                number,
                "reason",
                f"item {json_shown(item_id)} is already decided ({state.decision}); changing "
                "the decision needs a reason",
            )
        if self._error_count != errors_before or elapsed is None:
            return None
        assert item_id is not None and flags is not None
        assert comment is not None and reason is not None
        self._record_count += 1
        self._revised += revising
        return DecisionRecord(number, item_id, decision, flags, comment, elapsed, reason, revising)

    def _item_id(self, number: int, obj: dict[str, Any]) -> str | None:
        if "item" not in obj:
            self.add_error(number, "item", "required: the public id of an item of your queue")
            return None
        value = obj["item"]
        if not isinstance(value, str) or not value:
            self.add_error(number, "item", f"expected the item's public id, got {json_kind(value)}")
            return None
        return value

    def _flags(self, number: int, obj: dict[str, Any], state: ItemState | None) -> list[str] | None:
        value = obj.get("flags", [])
        if value is None:
            value = []
        if not isinstance(value, list):
            self.add_error(
                number,
                "flags",
                f'expected a list of unit keys ("s3", "k:ke2"), got {json_kind(value)}',
            )
            return None
        chosen: set[str] = set()
        for n, flag in enumerate(value):
            if state is not None and flag not in state.flag_keys:
                self.add_error(
                    number,
                    f"flags[{n}]",
                    f"{json_shown(flag)} is not a sentence or key element of this item; "
                    f"expected one of {', '.join(state.flag_keys)}",
                )
            elif isinstance(flag, str):
                chosen.add(flag)
        if state is None:
            return None
        return [key for key in state.flag_keys if key in chosen]

    def _text(self, number: int, obj: dict[str, Any], key: str) -> str | None:
        value = obj.get(key, "")
        if value is None:
            return ""
        if not isinstance(value, str) or len(value) > MAX_TEXT_LENGTH:
            self.add_error(
                number,
                key,
                f"expected a text of at most {MAX_TEXT_LENGTH:,} characters, got "
                f"{json_kind(value)}",
            )
            return None
        if problem := unstorable_text(value, f"the {key}"):
            self.add_error(number, key, problem)
            return None
        return value.strip()

    def _elapsed(self, number: int, obj: dict[str, Any]) -> float | None:
        value = obj.get("elapsed_seconds")
        if value is None:
            self.add_error(
                number,
                "elapsed_seconds",
                "required: the seconds spent on the item for this decision (its review time)",
            )
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.add_error(
                number, "elapsed_seconds", f"expected a number of seconds, got {json_kind(value)}"
            )
            return None
        if not math.isfinite(value) or value < 0:
            self.add_error(
                number, "elapsed_seconds", f"expected a non-negative number, got {value}"
            )
            return None
        return float(value)
