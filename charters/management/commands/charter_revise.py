"""``enterpriseval charter_revise``: start version n + 1 as a draft copy of signed version n.

As the "Revise" button and ``POST …/charters/<version>/revise/``: only the latest version is
revised, and only once signed. After the use case's first unblinding every change is a
deviation (SPEC §2): ``--reason`` is then required and recorded with the new version.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.api.charters import CharterDetailOutput
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
from charters.selectors.charters import charter_page
from charters.services.charters import charter_revise


class Command(BaseCommand):
    help = (
        "Start the next charter version as a draft copy of the latest signed one; after "
        "results were first shown the change is a deviation and needs --reason."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        parser.add_argument(
            "--charter",
            dest="charter_version",
            type=int,
            required=True,
            help="The signed version to revise (the latest).",
        )
        parser.add_argument(
            "--reason",
            default="",
            help="Why the charter changes (required once results have been shown).",
        )
        add_actor(parser, "a charter owner of the use case")
        add_format(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        use_case = use_case_as(actor, options["use_case"], use_case_for, roles=[Role.CHARTER_OWNER])
        version = options["charter_version"]
        charter = Charter.objects.filter(use_case=use_case, version=version).first()
        if charter is None:
            raise refusal(f"--charter: {use_case.key} has no charter v{version}")
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
