"""Read a JSONL import one line at a time, naming the line of every error (docs/formats.md).

Pure: no Django import. :class:`JsonlReader` is the base of every JSONL import (task sets,
outputs, grades): it reads a binary file object a physical line at a time (never the whole
file), refuses an over-long line before parsing it, hashes the bytes as they pass, decodes
each line as one strict JSON object (:func:`decode_object_line`) and hands it to the
subclass's record validation. Errors are :class:`LineError` s naming the line and the
field; only the ``max_errors`` with the lowest line numbers are kept (an error heap), but
all are counted, so a file that is wrong on every line costs no more memory than one that
is right. After the read, :class:`JsonlReport` gives the file's SHA-256, the errors by line
and what an all-or-nothing import says when it refuses the file.

A subclass sets :attr:`JsonlReader.what`, :attr:`JsonlReader.empty_message` and
:attr:`JsonlReader.long_line_hint`, implements :meth:`JsonlReader._record` (one object →
a record, or None after reporting its errors with :meth:`JsonlReader.add_error`) and may
implement :meth:`JsonlReader._finish` for checks that span lines.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, ClassVar, Generic, TypeVar

from enterpriseval.documents import (
    DocumentLimitError,
    DocumentSyntaxError,
    DuplicateKeyError,
    json_decode,
    json_unique_object,
)
from enterpriseval.values import json_kind

MAX_LINE_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_ERRORS = 1000
FILE_LINE = 0
"""The line number of an error about the file as a whole (e.g. an empty file)."""

_SKIP_CHUNK = 1024 * 1024
_JSON_WHITESPACE = " \t\r\n"
# PostgreSQL text and jsonb cannot hold NUL, and no database can encode a lone surrogate.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")

RecordT = TypeVar("RecordT")


@dataclass(frozen=True, slots=True)
class LineError:
    """One problem in the file: the line (1-based; 0 for the whole file), the field, why."""

    line: int
    field: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "message": self.message}


@dataclass(frozen=True)
class JsonlReport:
    """What one full read of a JSONL file found; each import's report adds its counts."""

    sha256: str
    errors: list[LineError]
    error_count: int
    bad_line_count: int

    @property
    def ok(self) -> bool:
        return self.error_count == 0

    def details(self) -> list[dict[str, Any]]:
        """Return the listed errors as dicts, closing with "and N more" if some were cut."""
        details = [error.as_dict() for error in self.errors]
        hidden = self.error_count - len(self.errors)
        if hidden > 0:
            last = self.errors[-1].line
            details.append(
                {
                    "line": None,
                    "field": "file",
                    "message": f"and {hidden} more error(s) after line {last}",
                }
            )
        return details

    def refusal(self, filename: str) -> str:
        """Return what an all-or-nothing import of ``filename`` says when it refuses it."""
        return (
            f"{filename}: {self.error_count} error(s) on {self.bad_line_count} line(s); "
            "nothing was imported. Correct every listed line and import again."
        )


