"""``enterpriseval charter_sign``: sign a draft charter in one of your roles.

The charter owner, the model owner and the second-line reviewer (three different people) sign
the same content; the third signature freezes it (SPEC §2). A draft with validation errors
cannot be signed.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.api.charters import SIGNERS, SignatureCreatedOutput
from charters.management.cli import UseCaseCommand, add_charter, charter_named, refusals, write_json
from charters.models import Role
from charters.permissions import use_case_for
from charters.services.charters import charter_sign


class Command(UseCaseCommand):
    help = "Sign a draft charter as charter owner, model owner or reviewer; the third freezes it."
    who = "the signer"

    def add_options(self, parser: CommandParser) -> None:
        add_charter(parser)
        parser.add_argument("--role", required=True, choices=SIGNERS, help="The role you sign in.")

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, use_case_for, roles=SIGNERS)
        charter = charter_named(use_case, options["charter_version"])
        with refusals({"role": "--role", "version": "--charter"}):
            signature = charter_sign(actor=actor, charter=charter, role=options["role"])
        if options["format"] == "json":
            write_json(self.stdout, SignatureCreatedOutput(signature).data)
            return
        charter.refresh_from_db(fields=["frozen_at", "sha256"])
        self.stdout.write(
            f"{actor.get_username()} signed charter v{charter.version} of {use_case.key} as "
            f"{Role(options['role']).label} (content SHA-256 {signature.content_sha256})."
        )
        if charter.is_frozen:
            self.stdout.write(
                f"Charter v{charter.version} is signed by all three and frozen: SHA-256 "
                f"{charter.sha256}."
            )
