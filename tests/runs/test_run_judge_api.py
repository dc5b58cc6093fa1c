"""POST /api/v1/use-cases/<key>/runs/<id>/judge/ and the judgings it creates, polled by the page."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from audit.models import AuditEntry
from runs.models import Judging, JudgingStatus, Run, RunStatus


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def judge_url(world, run) -> str:
    return f"/api/v1/use-cases/{world.key}/runs/{run.pk}/judge/"


def test_a_model_owner_judges_a_run_with_the_offline_judge_and_polls_it(
    runs_world, finished_run, django_capture_on_commit_callbacks
):
    run = finished_run(3)
    with django_capture_on_commit_callbacks(execute=True):
        response = api(runs_world.model_owner).post(
            judge_url(runs_world, run), {"judge": "offline"}, format="json"
        )
    assert response.status_code == 202, response.json()
    body = response.json()
    assert (body["judge"]["name"], body["judge"]["kind"], body["purpose"]) == (
        "offline",
        "offline",
        "gated",
    )
    assert body["status"] == JudgingStatus.PENDING  # answered before the on-commit task ran
    polled = api(runs_world.reviewer).get(body["url"])
    assert polled.status_code == 200
    assert polled.json()["status"] == JudgingStatus.COMPLETED
    assert polled.json()["outputs_judged"] == 3
    assert polled.json()["percent"] == 100.0
    listed = api(runs_world.owner).get(
        f"/api/v1/use-cases/{runs_world.key}/runs/{run.pk}/judgings/"
    )
    assert [j["id"] for j in listed.json()] == [body["id"]]
    assert AuditEntry.objects.filter(action="run.judge_start").count() == 1


def test_an_llm_judge_is_called_at_its_endpoint_with_its_options(
    runs_world, finished_run, fake_judge, django_capture_on_commit_callbacks
):
    run = finished_run(2)
    with django_capture_on_commit_callbacks(execute=True):
        response = api(runs_world.model_owner).post(
            judge_url(runs_world, run),
            {
                "judge": "litellm",
                "model_ref": "judge-model",
                "name": "house-judge",
                "purpose": "informational",
                "api_base": fake_judge.base_url,
                "concurrency": 2,
                "rubric_version": "1",
            },
            format="json",
        )
    assert response.status_code == 202, response.json()
    judging = Judging.objects.get(pk=response.json()["id"])
    assert (judging.judge.name, judging.judge.model_ref, judging.concurrency) == (
        "house-judge",
        "judge-model",
        2,
    )
    assert judging.status == JudgingStatus.COMPLETED
    assert fake_judge.calls == 2


def test_a_judge_on_the_systems_model_is_refused_for_a_gated_metric(runs_world, finished_run):
    run = finished_run(1)
    response = api(runs_world.model_owner).post(
        judge_url(runs_world, run),
        {"judge": "litellm", "model_ref": "gemini/gemini-2.5-pro", "purpose": "gated"},
        format="json",
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "judge"
    assert "uses model gemini/gemini-2.5-pro and σ gemini-2-5 v1 uses model" in error["message"]
    assert "informational" in error["message"]
    assert not Judging.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"judge": "oracle"}, "judge"),
        ({}, "judge"),
        ({"judge": "offline", "concurrency": 0}, "concurrency"),
        ({"judge": "offline", "purpose": "decisive"}, "purpose"),
        ({"judge": "offline", "rubric_version": "9"}, "rubric_version"),
        ({"judge": "litellm"}, "model_ref"),
        ({"judge": "litellm", "model_ref": "m", "api_key_env": "sk-0123"}, "api_key_env"),
    ],
)
def test_bad_input_is_refused_in_the_one_error_shape(runs_world, finished_run, body, field):
    run = finished_run(1)
    response = api(runs_world.model_owner).post(judge_url(runs_world, run), body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == field
    assert response.json()["error"]["message"]


def test_a_running_run_is_a_conflict(runs_world, finished_run):
    run = finished_run(1)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    response = api(runs_world.model_owner).post(
        judge_url(runs_world, run), {"judge": "offline"}, format="json"
    )
    assert response.status_code == 409
    assert "once it has finished" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("grader", 403), ("reviewer", 403), ("adjudicator", 403), ("outsider", 404)],
)
def test_only_owners_judge_runs(runs_world, finished_run, persona, expected):
    run = finished_run(1)
    response = api(runs_world.by_name(persona)).post(
        judge_url(runs_world, run), {"judge": "offline"}, format="json"
    )
    assert response.status_code == expected
    assert not Judging.objects.exists()


def test_graders_do_not_see_judgings(runs_world, finished_run):
    run = finished_run(1)
    base = f"/api/v1/use-cases/{runs_world.key}/runs/{run.pk}/judgings/"
    assert api(runs_world.grader).get(base).status_code == 403


def test_an_unknown_run_or_judging_is_not_found(runs_world, finished_run):
    run = finished_run(1)
    owner = api(runs_world.model_owner)
    missing = owner.post(
        f"/api/v1/use-cases/{runs_world.key}/runs/{run.pk + 99}/judge/",
        {"judge": "offline"},
        format="json",
    )
    assert missing.status_code == 404
    assert (
        owner.get(f"/api/v1/use-cases/{runs_world.key}/runs/{run.pk}/judgings/7/").status_code
        == 404
    )


def test_the_schema_documents_judging_and_validates(runs_world):
    response = api(runs_world.owner).get("/api/schema/")
    assert response.status_code == 200
    assert b"/api/v1/use-cases/{key}/runs/{run_id}/judge/" in response.content
    assert b"use_case_run_judging_retrieve" in response.content
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")
