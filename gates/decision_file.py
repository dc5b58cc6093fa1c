"""Read a decision input file (YAML or JSON) into a ``GateInput``.

The file has the shape documented in ``docs/formats.md`` (section "Decision input"). An
optional top-level ``about`` mapping carries descriptive fields for reports (use case,
model, notes) and does not enter the decision.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from enterpriseval.documents import DocumentSyntaxError, DuplicateKeyError, Format, document_read
from enterpriseval.limits import UploadKind, upload_limit
from gates.algorithm import GateInput, GateInputError, parse_gate_input, validate_gate_input


class DecisionFileError(ValueError):
    """A decision input file that cannot be used, with the file and field at fault."""

    def __init__(self, path: Path | str, field: str | None, message: str) -> None:
        self.path = str(path)
        self.field = field
        self.message = message
        where = f"{self.path}: {field}" if field else self.path
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class DecisionFile:
    path: Path
    sha256: str
    gate_input: GateInput
    about: dict[str, Any] = field(default_factory=dict)


def load_decision_file(path: Path | str) -> DecisionFile:
    """Read, parse and validate a decision input file.

    Mode-independent rules (threshold pairs, weights, intervals) are checked here, so an
    inverted pair is refused on loading; ``gate_evaluate`` checks the mode's own rules
    (conservative mode needs every CI).
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        limit = upload_limit(UploadKind.DECISION)
        if size > limit:
            raise DecisionFileError(
                path,
                None,
                f"is {size:,} bytes; the limit is {limit:,} bytes (raise "
                f"{UploadKind.DECISION.setting} to accept larger files)",
            )
        raw = path.read_bytes()
    except OSError as error:
        raise DecisionFileError(path, None, f"cannot be read ({error.strerror})") from None
    data = _parse(path, raw)
    if not isinstance(data, dict):
        raise DecisionFileError(path, None, "must hold a mapping with a 'metrics' list at the top")
    about = data.pop("about", None) or {}
    if not isinstance(about, dict):
        raise DecisionFileError(path, "about", "must be a mapping of descriptive fields")
    try:
        gate_input = parse_gate_input(data)
        validate_gate_input(gate_input, mode="point")
    except GateInputError as error:
        raise DecisionFileError(path, error.field, error.message) from None
    return DecisionFile(
        path=path, sha256=hashlib.sha256(raw).hexdigest(), gate_input=gate_input, about=about
    )


def _parse(path: Path, raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DecisionFileError(
            path, None, f"is not UTF-8 text (byte {error.start} cannot be decoded)"
        ) from None
    fmt: Format = "json" if path.suffix.lower() == ".json" else "yaml"
    try:
        return document_read(text, fmt=fmt).data
    except DocumentSyntaxError as error:
        where = f" at line {error.line}" if error.line else ""
        where += f", column {error.column}" if error.line and error.column else ""
        problem = error.problem or f"not valid {fmt.upper()}"
        raise DecisionFileError(path, None, f"malformed {fmt.upper()}{where}: {problem}") from None
    except DuplicateKeyError as error:
        duplicate = error.duplicates[0]
        where = f" (line {duplicate.line}, first on line {duplicate.first_line})"
        raise DecisionFileError(
            path,
            duplicate.path or duplicate.key,
            f"duplicate key {duplicate.key!r}{where if duplicate.line else ''}: each field "
            "appears once",
        ) from None
