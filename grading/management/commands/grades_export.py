"""``enterpriseval grades_export``: write a grading session's grades as JSON Lines."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import REFUSED, UseCaseCommand, user_named, write_lines
from grading.management.options import add_session, session_as
from grading.selectors.sessions import grades_file

INVALID_INPUT = REFUSED


class Command(UseCaseCommand):
    help = (
        "Write a grading session's grades (docs/formats.md 'Grades (JSONL)'): one line per "
        "assignment, or with --final one line per artefact with the final values."
    )
    who = "a charter owner, reviewer or adjudicator of the use case (not a grader)"
    formats = False

    def add_options(self, parser: CommandParser) -> None:
        add_session(parser)
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
        actor = user_named(options["actor"])
        session = session_as(actor, options["use_case"], options["session"])
        lines = grades_file(
            session=session, final=options["final"], provenance=options["provenance"]
        )
        count = write_lines(
            self.stdout, lines, options["output"], refused=lambda error: f"--output: {error}"
        )
        if count is not None:
            self.stderr.write(f"{options['output']}: {count} line(s) of session {session.name}")
