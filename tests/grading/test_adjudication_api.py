"""Adjudication endpoints: the queue with anonymised grader values, recording a final value."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from audit.models import AuditEntry
from charters.models import Role
from charters.services.use_cases import membership_grant
from demo.testing.grading import fill, first_values, make_world
from grading.models import Adjudication, Assignment
from grading.services.grades import assignment_submit


def second_values(unit_key: str, field: str) -> str:
    """Disagree with :func:`first_values` on relevance of s1 and on value-add."""
    if (unit_key, field) == ("s1", "relevant"):
        return "N"
    if field == "value_add":
        return "1"
    return first_values(unit_key, field)


def grade_apart(artefact, *, both_submit: bool = True) -> list[Assignment]:
    assignments = list(Assignment.objects.filter(artefact=artefact).order_by("public_id"))
    fill(assignments[0])
    fill(assignments[1], second_values)
    for assignment in assignments[: 2 if both_submit else 1]:
        assignment_submit(actor=assignment.grader, assignment=assignment)
    return assignments


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def url(world) -> str:
    return reverse("api-grading-adjudication", args=[world.use_case.key, world.session.public_id])


def body(artefact, unit_key="s1", field="relevant", value="N") -> dict:
    return {"artefact": artefact.public_id, "unit_key": unit_key, "field": field, "value": value}


def first_two(world):
    return list(world.session.artefacts.order_by("pk"))[:2]


def test_the_queue_lists_the_disputed_fields_with_anonymised_values(grading_world):
    done, half = first_two(grading_world)
    grade_apart(done)
    grade_apart(half, both_submit=False)

    response = api(grading_world.adjudicator).get(url(grading_world))
    assert response.status_code == 200
    data = response.json()
    assert (data["disputed"], data["resolved"], data["pending"]) == (2, 0, 2)
    assert data["can_adjudicate"] is True
    [item] = data["artefacts"]
    assert item["artefact"] == done.public_id
    assert item["task_id"] == done.task.external_id
    assert (item["disputed"], item["pending"]) == (2, 2)
    relevant, value_add = item["fields"]
    assert (relevant["unit_key"], relevant["field"]) == ("s1", "relevant")
    assert relevant["unit_kind"] == "sentence"
    assert relevant["unit_text"] == done.output.units.get(key="s1").text
    assert relevant["values"] == [
        {"grader": "Grader 1", "value": "Y", "label": "Yes"},
        {"grader": "Grader 2", "value": "N", "label": "No"},
    ]
    assert relevant["final"] is None
    assert (value_add["unit_key"], value_add["field"]) == ("artefact", "value_add")
    assert [v["value"] for v in value_add["values"]] == ["0", "1"]


def test_posting_records_the_final_value_once(grading_world):
    artefact = first_two(grading_world)[0]
    grade_apart(artefact)
    client = api(grading_world.adjudicator)

    response = client.post(url(grading_world), {**body(artefact), "note": " s1 repeats "})
    assert response.status_code == 201, response.json()
    data = response.json()
    assert data["artefact"] == artefact.public_id
    assert (data["unit_key"], data["field"], data["value"]) == ("s1", "relevant", "N")
    assert data["note"] == "s1 repeats"
    assert data["adjudicator"] == grading_world.adjudicator.get_username()
    assert AuditEntry.objects.filter(action="adjudication.record").count() == 1

    again = client.post(url(grading_world), body(artefact, value="Y"), format="json")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "immutable"
    assert Adjudication.objects.get().value == "N"

    queue = client.get(url(grading_world)).json()
    assert (queue["resolved"], queue["pending"]) == (1, 1)
    relevant = queue["artefacts"][0]["fields"][0]
    assert relevant["final"] == "N"
    assert relevant["adjudicator"] == grading_world.adjudicator.get_username()
    assert relevant["adjudicated_at"] is not None
    assert relevant["note"] == "s1 repeats"


@pytest.mark.parametrize(
    ("change", "status", "code", "field"),
    [
        ({"value": "maybe"}, 400, "invalid", "value"),
        ({"field": "colour"}, 400, "invalid", "value"),
        ({"unit_key": "s1", "field": "assertive", "value": "Y"}, 409, "conflict", "field"),
        ({"unit_key": "s99"}, 400, "invalid", "unit_key"),
        ({"artefact": "nope"}, 400, "invalid", "artefact"),
    ],
)
def test_bad_requests_get_the_one_error_shape(grading_world, change, status, code, field):
    artefact = first_two(grading_world)[0]
    grade_apart(artefact)
    response = api(grading_world.adjudicator).post(
        url(grading_world), {**body(artefact), **change}, format="json"
    )
    assert response.status_code == status
    error = response.json()["error"]
    assert (error["code"], error["field"]) == (code, field)
    assert error["message"]
    assert not Adjudication.objects.exists()


def test_an_unfinished_artefact_cannot_be_adjudicated(grading_world):
    artefact = first_two(grading_world)[0]
    grade_apart(artefact, both_submit=False)
    response = api(grading_world.adjudicator).post(url(grading_world), body(artefact))
    assert response.status_code == 409
    assert "no submitted grades from every grader" in response.json()["error"]["message"]


def test_who_may_read_and_who_may_resolve(grading_world):
    world = grading_world
    artefact = first_two(world)[0]
    grade_apart(artefact)
    unnamed = get_user_model().objects.create_user(username="adj-two", password="pw-adj-two")
    membership_grant(
        actor=world.owner, use_case=world.use_case, user=unnamed, role=Role.ADJUDICATOR
    )

    for user in (world.owner, world.reviewer):
        response = api(user).get(url(world))
        assert response.status_code == 200
        assert response.json()["can_adjudicate"] is False
    for user in (world.owner, world.reviewer, unnamed, world.graders[0], world.model_owner):
        response = api(user).post(url(world), body(artefact), format="json")
        assert response.status_code == 403
        assert response.json()["error"]["message"]
    for user in (unnamed, world.graders[0], world.model_owner):
        assert api(user).get(url(world)).status_code == 403
    assert api(world.outsider).get(url(world)).status_code == 404
    assert api(world.outsider).post(url(world), body(artefact)).status_code == 404
    assert api().get(url(world)).status_code in (401, 403)
    assert not Adjudication.objects.exists()


@pytest.mark.django_db
def test_the_json_reveals_no_provenance():
    world = make_world(include_baselines=True)
    for kind in ("baseline", "output"):
        grade_apart(world.session.artefacts.filter(kind=kind).first())
    response = api(world.adjudicator).get(url(world))
    assert len(response.json()["artefacts"]) == 2
    text = json.dumps(response.json()).lower()
    for needle in world.provenance:
        assert needle.lower() not in text, needle
    for artefact in world.session.artefacts.all():
        assert artefact.stratum.lower() not in text
    for grader in world.graders:
        assert grader.get_username() not in text


def test_the_queue_makes_a_flat_number_of_queries(grading_world):
    world = grading_world
    artefacts = list(world.session.artefacts.order_by("pk"))
    client = api(world.adjudicator)
    grade_apart(artefacts[0])
    with CaptureQueriesContext(connection) as one:
        client.get(url(world))
    for artefact in artefacts[1:]:
        grade_apart(artefact)
    with CaptureQueriesContext(connection) as eight:
        assert len(client.get(url(world)).json()["artefacts"]) == 8
    assert len(eight) == len(one)
