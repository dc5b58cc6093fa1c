"""``enterpriseval charter_validate``: print the errors and warnings the charter editor shows.

Of a charter file (nothing is saved), or of a stored version without ``--file``. Each issue is
one line, ``FILE:LINE: LEVEL: FIELD: MESSAGE``; the command exits with status 2 when there
are errors (they block signing), 0 otherwise.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser
from django.utils import timezone

from charters.api.charters import ValidationReportSerializer
from charters.management.charter_files import charter_file, file_report, issue_lines
from charters.management.cli import UseCaseCommand, refusal, write_json
from charters.permissions import use_case_for_unblinded
from charters.selectors.charters import charter_current, charter_page


class Command(UseCaseCommand):
    help = (
        "Validate a charter file against the use case (or a stored version): print each "
        "error and warning with its line; exit 2 if there are errors."
    )
    who = "a member of the use case who does not grade on it"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--file", help="Charter document (.yaml or .json) to check.")
        parser.add_argument(
            "--charter",
            dest="charter_version",
            type=int,
            help="Stored version to check (default: the latest), when no --file is given.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        _actor, use_case = self.actor_and_use_case(
            options, use_case_for_unblinded, what="the charter"
        )
        if options["file"]:
            source = options["file"]
            document, line_of = charter_file(source, stderr=self.stderr)
            report = file_report(use_case, document, line_of)
        else:
            version = options["charter_version"]
            if version is None:
                current = charter_current(use_case=use_case)
                if current is None:
                    raise refusal(f"--use-case: {use_case.key} has no charter yet; give --file")
                version = current.version
            page = charter_page(use_case=use_case, version=version, today=timezone.localdate())
            if page is None:
                raise refusal(f"--charter: {use_case.key} has no charter v{version}")
            source, report = f"{use_case.key} charter v{version}", page.validation
        if options["format"] == "json":
            write_json(self.stdout, ValidationReportSerializer(report.to_dict()).data)
        else:
            issues = [*report.errors, *report.warnings]
            for line in issue_lines(source, issues):
                self.stdout.write(line)
            self.stdout.write(
                f"{source}: {len(report.errors)} error(s), {len(report.warnings)} warning(s)"
            )
        if report.errors:
            raise refusal(
                f"{source}: {len(report.errors)} error(s) block signing; first: "
                f"{report.errors[0].field}: {report.errors[0].message}"
            )
