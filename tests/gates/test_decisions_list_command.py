"""``enterpriseval decisions_list``: the list endpoint from the command line, as --as."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from rest_framework.test import APIClient

from demo.testing.decisions import decide, load_example_estimates
from demo.testing.grading import make_world


@pytest.fixture
def world(db):
    return make_world()


def decisions_list(world, actor: str, *extra: str) -> str:
    out = io.StringIO()
    call_command(
        "decisions_list", "--use-case", world.use_case.key, "--as", actor, *extra, stdout=out
    )
    return out.getvalue()


def api_list(world, user, query: str = "") -> dict:
    client = APIClient()
    client.force_authenticate(user)
    response = client.get(f"/api/v1/use-cases/{world.use_case.key}/decisions/{query}")
    assert response.status_code == 200, response.json()
    return response.json()


def again(world):
    """Another decision on the gemini run (one metric fewer: other evidence)."""
    return decide(world, "gemini-2.5", estimates=load_example_estimates("gemini-2.5")[:-1])


# The API's links start with the test client's host; the command's with the site's address.
SITE = override_settings(ENTERPRISEVAL_SITE_URL="http://testserver")


@SITE
def test_json_is_the_api_answer_for_the_same_user(world):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    for user in (world.owner, world.model_owner, world.reviewer, world.adjudicator):
        data = json.loads(decisions_list(world, user.username, "--format", "json"))
        assert data == api_list(world, user)
    assert data["count"] == 2 and data["next"] is None and data["previous"] is None
    assert [d["id"] for d in data["results"]] == [llama.pk, gemini.pk]
    assert data["results"][1]["status"] == "Reject"
    assert data["results"][1]["binding_metric"] == "guidance_recall"
    assert data["results"][1]["configuration"]["name"] == "gemini-2-5"


@SITE
def test_limit_and_offset_page_as_the_api_pages(world):
    first = decide(world, "gemini-2.5")
    decide(world, "llama-4")
    third = again(world)
    page = json.loads(
        decisions_list(world, "demo-owner", "--limit", "1", "--offset", "1", "--format", "json")
    )
    assert page == api_list(world, world.owner, "?limit=1&offset=1")
    assert page["count"] == 3 and len(page["results"]) == 1
    assert page["next"].endswith("?limit=1&offset=2")
    last = json.loads(
        decisions_list(world, "demo-owner", "--limit", "1", "--offset", "2", "--format", "json")
    )
    assert [d["id"] for d in last["results"]] == [first.pk] and last["next"] is None
    assert third.pk > first.pk


def test_the_table_lists_each_decision_newest_first(world):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    printed = decisions_list(world, world.reviewer.username)
    lines = printed.splitlines()
    assert lines[0] == f"2 decision(s) of {world.use_case.key}, newest first."
    assert lines[1].split()[:5] == ["id", "status", "binding", "metric", "EI"]
    rows = [line.split() for line in lines[3:]]
    assert [int(row[0]) for row in rows] == [llama.pk, gemini.pk]
    assert rows[1][1:3] == ["Reject", "guidance_recall"]
    assert rows[1][3] == f"{gemini.ei:.2f}"
    assert rows[1][4:7] == ["v1", "gemini-2-5:1", str(gemini.run_id)]


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("grader", "--as: Graders do not see decisions of {key}"),
        ("outsider", "--as: {user} holds no role on {key}"),
    ],
)
def test_a_grader_and_an_outsider_are_refused_as_the_api_refuses_them(world, persona, expected):
    decide(world)
    user = world.graders[0] if persona == "grader" else world.outsider
    with pytest.raises(CommandError) as raised:
        decisions_list(world, user.username)
    assert raised.value.returncode == 2
    assert str(raised.value).startswith(expected.format(key=world.use_case.key, user=user.username))


def test_an_unknown_use_case_and_user_are_named(world):
    with pytest.raises(CommandError) as raised:
        call_command("decisions_list", "--use-case", "NOPE", "--as", "demo-owner")
    assert raised.value.returncode == 2 and str(raised.value) == "--use-case: no use case 'NOPE'"
    with pytest.raises(CommandError) as raised:
        decisions_list(world, "nobody")
    assert raised.value.returncode == 2 and str(raised.value) == "--as: no user 'nobody'"


def test_queries_do_not_grow_with_the_decisions(world, django_assert_num_queries):
    decide(world)
    # user, use case named, the check (use case, roles), count, the page
    with django_assert_num_queries(QUERIES):
        decisions_list(world, "demo-owner", "--format", "json")
    decide(world, "llama-4")
    again(world)
    with django_assert_num_queries(QUERIES):
        assert (
            len(json.loads(decisions_list(world, "demo-owner", "--format", "json"))["results"]) == 3
        )
    with django_assert_num_queries(QUERIES):
        decisions_list(world, "demo-owner")


QUERIES = 6
