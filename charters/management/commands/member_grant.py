"""``enterpriseval member_grant``: give a user a role on a use case (charter owners only)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.management.cli import add_actor, refusals, use_case_as, user_named
from charters.models import Role
from charters.permissions import use_case_for
from charters.services.use_cases import membership_grant


class Command(BaseCommand):
    help = (
        "Give a user a role on a use case, as the members page does. A grader cannot also "
        "hold a role that sees σ (charter owner, model owner, reviewer)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        parser.add_argument("--user", required=True, help="User name of the new member.")
        parser.add_argument("--role", required=True, choices=Role.values, help="The role.")
        add_actor(parser, "a charter owner of the use case")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        use_case = use_case_as(actor, options["use_case"], use_case_for, roles=[Role.CHARTER_OWNER])
        user = user_named(options["user"], "--user")
        with refusals({"role": "--role"}):
            membership_grant(actor=actor, use_case=use_case, user=user, role=options["role"])
        self.stdout.write(
            f"{user.get_username()} is {Role(options['role']).label} on {use_case.key}."
        )
