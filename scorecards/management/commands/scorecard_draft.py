"""``enterpriseval scorecard_draft``: start the draft scorecard of a recorded decision.

As the decision page's button and ``POST …/scorecards/``: its re-evaluation triggers and review
date come from the decision's charter; the committee's fields are filled with
``scorecard_fill``. ``--format json`` prints the GRC export (docs/scorecard-export.md).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import UseCaseCommand, refusals, write_json
from gates.management.options import decision_named
from scorecards.api import ScorecardExportOutput, scorecard_export
from scorecards.selectors import scorecard_get, scorecard_use_case_for, scorecard_view
from scorecards.services import scorecard_create


class Command(UseCaseCommand):
    help = "Draft the scorecard of a recorded decision (one per decision)."
    who = "a charter owner or reviewer of the use case"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--decision", type=int, required=True, help="Decision id.")

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, scorecard_use_case_for)
        decision = decision_named(use_case, options["decision"])
        with refusals({"decision": "--decision"}):
            created = scorecard_create(actor=actor, decision=decision)  # type: ignore[arg-type]
        scorecard = scorecard_get(use_case=use_case, pk=created.pk)
        assert scorecard is not None
        if options["format"] == "json":
            write_json(self.stdout, ScorecardExportOutput(scorecard_export(scorecard)).data)
            return
        missing = scorecard_view(scorecard=scorecard).missing
        self.stdout.write(
            f"Scorecard {scorecard.pk} of decision {decision.pk} ({use_case.key}) drafted; "
            f"{len(missing)} field(s) to fill before sign-off"
            + (": " + "; ".join(f"{m.label}: {m.why}" for m in missing) if missing else ".")
        )
