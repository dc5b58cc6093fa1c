"""``enterpriseval oversight_study_close``: close an oversight study to further decisions.

As the "Close study" button of the study's page and ``POST …/oversight/<id>/close/`` (charter
owner only): no decision or revision is accepted afterwards, and its results are final.
``--format json`` prints the study as the API returns it.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import UseCaseCommand, refusals, user_named, write_json
from grading.api.oversight import StudyOutput
from grading.management.commands.oversight_status import owner_use_case, study_named
from grading.selectors.oversight import oversight_study_list
from grading.services.oversight import oversight_study_close


class Command(UseCaseCommand):
    help = "Close an oversight study: no decision is accepted afterwards; its results are final."
    who = "a charter owner of the use case"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="Public id of the study.")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        use_case = owner_use_case(actor, options["use_case"])
        study = study_named(use_case, options["study"])
        with refusals({"status": "--study"}):
            oversight_study_close(actor=actor, study=study)
        closed = oversight_study_list(use_case=use_case).get(pk=study.pk)
        if options["format"] == "json":
            write_json(self.stdout, StudyOutput(closed).data)
            return
        self.stdout.write(
            f"Oversight study {closed.public_id} ({closed.name}) of {use_case.key} is closed: "
            f"{closed.decided_count} of {closed.item_count} copies decided; no more decisions "
            "are accepted."
        )
