"""``enterpriseval session_close``: close a grading session to further grades.

As the "Close session" button of the session's page and ``POST …/grading/sessions/<id>/close/``
(charter owner only; graders are refused): no grade, revision or adjudication is accepted
afterwards. ``--format json`` prints the session as that endpoint returns it.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.http import Http404

from charters.management.cli import (
    add_actor,
    add_format,
    refusal,
    refusals,
    use_case_as,
    user_named,
    write_json,
)
from grading.api.sessions import session_detail_data
from grading.selectors.sessions import session_access, session_get
from grading.services.sessions import session_close


class Command(BaseCommand):
    help = "Close a grading session: no grade, revision or adjudication is accepted afterwards."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        parser.add_argument("--session", required=True, help="Public id of the session.")
        add_actor(parser, "a charter owner of the use case")
        add_format(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        use_case = use_case_as(actor, options["use_case"], session_access, write=True)
        try:
            session = session_get(use_case=use_case, public_id=options["session"])
        except Http404:
            raise refusal(
                f"--session: no grading session {options['session']!r} in {use_case.key}"
            ) from None
        with refusals({"status": "--session"}):
            closed = session_close(actor=actor, session=session)
        if options["format"] == "json":
            write_json(
                self.stdout,
                session_detail_data(session_get(use_case=use_case, public_id=closed.public_id)),
            )
            return
        self.stdout.write(
            f"Grading session {closed.public_id} ({closed.name}) of {use_case.key} is "
            f"{closed.status}: no more grades, revisions or adjudications are accepted."
        )
