"""Stream a task-set file (JSONL, SPEC §2 "Task"; docs/formats.md "Task set (JSONL)").

Pure: no Django import. :class:`TaskFileReader` reads a binary file object one line at a
time (never the whole file), yields each valid task as a :class:`TaskRecord`, collects every
problem as a :class:`LineError` naming the line and the field, and hashes the bytes as they
pass (the manifest SHA-256).

Checks that span lines (ids unique in the file; ``dev`` and ``graded`` disjoint by the
content hash of the input) keep a compact index: for each task the first 128 bits of the
SHA-256 of its id and of its input, with its line number, about 45 bytes a task, sorted with
numpy once the file has been read. Memory is therefore one line plus that index, not the
file: under 5 MB for 100,000 tasks whose file is 150 MB.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import re
import unicodedata
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

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
)
SOURCE_FIELDS = ("id", "text", "source")
KEY_ELEMENT_FIELDS = ("id", "text")
GUIDANCE_FIELDS = ("id", "text", "mandatory")
MAX_ID_LENGTH = 120
MAX_SOURCE_LENGTH = 255
MAX_LINE_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_ERRORS = 1000
FILE_LINE = 0
"""The line number of an error about the file as a whole (e.g. an empty file)."""

_SKIP_CHUNK = 1024 * 1024
_JSON_WHITESPACE = " \t\r\n"
# PostgreSQL text and jsonb cannot hold NUL, and no database can encode a lone surrogate.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_SPLIT_CODE = {"dev": 0, "graded": 1}
# The cross-line index keeps the first 128 bits of each SHA-256: equal hashes always match,
# and two different hashes share them with probability about n² / 2¹²⁹ (1e-29 at 10⁵ tasks).
_DIGEST_BYTES = 16
_WORDS_PER_DIGEST = _DIGEST_BYTES // 8


@dataclass(frozen=True, slots=True)
class LineError:
    """One problem in the file: the line (1-based; 0 for the whole file), the field, why."""

    line: int
    field: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "message": self.message}


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


@dataclass(frozen=True)
class TaskFileReport:
    """What one full read of a task file found."""

    sha256: str
    task_count: int
    split_counts: dict[str, int]
    errors: list[LineError]
    error_count: int
    bad_line_count: int

    @property
    def ok(self) -> bool:
        return self.error_count == 0


def content_sha256(text: str) -> str:
    """Return the content hash of a task input: SHA-256 of its NFC form, stripped, in UTF-8."""
    return hashlib.sha256(unicodedata.normalize("NFC", text).strip().encode("utf-8")).hexdigest()


def check_task_file(fileobj: BinaryIO, *, max_errors: int = DEFAULT_MAX_ERRORS) -> TaskFileReport:
    """Read the whole file once, writing nothing, and return what was found."""
    reader = TaskFileReader(fileobj, max_errors=max_errors)
    for _record in reader:
        pass
    return reader.report()


class TaskFileReader:
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

    def __init__(
        self,
        fileobj: BinaryIO,
        *,
        max_errors: int = DEFAULT_MAX_ERRORS,
        max_line_bytes: int = MAX_LINE_BYTES,
        cross_line_checks: bool = True,
    ) -> None:
        if max_errors < 1:
            raise ValueError(f"max_errors must be at least 1, got {max_errors}")
        self._file = fileobj
        self._max_errors = max_errors
        self._max_line_bytes = max_line_bytes
        self._cross_line_checks = cross_line_checks
        self._hash = hashlib.sha256()
        self._heap: list[tuple[int, int, LineError]] = []
        self._error_count = 0
        self._sequence = 0
        self._bad_lines = bytearray()  # one flag per physical line: 1 if it has an error
        self._split_counts = dict.fromkeys(SPLITS, 0)
        self._content_lines = 0
        self._id_digests = bytearray()
        self._id_lines = array("I")
        self._input_digests = bytearray()
        self._input_lines = array("I")
        self._input_splits = bytearray()
        self._file_error = False
        self._consumed = False

    def __iter__(self) -> Iterator[TaskRecord]:
        if self._consumed:
            raise RuntimeError("a TaskFileReader reads its file once; make a new one")
        self._consumed = True
        for number, raw in self._lines():
            if raw is None:
                continue
            record = self._read_line(number, raw)
            if record is not None:
                self._split_counts[record.split] += 1
                yield record
        if self._content_lines == 0:
            self._error(
                FILE_LINE, "file", "the file holds no tasks: expected one JSON object per line"
            )
        if self._cross_line_checks:
            self._check_duplicate_ids()
            self._check_dev_graded_disjoint()

    def report(self) -> TaskFileReport:
        """Return what the read found; call it after iterating."""
        if not self._consumed:
            raise RuntimeError("iterate the reader before asking for its report")
        errors = [error for _line, _seq, error in sorted(self._heap, reverse=True)]
        return TaskFileReport(
            sha256=self._hash.hexdigest(),
            task_count=sum(self._split_counts.values()),
            split_counts=dict(self._split_counts),
            errors=errors,
            error_count=self._error_count,
            bad_line_count=self._bad_lines.count(1) + self._file_error,
        )

    # Reading

    def _lines(self) -> Iterator[tuple[int, bytes | None]]:
        """Yield (line number, bytes) per physical line; ``None`` for an over-long line."""
        readline = self._file.readline
        limit = self._max_line_bytes
        number = 0
        while True:
            raw = readline(limit + 1)
            if not raw:
                return
            if not isinstance(raw, bytes):
                raise TypeError("the task file must be opened in binary mode (bytes lines)")
            number += 1
            self._bad_lines.append(0)
            self._hash.update(raw)
            if len(raw) > limit and not raw.endswith(b"\n"):
                self._content_lines += 1
                while rest := readline(_SKIP_CHUNK):
                    self._hash.update(rest)
                    if rest.endswith(b"\n"):
                        break
                self._error(
                    number, "line", f"the line is longer than {limit:,} bytes; split the task"
                )
                yield number, None
                continue
            yield number, raw

    def _read_line(self, number: int, raw: bytes) -> TaskRecord | None:
        decoded = decode_object_line(number, raw)
        if decoded.blank:
            return None
        self._content_lines += 1
        if decoded.problem is not None:
            self._error(number, *decoded.problem)
            return None
        value = decoded.value
        return self._task(number, value)

    # Validation of one line

    def _task(self, number: int, obj: dict[str, Any]) -> TaskRecord | None:
        errors_before = self._error_count
        for key in obj:
            if key not in FIELDS:
                self._error(number, key, f"unknown field; the fields are {', '.join(FIELDS)}")
        task_id = self._identifier(number, obj, "id", "id")
        split = obj.get("split")
        if "split" not in obj:
            self._error(number, "split", "required: one of dev, graded, stress")
        elif split not in SPLITS:
            self._error(number, "split", f"expected one of dev, graded, stress, got {_show(split)}")
            split = None
        text = self._text(number, obj, "input", "input", required=True)
        input_sha256 = content_sha256(text) if text is not None else None
        sources = self._sources(number, obj.get("sources", []))
        key_elements = self._key_elements(number, obj.get("key_elements", []))
        guidance = self._guidance(number, obj.get("guidance", []))
        reference = self._text(number, obj, "reference", "reference", required=False)
        abstention = self._boolean(number, obj, "expected_abstention", "expected_abstention")
        metadata = obj.get("metadata", {})
        if not isinstance(metadata, dict):
            self._error(number, "metadata", f"expected an object {{...}}, got {_kind(metadata)}")
        elif problem := _unstorable_in(metadata):
            self._error(number, f"metadata{problem[0]}", problem[1])

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
            self._error(number, name, f"expected a list [...], got {_kind(value)}")
            return None
        items = []
        for index, item in enumerate(value):
            path = f"{name}[{index}]"
            if not isinstance(item, dict):
                self._error(number, path, f"expected an object {{...}}, got {_kind(item)}")
                continue
            for key in item:
                if key not in fields:
                    expected = ", ".join(fields)
                    self._error(
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
                self._error(
                    number,
                    f"{path}.id",
                    f"duplicate {label} {_show(item_id)} (also {first[item_id]}.id); ids must "
                    "be unique within the task",
                )
            else:
                first[item_id] = path

    def _identifier(self, number: int, obj: dict[str, Any], key: str, path: str) -> str | None:
        value = self._text(number, obj, key, path, required=True, max_length=MAX_ID_LENGTH)
        if value is not None and value != value.strip():
            self._error(number, path, "must not start or end with whitespace")
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
                self._error(number, path, "required: a non-empty string")
                return None
            return ""
        value = obj[key]
        if not isinstance(value, str):
            self._error(number, path, f"expected a string, got {_kind(value)}")
            return None
        if required and not value.strip():
            self._error(number, path, "must not be empty")
            return None
        if max_length is not None and len(value) > max_length:
            self._error(number, path, f"at most {max_length} characters, got {len(value)}")
            return None
        if match := _UNSTORABLE.search(value):
            self._error(number, path, _unstorable_message(match.group(), match.start()))
            return None
        return value

    def _boolean(
        self, number: int, obj: dict[str, Any], key: str, path: str, *, default: bool = False
    ) -> bool | None:
        value = obj.get(key, default)
        if not isinstance(value, bool):
            self._error(number, path, f"expected true or false, got {_kind(value)}")
            return None
        return value

    # Checks across lines

    def _check_duplicate_ids(self) -> None:
        for line, earlier in _repeats(self._id_digests, self._id_lines):
            self._error(
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
                    self._error(
                        line,
                        "input",
                        f"this {this_name} task has the same input (content hash) as the "
                        f"{other_name} task on line {other}; dev and graded must be disjoint",
                    )
                if first_line[split] is None:
                    first_line[split] = line

    # Errors

    def _error(self, line: int, field: str, message: str) -> None:
        """Record an error, keeping only the ``max_errors`` with the lowest line numbers."""
        self._error_count += 1
        self._sequence += 1
        if line == FILE_LINE:
            self._file_error = True
        else:
            self._bad_lines[line - 1] = 1
        entry = (-line, -self._sequence, LineError(line=line, field=field, message=message))
        if len(self._heap) < self._max_errors:
            heapq.heappush(self._heap, entry)
        elif entry > self._heap[0]:
            heapq.heapreplace(self._heap, entry)


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


@dataclass(frozen=True)
class DecodedLine:
    """One JSONL line decoded: a blank line, an object, or a (field, message) problem."""

    blank: bool
    value: dict[str, Any]
    problem: tuple[str, str] | None


def decode_object_line(number: int, raw: bytes) -> DecodedLine:
    """Decode line ``number`` of a JSONL file as one JSON object, naming what is wrong.

    Shared by every JSONL import (task sets, outputs): UTF-8 (a BOM on line 1 is dropped),
    strict JSON (no NaN or Infinity, no key given twice), and an object at the top.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return DecodedLine(
            False,
            {},
            (
                "line",
                f"not valid UTF-8: byte 0x{raw[error.start]:02x} at byte {error.start + 1} of "
                "the line; save the file as UTF-8",
            ),
        )
    if number == 1 and text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip(_JSON_WHITESPACE):
        return DecodedLine(True, {}, None)
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except _DuplicateKeyError as error:
        return DecodedLine(
            False, {}, (error.key, "appears twice in one object; give each field once")
        )
    except json.JSONDecodeError as error:
        return DecodedLine(
            False, {}, ("line", f"not valid JSON: {error.msg} at column {error.colno}")
        )
    except (ValueError, RecursionError) as error:
        return DecodedLine(False, {}, ("line", f"not valid JSON: {error}"))
    if not isinstance(value, dict):
        return DecodedLine(
            False, {}, ("line", f"expected a JSON object {{...}}, got {_kind(value)}")
        )
    return DecodedLine(False, value, None)


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unstorable_in(value: Any) -> tuple[str, str] | None:
    """Return (path, message) of the first NUL or lone surrogate in a JSON value."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if match := _UNSTORABLE.search(item):
                return path, _unstorable_message(match.group(), match.start())
        elif isinstance(item, dict):
            for key, child in item.items():
                if match := _UNSTORABLE.search(key):
                    return path, _unstorable_message(match.group(), match.start(), "a key")
                stack.append((f"{path}.{key}", child))
        elif isinstance(item, float) and not math.isfinite(item):
            return path, f"the number {item} is out of range for JSON"
        elif isinstance(item, list):
            stack.extend((f"{path}[{index}]", child) for index, child in enumerate(item))
    return None


def _unstorable_message(char: str, position: int, what: str = "the text") -> str:
    name = "a NUL character (\\u0000)" if char == "\x00" else "an unpaired surrogate"
    return f"{what} holds {name} at character {position + 1}, which cannot be stored"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, str):
        return f"string {_show(value)}"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _show(value: Any, limit: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + '…"'