class JsonlReader(Generic[RecordT]):
    """Read a JSONL file line by line: yield every valid record and collect every error.

    Iterate it once, then call the subclass's ``report``. ``has_errors`` says whether any
    error has been found so far, so a caller can write while the file is still valid and
    roll back at the end if it was not.
    """

    what: ClassVar[str] = "file"
    """What the file is, in messages: "task file", "grades file"."""
    empty_message: ClassVar[str] = "the file holds no records: expected one JSON object per line"
    """The error of a file without a single object."""
    long_line_hint: ClassVar[str] = ""
    """Appended to "the line is longer than N bytes", e.g. "; split the task"."""

    def __init__(
        self,
        fileobj: BinaryIO,
        *,
        max_errors: int = DEFAULT_MAX_ERRORS,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        if max_errors < 1:
            raise ValueError(f"max_errors must be at least 1, got {max_errors}")
        self._file = fileobj
        self._max_errors = max_errors
        self._max_line_bytes = max_line_bytes
        self._hash = hashlib.sha256()
        self._heap: list[tuple[int, int, LineError]] = []
        self._error_count = 0
        self._bad_lines = bytearray()  # one flag per physical line: 1 if it has an error
        self._file_error = False
        self._content_lines = 0
        self._consumed = False

    @property
    def has_errors(self) -> bool:
        """Return whether any error has been found so far."""
        return self._error_count > 0

    def add_error(self, line: int, field: str, message: str) -> None:
        """Record an error on ``line``, keeping only the ``max_errors`` lowest by line.

        Callers use it too, for what only they can check (e.g. against stored state).
        """
        self._error_count += 1
        if line == FILE_LINE:
            self._file_error = True
        else:
            self._bad_lines[line - 1] = 1
        entry = (-line, -self._error_count, LineError(line=line, field=field, message=message))
        if len(self._heap) < self._max_errors:
            heapq.heappush(self._heap, entry)
        elif entry > self._heap[0]:
            heapq.heapreplace(self._heap, entry)

    def line_has_error(self, line: int) -> bool:
        """Return whether an error has been recorded on ``line`` (1-based) so far."""
        return bool(self._bad_lines[line - 1])

    def __iter__(self) -> Iterator[RecordT]:
        if self._consumed:
            name = type(self).__name__
            article = "an" if name[0] in "AEIOU" else "a"
            raise RuntimeError(f"{article} {name} reads its file once; make a new one")
        self._consumed = True
        for number, raw in self._lines():
            decoded = decode_object_line(number, raw)
            if decoded.blank:
                continue
            self._content_lines += 1
            if decoded.problem is not None:
                self.add_error(number, *decoded.problem)
                continue
            record = self._record(number, decoded.value)
            if record is not None:
                yield record
        if self._content_lines == 0:
            self.add_error(FILE_LINE, "file", self.empty_message)
        self._finish()

    def _record(self, number: int, obj: dict[str, Any]) -> RecordT | None:
        """Return the record of line ``number``, or None after reporting what is wrong."""
        raise NotImplementedError

    def _finish(self) -> None:
        """Run the checks that span lines, once every line has been read."""

    def _report_fields(self) -> dict[str, Any]:
        """Return the :class:`JsonlReport` fields, for the subclass's report; after reading."""
        if not self._consumed:
            raise RuntimeError("iterate the reader before asking for its report")
        return {
            "sha256": self._hash.hexdigest(),
            "errors": [error for _line, _seq, error in sorted(self._heap, reverse=True)],
            "error_count": self._error_count,
            "bad_line_count": self._bad_lines.count(1) + self._file_error,
        }

    def _lines(self) -> Iterator[tuple[int, bytes]]:
        """Yield (line number, bytes) of each physical line that is not too long.

        An over-long line is reported and skipped in chunks, without being held or parsed;
        it still counts as a line with content.
        """
        readline = self._file.readline
        limit = self._max_line_bytes
        number = 0
        while True:
            raw = readline(limit + 1)
            if not raw:
                return
            if not isinstance(raw, bytes):
                raise TypeError(f"the {self.what} must be opened in binary mode (bytes lines)")
            number += 1
            self._bad_lines.append(0)
            self._hash.update(raw)
            if len(raw) > limit and not raw.endswith(b"\n"):
                self._content_lines += 1
                while rest := readline(_SKIP_CHUNK):
                    self._hash.update(rest)
                    if rest.endswith(b"\n"):
                        break
                self.add_error(
                    number, "line", f"the line is longer than {limit:,} bytes{self.long_line_hint}"
                )
                continue
            yield number, raw


@dataclass(frozen=True)
class DecodedLine:
    """One JSONL line decoded: a blank line, an object, or a (field, message) problem."""

    blank: bool
    value: dict[str, Any]
    problem: tuple[str, str] | None


def decode_object_line(number: int, raw: bytes) -> DecodedLine:
    """Decode line ``number`` of a JSONL file as one JSON object, naming what is wrong.

    UTF-8 (a BOM on line 1 is dropped), strict JSON (no NaN or Infinity, no key given
    twice), within the document limits of :func:`enterpriseval.documents.json_decode` (nesting
    depth, integer length), and an object at the top.
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
        value = json_decode(text, object_pairs_hook=json_unique_object, parse_constant=_no_constant)
    except DuplicateKeyError as error:
        return DecodedLine(
            False,
            {},
            (error.duplicates[0].key, "appears twice in one object; give each field once"),
        )
    except DocumentLimitError as error:
        return DecodedLine(False, {}, ("line", f"refused: {error.reason} at column {error.column}"))
    except DocumentSyntaxError as error:
        return DecodedLine(
            False, {}, ("line", f"not valid JSON: {error.problem} at column {error.column}")
        )
    except (ValueError, RecursionError) as error:
        return DecodedLine(False, {}, ("line", f"not valid JSON: {error}"))
    if not isinstance(value, dict):
        return DecodedLine(
            False, {}, ("line", f"expected a JSON object {{...}}, got {json_kind(value)}")
        )
    return DecodedLine(False, value, None)


def unstorable_text(text: str, what: str = "the text") -> str | None:
    """Return why ``text`` cannot be stored (a NUL or a lone surrogate), or None if it can."""
    if match := _UNSTORABLE.search(text):
        char, position = match.group(), match.start()
        name = "a NUL character (\\u0000)" if char == "\x00" else "an unpaired surrogate"
        return f"{what} holds {name} at character {position + 1}, which cannot be stored"
    return None


def unstorable_in(value: Any) -> tuple[str, str] | None:
    """Return (path, message) of the first NUL, lone surrogate or non-finite number in a
    JSON value (the path as ``.key[0]``, relative to the value), or None."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if problem := unstorable_text(item):
                return path, problem
        elif isinstance(item, dict):
            for key, child in item.items():
                if problem := unstorable_text(key, "a key"):
                    return path, problem
                stack.append((f"{path}.{key}", child))
        elif isinstance(item, float) and not math.isfinite(item):
            return path, f"the number {item} is out of range for JSON"
        elif isinstance(item, list):
            stack.extend((f"{path}[{index}]", child) for index, child in enumerate(item))
    return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
