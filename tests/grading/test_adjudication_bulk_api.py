"""Bulk adjudication endpoints: one artefact's fields, taking a grader's values, the file."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from demo.testing.grading import grade_apart
from grading.adjudication_io import dump_line
from grading.models import Adjudication


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def urls(world, artefact=None) -> dict[str, str]:
    args = [world.use_case.key, world.session.public_id]
    found = {
        "export": reverse("api-grading-adjudication-export", args=args),
        "import": reverse("api-grading-adjudication-import", args=args),
    }
    if artefact is not None:
        found["artefact"] = reverse(
            "api-grading-adjudication-artefact", args=[*args, artefact.public_id]
        )
        found["take"] = reverse("api-grading-adjudication-take", args=[*args, artefact.public_id])
    return found


def first(world):
    return world.session.artefacts.order_by("public_id").first()


def finals(artefact) -> dict[tuple[str, str], str]:
    return {(a.unit_key, a.field): a.value for a in Adjudication.objects.filter(artefact=artefact)}


def test_take_grader_one_for_all_then_the_artefact_is_resolved(grading_world):
    artefact = first(grading_world)
    grade_apart(artefact)
    client = api(grading_world.adjudicator)
    response = client.post(
        urls(grading_world, artefact)["take"], {"grader": 1, "fields": "all"}, format="json"
    )
    assert response.status_code == 201, response.json()
    data = response.json()
    assert data["pending"] == 0 and data["not_asked"] == []
    assert len(data["recorded"]) == 5
    assert {(r["unit_key"], r["field"], r["value"]) for r in data["recorded"]} >= {
        ("s1", "relevant", "Y"),
        ("s2", "supported", "fully"),
    }
    detail = client.get(urls(grading_world, artefact)["artefact"]).json()
    assert detail["pending"] == 0 and detail["resolved"] == 5


def test_take_grader_two_for_listed_fields_and_the_not_asked_refusal(grading_world):
    artefact = first(grading_world)
    grade_apart(artefact)
    client = api(grading_world.adjudicator)
    take = urls(grading_world, artefact)["take"]
    listed = {"grader": 2, "fields": [{"unit_key": "s1", "field": "relevant"}], "note": "why"}
    response = client.post(take, listed, format="json")
    assert response.status_code == 201
    assert response.json()["pending"] == 4
    assert finals(artefact) == {("s1", "relevant"): "N"}
    refused = client.post(
        take, {"grader": 2, "fields": [{"unit_key": "s2", "field": "supported"}]}, format="json"
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["field"] == "grader"
    again = client.post(take, listed, format="json")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "immutable"
    everything = client.post(take, {"grader": 2, "fields": "all"}, format="json").json()
    assert everything["not_asked"] == []
    assert everything["moot"] == [{"unit_key": "s2", "field": "supported"}]
    assert everything["pending"] == 0
    assert ("s2", "supported") not in finals(artefact)
    assert finals(artefact)[("s2", "assertive")] == "N"


def test_bad_take_requests_get_the_one_error_shape(grading_world):
    artefact = first(grading_world)
    grade_apart(artefact)
    client = api(grading_world.adjudicator)
    take = urls(grading_world, artefact)["take"]
    for body, field in (
        ({"grader": 0, "fields": "all"}, "grader"),
        ({"grader": 1, "fields": "some"}, "fields"),
        ({"grader": 1, "fields": [{"unit": "s1"}]}, "fields"),
        ({"fields": "all"}, "grader"),
    ):
        response = client.post(take, body, format="json")
        assert response.status_code == 400, body
        assert response.json()["error"]["field"] == field
    missing = reverse(
        "api-grading-adjudication-take",
        args=[grading_world.use_case.key, grading_world.session.public_id, "nosuchartefact"],
    )
    assert client.post(missing, {"grader": 1, "fields": "all"}, format="json").status_code == 404
    assert not Adjudication.objects.exists()


def test_only_named_adjudicators_take_and_import(grading_world):
    artefact = first(grading_world)
    grade_apart(artefact)
    world = grading_world
    for user in (world.owner, world.reviewer, world.graders[0]):
        take = api(user).post(
            urls(world, artefact)["take"], {"grader": 1, "fields": "all"}, format="json"
        )
        assert take.status_code == 403
        upload = api(user).post(urls(world)["import"], b"{}\n", content_type="application/x-ndjson")
        assert upload.status_code == 403
    assert api(world.outsider).get(urls(world)["export"]).status_code == 404
    assert api(world.graders[0]).get(urls(world)["export"]).status_code == 403
    assert not Adjudication.objects.exists()


def test_the_artefact_endpoint_records_several_values_and_the_rest_from_a_grader(grading_world):
    artefact = first(grading_world)
    grade_apart(artefact)
    client = api(grading_world.adjudicator)
    supported = {"unit_key": "s2", "field": "supported", "value": "partially", "note": "n"}
    contradicted = client.post(
        urls(grading_world, artefact)["artefact"],
        {"values": [supported], "take_rest_from": 2},  # Grader 2: s2 not assertive
        format="json",
    )
    assert contradicted.status_code == 409
    assert "not asked once s2 assertive is 'N'" in contradicted.json()["error"]["message"]
    assert not finals(artefact)
    assertive = {"unit_key": "s2", "field": "assertive", "value": "Y"}
    body = {"values": [assertive, supported], "take_rest_from": 2}
    response = client.post(urls(grading_world, artefact)["artefact"], body, format="json")
    assert response.status_code == 201
    assert response.json()["pending"] == 0
    assert finals(artefact)[("s2", "supported")] == "partially"
    assert finals(artefact)[("s1", "relevant")] == "N"


def test_the_export_and_the_import_round_trip_with_line_numbered_errors(grading_world):
    artefact = first(grading_world)
    grade_apart(artefact)
    client = api(grading_world.adjudicator)
    export = client.get(urls(grading_world)["export"])
    assert export.status_code == 200
    assert export["Content-Type"] == "application/x-ndjson"
    lines = [json.loads(raw) for raw in b"".join(export.streaming_content).splitlines()]
    assert len(lines) == 5
    lines[0]["value"] = "maybe"
    bad = b"".join(dump_line(line) for line in lines)
    refused = client.post(urls(grading_world)["import"], bad, content_type="application/x-ndjson")
    assert refused.status_code == 400
    assert refused.json()["error"]["details"][0]["line"] == 1
    assert refused.json()["error"]["details"][0]["field"] in ("value", "field")
    assert not Adjudication.objects.exists()
    for line in lines:
        line["value"] = "Y" if line["field"] == "assertive" else line["choices"][-1]
    upload = SimpleUploadedFile("mine.jsonl", b"".join(dump_line(line) for line in lines))
    response = client.post(urls(grading_world)["import"], {"file": upload}, format="multipart")
    assert response.status_code == 200, response.json()
    assert (response.json()["adjudicated"], response.json()["left_blank"]) == (5, 0)
    assert len(finals(artefact)) == 5
    assert b"".join(client.get(urls(grading_world)["export"]).streaming_content) == b""


def test_the_schema_documents_the_new_endpoints(grading_world):
    schema = api(grading_world.owner).get("/api/schema/", {"format": "json"})
    operations = {
        op["operationId"]
        for path in schema.json()["paths"].values()
        for op in path.values()
        if isinstance(op, dict) and "operationId" in op
    }
    assert {
        "grading_session_adjudication_take",
        "grading_session_adjudication_import",
        "grading_session_adjudication_export",
        "grading_session_adjudication_artefact",
        "grading_session_adjudication_artefact_record",
    } <= operations
