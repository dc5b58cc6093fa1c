"""``enterpriseval scorecard_fill``: write the committee's fields of a draft scorecard.

From a YAML or JSON file (a mapping of the fields below) and/or options, options winning; the
same fields, checks and audit entry (``scorecard.edit``) as the scorecard page's form and
``PATCH …/scorecards/<id>/``. A final scorecard is immutable.

Fields: failure_modes, conditions_of_use, compensating_controls (text),
reevaluation_triggers (a list of text), next_review_date (YYYY-MM-DD or null).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import (
    UseCaseCommand,
    read_text,
    refusal,
    refusals,
    user_named,
    write_json,
)
from enterpriseval.api import validated
from enterpriseval.documents import DocumentSyntaxError, DuplicateKeyError, document_read
from enterpriseval.errors import ServiceError
from scorecards.api import ScorecardExportOutput, ScorecardUpdateInput, scorecard_export
from scorecards.management.scorecard_options import add_scorecard_option, scorecard_as
from scorecards.selectors import scorecard_get, scorecard_view
from scorecards.services import EDITABLE_FIELDS, scorecard_update

OPTIONS = {
    "failure_modes": "--failure-modes",
    "conditions_of_use": "--conditions-of-use",
    "compensating_controls": "--compensating-controls",
    "reevaluation_triggers": "--trigger",
    "next_review_date": "--next-review-date",
}


class Command(UseCaseCommand):
    help = (
        "Fill the committee's fields of a draft scorecard from a YAML/JSON file and/or "
        "options (failure modes, conditions of use, compensating controls, re-evaluation "
        "triggers, next review date)."
    )
    who = "a charter owner or reviewer of the use case"

    def add_options(self, parser: CommandParser) -> None:
        add_scorecard_option(parser)
        parser.add_argument("--file", help="YAML or JSON mapping of the fields to write.")
        parser.add_argument("--failure-modes", help="Known failure modes (text).")
        parser.add_argument("--conditions-of-use", help="Conditions of use (text).")
        parser.add_argument("--compensating-controls", help="Compensating controls (text).")
        parser.add_argument(
            "--trigger",
            dest="reevaluation_triggers",
            action="append",
            help="A re-evaluation trigger (repeat; replaces the list).",
        )
        parser.add_argument("--next-review-date", help="YYYY-MM-DD.")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        scorecard = scorecard_as(actor, options)
        changes: dict[str, Any] = {}
        source = options["file"]
        line_of: Any = None
        if source:
            changes, line_of = self._file(source)
        given = {name for name in EDITABLE_FIELDS if options[name] is not None}
        changes |= {name: options[name] for name in given}
        if not changes:
            raise refusal(
                "--file: give a file or at least one field option ("
                + ", ".join(OPTIONS.values())
                + ")"
            )
        try:
            data = validated(ScorecardUpdateInput, changes, partial=True)
        except ServiceError as error:
            raise refusal(self._where(error, source, line_of, given)) from None
        with refusals(OPTIONS):
            scorecard_update(actor=actor, scorecard=scorecard, changes=data)
        scorecard = scorecard_get(use_case=scorecard.use_case, pk=scorecard.pk)
        assert scorecard is not None
        if options["format"] == "json":
            write_json(self.stdout, ScorecardExportOutput(scorecard_export(scorecard)).data)
            return
        missing = scorecard_view(scorecard=scorecard).missing
        self.stdout.write(
            f"Scorecard {scorecard.pk} of {scorecard.use_case.key}: wrote "
            + ", ".join(sorted(data))
            + "; "
            + (
                f"{len(missing)} field(s) still missing: "
                + "; ".join(f"{m.label}: {m.why}" for m in missing)
                if missing
                else "complete, ready for sign-off."
            )
        )

    def _file(self, path: str) -> tuple[dict[str, Any], Any]:
        text = read_text(path, "--file")
        try:
            document = document_read(text, fmt="json" if path.lower().endswith(".json") else "yaml")
        except (DocumentSyntaxError, DuplicateKeyError) as error:
            raise refusal(f"{path}: {error}") from None
        if not isinstance(document.data, dict):
            raise refusal(f"{path}: expected a mapping of scorecard fields")
        unknown = sorted(set(document.data) - set(EDITABLE_FIELDS))
        if unknown:
            line = document.lines.line(unknown[0])
            raise refusal(
                f"{path}:{line}: {unknown[0]}: not a scorecard field the committee writes "
                f"(fields: {', '.join(EDITABLE_FIELDS)})"
            )
        return dict(document.data), document.lines.line

    def _where(self, error: ServiceError, source: str | None, line_of: Any, given: set[str]) -> str:
        """Return the refusal naming the option, or the file's line, that gave the field."""
        field = error.field or ""
        message = error.message.removeprefix(f"{field}: ")
        if field in OPTIONS and (source is None or field in given):
            return f"{OPTIONS[field]}: {message}"
        line = line_of(field) if line_of is not None else None
        return f"{source}:{line}: {field}: {message}" if line else f"{source}: {field}: {message}"
