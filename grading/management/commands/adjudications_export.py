"""``enterpriseval adjudications_export``: write a session's pending disputed fields as JSONL."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import Http404

from charters.management.cli import add_actor, refusal, user_named, write_lines
from grading.management.commands.grades_export import INVALID_INPUT
from grading.management.options import add_session
from grading.models import GradingSession
from grading.selectors.adjudication import adjudication_access, adjudications_file


class Command(BaseCommand):
    help = (
        "Write a grading session's pending disputed fields (docs/formats.md 'Adjudications "
        "(JSONL)'), value null, to fill in offline and import with adjudications_import."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_session(parser)
        parser.add_argument("--output", help="File to write (default: standard output).")
        add_actor(parser, "a named adjudicator of the session, or the charter owner or reviewer")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        session = adjudication_session_as(actor, options["session"])
        lines = adjudications_file(session=session)
        count = write_lines(
            self.stdout, lines, options["output"], refused=lambda error: f"--output: {error}"
        )
        if count is not None:
            self.stderr.write(
                f"{options['output']}: {count} pending field(s) of session {session.name}"
            )


def session_named(public_id: str) -> GradingSession:
    """Return the session ``public_id`` (public ids are unique), or exit 2 naming the option."""
    session = GradingSession.objects.select_related("use_case").filter(public_id=public_id).first()
    if session is None:
        raise CommandError(f"--session: no grading session {public_id!r}", returncode=INVALID_INPUT)
    return session


def adjudication_session_as(actor: Any, public_id: str, *, write: bool = False) -> GradingSession:
    """Return the session ``public_id`` if ``actor`` may read (``write``: resolve) its queue.

    The check of the adjudication pages and API (``adjudication_access``): to an outsider the
    session does not exist (``--session``); a grader, or a member with no role on the queue,
    is refused naming ``--as``; with ``write`` only a named adjudicator who still holds the
    adjudicator role passes.
    """
    session = session_named(public_id)
    try:
        adjudication_access(actor, session.use_case.key, public_id, write=write)
    except Http404:
        raise refusal(f"--session: no grading session {public_id!r}") from None
    except PermissionDenied as error:
        raise refusal(f"--as: {error}") from None
    return session
