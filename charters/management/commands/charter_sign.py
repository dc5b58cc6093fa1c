"""``enterpriseval charter_sign``: sign a draft charter in one of your roles.

The charter owner, the model owner and the second-line reviewer (three different people) sign
the same content; the third signature freezes it (SPEC §2). A draft with validation errors
cannot be signed.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.api.charters import SIGNERS, SignatureCreatedOutput
from charters.management.cli import (
    add_actor,
    add_format,
    refusal,
    refusals,
    use_case_as,
    user_named,
    write_json,
)
from charters.models import Charter, Role
from charters.permissions import use_case_for
from charters.services.charters import charter_sign


class Command(BaseCommand):
    help = "Sign a draft charter as charter owner, model owner or reviewer; the third freezes it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        parser.add_argument(
            "--charter", dest="charter_version", type=int, required=True, help="Charter version."
        )
        parser.add_argument("--role", required=True, choices=SIGNERS, help="The role you sign in.")
        add_actor(parser, "the signer")
        add_format(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        use_case = use_case_as(actor, options["use_case"], use_case_for, roles=SIGNERS)
        charter = Charter.objects.filter(
            use_case=use_case, version=options["charter_version"]
        ).first()
        if charter is None:
            raise refusal(f"--charter: {use_case.key} has no charter v{options['charter_version']}")
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
