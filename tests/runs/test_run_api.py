"""Run REST endpoints: import, list, detail with progress, outputs, one output; per persona."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runs.models import Output, Run, RunStatus

MEMBERS = ("owner", "model_owner", "grader", "adjudicator", "reviewer")
TRAJECTORY = {"synthesis": [{"at": 0, "summary": "Linked each figure to its chunk"}]}


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def jsonl(*objects) -> bytes:
    return b"".join(
        (o if isinstance(o, bytes) else json.dumps(o).encode()) + b"\n" for o in objects
    )


def upload(data: bytes, name: str = "outputs.jsonl") -> io.BytesIO:
    stream = io.BytesIO(data)
    stream.name = name
    return stream


def statement(task) -> str:
    chunks = [chunk.chunk_id for chunk in task.source_chunks.all()]
    return f"Revenue was $203.9 million [{chunks[0]}]. Cover was 3.1x [{chunks[1]}]."


def good_file(world, count: int = 3, repeats: int = 1) -> bytes:
    return jsonl(
        *(
            {
                "task_id": task.external_id,
                "repeat": repeat,
                "text": statement(task),
                "cost_usd": 0.002,
                "prompt_tokens": 900,
                "completion_tokens": 120,
                "latency_ms": 2100,
                **({"trajectory": TRAJECTORY} if n == 0 else {}),
            }
            for n, task in enumerate(world.tasks()[:count])
            for repeat in range(repeats)
        )
    )


def post_import(client, world, data: bytes, **fields):
    form = {
        "configuration": "gemini-2-5:1",
        "task_set": "credit-memo:1",
        "split": "graded",
        "repeats": 1,
        "file": upload(data),
        **fields,
    }
    return client.post(reverse("api-run-import", args=[world.key]), form, format="multipart")


def imported(world, **fields) -> dict:
    response = post_import(api(world.model_owner), world, good_file(world), **fields)
    assert response.status_code == 201, response.json()
    return response.json()


def test_an_import_returns_the_run_summary_with_counts(runs_world):
    data = good_file(runs_world, count=3, repeats=2)
    response = post_import(api(runs_world.model_owner), runs_world, data, repeats=2)
    assert response.status_code == 201
    body = response.json()
    run = Run.objects.get()
    assert body["id"] == run.pk
    assert (body["mode"], body["status"], body["split"], body["repeats"]) == (
        "imported",
        "completed",
        "graded",
        2,
    )
    assert body["configuration"]["name"] == "gemini-2-5"
    assert body["configuration"]["version"] == 1
    assert body["configuration"]["sha256"] == runs_world.configuration.sha256
    assert (body["task_set"]["name"], body["task_set"]["version"]) == ("credit-memo", 1)
    assert (body["items_total"], body["items_done"], body["items_failed"]) == (130, 6, 0)
    assert Decimal(body["cost_usd"]) == Decimal("0.012")
    assert body["sha256"] == hashlib.sha256(data).hexdigest()
    assert body["filename"] == "outputs.jsonl"
    assert body["outputs"] == {"succeeded": 6, "failed": 0}
    tasks = runs_world.tasks()[:3]
    assert body["units"] == {
        "sentence": 12,
        "cited_chunk": 12,
        "key_element": 2 * sum(t.key_elements.count() for t in tasks),
        "guidance_item": 2 * sum(t.guidance_items.count() for t in tasks),
    }
    assert body["trajectories"] == 2
    assert body["url"] == reverse("api-run-detail", args=[runs_world.key, run.pk])


def test_versions_may_be_written_with_a_v(runs_world):
    response = post_import(
        api(runs_world.owner),
        runs_world,
        good_file(runs_world),
        configuration="gemini-2-5:v1",
        task_set="credit-memo:v1",
    )
    assert response.status_code == 201


def test_a_bad_file_is_a_400_listing_every_bad_line_and_nothing_is_written(runs_world):
    task = runs_world.tasks()[0]
    data = jsonl(
        {"task_id": task.external_id, "text": statement(task)},
        {"task_id": task.external_id, "text": "Again."},
        {"task_id": task.external_id, "repeat": 1, "text": "x"},
        b"not json",
        {"task_id": runs_world.tasks("stress")[0].external_id, "text": "x"},
    )
    response = post_import(api(runs_world.model_owner), runs_world, data)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "file"
    assert "nothing was imported" in error["message"]
    assert [(d["line"], d["field"]) for d in error["details"]] == [
        (2, "task_id"),
        (3, "repeat"),
        (4, "line"),
        (5, "task_id"),
    ]
    assert "split stress" in error["details"][3]["message"]
    assert Run.objects.count() == 0 and Output.objects.count() == 0


@pytest.mark.parametrize(
    ("fields", "field", "fragment"),
    [
        ({"configuration": "gemini-2-5"}, "configuration", '"name:version"'),
        ({"configuration": "gemini-2-5:7"}, "configuration", "no σ gemini-2-5 v7"),
        ({"task_set": "credit-memo:2"}, "task_set", "no task set credit-memo v2"),
        ({"split": "test"}, "split", "not a valid choice"),
        ({"repeats": 0}, "repeats", "greater than or equal to 1"),
        ({"repeats": 101}, "repeats", "less than or equal to 100"),
    ],
)
def test_bad_run_inputs_are_a_400_naming_the_field(runs_world, fields, field, fragment):
    response = post_import(api(runs_world.owner), runs_world, good_file(runs_world), **fields)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == field
    assert fragment in error["message"]
    assert Run.objects.count() == 0


def test_a_missing_file_is_a_400_naming_it(runs_world):
    response = api(runs_world.owner).post(
        reverse("api-run-import", args=[runs_world.key]),
        {"configuration": "gemini-2-5:1", "task_set": "credit-memo:1", "split": "graded"},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "file"


IMPORT_STATUS = {
    "owner": 201,
    "model_owner": 201,
    "grader": 403,
    "adjudicator": 403,
    "reviewer": 403,
}


@pytest.mark.parametrize("persona", [*MEMBERS, "outsider"])
def test_only_charter_and_model_owners_import(runs_world, persona):
    response = post_import(api(runs_world.by_name(persona)), runs_world, good_file(runs_world))
    expected = 404 if persona == "outsider" else IMPORT_STATUS[persona]
    assert response.status_code == expected
    assert Run.objects.count() == (1 if expected == 201 else 0)


READ_STATUS = {"owner": 200, "model_owner": 200, "grader": 403, "adjudicator": 200, "reviewer": 200}


@pytest.mark.parametrize("endpoint", ["list", "detail", "outputs", "output"])
@pytest.mark.parametrize("persona", [*MEMBERS, "outsider"])
def test_members_but_graders_read_runs_and_outsiders_do_not_learn_they_exist(
    runs_world, endpoint, persona
):
    run = imported(runs_world)
    output = Output.objects.filter(run_id=run["id"]).first()
    url = {
        "list": reverse("api-run-list", args=[runs_world.key]),
        "detail": reverse("api-run-detail", args=[runs_world.key, run["id"]]),
        "outputs": reverse("api-run-outputs", args=[runs_world.key, run["id"]]),
        "output": reverse("api-run-output", args=[runs_world.key, run["id"], output.pk]),
    }[endpoint]
    response = api(runs_world.by_name(persona)).get(url)
    assert response.status_code == (404 if persona == "outsider" else READ_STATUS[persona])
    if persona == "grader":
        assert "Graders do not see runs" in response.json()["error"]["message"]


def test_a_token_authenticates_like_a_session(runs_world):
    token = Token.objects.create(user=runs_world.model_owner)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert post_import(client, runs_world, good_file(runs_world)).status_code == 201
    assert APIClient().get(reverse("api-run-list", args=[runs_world.key])).status_code in (401, 403)


def test_the_list_is_newest_first_and_paginated(runs_world):
    first = imported(runs_world)
    second = imported(runs_world)
    body = (
        api(runs_world.reviewer)
        .get(reverse("api-run-list", args=[runs_world.key]), {"limit": 1})
        .json()
    )
    assert body["count"] == 2
    assert [run["id"] for run in body["results"]] == [second["id"]]
    assert body["next"] is not None
    assert first["id"] != second["id"]


def test_detail_reports_progress_with_throughput_and_eta_while_running(runs_world):
    run_id = imported(runs_world)["id"]
    Run.objects.filter(pk=run_id).update(
        status=RunStatus.RUNNING,
        items_total=400,
        items_done=100,
        started_at=timezone.now() - timedelta(seconds=50),
        finished_at=None,
    )
    body = api(runs_world.owner).get(reverse("api-run-detail", args=[runs_world.key, run_id]))
    body = body.json()
    assert (body["status"], body["items_total"], body["items_done"]) == ("running", 400, 100)
    assert body["percent"] == 25.0
    assert body["throughput_per_second"] == pytest.approx(2.0, rel=0.05)
    assert body["eta_seconds"] == pytest.approx(150.0, rel=0.05)
    for field in ("items_failed", "cost_usd", "cost_unknown_items", "started_at", "finished_at"):
        assert field in body


def test_detail_of_a_finished_run_has_no_throughput_or_eta(runs_world):
    run_id = imported(runs_world)["id"]
    body = api(runs_world.owner).get(reverse("api-run-detail", args=[runs_world.key, run_id]))
    assert body.json()["throughput_per_second"] is None
    assert body.json()["eta_seconds"] is None


def test_a_run_of_another_use_case_is_not_found(runs_world):
    from charters.services.use_cases import use_case_create

    run_id = imported(runs_world)["id"]
    other = use_case_create(
        actor=runs_world.owner,
        key="OTHER",
        name="Other",
        business_outcome="x",
        value_hypothesis="y",
        autonomy=1,
        consequence=1,
    )
    response = api(runs_world.owner).get(reverse("api-run-detail", args=[other.key, run_id]))
    assert response.status_code == 404


def test_outputs_are_paginated_in_task_order_with_unit_counts(runs_world):
    data = good_file(runs_world, count=5, repeats=2)
    run_id = post_import(api(runs_world.owner), runs_world, data, repeats=2).json()["id"]
    url = reverse("api-run-outputs", args=[runs_world.key, run_id])
    body = api(runs_world.reviewer).get(url, {"limit": 4, "offset": 2}).json()
    tasks = runs_world.tasks()
    assert body["count"] == 10
    assert [(o["task_id"], o["repeat"]) for o in body["results"]] == [
        (tasks[1].external_id, 0),
        (tasks[1].external_id, 1),
        (tasks[2].external_id, 0),
        (tasks[2].external_id, 1),
    ]
    first = body["results"][0]
    assert (first["sentence_units"], first["cited_chunk_units"]) == (2, 2)
    assert (first["prompt_tokens"], first["completion_tokens"], first["latency_ms"]) == (
        900,
        120,
        2100,
    )
    assert Decimal(first["cost_usd"]) == Decimal("0.002")
    assert first["status"] == "succeeded" and first["error"] == ""
    assert "offset=6" in body["next"] and "offset" not in body["previous"]
    assert api(runs_world.owner).get(url, {"status": "failed"}).json()["count"] == 0
    assert api(runs_world.owner).get(url, {"limit": 0}).status_code == 400


def test_one_output_comes_with_its_units_and_trajectory(runs_world):
    run_id = imported(runs_world)["id"]
    task = runs_world.tasks()[0]
    output = Output.objects.get(run_id=run_id, task=task)
    body = (
        api(runs_world.adjudicator)
        .get(reverse("api-run-output", args=[runs_world.key, run_id, output.pk]))
        .json()
    )
    chunks = [chunk.chunk_id for chunk in task.source_chunks.all()]
    assert body["text"] == statement(task)
    assert body["cited_chunk_ids"] == chunks[:2]
    assert body["trajectory"] == TRAJECTORY
    keys = [unit["key"] for unit in body["units"]]
    assert keys == [
        "s1",
        "s2",
        f"c1:{chunks[0]}",
        f"c2:{chunks[1]}",
        *(f"k:{e.element_id}" for e in task.key_elements.all()),
        *(f"g:{g.item_id}" for g in task.guidance_items.all()),
    ]
    sentences = [unit for unit in body["units"] if unit["kind"] == "sentence"]
    assert [(u["key"], u["text"]) for u in sentences] == [
        ("s1", "Revenue was $203.9 million."),
        ("s2", "Cover was 3.1x."),
    ]
    missing = api(runs_world.owner).get(
        reverse("api-run-output", args=[runs_world.key, run_id, 10**9])
    )
    assert missing.status_code == 404
