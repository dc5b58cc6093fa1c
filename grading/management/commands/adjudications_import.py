"""``enterpriseval adjudications_import``: record final values of disputed fields from a file."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from charters.management.cli import add_actor, refusal, user_named
from enterpriseval.errors import ServiceError
from grading.management.commands.adjudications_export import adjudication_session_as
from grading.management.commands.grades_export import INVALID_INPUT
from grading.management.commands.grades_import import _located
from grading.management.options import add_session
from grading.services.adjudication import adjudications_import


class Command(BaseCommand):
    help = (
        "Import final values of a grading session's disputed fields (docs/formats.md "
        "'Adjudications (JSONL)'), all or nothing, as a named adjudicator. On any bad line "
        "nothing is recorded, every error is printed as FILE:LINE: FIELD: MESSAGE and the "
        "command exits with status 2."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_session(parser)
        parser.add_argument(
            "--file", dest="named_file", help="The adjudications file (JSONL), as other imports."
        )
        parser.add_argument(
            "file", nargs="?", help="The same file given by position (the earlier form)."
        )
        add_actor(parser, "a named adjudicator")

    def handle(self, *args: Any, **options: Any) -> None:
        given = [path for path in (options["named_file"], options["file"]) if path]
        if len(given) != 1:
            raise refusal("--file: give the adjudications file once (--file FILE)")
        # The user first, then the web's check: to an outsider the session does not exist.
        actor = user_named(options["actor"])
        session = adjudication_session_as(actor, options["session"], write=True)
        path = given[0]
        try:
            with open(path, "rb") as fileobj:
                result = adjudications_import(
                    actor=actor, session=session, fileobj=fileobj, filename=path
                )
        except OSError as error:
            raise CommandError(f"FILE: {error}", returncode=INVALID_INPUT) from None
        except ServiceError as error:
            for detail in error.details:
                self.stderr.write(_located(path, detail))
            message = error.message if error.details else f"{error.field}: {error.message}"
            raise CommandError(message, returncode=INVALID_INPUT) from None
        self.stdout.write(
            f"{path}: {result.lines} line(s) into session {session.name}: {result.adjudicated} "
            f"final value(s) recorded on {result.artefacts} artefact(s), {result.left_blank} "
            f"left blank (still pending); SHA-256 {result.sha256}."
        )
