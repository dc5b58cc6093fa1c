"""``enterpriseval use_case_unblind``: record that a use case's results are shown to someone.

As the "Show results" confirmation and ``POST …/unblind/`` (charter owner or second-line
reviewer): every showing is recorded with its reason; the first one fixes the signed charter
as the pre-registration, and every later charter change is a deviation (SPEC §2).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.api.charters import UnblindOutput
from charters.management.cli import UseCaseCommand, refusals, write_json
from charters.models import Role
from charters.permissions import use_case_for
from charters.selectors.charters import use_case_first_unblinding
from charters.services.charters import use_case_unblind


class Command(UseCaseCommand):
    help = (
        "Record that results are shown, to whom and why; the first time fixes the charter and "
        "makes every later change a deviation."
    )
    who = "a charter owner or reviewer of the use case"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--reason", required=True, help="To whom and why results are shown (at most 300)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(
            options, use_case_for, roles=[Role.CHARTER_OWNER, Role.REVIEWER]
        )
        with refusals({"reason": "--reason", "charter": "--use-case"}):
            event = use_case_unblind(actor=actor, use_case=use_case, reason=options["reason"])
        first = use_case_first_unblinding(use_case=use_case)
        is_first = first is not None and first.pk == event.pk
        if options["format"] == "json":
            fields = {
                "charter": event.charter,
                "reason": event.reason,
                "actor": event.actor,
                "occurred_at": event.occurred_at,
                "first": is_first,
            }
            write_json(self.stdout, UnblindOutput(fields).data)
            return
        version = event.charter.version
        if is_first:
            self.stdout.write(
                f"Results of {use_case.key} shown for the first time: signed charter v{version} "
                f"is now fixed as the pre-registration; any later change is a deviation "
                "and needs a reason."
            )
        else:
            assert first is not None
            self.stdout.write(
                f"Showing of {use_case.key}'s results recorded (charter v{version}); they were "
                f"first shown on {first.occurred_at:%Y-%m-%d %H:%M} (charter "
                f"v{first.charter.version})."
            )
