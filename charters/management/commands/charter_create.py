"""``enterpriseval charter_create``: create a use case's first charter draft from a file.

The file is the charter document the editor's upload and ``POST …/charters/`` take (YAML, or
JSON for ``.json``; docs/formats.md). The draft's validation errors and warnings are printed as
``FILE:LINE: LEVEL: FIELD: MESSAGE``: errors block signing, not saving.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.api.charters import CharterDetailOutput
from charters.management.charter_files import charter_file, file_report, issue_lines
from charters.management.cli import UseCaseCommand, refusals, write_json
from charters.models import Role
from charters.permissions import use_case_for
from charters.selectors.charters import charter_page
from charters.services.charters import charter_create


class Command(UseCaseCommand):
    help = (
        "Create the first charter draft (v1) of a use case from a YAML or JSON charter file "
        "and print its validation; refused if the use case already has a charter."
    )
    who = "a charter owner of the use case"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--file", required=True, help="Charter document (.yaml or .json).")

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, use_case_for, roles=[Role.CHARTER_OWNER])
        path = options["file"]
        document, line_of = charter_file(path, stderr=self.stderr)
        with refusals(source=path, stderr=self.stderr):
            charter = charter_create(actor=actor, use_case=use_case, document=document)
        if options["format"] == "json":
            page = charter_page(use_case=use_case, version=charter.version)
            write_json(self.stdout, CharterDetailOutput(page).data)
            return
        report = file_report(use_case, document, line_of)
        write_saved(self.stdout, "created", use_case.key, charter.version, path, report)


def write_saved(out: Any, verb: str, key: str, version: int, path: str, report: Any) -> None:
    """Write what was saved and the draft's validation, as the editor shows it."""
    out.write(
        f"Charter v{version} of {key} {verb} as a draft from {path}: "
        f"{len(report.errors)} error(s), {len(report.warnings)} warning(s)"
        + ("; fix the errors before signing." if report.errors else "; ready to sign.")
    )
    for line in issue_lines(path, [*report.errors, *report.warnings]):
        out.write(line)
