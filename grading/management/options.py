"""What the grading commands share: the options naming a session or runs, and the session."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser
from django.http import Http404

from charters.management.cli import UseCaseCommand, refusal, use_case_as, user_named
from charters.models import UseCase
from grading.models import GradingSession
from grading.selectors.sessions import session_access, session_get


def add_session(parser: CommandParser) -> None:
    """Add ``--session PUBLIC_ID``."""
    parser.add_argument("--session", required=True, help="Public id of the session.")


def add_runs(parser: CommandParser) -> None:
    """Add ``--run ID`` (required, repeatable; read as ``runs``)."""
    parser.add_argument(
        "--run", dest="runs", type=int, action="append", required=True, help="Run id (repeat)."
    )


def session_named(use_case: UseCase, public_id: str) -> GradingSession:
    """Return the grading session ``public_id`` of ``use_case``, or refuse naming ``--session``."""
    try:
        return session_get(use_case=use_case, public_id=public_id)
    except Http404:
        raise refusal(f"--session: no grading session {public_id!r} in {use_case.key}") from None


def session_as(actor: Any, key: str, public_id: str, *, write: bool = False) -> GradingSession:
    """Return the session ``public_id`` of use case ``key`` if ``actor`` may see (``write``) it.

    The check of the session's pages and API (``session_access``): graders, and members
    without a management role, are refused naming ``--as``; an unknown session naming
    ``--session``.
    """
    return session_named(use_case_as(actor, key, session_access, write=write), public_id)


class SessionCommand(UseCaseCommand):
    """A use-case command on one grading session: it adds ``--session`` after ``--use-case``
    and resolves the ``--as`` user and the session through the session pages' check
    (``session_access``; ``write``: create, import, close)."""

    def add_options(self, parser: CommandParser) -> None:
        add_session(parser)

    def actor_and_session(
        self, options: dict[str, Any], *, write: bool = False
    ) -> tuple[Any, GradingSession]:
        """Return the ``--as`` user and the session, or refuse as :func:`session_as` does."""
        actor = user_named(options["actor"])
        return actor, session_as(actor, options["use_case"], options["session"], write=write)
