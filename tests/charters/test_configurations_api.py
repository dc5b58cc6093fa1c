"""REST API for configurations σ: roles, upload in every accepted form, versions, parity, schema."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from charters.configurations import configuration_schema
from charters.models import Configuration, Role
from charters.services.configurations import configuration_upload
from charters.services.use_cases import membership_grant

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"
GEMINI = (EXAMPLES / "sigma-gemini-2.5.yaml").read_text()
LLAMA = (EXAMPLES / "sigma-llama-4.yaml").read_text()
KEY = "CREDIT-MEMO-B"

READERS = {
    "owner": 200,
    "model_owner": 200,
    "adjudicator": 200,
    "reviewer": 200,
    "grader": 403,
    "outsider": 404,
}
UPLOADERS = {
    "owner": 201,
    "model_owner": 201,
    "adjudicator": 403,
    "reviewer": 403,
    "grader": 403,
    "outsider": 404,
}


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_login(user)
    return client


def list_url() -> str:
    return reverse("api-configuration-list", args=[KEY])


def detail_url(name="gemini", version=1) -> str:
    return reverse("api-configuration-detail", args=[KEY, name, version])


def parity_url(a="gemini:1", b="llama:1") -> str:
    return reverse("api-configuration-parity", args=[KEY]) + f"?a={a}&b={b}"


@pytest.fixture
def frozen(personas):
    gemini = configuration_upload(
        actor=personas.model_owner, use_case=personas.use_case, name="gemini", content=GEMINI
    )
    llama = configuration_upload(
        actor=personas.model_owner, use_case=personas.use_case, name="llama", content=LLAMA
    )
    return gemini, llama


def multipart(name="gemini", content=GEMINI, filename="sigma.yaml") -> dict:
    return {"name": name, "file": SimpleUploadedFile(filename, content.encode())}


# ----------------------------------------------------------------------------------- permissions


@pytest.mark.parametrize(("persona", "expected"), sorted(READERS.items()))
def test_reading_the_list_needs_a_non_grader_role(personas, frozen, persona, expected):
    response = client_for(personas.by_name(persona)).get(list_url())
    assert response.status_code == expected
    if expected == 403:
        assert "Graders do not see configurations" in response.json()["error"]["message"]
        assert "gemini" not in response.content.decode()


@pytest.mark.parametrize(("persona", "expected"), sorted(READERS.items()))
def test_reading_a_version_needs_a_non_grader_role(personas, frozen, persona, expected):
    response = client_for(personas.by_name(persona)).get(detail_url())
    assert response.status_code == expected
    if expected != 200:
        assert "gemini-2.5-pro" not in response.content.decode()


@pytest.mark.parametrize(("persona", "expected"), sorted(READERS.items()))
def test_reading_parity_needs_a_non_grader_role(personas, frozen, persona, expected):
    response = client_for(personas.by_name(persona)).get(parity_url())
    assert response.status_code == expected


@pytest.mark.parametrize(("persona", "expected"), sorted(UPLOADERS.items()))
def test_uploading_needs_the_model_or_charter_owner_role(personas, persona, expected):
    response = client_for(personas.by_name(persona)).post(
        list_url(), multipart(), format="multipart"
    )
    assert response.status_code == expected
    assert Configuration.objects.count() == (1 if expected == 201 else 0)


def test_an_adjudicator_who_also_grades_sees_no_configuration(personas, frozen):
    client = client_for(personas.adjudicator)
    assert client.get(list_url()).status_code == 200
    membership_grant(
        actor=personas.owner,
        use_case=personas.use_case,
        user=personas.adjudicator,
        role=Role.GRADER,
    )
    assert client.get(list_url()).status_code == 403
    assert client.get(detail_url()).status_code == 403
    assert client.get(parity_url()).status_code == 403


@pytest.mark.parametrize(
    "url",
    [list_url, detail_url, parity_url, lambda: reverse("api-configuration-schema")],
)
def test_anonymous_requests_are_refused(frozen, url):
    assert client_for().get(url()).status_code in (401, 403)


def test_anonymous_uploads_are_refused(personas):
    response = client_for().post(list_url(), multipart(), format="multipart")
    assert response.status_code in (401, 403)
    assert not Configuration.objects.exists()


# ---------------------------------------------------------------------------------------- upload


def test_multipart_upload_creates_version_1_and_returns_it(personas):
    response = client_for(personas.model_owner).post(list_url(), multipart(), format="multipart")
    assert response.status_code == 201
    body = response.json()
    assert (body["name"], body["version"], body["use_case"]) == ("gemini", 1, KEY)
    assert body["model_ref"] == "gemini/gemini-2.5-pro"
    assert body["source_format"] == "yaml"
    assert body["created_by"] == "model_owner"
    assert body["sha256"] == hashlib.sha256(body["canonical_json"].encode()).hexdigest()
    assert body["document"] == yaml.safe_load(GEMINI)


@pytest.mark.parametrize(
    ("content_type", "body", "source_format"),
    [
        ("application/yaml", GEMINI, "yaml"),
        ("text/yaml", GEMINI, "yaml"),
        ("application/json", json.dumps(yaml.safe_load(GEMINI)), "json"),
    ],
)
def test_a_raw_body_upload_takes_the_name_from_the_query(
    personas, content_type, body, source_format
):
    response = client_for(personas.model_owner).post(
        list_url() + "?name=raw-body", data=body, content_type=content_type
    )
    assert response.status_code == 201, response.content
    assert (response.json()["name"], response.json()["source_format"]) == (
        "raw-body",
        source_format,
    )


def test_a_token_authenticated_upload_works_for_scripts(personas):
    token = Token.objects.create(user=personas.model_owner)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.post(
        list_url() + "?name=gemini", data=GEMINI, content_type="application/yaml"
    )
    assert response.status_code == 201


def test_a_second_upload_of_a_name_is_its_next_version(personas, frozen):
    response = client_for(personas.owner).post(
        list_url(), multipart(content=LLAMA), format="multipart"
    )
    assert response.status_code == 201
    assert response.json()["version"] == 2


def test_uploading_the_latest_version_again_is_a_conflict(personas, frozen):
    response = client_for(personas.model_owner).post(
        list_url() + "?name=gemini",
        data=json.dumps(yaml.safe_load(GEMINI)),
        content_type="application/json",
    )
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "conflict"
    assert error["message"].startswith("σ gemini is identical to version 1 (sha256 ")


def test_schema_errors_come_back_all_at_once_with_paths_and_lines(personas):
    bad = GEMINI.replace("temperature: 0.2", "temperature: 3").replace(
        "  provider: gemini\n", "  provider: gemini\n  temprature: 1\n"
    )
    response = client_for(personas.model_owner).post(
        list_url(), multipart(content=bad), format="multipart"
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["field"] == "model.temprature"
    assert error["details"] == [
        {
            "field": "model.temprature",
            "line": 12,
            "message": "unknown field; expected one of: api_base, api_key_env, id, parameters, "
            "provider, revision",
        },
        {
            "field": "model.parameters.temperature",
            "line": 16,
            "message": "3 is greater than the maximum of 2",
        },
    ]
    assert "sigma.yaml, line 12: model.temprature" in error["message"]


def test_a_pasted_key_is_refused_and_not_echoed(personas):
    secret = "AIza" + "SyD4x9Q2w8E7r6T5y4U3i2O1p0A9s8D7f6G"
    bad = GEMINI.replace("api_key_env: GEMINI_API_KEY", f"api_key_env: {secret}")
    response = client_for(personas.model_owner).post(
        list_url() + "?name=gemini", data=bad, content_type="application/yaml"
    )
    assert response.status_code == 400
    assert secret not in response.content.decode()
    messages = [detail["message"] for detail in response.json()["error"]["details"]]
    assert (
        "looks like an API key or secret; store it in an environment variable and name that "
        "variable in model.api_key_env (detected: Google API key)"
    ) in messages


def test_a_missing_name_or_file_is_a_clear_error(personas):
    client = client_for(personas.model_owner)
    no_name = client.post(list_url(), data=GEMINI, content_type="application/yaml")
    assert no_name.status_code == 400
    assert no_name.json()["error"]["field"] == "name"
    no_file = client.post(list_url(), {"name": "gemini"}, format="multipart")
    assert no_file.status_code == 400
    assert no_file.json()["error"]["field"] == "file"


def test_an_unsupported_content_type_is_refused(personas):
    response = client_for(personas.model_owner).post(
        list_url() + "?name=gemini", data=GEMINI, content_type="text/plain"
    )
    assert response.status_code == 415
    assert not Configuration.objects.exists()


# ----------------------------------------------------------------------------------------- reads


def test_the_list_returns_every_version_with_hashes_in_flat_queries(
    personas, frozen, django_assert_num_queries
):
    client = client_for(personas.reviewer)
    with django_assert_num_queries(6):
        response = client.get(list_url())
    assert response.status_code == 200
    assert [(row["name"], row["version"], row["sha256"]) for row in response.json()] == [
        ("gemini", 1, frozen[0].sha256),
        ("llama", 1, frozen[1].sha256),
    ]
    configuration_upload(
        actor=personas.owner, use_case=personas.use_case, name="gemini", content=LLAMA
    )
    with django_assert_num_queries(6):
        assert len(client.get(list_url()).json()) == 3


def test_a_version_includes_its_canonical_json_and_hash(personas, frozen):
    body = client_for(personas.adjudicator).get(detail_url()).json()
    assert body["sha256"] == frozen[0].sha256
    assert body["canonical_json"] == frozen[0].canonical_json
    assert json.loads(body["canonical_json"]) == body["document"]


def test_an_unknown_version_is_404(personas, frozen):
    response = client_for(personas.owner).get(detail_url(version=7))
    assert response.status_code == 404
    assert response.json()["error"]["message"] == f"{KEY} has no σ gemini version 7."


def test_parity_of_the_two_examples_is_attributable_to_the_model_alone(personas, frozen):
    body = client_for(personas.reviewer).get(parity_url()).json()
    assert body["attributable_to_model_alone"] is True
    assert body["label"] == "attributable to the model alone"
    assert body["differing_components"] == ["model"]
    assert [(c["symbol"], c["differs"]) for c in body["components"]] == [
        ("M", True),
        ("P", False),
        ("Φ", False),
        ("U", False),
        ("Γ", False),
        ("H", False),
    ]
    assert body["components"][0]["differences"][1] == {
        "path": "model.id",
        "a": "gemini-2.5-pro",
        "b": "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
        "a_present": True,
        "b_present": True,
    }
    assert (body["a"]["name"], body["b"]["name"]) == ("gemini", "llama")


def test_parity_with_a_prompt_change_is_not_attributable_to_the_model_alone(personas, frozen):
    changed = LLAMA.replace("  version: sor-2.3", "  version: sor-2.4")
    configuration_upload(
        actor=personas.model_owner, use_case=personas.use_case, name="llama", content=changed
    )
    body = client_for(personas.owner).get(parity_url(b="llama:2")).json()
    assert body["label"] == "not attributable to the model alone"
    assert body["differing_components"] == ["model", "prompts"]
    assert body["components"][1]["differences"] == [
        {
            "path": "prompts.version",
            "a": "sor-2.3",
            "b": "sor-2.4",
            "a_present": True,
            "b_present": True,
        }
    ]


@pytest.mark.parametrize("reference", ["gemini", "gemini:x", ":1", "gemini:0"])
def test_a_malformed_parity_reference_names_the_parameter(personas, frozen, reference):
    response = client_for(personas.owner).get(parity_url(a=reference))
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "a"


def test_parity_with_an_unknown_version_is_404(personas, frozen):
    assert client_for(personas.owner).get(parity_url(b="llama:5")).status_code == 404


# ---------------------------------------------------------------------------------------- schema


@pytest.mark.parametrize("persona", ["grader", "outsider", "model_owner"])
def test_the_schema_is_published_to_any_authenticated_user(personas, persona):
    response = client_for(personas.by_name(persona)).get(reverse("api-configuration-schema"))
    assert response.status_code == 200
    assert response.json() == configuration_schema()
    assert reverse("api-configuration-schema") == "/api/v1/schemas/configuration.json"


def test_the_openapi_schema_still_renders_with_these_endpoints(personas):
    response = client_for(personas.owner).get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    paths = json.loads(response.content)["paths"]
    assert "/api/v1/use-cases/{key}/configurations/" in paths
    assert "/api/v1/use-cases/{key}/configurations/parity/" in paths
    assert "/api/v1/use-cases/{key}/configurations/{name}/{version}/" in paths
    assert "/api/v1/schemas/configuration.json" in paths
    assert set(
        paths["/api/v1/use-cases/{key}/configurations/"]["post"]["requestBody"]["content"]
    ) == {"multipart/form-data", "application/yaml", "text/yaml", "application/json"}
