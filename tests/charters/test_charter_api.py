"""Charter REST API: every endpoint for every persona, the error shape, YAML bodies, queries."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from charters.charter_document import document_from_text
from charters.models import Charter, Deviation, Role, Signature, UnblindingEvent
from charters.services.charters import charter_create, charter_revise, charter_sign

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "charter.yaml"
MEMBERS = ("owner", "model_owner", "adjudicator", "reviewer")
KEY = "CREDIT-MEMO-B"


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def url(name: str, **kwargs) -> str:
    return reverse(name, kwargs={"key": KEY, **kwargs})


@pytest.fixture
def document() -> dict:
    return document_from_text(EXAMPLE.read_text(encoding="utf-8"), fmt="yaml")


@pytest.fixture
def draft(personas, document) -> Charter:
    return charter_create(actor=personas.owner, use_case=personas.use_case, document=document)


@pytest.fixture
def signed(personas, draft) -> Charter:
    for user, role in (
        (personas.owner, Role.CHARTER_OWNER),
        (personas.model_owner, Role.MODEL_OWNER),
        (personas.reviewer, Role.REVIEWER),
    ):
        charter_sign(actor=user, charter=draft, role=role)
    draft.refresh_from_db()
    return draft


def post_json(client: APIClient, path: str, body: dict, method: str = "post"):
    return getattr(client, method)(path, json.dumps(body), content_type="application/json")


# --------------------------------------------------------------------------- permissions


def test_unauthenticated_requests_are_refused(personas, draft, document):
    client = api()
    assert client.get(url("api-charter-list")).status_code in (401, 403)
    assert client.get(url("api-charter-detail", version=1)).status_code in (401, 403)
    assert post_json(
        client, url("api-charter-sign", version=1), {"role": "reviewer"}
    ).status_code in (401, 403)
    assert post_json(client, url("api-use-case-unblind"), {"reason": "x"}).status_code in (401, 403)


@pytest.mark.parametrize("name", MEMBERS)
def test_every_member_reads_the_charter_list_and_versions(personas, draft, name):
    client = api(personas.by_name(name))
    listed = client.get(url("api-charter-list"))
    assert listed.status_code == 200
    assert [(c["version"], c["status"]) for c in listed.json()] == [(1, "draft")]
    detail = client.get(url("api-charter-detail", version=1))
    assert detail.status_code == 200
    validated = client.post(
        url("api-charter-validate", version=1),
        EXAMPLE.read_bytes(),
        content_type="application/yaml",
    )
    assert validated.status_code == 200


@pytest.mark.parametrize(
    "name_and_method",
    [
        ("api-charter-list", "get"),
        ("api-charter-detail", "get"),
        ("api-charter-detail", "put"),
        ("api-charter-validate", "post"),
        ("api-charter-sign", "post"),
        ("api-charter-revise", "post"),
        ("api-charter-deviation", "post"),
        ("api-use-case-unblind", "post"),
        ("api-charter-list", "post"),
    ],
)
def test_an_outsider_gets_404_everywhere(personas, draft, document, name_and_method):
    name, method = name_and_method
    kwargs = {} if name in ("api-charter-list", "api-use-case-unblind") else {"version": 1}
    client = api(personas.outsider)
    if method == "get":
        response = client.get(url(name, **kwargs))
    else:
        response = post_json(client, url(name, **kwargs), document, method)
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "No such use case."


@pytest.mark.parametrize("name", ["model_owner", "grader", "adjudicator", "reviewer"])
def test_only_the_charter_owner_creates_updates_and_revises(personas, document, name):
    client = api(personas.by_name(name))
    assert post_json(client, url("api-charter-list"), document).status_code == 403
    charter_create(actor=personas.owner, use_case=personas.use_case, document=document)
    assert (
        post_json(client, url("api-charter-detail", version=1), document, "put").status_code == 403
    )
    assert (
        post_json(client, url("api-charter-revise", version=1), {"reason": "x"}).status_code == 403
    )
    assert (
        post_json(client, url("api-charter-deviation", version=1), {"reason": "x"}).status_code
        == 403
    )


@pytest.mark.parametrize("name", ["grader", "adjudicator"])
def test_members_without_a_signing_role_cannot_sign(personas, draft, name):
    response = post_json(
        api(personas.by_name(name)), url("api-charter-sign", version=1), {"role": "charter_owner"}
    )
    assert response.status_code == 403
    assert Signature.objects.count() == 0


def test_signing_in_a_role_the_user_does_not_hold_is_403(personas, draft):
    response = post_json(
        api(personas.model_owner), url("api-charter-sign", version=1), {"role": "reviewer"}
    )
    assert response.status_code == 403
    assert "Second-line reviewer" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("owner", 201),
        ("reviewer", 201),
        ("model_owner", 403),
        ("grader", 403),
        ("adjudicator", 403),
    ],
)
def test_unblinding_is_recorded_by_the_charter_owner_or_the_reviewer(
    personas, signed, name, status
):
    response = post_json(
        api(personas.by_name(name)),
        url("api-use-case-unblind"),
        {"reason": "interim results to the credit committee"},
    )
    assert response.status_code == status
    assert UnblindingEvent.objects.count() == (1 if status == 201 else 0)
    if status == 201:
        assert response.json()["first"] is True
        assert response.json()["charter_version"] == 1


# --------------------------------------------------------------------------- behaviour


def test_the_owner_creates_a_draft_from_a_yaml_body(personas):
    response = api(personas.owner).post(
        url("api-charter-list"), EXAMPLE.read_bytes(), content_type="application/yaml"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["version"], body["status"], body["sha256"]) == (1, "draft", "")
    assert body["validation"]["ok"] is True
    assert len(body["content_sha256"]) == 64
    assert [m["id"] for m in body["document"]["metrics"]][:2] == [
        "citation_precision_lenient",
        "key_element_capture",
    ]
    assert [row["status"] for row in body["signing"]] == ["missing"] * 3


def test_a_bad_yaml_body_is_400_with_the_line_and_field_of_every_problem(personas):
    text = (
        "metrics:\n  - id: hallucination_rate\n    treatment: gated\n    theta_in: five\n"
        "nu_max: x\n"
    )
    response = api(personas.owner).post(
        url("api-charter-list"), text.encode(), content_type="application/yaml"
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "metrics[0].theta_in"
    assert [(d["line"], d["field"]) for d in error["details"]] == [
        (4, "metrics[0].theta_in"),
        (5, "nu_max"),
    ]
    assert not Charter.objects.exists()


def test_a_second_create_is_a_conflict(personas, draft, document):
    response = post_json(api(personas.owner), url("api-charter-list"), document)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"


def test_validate_reports_the_spec_inverted_pair_with_its_line_without_saving(personas, draft):
    original = EXAMPLE.read_text(encoding="utf-8")
    assert original.count("theta_out: 50\n    theta_in: 45") == 1
    text = original.replace("theta_out: 50\n    theta_in: 45", "theta_out: 50\n    theta_in: 55")
    response = api(personas.owner).post(
        url("api-charter-validate", version=1), text.encode(), content_type="application/yaml"
    )
    assert response.status_code == 200
    report = response.json()
    assert report["ok"] is False
    [error] = [i for i in report["issues"] if i["level"] == "error"]
    assert error["field"] == "metrics[irrelevance_rate].theta_in"
    assert "inverted pair" in error["message"]
    lines = text.splitlines()
    start = lines.index("  - id: irrelevance_rate")
    line = lines.index("    theta_in: 55", start) + 1
    assert error["line"] == line
    assert Charter.objects.get().metrics.get(metric_id="irrelevance_rate").theta_in == 45


def test_validate_turns_an_unreadable_body_into_a_report(personas, draft):
    response = api(personas.owner).post(
        url("api-charter-validate", version=1), b"nu_max: [", content_type="application/yaml"
    )
    assert response.status_code == 200
    assert response.json()["ok"] is False
    assert response.json()["issues"][0]["message"].startswith("not valid YAML")


def test_put_updates_a_draft_and_makes_signatures_stale(personas, draft, document):
    assert (
        post_json(
            api(personas.owner), url("api-charter-sign", version=1), {"role": "charter_owner"}
        ).status_code
        == 201
    )
    changed = copy.deepcopy(document)
    changed["nu_max"] = 2.5
    response = post_json(api(personas.owner), url("api-charter-detail", version=1), changed, "put")
    assert response.status_code == 200
    assert response.json()["document"]["nu_max"] == 2.5
    assert response.json()["signing"][0]["status"] == "stale"


def test_put_on_a_signed_charter_is_409_immutable(personas, signed, document):
    changed = copy.deepcopy(document)
    changed["nu_max"] = 5
    response = post_json(api(personas.owner), url("api-charter-detail", version=1), changed, "put")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "immutable"
    assert Charter.objects.get().nu_max == 3


def test_three_signatures_through_the_api_freeze_the_charter(personas, draft):
    responses = [
        post_json(api(personas.by_name(name)), url("api-charter-sign", version=1), {"role": role})
        for name, role in (
            ("owner", "charter_owner"),
            ("model_owner", "model_owner"),
            ("reviewer", "reviewer"),
        )
    ]
    assert [r.status_code for r in responses] == [201, 201, 201]
    assert [r.json()["frozen"] for r in responses] == [False, False, True]
    charter = Charter.objects.get()
    assert responses[-1].json()["sha256"] == charter.sha256 != ""
    detail = api(personas.adjudicator).get(url("api-charter-detail", version=1)).json()
    assert detail["status"] == "signed" and detail["sha256"] == charter.sha256
    assert [s["user"] for s in detail["signatures"]] == ["owner", "model_owner", "reviewer"]


def test_signing_a_draft_with_errors_is_400_listing_them(personas, document):
    document["metrics"][2]["theta_in"] = 55  # irrelevance_rate, the paper's printed pair
    charter_create(actor=personas.owner, use_case=personas.use_case, document=document)
    response = post_json(
        api(personas.owner), url("api-charter-sign", version=1), {"role": "charter_owner"}
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "metrics[irrelevance_rate].theta_in"
    assert "inverted pair" in error["details"][0]["message"]


def test_an_unknown_signing_role_is_400(personas, draft):
    response = post_json(
        api(personas.owner), url("api-charter-sign", version=1), {"role": "grader"}
    )
    assert response.status_code == 400


def test_revise_after_unblinding_records_a_deviation_shown_with_the_charter(personas, signed):
    client = api(personas.owner)
    assert (
        post_json(client, url("api-use-case-unblind"), {"reason": "committee"}).status_code == 201
    )
    refused = post_json(client, url("api-charter-revise", version=1), {"reason": ""})
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "reason"
    response = post_json(
        client, url("api-charter-revise", version=1), {"reason": "More guidance items to grade."}
    )
    assert response.status_code == 201
    body = response.json()
    assert (body["version"], body["previous_version"], body["status"]) == (2, 1, "draft")
    assert body["deviation"]["reason"] == "More guidance items to grade."
    assert body["deviation"]["created_by"] == "owner"
    assert body["deviation"]["diff"] == []
    assert Deviation.objects.count() == 1
    listed = client.get(url("api-charter-list")).json()
    assert [(c["version"], c["deviation"]) for c in listed] == [(1, False), (2, True)]


def test_a_revision_open_at_the_first_unblinding_records_its_deviation_before_signing(
    personas, signed
):
    client = api(personas.owner)
    assert (
        post_json(client, url("api-charter-revise", version=1), {"reason": ""}).status_code == 201
    )
    assert (
        post_json(
            api(personas.reviewer), url("api-use-case-unblind"), {"reason": "committee"}
        ).status_code
        == 201
    )
    refused = post_json(client, url("api-charter-sign", version=2), {"role": "charter_owner"})
    assert refused.status_code == 409
    assert refused.json()["error"]["field"] == "deviation"
    response = post_json(
        client,
        url("api-charter-deviation", version=2),
        {"reason": "Thresholds agreed with second line."},
    )
    assert response.status_code == 201
    assert response.json()["deviation"]["reason"] == "Thresholds agreed with second line."
    assert (
        post_json(client, url("api-charter-sign", version=2), {"role": "charter_owner"}).status_code
        == 201
    )


def test_unblinding_before_any_signed_charter_is_a_conflict(personas, draft):
    response = post_json(api(personas.owner), url("api-use-case-unblind"), {"reason": "peek"})
    assert response.status_code == 409
    assert "no signed charter" in response.json()["error"]["message"]


def test_a_missing_version_is_404(personas, draft):
    assert api(personas.owner).get(url("api-charter-detail", version=7)).status_code == 404


# --------------------------------------------------------------------------- queries, schema


def test_the_list_endpoint_has_a_flat_query_count(personas, signed, django_assert_num_queries):
    client = api(personas.adjudicator)
    # 1 use case, 1 membership check, charters (+deviation, users), signatures, metrics.
    with django_assert_num_queries(5):
        assert len(client.get(url("api-charter-list")).json()) == 1
    revision = charter_revise(actor=personas.owner, charter=signed, reason="")
    for user, role in (
        (personas.owner, Role.CHARTER_OWNER),
        (personas.model_owner, Role.MODEL_OWNER),
    ):
        charter_sign(actor=user, charter=revision, role=role)
    with django_assert_num_queries(5):
        assert len(client.get(url("api-charter-list")).json()) == 2


def test_the_detail_endpoint_has_a_flat_query_count(personas, signed, django_assert_num_queries):
    client = api(personas.reviewer)
    # 1 use case, 1 membership, charters, signatures, metrics, first unblinding.
    with django_assert_num_queries(7):
        assert client.get(url("api-charter-detail", version=1)).status_code == 200
    charter_revise(actor=personas.owner, charter=signed, reason="")
    with django_assert_num_queries(7):
        assert client.get(url("api-charter-detail", version=2)).status_code == 200


def test_the_openapi_schema_is_served(personas):
    response = api(personas.owner).get("/api/schema/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "/api/v1/use-cases/{key}/charters/{version}/sign/" in text


def test_the_openapi_schema_validates_without_warnings(tmp_path):
    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    assert "/api/v1/use-cases/{key}/charters/{version}/validate/" in target.read_text()


def test_the_api_reads_and_returns_the_optional_rubric_fields_and_their_rule(personas):
    text = EXAMPLE.read_text(encoding="utf-8") + "rubric_fields: [acceptable]\n"
    response = api(personas.owner).post(
        url("api-charter-list"), text.encode(), content_type="application/yaml"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["document"]["rubric_fields"] == ["acceptable"]
    wrong = text.replace("rubric_fields: [acceptable]", "rubric_fields: [acceptible]")
    refused = api(personas.owner).post(
        url("api-charter-list"), wrong.encode(), content_type="application/yaml"
    )
    assert refused.status_code == 400
    assert "rubric_fields[0]" in json.dumps(refused.json())
