"""``enterpriseval run``: execute σ over a split × K repeats and follow its progress."""

from __future__ import annotations

import sys
import time
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from enterpriseval.errors import ServiceError
from runs.management.options import (
    add_model_owner,
    configuration_named,
    task_set_named,
    use_case_and_actor,
)
from runs.models import Run, RunStatus
from runs.services.runs import run_create, run_execute_chunk, run_start

POLL_SECONDS = 1.0
RUNNING = (RunStatus.PENDING, RunStatus.RUNNING)


class Command(BaseCommand):
    help = (
        "Create an executed run of σ over a task split × K repeats, start it and follow its "
        "progress; prints done, failed, cost and throughput at the end."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        parser.add_argument("--configuration", required=True, help="σ as NAME:VERSION.")
        parser.add_argument("--task-set", required=True, help="Task set as NAME:VERSION.")
        parser.add_argument("--split", default="graded", help="dev, graded or stress.")
        parser.add_argument("--repeats", type=int, default=1, help="K repeats per task.")
        parser.add_argument("--concurrency", type=int, help="Model calls in flight per chunk.")
        parser.add_argument("--budget", help="Cost budget in US dollars.")
        add_model_owner(parser)
        parser.add_argument(
            "--inline",
            action="store_true",
            help="Execute the chunks in this process instead of enqueuing them for workers.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        use_case, actor = use_case_and_actor(options, doing="starts the run")
        # This command has always exited with status 1 on an unknown σ or task set.
        configuration = configuration_named(use_case, options["configuration"], returncode=1)
        task_set = task_set_named(use_case, options["task_set"], returncode=1)
        try:
            run = run_create(
                actor=actor,
                use_case=use_case,
                configuration=configuration,
                task_set=task_set,
                split=options["split"],
                repeats=options["repeats"],
                concurrency=options["concurrency"],
                cost_budget_usd=options["budget"],
            )
            chunks = run_start(actor=actor, run=run, enqueue=not options["inline"])
        except ServiceError as error:
            raise CommandError(f"--{(error.field or 'run').replace('_', '-')}: {error}") from error
        except PermissionDenied as error:
            raise CommandError(f"--actor: {error}") from error
        self.stdout.write(
            f"Run {run.pk}: σ {configuration.name} v{configuration.version} × "
            f"{task_set.name} v{task_set.version} {run.split} × K={run.repeats} = "
            f"{run.items_total} items in {len(chunks)} {_parts(options['inline'])}"
            + (" (inline)" if options["inline"] else " (enqueued)")
        )
        bar = tqdm(
            total=run.items_total, unit="item", file=getattr(self.stderr, "_out", sys.stderr)
        )
        try:
            if options["inline"]:
                for pks in chunks:
                    run_execute_chunk(run_id=run.pk, task_pks=pks)
                    _show(bar, Run.objects.get(pk=run.pk))
            else:
                while (current := Run.objects.get(pk=run.pk)).status in RUNNING:
                    _show(bar, current)
                    time.sleep(POLL_SECONDS)
            run = Run.objects.get(pk=run.pk)
            _show(bar, run)
        finally:
            bar.close()
        self.stdout.write(summary(run))


def summary(run: Run) -> str:
    """Return the one-paragraph result of a run: done, failed, cost, throughput."""
    cost = f"{run.cost_usd} USD"
    if run.cost_unknown_items:
        cost += f" (unknown for {run.cost_unknown_items} item(s))"
    if run.cost_unknown_items and run.cost_usd == Decimal(0):
        cost = f"unknown for {run.cost_unknown_items} item(s)"
    throughput = "—"
    if run.started_at and run.finished_at and run.finished_at > run.started_at:
        seconds = (run.finished_at - run.started_at).total_seconds()
        throughput = f"{run.items_done / seconds:.1f} items/s over {seconds:.1f} s"
    lines = [
        f"Run {run.pk} {run.get_status_display().lower()}: "
        f"{run.items_done} of {run.items_total} done, {run.items_failed} failed; "
        f"cost {cost}; throughput {throughput}."
    ]
    if run.stop_reason:
        lines.append(run.stop_reason)
    return "\n".join(lines)


def _parts(inline: bool) -> str:
    """Name what run_start returned: Redis-held runs hand out pieces, the others chunks."""
    if not inline and getattr(settings, "RUN_SLOTS_REDIS_URL", ""):
        return "piece(s) for the runners"
    return "chunk(s)"


def _show(bar: tqdm, run: Run) -> None:
    bar.update(run.items_done - bar.n)
    bar.set_postfix(failed=run.items_failed, status=run.status, refresh=True)
