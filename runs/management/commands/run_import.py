"""``enterpriseval run_import``: import outputs made elsewhere (JSONL) as a completed run.

As the import page and ``POST …/runs/import/``: all or nothing; a bad line anywhere imports
nothing, each bad line is printed as ``FILE:LINE: FIELD: MESSAGE`` and the command exits with
status 2. Large files show a progress bar on standard error.
"""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.management.cli import (
    ProgressFile,
    add_actor,
    add_format,
    progress_bar,
    refusal,
    refusals,
    use_case_as,
    user_named,
    write_json,
)
from charters.models.tasks import Split
from charters.selectors.configurations import configuration_get
from charters.selectors.task_sets import task_set_get
from runs.api import run_detail_data
from runs.management.options import versioned
from runs.selectors.runs import run_access
from runs.services.outputs import output_import

PASSES = ("importing",)
OPTIONS = {"split": "--split", "repeats": "--repeats", "task_set": "--task-set"}


class Command(BaseCommand):
    help = (
        "Import a JSONL file of σ's outputs on a task-set split (docs/formats.md 'Outputs') "
        "as a completed run, all or nothing; bad lines are printed as FILE:LINE: FIELD: MESSAGE."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        parser.add_argument("--configuration", required=True, help="σ as NAME:VERSION.")
        parser.add_argument("--task-set", required=True, help="Task set as NAME:VERSION.")
        parser.add_argument("--split", default=Split.GRADED, choices=Split.values)
        parser.add_argument("--repeats", type=int, default=1, help="K outputs per task.")
        parser.add_argument("--file", required=True, help="The outputs file (JSONL).")
        add_actor(parser, "a charter owner or model owner of the use case")
        add_format(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        use_case, _roles = use_case_as(actor, options["use_case"], run_access, write=True)
        name, version = versioned(options["configuration"], "--configuration")
        configuration = configuration_get(use_case=use_case, name=name, version=version)
        if configuration is None:
            raise refusal(f"--configuration: no σ {name} v{version} in {use_case.key}")
        name, version = versioned(options["task_set"], "--task-set")
        task_set = task_set_get(use_case=use_case, name=name, version=version)
        if task_set is None:
            raise refusal(f"--task-set: no task set {name} v{version} in {use_case.key}")
        path = options["file"]
        try:
            fileobj = open(path, "rb")  # noqa: SIM115 (closed below, after the import)
        except OSError as error:
            raise refusal(f"--file: {path}: {error.strerror or error}") from None
        bar = progress_bar(self.stderr, total=os.fstat(fileobj.fileno()).st_size, passes=PASSES)
        try:
            with refusals(OPTIONS, source=path, stderr=self.stderr):
                run = output_import(
                    actor=actor,
                    use_case=use_case,
                    configuration=configuration,
                    task_set=task_set,
                    split=options["split"],
                    repeats=options["repeats"],
                    fileobj=ProgressFile(fileobj, bar, PASSES),  # type: ignore[arg-type]
                    filename=path,
                )
        finally:
            bar.close()
            fileobj.close()
        if options["format"] == "json":
            write_json(self.stdout, run_detail_data(run))
            return
        self.stdout.write(
            f"Run {run.pk} of {use_case.key} imported from {path}: σ {configuration.name} "
            f"v{configuration.version} × {task_set.name} v{task_set.version} {run.split} × "
            f"K={run.repeats}, {run.items_done} output(s), {run.items_failed} failed."
        )
