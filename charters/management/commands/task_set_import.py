"""``enterpriseval task_set_import``: import a JSONL task file as the next task-set version.

All or nothing, as the import page and ``POST …/task-sets/`` do: the file is checked line by
line first, and if any line is bad nothing is imported, each bad line is printed as
``FILE:LINE: FIELD: MESSAGE`` and the command exits with status 2. Large files show a progress
bar (checking, then writing) on standard error.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.api.task_sets import TaskSetOutput
from charters.management.cli import (
    UseCaseCommand,
    progress_file,
    refusals,
    write_json,
)
from charters.permissions import use_case_for
from charters.services.task_sets import IMPORT_ROLES, task_set_import

PASSES = ("checking", "writing")


class Command(UseCaseCommand):
    help = (
        "Import a task file (JSONL, docs/formats.md 'Tasks') as version n + 1 of --name, all "
        "or nothing; bad lines are printed as FILE:LINE: FIELD: MESSAGE."
    )
    who = "a charter owner or model owner of the use case"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="Task-set name, e.g. credit-memo.")
        parser.add_argument("--file", required=True, help="The task file (JSONL).")

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, use_case_for, roles=IMPORT_ROLES)
        path = options["file"]
        with (
            progress_file(path, "--file", stderr=self.stderr, passes=PASSES) as fileobj,
            refusals({"name": "--name"}, source=path, stderr=self.stderr),
        ):
            task_set = task_set_import(
                actor=actor,
                use_case=use_case,
                name=options["name"],
                fileobj=fileobj,  # type: ignore[arg-type]
                filename=path,
            )
        if options["format"] == "json":
            write_json(self.stdout, TaskSetOutput(task_set).data)
            return
        splits = ", ".join(f"{n} {split}" for split, n in sorted(task_set.split_counts.items()))
        self.stdout.write(
            f"Task set {task_set.name} v{task_set.version} of {use_case.key} imported from "
            f"{path}: {task_set.line_count} task(s) ({splits}); SHA-256 "
            f"{task_set.manifest_sha256}."
        )
