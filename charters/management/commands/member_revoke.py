"""``enterpriseval member_revoke``: take a role away from a member (charter owners only)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import UseCaseCommand, refusal, refusals, user_named
from charters.models import Membership, Role
from charters.permissions import use_case_for
from charters.services.use_cases import membership_revoke


class Command(UseCaseCommand):
    help = "Take a role on a use case away from a user; the last charter owner stays."
    who = "a charter owner of the use case"
    formats = False

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="User name of the member.")
        parser.add_argument("--role", required=True, choices=Role.values, help="The role.")

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, use_case_for, roles=[Role.CHARTER_OWNER])
        user = user_named(options["user"], "--user")
        role = Role(options["role"])
        if not Membership.objects.filter(use_case=use_case, user=user, role=role).exists():
            raise refusal(f"--user: {user.get_username()} is not {role.label} on {use_case.key}")
        with refusals({"role": "--role"}):
            membership_revoke(actor=actor, use_case=use_case, user=user, role=role)
        self.stdout.write(f"{user.get_username()} is no longer {role.label} on {use_case.key}.")
