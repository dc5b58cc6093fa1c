"""Stream a task-set file (JSONL, SPEC §2 "Task"; docs/formats.md "Task set (JSONL)").

Pure: no Django import. :class:`TaskFileReader` (an :class:`~enterpriseval.jsonl.JsonlReader`)
reads a binary file object one line at a time (never the whole file), yields each valid task
as a :class:`TaskRecord`, collects every problem as a :class:`~enterpriseval.jsonl.LineError`
naming the line and the field, and hashes the bytes as they pass (the manifest SHA-256).

Checks that span lines (ids unique in the file; ``dev`` and ``graded`` disjoint by the
content hash of the input) keep a compact index: for each task the first 128 bits of the
SHA-256 of its id and of its input, with its line number, about 45 bytes a task, sorted with
numpy once the file has been read. Memory is therefore one line plus that index, not the
file: under 5 MB for 100,000 tasks whose file is 150 MB.
"""

from __future__ import annotations

import hashlib
import unicodedata
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from enterpriseval.jsonl import (
    DEFAULT_MAX_ERRORS,
    FILE_LINE,
    MAX_LINE_BYTES,
    JsonlReader,
    JsonlReport,
    LineError,
    unstorable_in,
    unstorable_text,
)
from enterpriseval.values import json_kind, json_shown

__all__ = [
    "DEFAULT_MAX_ERRORS",
    "FILE_LINE",
    "MAX_ID_LENGTH",
    "MAX_LINE_BYTES",
    "LineError",
    "TaskFileReader",
    "TaskFileReport",
    "TaskRecord",
    "check_task_file",
    "content_sha256",
]

SPLITS = ("dev", "graded", "stress")
FIELDS = (
    "id",
    "split",
    "input",
    "sources",
    "key_elements",
    "guidance",
    "reference",
    "expected_abstention",
    "metadata",
    "gold_label",
)
HEADER_FIELDS = ("label_set",)
LABELLED_SPLITS = ("dev", "graded")
SOURCE_FIELDS = ("id", "text", "source")
KEY_ELEMENT_FIELDS = ("id", "text")
GUIDANCE_FIELDS = ("id", "text", "mandatory")
MAX_ID_LENGTH = 120
MAX_LABEL_LENGTH = 120  # Task.gold_label, Output.label
MAX_SOURCE_LENGTH = 255
_SPLIT_CODE = {"dev": 0, "graded": 1}
# The cross-line index keeps the first 128 bits of each SHA-256: equal hashes always match,
# and two different hashes share them with probability about n² / 2¹²⁹ (1e-29 at 10⁵ tasks).
_DIGEST_BYTES = 16
_WORDS_PER_DIGEST = _DIGEST_BYTES // 8


@dataclass(frozen=True, slots=True)
class SourceRecord:
    id: str
    text: str
    source: str


@dataclass(frozen=True, slots=True)
class KeyElementRecord:
    id: str
    text: str


@dataclass(frozen=True, slots=True)
class GuidanceRecord:
    id: str
    text: str
    mandatory: bool


@dataclass(frozen=True, slots=True)
class TaskRecord:
    line: int
    id: str
    split: str
    input: str
    input_sha256: str
    sources: tuple[SourceRecord, ...]
    key_elements: tuple[KeyElementRecord, ...]
    guidance: tuple[GuidanceRecord, ...]
    reference: str
    expected_abstention: bool
    metadata: dict[str, Any]
    gold_label: str = ""


@dataclass(frozen=True)
class TaskFileReport(JsonlReport):
    """What one full read of a task file found; ``label_set`` is the header's (SPEC §4.1)."""

    task_count: int
    split_counts: dict[str, int]
    label_set: tuple[str, ...] = ()


def content_sha256(text: str) -> str:
    """Return the content hash of a task input: SHA-256 of its NFC form, stripped, in UTF-8."""
    return hashlib.sha256(unicodedata.normalize("NFC", text).strip().encode("utf-8")).hexdigest()


