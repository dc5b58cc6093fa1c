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


def _finished_run(world: RunsWorld, *, outputs: int = 3) -> Any:
    """Import ``outputs`` outputs of the graded split, each restating its task's key elements
    and citing its permitted chunks, as a completed run (units built) ready to be judged."""
    import io
    import json

    from runs.services.outputs import output_import

    lines = []
    for task in world.tasks("graded")[:outputs]:
        sources = [chunk.chunk_id for chunk in task.source_chunks.all()]
        text = " ".join(
            f"{element.text} [{sources[n % len(sources)]}]."
            for n, element in enumerate(task.key_elements.all())
        )
        lines.append(json.dumps({"task_id": task.external_id, "text": text}) + "\n")
    return output_import(
        actor=world.model_owner,
        use_case=world.use_case,
        configuration=world.configuration,
        task_set=world.task_set,
        split="graded",
        repeats=1,
        fileobj=io.BytesIO("".join(lines).encode()),
        filename="outputs.jsonl",
    )


def _rubric_reply(request: dict[str, Any]) -> dict[str, Any]:
    """Answer every unit an LLM judge was shown, as a well-behaved judge model would."""
    import json

    units = json.loads(request["messages"][1]["content"])["units"]
    return {
        "sentences": [
            {"key": s["key"], "assertive": "Y", "supported": "fully", "relevant": "Y"}
            for s in units["sentences"]
        ],
        "cited_chunks": [{"key": c["key"], "citation": "strict"} for c in units["cited_chunks"]],
        "key_elements": [
            {"key": k["key"], "key_element": "present_correct"} for k in units["key_elements"]
        ],
        "guidance": [{"key": g["key"], "flagged": "N"} for g in units["guidance"]],
    }


@pytest.fixture
def finished_run(runs_world: RunsWorld) -> Any:
    """Return a function that imports a completed run of ``outputs`` outputs, ready to judge."""
    return lambda outputs=3: _finished_run(runs_world, outputs=outputs)


@pytest.fixture
def fake_judge() -> Any:
    """A loopback fake model answering as a well-behaved LLM judge."""
    from demo.testing.fakellm import FakeLLMServer

    with FakeLLMServer(responder=_rubric_reply) as server:
        yield server
