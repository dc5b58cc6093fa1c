"""``enterpriseval session_close``: close a grading session to further grades.

As the "Close session" button of the session's page and ``POST …/grading/sessions/<id>/close/``
(charter owner only; graders are refused): no grade, revision or adjudication is accepted
afterwards. ``--format json`` prints the session as that endpoint returns it.
"""

from __future__ import annotations

from typing import Any

from charters.management.cli import refusals, write_json
from grading.api.sessions import session_detail_data
from grading.management.options import SessionCommand
from grading.selectors.sessions import session_get
from grading.services.sessions import session_close


class Command(SessionCommand):
    help = "Close a grading session: no grade, revision or adjudication is accepted afterwards."
    who = "a charter owner of the use case"

    def handle(self, *args: Any, **options: Any) -> None:
        actor, session = self.actor_and_session(options, write=True)
        use_case = session.use_case
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