def check_task_file(fileobj: BinaryIO, *, max_errors: int = DEFAULT_MAX_ERRORS) -> TaskFileReport:
    """Read the whole file once, writing nothing, and return what was found."""
    reader = TaskFileReader(fileobj, max_errors=max_errors)
    for _record in reader:
        pass
    return reader.report()


class TaskFileReader(JsonlReader[TaskRecord]):
    """Read a task file line by line: yield every valid task and collect every error.

    Iterate it once. Afterwards :meth:`report` describes the whole file: the SHA-256 of its
    bytes, the number of tasks per split, and the errors sorted by line. Only the first
    ``max_errors`` errors by line are kept (``error_count`` counts them all), so a file that
    is wrong on every line costs no more memory than one that is right.

    A task is yielded as soon as its own line is valid; errors that span lines (a repeated
    id, a graded input equal to a dev input) are known only at the end. A caller that
    writes must therefore read the file twice: once to check, once to write — which is
    what ``cross_line_checks=False`` is for (the second read, of a file already checked).
    """

    what = "task file"
    empty_message = "the file holds no tasks: expected one JSON object per line"
    long_line_hint = "; split the task"

    def __init__(
        self,
        fileobj: BinaryIO,
        *,
        max_errors: int = DEFAULT_MAX_ERRORS,
        max_line_bytes: int = MAX_LINE_BYTES,
        cross_line_checks: bool = True,
    ) -> None:
        super().__init__(fileobj, max_errors=max_errors, max_line_bytes=max_line_bytes)
        self._cross_line_checks = cross_line_checks
        self._split_counts = dict.fromkeys(SPLITS, 0)
        self._id_digests = bytearray()
        self._id_lines = array("I")
        self._input_digests = bytearray()
        self._input_lines = array("I")
        self._input_splits = bytearray()
        self._label_set: tuple[str, ...] = ()
        self._header_given = False
        self._first_object_seen = False

    @property
    def label_set(self) -> tuple[str, ...]:
        """Return the label set the header declared (empty without a header)."""
        return self._label_set

    def report(self) -> TaskFileReport:
        """Return what the read found; call it after iterating."""
        return TaskFileReport(
            **self._report_fields(),
            task_count=sum(self._split_counts.values()),
            split_counts=dict(self._split_counts),
            label_set=self._label_set,
        )

    def _record(self, number: int, obj: dict[str, Any]) -> TaskRecord | None:
        first = not self._first_object_seen
        self._first_object_seen = True
        if "label_set" in obj:
            if first:
                self._header(number, obj)
            else:
                self.add_error(
                    number,
                    "label_set",
                    "the label set is declared once, in a header object on the first line "
                    '({"label_set": [...]}), before the tasks',
                )
            return None
        record = self._task(number, obj)
        if record is not None:
            self._split_counts[record.split] += 1
        return record

    def _finish(self) -> None:
        tasks = any(self._split_counts.values())
        if self._first_object_seen and not tasks and not self.has_errors:
            self.add_error(FILE_LINE, "file", self.empty_message)
        if self._cross_line_checks:
            self._check_duplicate_ids()
            self._check_dev_graded_disjoint()

    # Validation of one line

    def _header(self, number: int, obj: dict[str, Any]) -> None:
        """Read the header ``{"label_set": [...]}``: distinct non-empty labels (SPEC §4.1)."""
        self._header_given = True
        for key in obj:
            if key not in HEADER_FIELDS:
                self.add_error(
                    number, key, 'unknown header field; the header holds only "label_set"'
                )
        value = obj["label_set"]
        if not isinstance(value, list) or not value:
            self.add_error(
                number,
                "label_set",
                f"expected a non-empty list of label strings, got {json_kind(value)}",
            )
            return
        labels: list[str] = []
        for index, label in enumerate(value):
            path = f"label_set[{index}]"
            if not isinstance(label, str) or not label.strip():
                self.add_error(number, path, f"expected a non-empty string, got {json_kind(label)}")
            elif label != label.strip():
                self.add_error(number, path, "must not start or end with whitespace")
            elif len(label) > MAX_LABEL_LENGTH:
                self.add_error(
                    number, path, f"at most {MAX_LABEL_LENGTH} characters, got {len(label)}"
                )
            elif problem := unstorable_text(label):
                self.add_error(number, path, problem)
            elif label.casefold() in (known.casefold() for known in labels):
                self.add_error(
                    number, path, f"duplicate label {json_shown(label)}; labels must be distinct"
                )
            else:
                labels.append(label)
        if len(labels) == len(value):
            self._label_set = tuple(labels)

    def _gold_label(self, number: int, obj: dict[str, Any], split: str | None) -> str | None:
        """Return the task's gold label ("" when it has none), or None after an error."""
        if self._header_given and not self._label_set:
            return None  # the header's own errors say what is wrong; no echo on every task
        if "gold_label" not in obj:
            if self._label_set and split in LABELLED_SPLITS:
                self.add_error(
                    number,
                    "gold_label",
                    f"required on {split} tasks: the task set declares the label set "
                    f"{_labels_shown(self._label_set)}",
                )
                return None
            return ""
        value = obj["gold_label"]
        if not self._label_set:
            self.add_error(
                number,
                "gold_label",
                'a gold label needs a label set: declare {"label_set": [...]} in a header '
                "object on the first line",
            )
            return None
        if value not in self._label_set:
            self.add_error(
                number,
                "gold_label",
                f"{json_shown(value)} is not in the label set {_labels_shown(self._label_set)}",
            )
            return None
        assert isinstance(value, str)
        return value

    def _task(self, number: int, obj: dict[str, Any]) -> TaskRecord | None:
        errors_before = self._error_count
        for key in obj:
            if key not in FIELDS:
                self.add_error(number, key, f"unknown field; the fields are {', '.join(FIELDS)}")
        task_id = self._identifier(number, obj, "id", "id")
        split = obj.get("split")
        if "split" not in obj:
            self.add_error(number, "split", "required: one of dev, graded, stress")
        elif split not in SPLITS:
            self.add_error(
                number, "split", f"expected one of dev, graded, stress, got {json_shown(split)}"
            )
            split = None
        text = self._text(number, obj, "input", "input", required=True)
        input_sha256 = content_sha256(text) if text is not None else None
        sources = self._sources(number, obj.get("sources", []))
        key_elements = self._key_elements(number, obj.get("key_elements", []))
        guidance = self._guidance(number, obj.get("guidance", []))
        reference = self._text(number, obj, "reference", "reference", required=False)
        abstention = self._boolean(number, obj, "expected_abstention", "expected_abstention")
        gold_label = self._gold_label(number, obj, split)
        metadata = obj.get("metadata", {})
        if not isinstance(metadata, dict):
            self.add_error(
                number, "metadata", f"expected an object {{...}}, got {json_kind(metadata)}"
            )
        elif problem := unstorable_in(metadata):
            self.add_error(number, f"metadata{problem[0]}", problem[1])

        if self._cross_line_checks:
            if task_id is not None:
                digest = hashlib.sha256(task_id.encode("utf-8")).digest()
                self._id_digests += digest[:_DIGEST_BYTES]
                self._id_lines.append(number)
            if input_sha256 is not None and split in _SPLIT_CODE:
                self._input_digests += bytes.fromhex(input_sha256)[:_DIGEST_BYTES]
                self._input_lines.append(number)
                self._input_splits.append(_SPLIT_CODE[split])
        if (
            self._error_count != errors_before
            or task_id is None
            or split is None
            or text is None
            or input_sha256 is None
            or sources is None
            or key_elements is None
            or guidance is None
            or abstention is None
            or gold_label is None
        ):
            return None
        return TaskRecord(
            line=number,
            id=task_id,
            split=split,
            input=text,
            input_sha256=input_sha256,
            sources=sources,
            key_elements=key_elements,
            guidance=guidance,
            reference=reference or "",
            expected_abstention=abstention,
            metadata=metadata,
            gold_label=gold_label,
        )

    def _sources(self, number: int, value: Any) -> tuple[SourceRecord, ...] | None:
        items = self._items(number, value, "sources", SOURCE_FIELDS)
        if items is None:
            return None
        records = []
        for path, item in items:
            chunk_id = self._identifier(number, item, "id", f"{path}.id")
            text = self._text(number, item, "text", f"{path}.text", required=True)
            source = self._text(
                number,
                item,
                "source",
                f"{path}.source",
                required=False,
                max_length=MAX_SOURCE_LENGTH,
            )
            if chunk_id is not None and text is not None and source is not None:
                records.append(SourceRecord(id=chunk_id, text=text, source=source or ""))
        self._unique_within_task(number, "sources", "chunk id", items)
        return tuple(records)

    def _key_elements(self, number: int, value: Any) -> tuple[KeyElementRecord, ...] | None:
        items = self._items(number, value, "key_elements", KEY_ELEMENT_FIELDS)
        if items is None:
            return None
        records = []
        for path, item in items:
            element_id = self._identifier(number, item, "id", f"{path}.id")
            text = self._text(number, item, "text", f"{path}.text", required=True)
            if element_id is not None and text is not None:
                records.append(KeyElementRecord(id=element_id, text=text))
        self._unique_within_task(number, "key_elements", "key-element id", items)
        return tuple(records)

    def _guidance(self, number: int, value: Any) -> tuple[GuidanceRecord, ...] | None:
        items = self._items(number, value, "guidance", GUIDANCE_FIELDS)
        if items is None:
            return None
        records = []
        for path, item in items:
            item_id = self._identifier(number, item, "id", f"{path}.id")
            text = self._text(number, item, "text", f"{path}.text", required=True)
            mandatory = self._boolean(number, item, "mandatory", f"{path}.mandatory", default=True)
            if item_id is not None and text is not None and mandatory is not None:
                records.append(GuidanceRecord(id=item_id, text=text, mandatory=mandatory))
        self._unique_within_task(number, "guidance", "guidance-item id", items)
        return tuple(records)

    def _items(
        self, number: int, value: Any, name: str, fields: tuple[str, ...]
    ) -> list[tuple[str, dict[str, Any]]] | None:
        """Return the (path, object) pairs of a list field, reporting non-objects and extras."""
        if not isinstance(value, list):
            self.add_error(number, name, f"expected a list [...], got {json_kind(value)}")
            return None
        items = []
        for index, item in enumerate(value):
            path = f"{name}[{index}]"
            if not isinstance(item, dict):
                self.add_error(number, path, f"expected an object {{...}}, got {json_kind(item)}")
                continue
            for key in item:
                if key not in fields:
                    expected = ", ".join(fields)
                    self.add_error(
                        number, f"{path}.{key}", f"unknown field; the fields are {expected}"
                    )
            items.append((path, item))
        return items

    def _unique_within_task(
        self, number: int, name: str, label: str, items: list[tuple[str, dict[str, Any]]]
    ) -> None:
        first: dict[str, str] = {}
        for path, item in items:
            item_id = item.get("id")
            if not isinstance(item_id, str):
                continue
            if item_id in first:
                self.add_error(
                    number,
                    f"{path}.id",
                    f"duplicate {label} {json_shown(item_id)} (also {first[item_id]}.id); ids must "
                    "be unique within the task",
                )
            else:
                first[item_id] = path

    def _identifier(self, number: int, obj: dict[str, Any], key: str, path: str) -> str | None:
        value = self._text(number, obj, key, path, required=True, max_length=MAX_ID_LENGTH)
        if value is not None and value != value.strip():
            self.add_error(number, path, "must not start or end with whitespace")
            return None
        return value

    def _text(
        self,
        number: int,
        obj: dict[str, Any],
        key: str,
        path: str,
        *,
        required: bool,
        max_length: int | None = None,
    ) -> str | None:
        """Return the string at ``obj[key]``; ``""`` if optional and absent; None on error."""
        if key not in obj:
            if required:
                self.add_error(number, path, "required: a non-empty string")
                return None
            return ""
        value = obj[key]
        if not isinstance(value, str):
            self.add_error(number, path, f"expected a string, got {json_kind(value)}")
            return None
        if required and not value.strip():
            self.add_error(number, path, "must not be empty")
            return None
        if max_length is not None and len(value) > max_length:
            self.add_error(number, path, f"at most {max_length} characters, got {len(value)}")
            return None
        if problem := unstorable_text(value):
            self.add_error(number, path, problem)
            return None
        return value

    def _boolean(
        self, number: int, obj: dict[str, Any], key: str, path: str, *, default: bool = False
    ) -> bool | None:
        value = obj.get(key, default)
        if not isinstance(value, bool):
            self.add_error(number, path, f"expected true or false, got {json_kind(value)}")
            return None
        return value

    # Checks across lines

    def _check_duplicate_ids(self) -> None:
        for line, earlier in _repeats(self._id_digests, self._id_lines):
            self.add_error(
                line, "id", f"duplicate id: line {earlier} has the same id; ids must be unique"
            )

    def _check_dev_graded_disjoint(self) -> None:
        """Report a dev/graded pair with the same content hash on the later line (SPEC §2)."""
        splits = self._input_splits
        for group in _groups(self._input_digests, self._input_lines):
            first_line: dict[int, int | None] = {0: None, 1: None}
            for index in group:
                split = splits[index]
                line = self._input_lines[index]
                other = first_line[1 - split]
                if other is not None:
                    this_name, other_name = ("graded", "dev") if split else ("dev", "graded")
                    self.add_error(
                        line,
                        "input",
                        f"this {this_name} task has the same input (content hash) as the "
                        f"{other_name} task on line {other}; dev and graded must be disjoint",
                    )
                if first_line[split] is None:
                    first_line[split] = line


