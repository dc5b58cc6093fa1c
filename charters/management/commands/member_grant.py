"""``enterpriseval member_grant``: give a user a role on a use case (charter owners only)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import UseCaseCommand, refusals, user_named
from charters.models import Role
from charters.permissions import use_case_for
from charters.services.use_cases import membership_grant


class Command(UseCaseCommand):
    help = (
        "Give a user a role on a use case, as the members page does. A grader cannot also "
        "hold a role that sees σ (charter owner, model owner, reviewer)."
    )
    who = "a charter owner of the use case"
    formats = False

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="User name of the new member.")
        parser.add_argument("--role", required=True, choices=Role.values, help="The role.")

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, use_case_for, roles=[Role.CHARTER_OWNER])
        user = user_named(options["user"], "--user")
        with refusals({"role": "--role"}):
            membership_grant(actor=actor, use_case=use_case, user=user, role=options["role"])
        self.stdout.write(
            f"{user.get_username()} is {Role(options['role']).label} on {use_case.key}."
        )
