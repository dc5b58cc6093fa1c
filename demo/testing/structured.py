"""Test builders for structured judgements (SPEC §4.1): a labelled task set and a labelled run
imported into a grading world's use case."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence

from charters.models import TaskSet
from charters.services.task_sets import task_set_import
from demo.testing.grading import GradingWorld
from runs.models import Run
from runs.services.outputs import output_import


def labelled_task_set(
    world: GradingWorld, *, labels: Sequence[str], gold: Mapping[str, str], name: str = "controls"
) -> TaskSet:
    """Import a task set whose header declares ``labels`` and whose graded tasks carry ``gold``."""
    lines = [json.dumps({"label_set": list(labels)})] + [
        json.dumps(
            {"id": task_id, "split": "graded", "input": f"Control {task_id}.", "gold_label": label}
        )
        for task_id, label in gold.items()
    ]
    return task_set_import(
        actor=world.owner,
        use_case=world.use_case,
        name=name,
        fileobj=io.BytesIO("\n".join(lines).encode()),
        filename=f"{name}.jsonl",
    )


def labelled_run(
    world: GradingWorld, task_set: TaskSet, given: Mapping[str, Sequence[str | None]]
) -> Run:
    """Import a run of the world's first σ whose outputs carry ``given[task][repeat]`` labels."""
    repeats = max(len(labels) for labels in given.values())
    outputs = [
        json.dumps({"task_id": task_id, "repeat": r, "text": f"Judgement: {label}", "label": label})
        for task_id, labels in given.items()
        for r, label in enumerate(labels)
    ]
    return output_import(
        actor=world.model_owner,
        use_case=world.use_case,
        configuration=world.runs[0].configuration,
        task_set=task_set,
        split="graded",
        repeats=repeats,
        fileobj=io.BytesIO("\n".join(outputs).encode()),
        filename="labelled.jsonl",
    )
