"""Task-set REST endpoints: import, list, manifest and tasks, per persona."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
from django.core.files.uploadedfile import TemporaryUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from bench.task_import_memory import write_task_file
from charters.models import TaskSet
from charters.services.task_sets import task_set_import

MEMBERS = ("owner", "model_owner", "adjudicator", "reviewer")
IMPORTERS = ("owner", "model_owner")
KEY = "CREDIT-MEMO-B"


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def jsonl(*objects) -> bytes:
    return b"".join(
        (o if isinstance(o, bytes) else json.dumps(o).encode()) + b"\n" for o in objects
    )


def task(n: int, split: str = "graded", **extra) -> dict:
    return {
        "id": f"t{n}",
        "split": split,
        "input": f"Draft section {n}.",
        "sources": [{"id": "c1", "text": f"chunk of {n}", "source": "10-K"}],
        "key_elements": [{"id": "k1", "text": f"element of {n}"}],
        "guidance": [{"id": "g1", "text": "Cite every number.", "mandatory": False}],
        **extra,
    }


def upload(data: bytes, name: str = "tasks.jsonl") -> io.BytesIO:
    stream = io.BytesIO(data)
    stream.name = name
    return stream


def post_import(client, data: bytes, name: str = "memo-tasks"):
    return client.post(
        reverse("api-task-set-list", args=[KEY]),
        {"name": name, "file": upload(data)},
        format="multipart",
    )


def imported(personas, data: bytes | None = None, name: str = "memo-tasks") -> TaskSet:
    data = data or jsonl(task(1, "dev"), task(2), task(3, "stress", expected_abstention=True))
    return task_set_import(
        actor=personas.owner,
        use_case=personas.use_case,
        name=name,
        fileobj=io.BytesIO(data),
        filename="tasks.jsonl",
    )


@pytest.mark.parametrize("persona", IMPORTERS)
def test_charter_and_model_owners_import_and_get_the_manifest(personas, persona):
    data = jsonl(task(1, "dev"), task(2), task(3))
    response = post_import(api(personas.by_name(persona)), data)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert {k: body[k] for k in ("use_case", "name", "version", "filename", "task_count")} == {
        "use_case": KEY,
        "name": "memo-tasks",
        "version": 1,
        "filename": "tasks.jsonl",
        "task_count": 3,
    }
    assert body["sha256"] == hashlib.sha256(data).hexdigest()
    assert body["split_counts"] == {"dev": 1, "graded": 2, "stress": 0}
    assert body["created_by"] == persona
    assert body["url"] == f"/api/v1/use-cases/{KEY}/task-sets/memo-tasks/1/"
    assert body["tasks_url"] == f"/api/v1/use-cases/{KEY}/task-sets/memo-tasks/1/tasks/"


@pytest.mark.parametrize(
    ("persona", "status"),
    [("grader", 403), ("adjudicator", 403), ("reviewer", 403), ("outsider", 404)],
)
def test_other_roles_cannot_import(personas, persona, status):
    response = post_import(api(personas.by_name(persona)), jsonl(task(1)))
    assert response.status_code == status
    assert response.json()["error"]["message"]
    assert TaskSet.objects.count() == 0


def test_an_anonymous_import_is_refused(personas):
    response = post_import(api(), jsonl(task(1)))
    assert response.status_code in (401, 403)
    assert TaskSet.objects.count() == 0


def test_a_bad_file_gets_400_listing_every_bad_line(personas):
    data = jsonl(task(1, "dev"), task(2, "gold"), b"[]", task(1), task(5, note="x"))
    response = post_import(api(personas.owner), data)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["field"] == "file"
    assert error["message"].startswith("tasks.jsonl: 5 error(s) on 4 line(s)")
    assert error["details"] == [
        {"line": 2, "field": "split", "message": 'expected one of dev, graded, stress, got "gold"'},
        {"line": 3, "field": "line", "message": "expected a JSON object {...}, got a list"},
        {
            "line": 4,
            "field": "id",
            "message": "duplicate id: line 1 has the same id; ids must be unique",
        },
        {
            "line": 4,
            "field": "input",
            "message": "this graded task has the same input (content hash) as the dev task on "
            "line 1; dev and graded must be disjoint",
        },
        {
            "line": 5,
            "field": "note",
            "message": "unknown field; the fields are id, split, input, sources, key_elements, "
            "guidance, reference, expected_abstention, metadata, gold_label",
        },
    ]
    assert TaskSet.objects.count() == 0


def test_a_missing_file_or_name_gets_400_in_the_error_shape(personas):
    url = reverse("api-task-set-list", args=[KEY])
    response = api(personas.owner).post(url, {"name": "x"}, format="multipart")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "file"
    response = api(personas.owner).post(url, {"file": upload(jsonl(task(1)))}, format="multipart")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "name"


def test_an_upload_above_the_memory_limit_streams_from_disk_and_is_never_read_whole(
    personas, tmp_path, monkeypatch
):
    path = tmp_path / "big.jsonl"
    size = write_task_file(path, 2000)
    assert size > 2_621_440  # above FILE_UPLOAD_MAX_MEMORY_SIZE: a TemporaryUploadedFile

    def refuse_read(self):
        raise AssertionError("the import read the whole upload")

    monkeypatch.setattr(TemporaryUploadedFile, "read", property(refuse_read), raising=False)
    with path.open("rb") as fileobj:
        response = api(personas.model_owner).post(
            reverse("api-task-set-list", args=[KEY]),
            {"name": "big", "file": fileobj},
            format="multipart",
        )
    assert response.status_code == 201, response.json()
    assert response.json()["task_count"] == 2000
    assert response.json()["filename"] == "big.jsonl"


@pytest.mark.parametrize("persona", MEMBERS)
def test_every_member_lists_the_task_sets(personas, persona):
    imported(personas)
    imported(personas)
    response = api(personas.by_name(persona)).get(reverse("api-task-set-list", args=[KEY]))
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    assert [(r["name"], r["version"]) for r in body["results"]] == [
        ("memo-tasks", 2),
        ("memo-tasks", 1),
    ]
    assert body["results"][0]["split_counts"] == {"dev": 1, "graded": 1, "stress": 1}


@pytest.mark.parametrize(
    "url_name", ["api-task-set-list", "api-task-set-detail", "api-task-set-tasks"]
)
def test_outsiders_get_404_and_anonymous_users_are_refused_on_reads(personas, url_name):
    imported(personas)
    args = [KEY] if url_name == "api-task-set-list" else [KEY, "memo-tasks", 1]
    url = reverse(url_name, args=args)
    assert api(personas.outsider).get(url).status_code == 404
    assert api().get(url).status_code in (401, 403)


def test_the_list_takes_the_same_queries_for_one_or_many_task_sets(
    personas, django_assert_num_queries
):
    imported(personas)
    client = api(personas.adjudicator)
    url = reverse("api-task-set-list", args=[KEY])
    # use case, membership roles, count, page
    with django_assert_num_queries(4):
        assert client.get(url).json()["count"] == 1
    for name in ("a", "b", "c"):
        imported(personas, name=name)
    with django_assert_num_queries(4):
        assert client.get(url).json()["count"] == 4


@pytest.mark.parametrize("persona", MEMBERS)
def test_every_member_reads_the_manifest(personas, persona):
    task_set = imported(personas)
    response = api(personas.by_name(persona)).get(
        reverse("api-task-set-detail", args=[KEY, "memo-tasks", 1])
    )
    assert response.status_code == 200
    body = response.json()
    assert body["sha256"] == task_set.manifest_sha256
    assert body["split_counts"] == {"dev": 1, "graded": 1, "stress": 1}
    assert body["task_count"] == 3


def test_an_unknown_version_is_404(personas):
    imported(personas)
    response = api(personas.owner).get(reverse("api-task-set-detail", args=[KEY, "memo-tasks", 2]))
    assert response.status_code == 404


@pytest.mark.parametrize("persona", MEMBERS)
def test_every_member_reads_tasks_with_sources_and_gold(personas, persona):
    imported(personas)
    response = api(personas.by_name(persona)).get(
        reverse("api-task-set-tasks", args=[KEY, "memo-tasks", 1])
    )
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 3
    assert body["next"] is None and body["previous"] is None
    first = body["results"][0]
    assert first == {
        "id": "t1",
        "split": "dev",
        "line": 1,
        "input": "Draft section 1.",
        "input_sha256": hashlib.sha256(b"Draft section 1.").hexdigest(),
        "sources": [{"id": "c1", "source": "10-K", "text": "chunk of 1"}],
        "key_elements": [{"id": "k1", "text": "element of 1"}],
        "guidance": [{"id": "g1", "text": "Cite every number.", "mandatory": False}],
        "reference": "",
        "expected_abstention": False,
        "gold_label": None,
        "metadata": {},
    }
    assert body["results"][2]["expected_abstention"] is True


def test_tasks_are_paginated_and_filtered_by_split(personas):
    imported(personas, jsonl(*[task(n, "dev" if n % 4 == 0 else "graded") for n in range(1, 13)]))
    client = api(personas.owner)
    url = reverse("api-task-set-tasks", args=[KEY, "memo-tasks", 1])
    page = client.get(url, {"limit": 5, "offset": 5}).json()
    assert page["count"] == 12
    assert [t["id"] for t in page["results"]] == ["t6", "t7", "t8", "t9", "t10"]
    assert "offset=10" in page["next"] and "limit=5" in page["next"]
    assert "offset" not in page["previous"]
    last = client.get(url, {"limit": 5, "offset": 10}).json()
    assert [t["id"] for t in last["results"]] == ["t11", "t12"]
    assert last["next"] is None
    dev = client.get(url, {"split": "dev"}).json()
    assert dev["count"] == 3
    assert [t["id"] for t in dev["results"]] == ["t4", "t8", "t12"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 501}, "limit"),
        ({"offset": -1}, "offset"),
        ({"split": "test"}, "split"),
    ],
)
def test_bad_paging_parameters_get_400_naming_the_parameter(personas, params, field):
    imported(personas)
    url = reverse("api-task-set-tasks", args=[KEY, "memo-tasks", 1])
    response = api(personas.owner).get(url, params)
    assert response.status_code == 400
    assert response.json()["error"]["field"] == field


def test_a_page_of_tasks_takes_the_same_queries_whatever_its_size(
    personas, django_assert_num_queries
):
    imported(personas, jsonl(*[task(n) for n in range(1, 41)]))
    client = api(personas.reviewer)
    url = reverse("api-task-set-tasks", args=[KEY, "memo-tasks", 1])
    # use case, membership roles, task set, tasks, sources, key elements, guidance
    with django_assert_num_queries(7):
        assert len(client.get(url, {"limit": 2}).json()["results"]) == 2
    with django_assert_num_queries(7):
        assert len(client.get(url, {"limit": 40}).json()["results"]) == 40


def test_the_openapi_schema_is_served_and_valid(personas):
    response = api(personas.owner).get("/api/schema/")
    assert response.status_code == 200
    assert b"/api/v1/use-cases/{key}/task-sets/{name}/{version}/tasks/" in response.content
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")
