"""The world runs are made in: personas, Use Case B, σ Gemini 2.5 v1 and the example task set.

``runs_world`` is built through the services, as a user would build it, so every test of
runs, judging or grading starts from a use case in stage 3 with a frozen σ and 89 tasks
(12 dev, 65 graded, 12 stress) from ``examples/credit_memo/tasks.jsonl``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from charters.models import Configuration, Role, Task, TaskSet, UseCase
from charters.services.configurations import configuration_upload
from charters.services.task_sets import task_set_import
from charters.services.use_cases import membership_grant, use_case_create

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"
SIGMA_FILE = EXAMPLES / "sigma-gemini-2.5.yaml"
TASKS_FILE = EXAMPLES / "tasks.jsonl"
USE_CASE_KEY = "CREDIT-MEMO-B"
SIGMA_NAME = "gemini-2-5"
TASK_SET_NAME = "credit-memo"
PERSONA_NAMES = ("owner", "model_owner", "grader", "adjudicator", "reviewer", "outsider")
ROLES = {
    "model_owner": Role.MODEL_OWNER,
    "grader": Role.GRADER,
    "adjudicator": Role.ADJUDICATOR,
    "reviewer": Role.REVIEWER,
}


@dataclass
class RunsWorld:
    """Users (``owner`` is the charter owner; ``outsider`` has no role), the use case, σ and
    task set; ``tasks(split)`` returns that split's tasks in file order."""

    owner: Any
    model_owner: Any
    grader: Any
    adjudicator: Any
    reviewer: Any
    outsider: Any
    use_case: UseCase
    configuration: Configuration
    task_set: TaskSet

    @property
    def key(self) -> str:
        return self.use_case.key

    def by_name(self, name: str) -> Any:
        return getattr(self, name)

    def tasks(self, split: str = "graded") -> list[Task]:
        return list(
            Task.objects.filter(task_set=self.task_set, split=split)
            .prefetch_related("source_chunks", "key_elements", "guidance_items")
            .order_by("line_number")
        )


def make_user(username: str) -> Any:
    return get_user_model().objects.create_user(username=username, password="pw-" + username)


@pytest.fixture
def runs_world(db) -> RunsWorld:
    users = {name: make_user(name) for name in PERSONA_NAMES}
    use_case = use_case_create(
        actor=users["owner"],
        key=USE_CASE_KEY,
        name="Credit-memo drafting",
        business_outcome="Analysts draft credit-memo sections faster without losing fidelity.",
        value_hypothesis="Drafting time falls by half with no rise in unsupported statements.",
        autonomy=1,
        consequence=3,
    )
    for name, role in ROLES.items():
        membership_grant(actor=users["owner"], use_case=use_case, user=users[name], role=role)
    configuration = configuration_upload(
        actor=users["model_owner"],
        use_case=use_case,
        name=SIGMA_NAME,
        content=SIGMA_FILE.read_bytes(),
        filename=SIGMA_FILE.name,
    )
    with TASKS_FILE.open("rb") as stream:
        task_set = task_set_import(
            actor=users["owner"],
            use_case=use_case,
            name=TASK_SET_NAME,
            fileobj=stream,
            filename=TASKS_FILE.name,
        )
    return RunsWorld(use_case=use_case, configuration=configuration, task_set=task_set, **users)
