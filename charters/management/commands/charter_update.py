"""``enterpriseval charter_update``: replace a draft charter's content with a file's.

As the editor's upload and ``PUT …/charters/<version>/``: a signed charter is immutable
(revise it first); signatures given to the earlier content stop counting.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.api.charters import CharterDetailOutput
from charters.management.charter_files import charter_file, file_report
from charters.management.cli import (
    add_actor,
    add_format,
    refusal,
    refusals,
    use_case_as,
    user_named,
    write_json,
)
from charters.management.commands.charter_create import write_saved
from charters.models import Charter, Role
from charters.permissions import use_case_for
from charters.selectors.charters import charter_page
from charters.services.charters import charter_update


class Command(BaseCommand):
    help = "Replace a draft charter's content with a YAML or JSON charter file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        parser.add_argument(
            "--charter", dest="charter_version", type=int, required=True, help="Charter version."
        )
        parser.add_argument("--file", required=True, help="Charter document (.yaml or .json).")
        add_actor(parser, "a charter owner of the use case")
        add_format(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        use_case = use_case_as(actor, options["use_case"], use_case_for, roles=[Role.CHARTER_OWNER])
        charter = Charter.objects.filter(
            use_case=use_case, version=options["charter_version"]
        ).first()
        if charter is None:
            raise refusal(f"--charter: {use_case.key} has no charter v{options['charter_version']}")
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
