"""Size caps of uploaded files, per kind, checked before a byte is parsed (issue 17).

Each kind of file a user can send has its own cap, in bytes, set in the environment
(``ENTERPRISEVAL_MAX_<KIND>_BYTES``, read with their defaults by settings into
``ENTERPRISEVAL_UPLOAD_LIMITS``; docs/operations.md lists them). A file
over its cap is refused with :class:`UploadTooLarge` (HTTP 413 in the API, a 413 page on the
web, exit status 2 in the CLI), naming the file and the setting to raise: from its declared
size when it has one (an uploaded file), otherwise as soon as the bytes read pass the cap
(a request body streamed to the service).

The limits on what a document holds (aliases, nesting, integer length) are
:mod:`enterpriseval.documents`'.
"""

from __future__ import annotations

import enum
from typing import Any, BinaryIO

from django.conf import settings

from enterpriseval.errors import ServiceError


class UploadKind(enum.StrEnum):
    """The kinds of file a user uploads; the value is the key of the setting."""

    SIGMA = "sigma"
    CHARTER = "charter"
    TASK_SET = "task_set"
    OUTPUTS = "outputs"
    GRADES = "grades"
    ADJUDICATIONS = "adjudications"
    OVERSIGHT_DECISIONS = "oversight_decisions"
    DECISION = "decision"
    EGI_RESULT = "egi_result"

    @property
    def label(self) -> str:
        """Return what the file is, in messages ("task file")."""
        return _LABELS[self]

    @property
    def setting(self) -> str:
        """Return the environment variable of the cap (``ENTERPRISEVAL_MAX_SIGMA_BYTES``)."""
        return f"ENTERPRISEVAL_MAX_{self.value.upper()}_BYTES"


_LABELS = {
    UploadKind.SIGMA: "σ document",
    UploadKind.CHARTER: "charter document",
    UploadKind.TASK_SET: "task file",
    UploadKind.OUTPUTS: "outputs file",
    UploadKind.GRADES: "grades file",
    UploadKind.ADJUDICATIONS: "adjudications file",
    UploadKind.OVERSIGHT_DECISIONS: "oversight decisions file",
    UploadKind.DECISION: "decision input file",
    UploadKind.EGI_RESULT: "EGI-Bench result file",
}


class UploadTooLarge(ServiceError):
    """A file larger than the cap of its kind."""

    status_code = 413
    code = "too_large"


def upload_status(error: ServiceError) -> int:
    """Return the HTTP status of an import page refused by ``error``: 413 or 400."""
    return error.status_code if isinstance(error, UploadTooLarge) else 400


def upload_limit(kind: UploadKind) -> int:
    """Return the cap of ``kind`` in bytes, from ``settings.ENTERPRISEVAL_UPLOAD_LIMITS``."""
    return int(settings.ENTERPRISEVAL_UPLOAD_LIMITS[kind.value])


def upload_too_large(*, kind: UploadKind, filename: str, size: int | None = None) -> UploadTooLarge:
    """Return the refusal of ``filename``: its size (when known) against the cap of ``kind``."""
    limit = upload_limit(kind)
    measured = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes"
    return UploadTooLarge(
        f"{filename}: the {kind.label} is {measured}; the limit is {limit:,} bytes "
        f"(raise {kind.setting} to accept larger files)",
        field="file",
    )


def upload_size_check(*, kind: UploadKind, filename: str, size: int | None) -> None:
    """Raise :class:`UploadTooLarge` if ``size`` (``None``: unknown) is over the cap of ``kind``."""
    if size is not None and size > upload_limit(kind):
        raise upload_too_large(kind=kind, filename=filename, size=size)


def upload_bytes(*, kind: UploadKind, filename: str, content: str | bytes) -> None:
    """Raise :class:`UploadTooLarge` if the text or bytes ``content`` is over its cap."""
    size = len(content.encode("utf-8")) if isinstance(content, str) else len(content)
    upload_size_check(kind=kind, filename=filename, size=size)


def upload_stream(*, kind: UploadKind, fileobj: BinaryIO, filename: str) -> BinaryIO:
    """Return ``fileobj`` capped at the limit of ``kind``.

    A file that declares its size (Django's uploaded files) is refused at once when it is
    too large; any other is refused when a read carries it past the cap, before the bytes
    over the cap reach a parser.
    """
    upload_size_check(kind=kind, filename=filename, size=getattr(fileobj, "size", None))
    return _CappedReader(fileobj, kind=kind, filename=filename)  # type: ignore[return-value]


class _CappedReader:
    """A binary file that raises :class:`UploadTooLarge` once reads pass the cap."""

    def __init__(self, fileobj: BinaryIO, *, kind: UploadKind, filename: str) -> None:
        self._file = fileobj
        self._kind = kind
        self._filename = filename
        self._limit = upload_limit(kind)
        self._position = 0

    def _counted(self, data: bytes) -> bytes:
        self._position += len(data)
        if self._position > self._limit:
            raise upload_too_large(kind=self._kind, filename=self._filename)
        return data

    def read(self, size: int = -1) -> bytes:
        # Never read more than one byte past the cap, whatever the caller asked for.
        room = self._limit - self._position + 1
        return self._counted(self._file.read(room if size is None or size < 0 else min(size, room)))

    def readline(self, size: int = -1) -> bytes:
        room = self._limit - self._position + 1
        return self._counted(
            self._file.readline(room if size is None or size < 0 else min(size, room))
        )

    def seekable(self) -> bool:
        seekable = getattr(self._file, "seekable", None)
        return bool(seekable is not None and seekable())

    def seek(self, offset: int, whence: int = 0) -> int:
        moved = self._file.seek(offset, whence)
        self._position = moved if isinstance(moved, int) else self._file.tell()
        return self._position

    def tell(self) -> int:
        return self._position

    def __iter__(self) -> Any:
        return iter(self.readline, b"")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)
