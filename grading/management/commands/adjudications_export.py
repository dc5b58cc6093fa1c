"""``enterpriseval adjudications_export``: write a session's pending disputed fields as JSONL."""

from __future__ import annotations

import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import Http404

from charters.management.cli import add_actor, refusal, user_named
from grading.management.commands.grades_export import INVALID_INPUT
from grading.models import GradingSession
from grading.selectors.adjudication import adjudication_access, adjudications_file


class Command(BaseCommand):
    help = (
        "Write a grading session's pending disputed fields (docs/formats.md 'Adjudications "
        "(JSONL)'), value null, to fill in offline and import with adjudications_import."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--session", required=True, help="Public id of the session.")
        parser.add_argument("--output", help="File to write (default: standard output).")
        add_actor(parser, "a named adjudicator of the session, or the charter owner or reviewer")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        session = adjudication_session_as(actor, options["session"])
        lines = adjudications_file(session=session)
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


def adjudicator_named(username: str) -> Any:
    """Return the user ``username``, or exit 2 naming ``--as``."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"--as: no user {username!r}", returncode=INVALID_INPUT)
    return user
