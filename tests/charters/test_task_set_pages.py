"""Task-set pages: list, import with its error report, and a version with its tasks."""

from __future__ import annotations

import io
import json

import pytest
from django.test import Client
from django.urls import reverse

from charters.models import TaskSet
from charters.services.task_sets import task_set_import

MEMBERS = ("owner", "model_owner", "adjudicator", "reviewer")
KEY = "CREDIT-MEMO-B"


def browser(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
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
        "sources": [{"id": f"c{n}", "text": f"chunk of {n}", "source": "10-K"}],
        "key_elements": [{"id": "k1", "text": f"element of {n}"}],
        "guidance": [{"id": "g1", "text": "Cite every number."}],
        **extra,
    }


def upload(data: bytes, name: str = "tasks.jsonl") -> io.BytesIO:
    stream = io.BytesIO(data)
    stream.name = name
    return stream


def imported(personas, data: bytes | None = None, name: str = "memo-tasks") -> TaskSet:
    return task_set_import(
        actor=personas.owner,
        use_case=personas.use_case,
        name=name,
        fileobj=io.BytesIO(data or jsonl(task(1, "dev"), task(2), task(3, "stress"))),
        filename="tasks.jsonl",
    )


PAGES = {
    "task-set-list": [KEY],
    "task-set-import": [KEY],
    "task-set-detail": [KEY, "memo-tasks", 1],
}
EXPECTED = {
    "task-set-list": dict.fromkeys(MEMBERS, 200),
    "task-set-import": {
        "owner": 200,
        "model_owner": 200,
        "grader": 403,
        "adjudicator": 403,
        "reviewer": 403,
    },
    "task-set-detail": dict.fromkeys(MEMBERS, 200),
}


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("persona", [*MEMBERS, "outsider"])
def test_each_page_answers_each_persona_as_its_role_allows(personas, page, persona):
    imported(personas)
    response = browser(personas.by_name(persona)).get(reverse(page, args=PAGES[page]))
    expected = 404 if persona == "outsider" else EXPECTED[page][persona]
    assert response.status_code == expected


@pytest.mark.parametrize("page", PAGES)
def test_anonymous_users_are_sent_to_sign_in(personas, page):
    imported(personas)
    response = browser().get(reverse(page, args=PAGES[page]))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("persona", ["grader", "reviewer", "outsider"])
def test_posting_an_import_without_the_role_writes_nothing(personas, persona):
    response = browser(personas.by_name(persona)).post(
        reverse("task-set-import", args=[KEY]), {"name": "x", "file": upload(jsonl(task(1)))}
    )
    assert response.status_code == (404 if persona == "outsider" else 403)
    assert TaskSet.objects.count() == 0


def test_the_list_shows_versions_with_split_counts_and_the_import_link_to_importers(personas):
    task_set = imported(personas)
    html = browser(personas.model_owner).get(reverse("task-set-list", args=[KEY])).content.decode()
    assert "memo-tasks" in html and "v1" in html
    assert task_set.manifest_sha256[:16] in html
    assert reverse("task-set-import", args=[KEY]) in html
    grader_html = (
        browser(personas.adjudicator).get(reverse("task-set-list", args=[KEY])).content.decode()
    )
    assert reverse("task-set-import", args=[KEY]) not in grader_html


