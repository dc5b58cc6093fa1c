"""``enterpriseval judge``: judge every unit of a finished run and follow the progress."""

from __future__ import annotations

import sys
import time
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from charters.models.charters import Treatment
from enterpriseval.errors import ServiceError
from runs.judges.rubric import RUBRIC_VERSION
from runs.management.options import add_model_owner, use_case_and_actor
from runs.models import Judging, Run
from runs.services.judging import (
    ACTIVE_JUDGING,
    JUDGE_KINDS,
    run_judge_execute,
    run_judge_start,
)

POLL_SECONDS = 1.0
#: Service fields whose option is not named after them.
OPTIONS = {"kind": "--judge", "judge": "--judge", "model_ref": "--model"}


class Command(BaseCommand):
    help = (
        "Judge every unit of every succeeded output of a finished run with the built-in "
        "offline judge or an LLM judge, and follow the progress; prints the counts at the end."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        parser.add_argument("--run", required=True, type=int, help="Run id.")
        parser.add_argument(
            "--judge", required=True, choices=list(JUDGE_KINDS), help="offline or litellm."
        )
        parser.add_argument(
            "--model", dest="model_ref", default="", help="LLM judge: litellm model string."
        )
        parser.add_argument("--name", help="Judge name (default: offline, or llm-<model>).")
        parser.add_argument(
            "--purpose",
            default=Treatment.GATED.value,
            choices=Treatment.values,
            help="gated (default: the judge's model must differ from σ's) or informational.",
        )
        parser.add_argument("--api-base", default="", help="LLM judge: endpoint URL.")
        parser.add_argument(
            "--api-key-env",
            default="",
            help="LLM judge: NAME of the environment variable holding the API key.",
        )
        parser.add_argument("--concurrency", type=int, help="LLM judge: calls in flight.")
        parser.add_argument("--rubric-version", default=RUBRIC_VERSION, help="Rubric version.")
        add_model_owner(parser)
        parser.add_argument(
            "--inline",
            action="store_true",
            help="Judge in this process instead of enqueuing the work for the workers.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        use_case, actor = use_case_and_actor(options, doing="judges the run")
        run = (
            Run.objects.filter(use_case=use_case, pk=options["run"])
            .select_related("configuration", "use_case")
            .first()
        )
        if run is None:
            raise CommandError(f"--run: no run {options['run']} in {use_case.key}")
        try:
            judging = run_judge_start(
                actor=actor,
                run=run,
                kind=JUDGE_KINDS[options["judge"]],
                purpose=options["purpose"],
                model_ref=options["model_ref"],
                name=options["name"],
                api_base=options["api_base"],
                api_key_env=options["api_key_env"],
                concurrency=options["concurrency"],
                rubric_version=options["rubric_version"],
                enqueue=not options["inline"],
            )
        except ServiceError as error:
            option = OPTIONS.get(error.field or "", f"--{(error.field or 'run').replace('_', '-')}")
            raise CommandError(f"{option}: {error}") from error
        except PermissionDenied as error:
            raise CommandError(f"--actor: {error}") from error
        self.stdout.write(
            f"Judging {judging.pk}: run {run.pk} by {judging.judge.name} "
            f"{judging.judge.version} for "
            + (
                "a gated metric"
                if judging.purpose == Treatment.GATED
                else "an informational metric"
            )
            + (" (inline)" if options["inline"] else " (enqueued)")
        )
        bar = tqdm(unit="output", file=getattr(self.stderr, "_out", sys.stderr))
        try:
            if options["inline"]:
                run_judge_execute(
                    judging_id=judging.pk, on_progress=lambda counters: _show(bar, counters)
                )
            else:
                while (current := Judging.objects.get(pk=judging.pk)).status in ACTIVE_JUDGING:
                    _show(bar, vars(current))
                    time.sleep(POLL_SECONDS)
            judging = Judging.objects.select_related("judge").get(pk=judging.pk)
            _show(bar, vars(judging))
        finally:
            bar.close()
        self.stdout.write(summary(judging))


def summary(judging: Judging) -> str:
    """Return the result of a judging: its status and counts, and what it left unjudged."""
    lines = [
        f"Judging {judging.pk} of run {judging.run_id} {judging.get_status_display().lower()}: "
        f"{judging.outputs_done} of {judging.outputs_total} outputs "
        f"({judging.outputs_judged} judged now, {judging.outputs_failed} without a valid "
        f"reply); {judging.units_scored} units scored, {judging.scores_written} scores "
        "written."
    ]
    if judging.error:
        lines.append(judging.error)
    lines.append(f"Judge id {judging.judge_id} (decide --judge {judging.judge_id}).")
    return "\n".join(lines)


def _show(bar: tqdm, counters: dict[str, Any]) -> None:
    bar.total = counters["outputs_total"]
    bar.update(counters["outputs_done"] - bar.n)
    bar.set_postfix(failed=counters["outputs_failed"], refresh=True)
