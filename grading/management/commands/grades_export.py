"""``enterpriseval grades_export``: write a grading session's grades as JSON Lines."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import Http404

from charters.management.cli import add_actor, refusal, use_case_as, user_named
from grading.models import GradingSession
from grading.selectors.sessions import grades_file, session_access, session_get

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
        add_actor(parser, "a charter owner, reviewer or adjudicator of the use case (not a grader)")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        session = session_as(actor, options["use_case"], options["session"])
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


def session_as(actor: Any, key: str, public_id: str, *, write: bool = False) -> GradingSession:
    """Return the session ``public_id`` of use case ``key`` if ``actor`` may see (``write``) it.

    The check of the session's pages and API (``session_access``): graders, and members
    without a management role, are refused naming ``--as``; an unknown session naming
    ``--session``.
    """
    use_case = use_case_as(actor, key, session_access, write=write)
    try:
        return session_get(use_case=use_case, public_id=public_id)
    except Http404:
        raise refusal(f"--session: no grading session {public_id!r} in {key}") from None
