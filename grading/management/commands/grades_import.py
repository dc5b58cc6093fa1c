"""``enterpriseval grades_import``: import a grades file into a grading session."""

from __future__ import annotations

import os
import sys
from typing import Any, BinaryIO

from django.core.exceptions import PermissionDenied
from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from charters.management.cli import UseCaseCommand, user_named
from enterpriseval.errors import ServiceError
from grading.management.commands.grades_export import INVALID_INPUT
from grading.management.options import add_session, session_as
from grading.services.grade_import import grades_import

PROGRESS_MIN_BYTES = 1024 * 1024


class Command(UseCaseCommand):
    help = (
        "Import grades made in another tool (docs/formats.md 'Grades (JSONL)') into a grading "
        "session's assignments, all or nothing. On any bad line nothing is imported, every "
        "error is printed as FILE:LINE: FIELD: MESSAGE and the command exits with status 2."
    )
    who = "the importing charter owner"
    formats = False

    def add_options(self, parser: CommandParser) -> None:
        add_session(parser)
        parser.add_argument("--file", required=True, help="The grades file (JSONL).")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        session = session_as(actor, options["use_case"], options["session"], write=True)
        path = options["file"]
        try:
            with open(path, "rb") as fileobj:
                result = self._import(session, actor, fileobj, path)
        except OSError as error:
            raise CommandError(f"--file: {error}", returncode=INVALID_INPUT) from None
        self.stdout.write(
            f"{path}: {result.lines} line(s) into session {session.name}: {result.submitted} "
            f"submitted, {result.drafts} saved as drafts, {result.revised} revised "
            f"({result.revisions} grade revisions), {result.unchanged} unchanged; "
            f"SHA-256 {result.sha256}."
        )

    def _import(self, session: Any, actor: Any, fileobj: BinaryIO, path: str) -> Any:
        size = os.fstat(fileobj.fileno()).st_size
        bar = tqdm(
            total=size,
            unit="B",
            unit_scale=True,
            disable=size < PROGRESS_MIN_BYTES,
            file=getattr(self.stderr, "_out", sys.stderr),
        )
        try:
            return grades_import(
                actor=actor, session=session, fileobj=_Progress(fileobj, bar), filename=path
            )
        except PermissionDenied as error:
            raise CommandError(f"--as: {error}", returncode=INVALID_INPUT) from None
        except ServiceError as error:
            for detail in error.details:
                self.stderr.write(_located(path, detail))
            message = error.message if error.details else f"{error.field}: {error.message}"
            raise CommandError(message, returncode=INVALID_INPUT) from None
        finally:
            bar.close()


def _located(path: str, detail: dict[str, Any]) -> str:
    """Return ``FILE:LINE: FIELD: MESSAGE`` (``FILE: …`` for the file as a whole)."""
    line = detail.get("line")
    where = f"{path}:{line}" if line else path
    return f"{where}: {detail.get('field')}: {detail.get('message')}"


class _Progress:
    """A binary file whose lines, as they are read, advance a progress bar."""

    def __init__(self, fileobj: BinaryIO, bar: tqdm) -> None:
        self._file = fileobj
        self._bar = bar

    def readline(self, size: int = -1) -> bytes:
        line = self._file.readline(size)
        self._bar.update(len(line))
        return line
