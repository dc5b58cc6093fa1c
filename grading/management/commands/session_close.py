"""``enterpriseval session_close``: close a grading session to further grades.

As the "Close session" button of the session's page and ``POST …/grading/sessions/<id>/close/``
(charter owner only; graders are refused): no grade, revision or adjudication is accepted
afterwards. ``--format json`` prints the session as that endpoint returns it.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import UseCaseCommand, refusals, write_json
from grading.api.sessions import session_detail_data
from grading.management.options import add_session, session_named
from grading.selectors.sessions import session_access, session_get
from grading.services.sessions import session_close


class Command(UseCaseCommand):
    help = "Close a grading session: no grade, revision or adjudication is accepted afterwards."
    who = "a charter owner of the use case"

    def add_options(self, parser: CommandParser) -> None:
        add_session(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, session_access, write=True)
        session = session_named(use_case, options["session"])
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