def test_a_good_import_redirects_to_the_new_version(personas):
    client = browser(personas.owner)
    response = client.post(
        reverse("task-set-import", args=[KEY]),
        {"name": "memo-tasks", "file": upload(jsonl(task(1, "dev"), task(2)))},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("task-set-detail", args=[KEY, "memo-tasks", 1])
    page = client.get(response["Location"]).content.decode()
    assert "Imported 2 tasks as memo-tasks v1." in page


def test_a_bad_import_shows_every_bad_line_in_a_table_and_writes_nothing(personas):
    data = jsonl(task(1, "dev"), task(2, "gold"), b"{x", task(1))
    response = browser(personas.owner).post(
        reverse("task-set-import", args=[KEY]), {"name": "memo-tasks", "file": upload(data)}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was imported" in html
    assert "tasks.jsonl: 4 error(s) on 3 line(s)" in html
    rows = html.split("<tbody>")[1].split("</tbody>")[0].count("<tr>")
    assert rows == 4
    assert '<td>2</td><td class="mono">split</td>' in html
    assert '<td>4</td><td class="mono">id</td>' in html
    assert "duplicate id: line 1 has the same id" in html
    assert TaskSet.objects.count() == 0


def test_check_only_reports_without_importing(personas):
    url = reverse("task-set-import", args=[KEY])
    good = browser(personas.owner).post(
        url, {"name": "memo-tasks", "check": "1", "file": upload(jsonl(task(1), task(2)))}
    )
    assert good.status_code == 200
    assert "no errors" in good.content.decode()
    assert "2 tasks (dev 0, graded 2, stress 0)" in good.content.decode()
    bad = browser(personas.owner).post(
        url, {"name": "memo-tasks", "check": "1", "file": upload(jsonl(task(1, "x")))}
    )
    assert bad.status_code == 400
    assert "The file has errors" in bad.content.decode()
    assert TaskSet.objects.count() == 0


def test_a_missing_file_redisplays_the_form_with_the_field_error(personas):
    response = browser(personas.owner).post(reverse("task-set-import", args=[KEY]), {"name": "x"})
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()


def test_the_detail_page_shows_the_manifest_and_a_page_of_tasks(personas):
    task_set = imported(personas, jsonl(*[task(n) for n in range(1, 61)], task(61, "dev")))
    client = browser(personas.adjudicator)
    url = reverse("task-set-detail", args=[KEY, "memo-tasks", 1])
    html = client.get(url).content.decode()
    assert task_set.manifest_sha256 in html
    assert "Tasks — 1–50 of 61" in html
    assert "Draft section 50." in html and "Draft section 51." not in html
    assert "?offset=50" in html
    second = client.get(url, {"offset": 50}).content.decode()
    assert "Tasks — 51–61 of 61" in second and "Draft section 61." in second
    dev = client.get(url, {"split": "dev"}).content.decode()
    assert "Tasks in split dev — 1–1 of 1" in dev


def test_task_content_is_escaped(personas):
    imported(
        personas,
        jsonl(
            task(1, input="<script>alert(1)</script>", sources=[{"id": "c", "text": "<b>x</b>"}])
        ),
    )
    html = (
        browser(personas.owner)
        .get(reverse("task-set-detail", args=[KEY, "memo-tasks", 1]))
        .content.decode()
    )
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html


def test_an_unknown_version_is_404(personas):
    imported(personas)
    response = browser(personas.owner).get(reverse("task-set-detail", args=[KEY, "memo-tasks", 9]))
    assert response.status_code == 404


def test_the_list_page_takes_the_same_queries_for_one_or_many_task_sets(
    personas, django_assert_num_queries
):
    imported(personas)
    client = browser(personas.reviewer)
    url = reverse("task-set-list", args=[KEY])
    client.get(url)
    with django_assert_num_queries(6) as one:
        client.get(url)
    for name in ("a", "b", "c"):
        imported(personas, name=name)
    with django_assert_num_queries(len(one.captured_queries)):
        assert client.get(url).content.decode().count("<tr>") == 5


def test_the_detail_page_takes_the_same_queries_for_any_page_size(
    personas, django_assert_num_queries
):
    imported(personas, jsonl(task(1)))
    client = browser(personas.reviewer)
    url = reverse("task-set-detail", args=[KEY, "memo-tasks", 1])
    client.get(url)
    with django_assert_num_queries(9) as small:
        client.get(url)
    imported(personas, jsonl(*[task(n) for n in range(1, 51)]), name="big")
    with django_assert_num_queries(len(small.captured_queries)):
        client.get(reverse("task-set-detail", args=[KEY, "big", 1]))
