"""``enterpriseval grades_export``: write a grading session's grades as JSON Lines."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from charters.models import UseCase
from grading.models import GradingSession
from grading.selectors.sessions import grades_file

INVALID_INPUT = 2


class Command(BaseCommand):
    help = (
        "Write a grading session's grades (docs/formats.md 'Grades (JSONL)'): one line per "
        "assignment, or with --final one line per artefact with the final values."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        parser.add_argument("--session", required=True, help="Public id of the session.")
        parser.add_argument(
            "--final", action="store_true", help="Final values after agreement and adjudication."
        )
        parser.add_argument(
            "--provenance",
            action="store_true",
            help="Add kind, run, σ, repeat, stratum and π to each line (never give it to graders).",
        )
        parser.add_argument("--output", help="File to write (default: standard output).")

    def handle(self, *args: Any, **options: Any) -> None:
        session = session_for(options["use_case"], options["session"])
        lines = grades_file(
            session=session, final=options["final"], provenance=options["provenance"]
        )
        if not options["output"]:
            out = getattr(self.stdout, "_out", sys.stdout)
            for line in lines:
                out.write(line.decode("utf-8"))
            return
        try:
            with open(options["output"], "wb") as target:
                count = sum(target.write(line) > 0 for line in lines)
        except OSError as error:
            raise CommandError(f"--output: {error}", returncode=INVALID_INPUT) from None
        self.stderr.write(f"{options['output']}: {count} line(s) of session {session.name}")


def session_for(key: str, public_id: str) -> GradingSession:
    """Return the session ``public_id`` of use case ``key``, or exit 2 naming the option."""
    use_case = UseCase.objects.filter(key=key).first()
    if use_case is None:
        raise CommandError(f"--use-case: no use case {key!r}", returncode=INVALID_INPUT)
    session = (
        GradingSession.objects.select_related("use_case")
        .filter(use_case=use_case, public_id=public_id)
        .first()
    )
    if session is None:
        raise CommandError(
            f"--session: no grading session {public_id!r} in {key}", returncode=INVALID_INPUT
        )
    return session
