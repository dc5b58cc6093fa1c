"""Decision REST endpoints: the list and one decision with its record, evidence and hash."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from audit.canonical import canonical_json, sha256_hex
from demo.testing.decisions import decide
from demo.testing.grading import make_world


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


@pytest.fixture
def world(db):
    return make_world()


def list_url(world) -> str:
    return reverse("api-decision-list", args=[world.use_case.key])


def detail_url(world, decision) -> str:
    return reverse("api-decision-detail", args=[world.use_case.key, decision.pk])


PERSONAS = {
    "owner": 200,
    "model_owner": 200,
    "reviewer": 200,
    "adjudicator": 200,
    "grader": 403,
    "outsider": 404,
}


@pytest.mark.parametrize("endpoint", ["list", "detail"])
def test_each_endpoint_answers_each_persona_as_its_role_allows(world, endpoint):
    decision = decide(world)
    url = list_url(world) if endpoint == "list" else detail_url(world, decision)
    for persona, expected in PERSONAS.items():
        user = world.graders[0] if persona == "grader" else getattr(world, persona)
        response = api(user).get(url)
        assert response.status_code == expected, persona
        if expected != 200:
            assert set(response.json()["error"]) == {"code", "message", "field", "details"}
    assert api().get(url).status_code in (401, 403)


def test_the_list_gives_each_decision_newest_first_with_its_summary(world):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    body = api(world.model_owner).get(list_url(world)).json()
    assert body["count"] == 2
    first, second = body["results"]
    assert [first["id"], second["id"]] == [llama.pk, gemini.pk]
    assert second == {
        "id": gemini.pk,
        "status": "Reject",
        "binding_metric": "guidance_recall",
        "ei": pytest.approx(gemini.ei),
        "ei_g": pytest.approx(-1.0),
        "ei_band": [pytest.approx(gemini.ei_band_lo), pytest.approx(gemini.ei_band_hi)],
        "charter_version": 1,
        "configuration": {
            "name": "gemini-2-5",
            "version": 1,
            "sha256": gemini.configuration.sha256,
        },
        "run": gemini.run_id,
        "sha256": gemini.sha256,
        "created_by": "demo-owner",
        "created_at": second["created_at"],
        "url": detail_url(world, gemini),
    }


def test_the_list_reads_in_a_fixed_number_of_queries(world, django_assert_num_queries):
    decide(world)
    client = api(world.owner)
    # use case, roles, count, the page with charter, σ and author
    with django_assert_num_queries(4):
        client.get(list_url(world))
    decide(world, "llama-4")
    with django_assert_num_queries(4):
        assert len(client.get(list_url(world)).json()["results"]) == 2


def test_one_decision_gives_its_record_evidence_and_a_sha256_anyone_can_recompute(world):
    decision = decide(world)
    body = api(world.reviewer).get(detail_url(world, decision)).json()
    assert body["record"] == decision.record
    assert body["evidence"] == decision.evidence
    assert body["sha256"] == decision.sha256
    document = {"record": body["record"], "evidence": body["evidence"]}
    assert sha256_hex(canonical_json(document)) == body["sha256"]
    recall = next(m for m in body["record"]["gate"]["metrics"] if m["id"] == "guidance_recall")
    assert recall["ci"] == [66.46, 93.54]
    assert recall["status"] == "Reject"


def test_a_decision_of_no_such_number_is_not_found(world):
    decision = decide(world)
    url = reverse("api-decision-detail", args=[world.use_case.key, decision.pk + 1000])
    response = api(world.owner).get(url)
    assert response.status_code == 404
    assert response.json()["error"]["message"] == (
        f"No decision {decision.pk + 1000} in {world.use_case.key}."
    )
