"""``enterpriseval charter_revise``: start version n + 1 as a draft copy of signed version n.

As the "Revise" button and ``POST …/charters/<version>/revise/``: only the latest version is
revised, and only once signed. After the use case's first unblinding every change is a
deviation (SPEC §2): ``--reason`` is then required and recorded with the new version.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.api.charters import CharterDetailOutput
from charters.management.cli import UseCaseCommand, add_charter, charter_named, refusals, write_json
from charters.models import Role
from charters.permissions import use_case_for
from charters.selectors.charters import charter_page
from charters.services.charters import charter_revise


class Command(UseCaseCommand):
    help = (
        "Start the next charter version as a draft copy of the latest signed one; after "
        "results were first shown the change is a deviation and needs --reason."
    )
    who = "a charter owner of the use case"

    def add_options(self, parser: CommandParser) -> None:
        add_charter(parser, "The signed version to revise (the latest).")
        parser.add_argument(
            "--reason",
            default="",
            help="Why the charter changes (required once results have been shown).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, use_case_for, roles=[Role.CHARTER_OWNER])
        charter = charter_named(use_case, options["charter_version"])
        with refusals({"reason": "--reason", "version": "--charter"}):
            revision = charter_revise(actor=actor, charter=charter, reason=options["reason"])
        if options["format"] == "json":
            page = charter_page(use_case=use_case, version=revision.version)
            write_json(self.stdout, CharterDetailOutput(page).data)
            return
        self.stdout.write(
            f"Charter v{revision.version} of {use_case.key} started as a draft copy of signed "
            f"v{charter.version}; edit it with charter_update, then sign it."
        )
        if hasattr(revision, "deviation"):
            self.stdout.write(
                f"Results were shown before: this revision is a deviation, recorded with the "
                f"reason {revision.deviation.reason!r}."
            )
