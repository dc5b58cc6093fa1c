"""``enterpriseval judging_cancel``: cancel a queued or running judging of a run.

As the run page's button and ``POST …/judgings/<id>/cancel/``: the worker stops before its next
batch, scores already written stay, and ``run.judge_cancel`` is recorded. A finished judging
is refused (exit 2).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.management.cli import (
    add_actor,
    add_format,
    refusal,
    refusals,
    use_case_as,
    user_named,
    write_json,
)
from runs.api import JudgingOutput
from runs.selectors.runs import judging_get, run_access, run_get
from runs.services.judging import judging_cancel


class Command(BaseCommand):
    help = "Cancel a pending or running judging of a run (a stuck one); the worker stops."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        parser.add_argument("--run", type=int, required=True, help="Run id.")
        parser.add_argument("--judging", type=int, required=True, help="Judging id.")
        parser.add_argument("--reason", default="", help="Why it is cancelled (recorded).")
        add_actor(parser, "a charter owner or model owner of the use case")
        add_format(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        use_case, _roles = use_case_as(actor, options["use_case"], run_access, write=True)
        run = run_get(use_case=use_case, run_id=options["run"])
        if run is None:
            raise refusal(f"--run: no run {options['run']} in {use_case.key}")
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
