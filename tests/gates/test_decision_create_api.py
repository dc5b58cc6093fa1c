"""POST /api/v1/use-cases/<key>/decisions/: record a decision, refusals in the one error shape."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from demo.testing.decisions import make_decidable_world
from gates.models import Decision
from runs.services.judging import judge_get_or_create

ERROR_KEYS = {"code", "message", "field", "details"}


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


@pytest.fixture
def decidable(db):
    return make_decidable_world()


def url(world) -> str:
    return reverse("api-decision-list", args=[world.use_case.key])


def body(world, judge, **overrides):
    return {
        "charter": 1,
        "run": world.runs[0].pk,
        "session": world.session.public_id,
        "judge": judge.pk,
        **overrides,
    }


def test_it_records_a_decision_and_answers_201_with_the_detail(decidable):
    world, judge = decidable
    response = api(world.owner).post(url(world), body(world, judge), format="json")
    assert response.status_code == 201, response.json()
    decision = Decision.objects.get()
    data = response.json()
    assert data["id"] == decision.pk and data["sha256"] == decision.sha256
    assert data["record"]["run"] == world.runs[0].pk and "evidence" in data
    detail = api(world.owner).get(data["url"]).json()
    assert detail == data


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("reviewer", 201),
        ("model_owner", 403),
        ("adjudicator", 403),
        ("grader", 403),
        ("outsider", 404),
    ],
)
def test_each_persona_records_as_its_role_allows(decidable, persona, status):
    world, judge = decidable
    user = world.graders[0] if persona == "grader" else getattr(world, persona)
    response = api(user).post(url(world), body(world, judge), format="json")
    assert response.status_code == status
    if status != 201:
        assert set(response.json()["error"]) == ERROR_KEYS
        assert not Decision.objects.exists()
    assert api().post(url(world), body(world, judge), format="json").status_code in (401, 403)


def test_a_bad_input_is_a_400_naming_the_field(decidable):
    world, _judge = decidable
    response = api(world.owner).post(url(world), {"run": "x"}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] in {"charter", "run"}
    assert {d["field"] for d in error["details"]} == {"charter", "run"}


def test_an_unknown_charter_version_is_a_400_on_the_charter(decidable):
    world, judge = decidable
    response = api(world.owner).post(url(world), body(world, judge, charter=9), format="json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "charter"


def test_a_judge_on_sigmas_own_model_is_a_409_naming_both_models(decidable):
    world, _judge = decidable
    model = world.runs[0].configuration.document["model"]
    self_judge = judge_get_or_create(kind="llm", model_ref=f"gemini/{model['id']}")
    response = api(world.owner).post(url(world), body(world, self_judge), format="json")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["field"] == "judge" and error["code"] == "conflict"
    assert self_judge.model_ref in error["message"]
    assert f"{model['provider']}/{model['id']}" in error["message"]