def _labels_shown(labels: tuple[str, ...]) -> str:
    return "[" + ", ".join(json_shown(label) for label in labels) + "]"


def _groups(digests: bytearray, lines: array[int]) -> Iterator[list[int]]:
    """Yield, in line order, the indexes of entries sharing a digest, for every shared one.

    Sorts on the first 8 bytes of each digest (a view, not a copy); the rare runs that share
    those are then split on the whole digest.
    """
    count = len(lines)
    if count < 2:
        return
    first_words = np.frombuffer(digests, dtype=np.uint64)[::_WORDS_PER_DIGEST]
    # Stable: within a run the indexes stay in line order.
    order = np.argsort(first_words, kind="stable")
    ordered = first_words[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    del ordered
    ends = np.append(starts[1:], count)
    for start in np.flatnonzero(ends - starts > 1).tolist():
        run = order[starts[start] : ends[start]].tolist()
        by_digest: dict[bytes, list[int]] = {}
        for index in run:
            key = bytes(digests[index * _DIGEST_BYTES : (index + 1) * _DIGEST_BYTES])
            by_digest.setdefault(key, []).append(index)
        for group in by_digest.values():
            if len(group) > 1:
                yield group


def _repeats(digests: bytearray, lines: array[int]) -> Iterator[tuple[int, int]]:
    """Yield (line, earlier line) for every entry whose digest an earlier entry has."""
    for group in _groups(digests, lines):
        first = lines[group[0]]
        for index in group[1:]:
            yield lines[index], first
