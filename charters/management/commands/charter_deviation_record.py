"""``enterpriseval charter_deviation_record``: record why a revision became a deviation.

As the "Record deviation" form of the charter's signing page and ``POST
…/charters/<version>/deviation/`` (charter owner only): a draft revision started while results
were still blind becomes a deviation when results are first shown before it is signed (SPEC
§2); it cannot be signed until the reason is recorded. ``--format json`` prints the version as
the API returns it.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser
from django.utils import timezone

from charters.api.charters import CharterDetailOutput
from charters.management.cli import UseCaseCommand, add_charter, charter_named, refusals, write_json
from charters.models import Role
from charters.permissions import use_case_for
from charters.selectors.charters import charter_page
from charters.services.charters import charter_deviation_record


class Command(UseCaseCommand):
    help = (
        "Record the reason of a draft charter revision that became a deviation when results "
        "were first shown before it was signed; it can be signed afterwards."
    )
    who = "a charter owner of the use case"

    def add_options(self, parser: CommandParser) -> None:
        add_charter(parser, "The draft revision's version.")
        parser.add_argument("--reason", required=True, help="Why the charter changes.")

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, use_case_for, roles=[Role.CHARTER_OWNER])
        version = options["charter_version"]
        charter = charter_named(use_case, version)
        with refusals({"reason": "--reason", "version": "--charter"}):
            deviation = charter_deviation_record(
                actor=actor, charter=charter, reason=options["reason"]
            )
        if options["format"] == "json":
            page = charter_page(use_case=use_case, version=version, today=timezone.localdate())
            write_json(self.stdout, CharterDetailOutput(page).data)
            return
        self.stdout.write(
            f"Deviation of charter v{version} of {use_case.key} from v{deviation.previous.version} "
            f"recorded with the reason {deviation.reason!r}; the draft may now be signed."
        )
