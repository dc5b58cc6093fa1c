"""Charter documents given to commands as files: read as the editor's upload reads them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TextIO

from django.utils import timezone

from charters.charter_document import (
    CharterDocumentError,
    document_from_text,
    document_line_finder,
    issues_with_lines,
)
from charters.management.cli import located, read_text, refusal
from charters.models import UseCase
from charters.selectors.task_sets import task_set_supply
from charters.validation import Issue, ValidationReport, charter_validate
from enterpriseval.limits import UploadKind


def charter_file(path: str, *, stderr: TextIO) -> tuple[dict[str, Any], Callable[[str], Any]]:
    """Return the document in the YAML or JSON file ``path`` and a line finder for its fields.

    ``.json`` files are read as JSON, others as YAML. A file that cannot be read into the
    document shape refuses with ``FILE:LINE: FIELD: MESSAGE`` (every problem on ``stderr``).
    """
    text = read_text(path, "--file", kind=UploadKind.CHARTER)
    fmt = "json" if path.lower().endswith(".json") else "yaml"
    try:
        document = document_from_text(text, fmt=fmt, source=path)
    except CharterDocumentError as error:
        lines = [located(path, issue.to_dict()) for issue in error.issues]
        for line in lines[1:]:
            stderr.write(line)
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        raise refusal(lines[0] + more) from None
    return document, document_line_finder(text)


def file_report(
    use_case: UseCase, document: dict[str, Any], line_of: Callable[[str], Any]
) -> ValidationReport:
    """Return the editor's validation of ``document``, each issue with its line in the file."""
    report = charter_validate(
        document,
        autonomy=use_case.autonomy,
        consequence=use_case.consequence,
        today=timezone.localdate(),
        task_sets=task_set_supply(use_case=use_case),
    )
    report.issues = issues_with_lines(report.issues, line_of)
    return report


def issue_lines(source: str, issues: Iterable[Issue]) -> list[str]:
    """Return ``FILE:LINE: LEVEL: FIELD: MESSAGE`` for each issue."""
    return [
        located(source, {**issue.to_dict(), "field": f"{issue.level}: {issue.field}"})
        for issue in issues
    ]
