"""``enterpriseval decide``: record a decision on a run under a signed charter.

``--format json`` prints the decision as ``GET /api/v1/use-cases/<key>/decisions/<id>/`` does.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser

from charters.management.cli import REFUSED, add_actor, use_case_named, user_named, write_json
from enterpriseval.errors import ServiceError
from gates.api import DecisionDetailOutput
from gates.management.options import write_decision
from gates.selectors import decision_get, decision_inputs
from gates.services import decision_create

OPTION_OF_FIELD = {
    "charter": "--charter",
    "run": "--run",
    "session": "--session",
    "judge": "--judge",
    "oversight_study": "--study",
    "stress_run": "--stress-run",
}


class Command(BaseCommand):
    help = (
        "Record a gate decision (SPEC §6.1): estimate every charter metric on the run with "
        "the grading session, judge and oversight study given, gate on conservative bounds "
        "and record it. A refusal (draft charter, open session, a judge on σ's own model, "
        "evidence of another use case or run) prints one message and exits with status 2."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        parser.add_argument("--charter", type=int, required=True, help="Signed charter version.")
        parser.add_argument("--run", type=int, required=True, help="Run id.")
        parser.add_argument("--session", help="Public id of a closed grading session.")
        parser.add_argument("--judge", type=int, help="Id of a judge that scored the run.")
        parser.add_argument("--study", help="Public id of an oversight study.")
        parser.add_argument(
            "--stress-run",
            type=int,
            help="Id of a completed stress-split run of the same σ, reported apart (SPEC §9).",
        )
        add_actor(parser, "a charter owner or reviewer")
        parser.add_argument("--format", choices=["table", "json"], default="table")

    def handle(self, *args: Any, **options: Any) -> None:
        use_case = use_case_named(options["use_case"])
        actor = user_named(options["actor"])
        try:
            inputs = decision_inputs(
                use_case=use_case,
                charter_version=options["charter"],
                run_id=options["run"],
                session_id=options["session"],
                judge_id=options["judge"],
                study_id=options["study"],
                stress_run_id=options["stress_run"],
            )
            decision = decision_create(
                actor=actor,
                charter=inputs.charter,
                run=inputs.run,
                session=inputs.session,
                judge=inputs.judge,
                oversight_study=inputs.oversight_study,
                stress_run=inputs.stress_run,
            )
        except PermissionDenied as error:
            raise CommandError(f"--as: {error}", returncode=REFUSED) from None
        except ServiceError as error:
            option = OPTION_OF_FIELD.get(error.field or "", error.field)
            raise CommandError(
                f"{option}: {error.message}" if option else error.message, returncode=REFUSED
            ) from None
        if options["format"] == "json":
            detail = decision_get(use_case=use_case, pk=decision.pk)
            data = DecisionDetailOutput(detail, context={"key": use_case.key}).data
            write_json(self.stdout, data)
            return
        title = (
            f"decision {decision.pk} of {use_case.key}: σ {decision.configuration.name} run "
            f"{decision.run_id}, charter v{decision.charter.version}, SHA-256 {decision.sha256}"
        )
        write_decision(self.stdout, decision.record, title=title)
