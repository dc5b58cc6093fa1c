"""``enterpriseval judging_cancel``: cancel a queued or running judging of a run.

As the run page's button and ``POST …/judgings/<id>/cancel/``: the worker stops before its next
batch, scores already written stay, and ``run.judge_cancel`` is recorded. A finished judging
is refused (exit 2).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import UseCaseCommand, refusal, refusals, write_json
from runs.api import JudgingOutput
from runs.management.options import run_named
from runs.selectors.runs import judging_get, run_access
from runs.services.judging import judging_cancel


class Command(UseCaseCommand):
    help = "Cancel a pending or running judging of a run (a stuck one); the worker stops."
    who = "a charter owner or model owner of the use case"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--run", type=int, required=True, help="Run id.")
        parser.add_argument("--judging", type=int, required=True, help="Judging id.")
        parser.add_argument("--reason", default="", help="Why it is cancelled (recorded).")

    def handle(self, *args: Any, **options: Any) -> None:
        actor, (use_case, _roles) = self.actor_and_use_case(options, run_access, write=True)
        run = run_named(use_case, options["run"])
        judging = judging_get(run=run, judging_id=options["judging"])
        if judging is None:
            raise refusal(f"--judging: no judging {options['judging']} of run {run.pk}")
        with refusals({"judging": "--judging", "reason": "--reason"}):
            judging_cancel(actor=actor, judging=judging, reason=options["reason"])
        judging = judging_get(run=run, judging_id=judging.pk)
        if options["format"] == "json":
            write_json(self.stdout, JudgingOutput(judging).data)
            return
        self.stdout.write(
            f"Judging {judging.pk} of run {run.pk} cancelled after {judging.outputs_done} of "
            f"{judging.outputs_total} outputs; {judging.scores_written} scores written stay."
        )
