"""POST /api/v1/use-cases/<key>/runs/: a model owner executes σ over a split through the API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from rest_framework.test import APIClient

from charters.services.configurations import configuration_upload
from demo.testing.fakellm import FakeLLMServer
from runs.executor import load_litellm
from runs.models import Output, Run, RunStatus

SIGMA_FILE = (
    Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "sigma-gemini-2.5.yaml"
)
GRADED = 65


@pytest.fixture(autouse=True, scope="module")
def _cost_map_loaded():
    load_litellm()


def reply(request: dict) -> str:
    user = request["messages"][-1]["content"]
    first_id = user.split("[", 1)[1].split("]", 1)[0]
    return f"The facility is a revolving credit facility [{first_id}]."


@pytest.fixture
def fake_sigma(runs_world):
    with FakeLLMServer(responder=reply) as server:
        document = yaml.safe_load(SIGMA_FILE.read_text())
        document["model"] = {
            "provider": "openai_compatible",
            "id": "fake-model",
            "api_base": server.base_url,
            "parameters": {"temperature": 0},
        }
        configuration = configuration_upload(
            actor=runs_world.model_owner,
            use_case=runs_world.use_case,
            name="fake-sigma",
            content=json.dumps(document),
            filename="sigma.json",
        )
        yield configuration, server


def post(user, body):
    client = APIClient()
    client.force_authenticate(user)
    return client.post("/api/v1/use-cases/CREDIT-MEMO-B/runs/", body, format="json")


def test_a_model_owner_executes_a_split_k_times_through_the_api(
    runs_world, fake_sigma, django_capture_on_commit_callbacks
):
    configuration, server = fake_sigma
    task_set = runs_world.task_set
    # Chunks are enqueued on commit; Celery runs them eagerly in tests.
    with django_capture_on_commit_callbacks(execute=True):
        response = post(
            runs_world.model_owner,
            {
                "configuration": f"{configuration.name}:{configuration.version}",
                "task_set": f"{task_set.name}:{task_set.version}",
                "split": "graded",
                "repeats": 2,
                "concurrency": 8,
            },
        )
    assert response.status_code == 201, response.json()
    run = Run.objects.get(pk=response.json()["id"])
    assert run.status == RunStatus.COMPLETED
    assert run.items_total == GRADED * 2
    assert Output.objects.filter(run=run).count() == GRADED * 2
    assert server.calls == GRADED * 2
    assert response.json()["items_total"] == GRADED * 2


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("grader", 403), ("reviewer", 403), ("adjudicator", 403), ("outsider", 404)],
)
def test_only_owners_start_runs(runs_world, fake_sigma, persona, expected):
    configuration, server = fake_sigma
    response = post(
        getattr(runs_world, persona),
        {
            "configuration": f"{configuration.name}:{configuration.version}",
            "task_set": f"{runs_world.task_set.name}:{runs_world.task_set.version}",
            "split": "graded",
        },
    )
    assert response.status_code == expected
    assert not Run.objects.exists()
    assert server.calls == 0


def test_a_bad_request_names_the_field(runs_world, fake_sigma):
    response = post(
        runs_world.model_owner,
        {"configuration": "nope", "task_set": "x:1", "split": "graded"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "configuration"
