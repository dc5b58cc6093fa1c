"""``enterpriseval scorecard_sign_off``: sign a complete draft scorecard off as its reviewer.

As the scorecard page's button and ``POST …/scorecards/<id>/sign-off/``: refused while a
Table 11 field is missing (each is named); at E4 the reviewer must be independent. The signed
scorecard is final: frozen, hashed, its PDF kept, ``scorecard.sign_off`` recorded.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import UseCaseCommand, refusals, user_named, write_json
from scorecards.api import ScorecardExportOutput, scorecard_export
from scorecards.management.scorecard_options import add_scorecard_option, scorecard_as
from scorecards.services import scorecard_sign_off


class Command(UseCaseCommand):
    help = "Sign a complete draft scorecard off as second-line reviewer; it becomes final."
    who = "the second-line reviewer of the use case"

    def add_options(self, parser: CommandParser) -> None:
        add_scorecard_option(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        scorecard = scorecard_as(actor, options)
        with refusals():
            scorecard = scorecard_sign_off(actor=actor, scorecard=scorecard)
        if options["format"] == "json":
            write_json(self.stdout, ScorecardExportOutput(scorecard_export(scorecard)).data)
            return
        self.stdout.write(
            f"Scorecard {scorecard.pk} of {scorecard.use_case.key} signed off by "
            f"{actor.get_username()}: final, SHA-256 {scorecard.sha256}, PDF SHA-256 "
            f"{scorecard.pdf_sha256}."
        )
