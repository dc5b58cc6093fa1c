"""``enterpriseval charter_update``: replace a draft charter's content with a file's.

As the editor's upload and ``PUT …/charters/<version>/``: a signed charter is immutable
(revise it first); signatures given to the earlier content stop counting.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.api.charters import CharterDetailOutput
from charters.management.charter_files import charter_file, file_report
from charters.management.cli import UseCaseCommand, add_charter, charter_named, refusals, write_json
from charters.management.commands.charter_create import write_saved
from charters.models import Role
from charters.permissions import use_case_for
from charters.selectors.charters import charter_page
from charters.services.charters import charter_update


class Command(UseCaseCommand):
    help = "Replace a draft charter's content with a YAML or JSON charter file."
    who = "a charter owner of the use case"

    def add_options(self, parser: CommandParser) -> None:
        add_charter(parser)
        parser.add_argument("--file", required=True, help="Charter document (.yaml or .json).")

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, use_case_for, roles=[Role.CHARTER_OWNER])
        charter = charter_named(use_case, options["charter_version"])
        path = options["file"]
        document, line_of = charter_file(path, stderr=self.stderr)
        with refusals({"version": "--charter"}, source=path, stderr=self.stderr):
            charter_update(actor=actor, charter=charter, document=document)
        if options["format"] == "json":
            page = charter_page(use_case=use_case, version=charter.version)
            write_json(self.stdout, CharterDetailOutput(page).data)
            return
        report = file_report(use_case, document, line_of)
        write_saved(self.stdout, "saved", use_case.key, charter.version, path, report)
