"""``enterpriseval run_import``: import outputs made elsewhere (JSONL) as a completed run.

As the import page and ``POST …/runs/import/``: all or nothing; a bad line anywhere imports
nothing, each bad line is printed as ``FILE:LINE: FIELD: MESSAGE`` and the command exits with
status 2. Large files show a progress bar on standard error.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import (
    UseCaseCommand,
    progress_file,
    refusals,
    write_json,
)
from charters.models.tasks import Split
from runs.api import run_detail_data
from runs.management.options import configuration_named, task_set_named
from runs.selectors.runs import run_access
from runs.services.outputs import output_import

PASSES = ("importing",)
OPTIONS = {"split": "--split", "repeats": "--repeats", "task_set": "--task-set"}


class Command(UseCaseCommand):
    help = (
        "Import a JSONL file of σ's outputs on a task-set split (docs/formats.md 'Outputs') "
        "as a completed run, all or nothing; bad lines are printed as FILE:LINE: FIELD: MESSAGE."
    )
    who = "a charter owner or model owner of the use case"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--configuration", required=True, help="σ as NAME:VERSION.")
        parser.add_argument("--task-set", required=True, help="Task set as NAME:VERSION.")
        parser.add_argument("--split", default=Split.GRADED, choices=Split.values)
        parser.add_argument("--repeats", type=int, default=1, help="K outputs per task.")
        parser.add_argument("--file", required=True, help="The outputs file (JSONL).")

    def handle(self, *args: Any, **options: Any) -> None:
        actor, (use_case, _roles) = self.actor_and_use_case(options, run_access, write=True)
        configuration = configuration_named(use_case, options["configuration"])
        task_set = task_set_named(use_case, options["task_set"])
        path = options["file"]
        with (
            progress_file(path, "--file", stderr=self.stderr, passes=PASSES) as fileobj,
            refusals(OPTIONS, source=path, stderr=self.stderr),
        ):
            run = output_import(
                actor=actor,
                use_case=use_case,
                configuration=configuration,
                task_set=task_set,
                split=options["split"],
                repeats=options["repeats"],
                fileobj=fileobj,  # type: ignore[arg-type]
                filename=path,
            )
        if options["format"] == "json":
            write_json(self.stdout, run_detail_data(run))
            return
        self.stdout.write(
            f"Run {run.pk} of {use_case.key} imported from {path}: σ {configuration.name} "
            f"v{configuration.version} × {task_set.name} v{task_set.version} {run.split} × "
            f"K={run.repeats}, {run.items_done} output(s), {run.items_failed} failed."
        )
