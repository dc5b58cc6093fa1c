"""Issue 17 findings 2, 9 and 12: hostile uploads are refused before they cost anything.

Alias bombs, deep nesting and over-long integers in YAML and JSON; files over the cap of
their kind; evidence packs that inflate to gigabytes; EGI result files. Each refusal is a
4xx (or a CLI error) naming the file and the line or field, and nothing is written.
"""

from __future__ import annotations

import io
import json
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from charters.models import Charter, Configuration, TaskSet
from egibench.importers import BenchmarkFileError, _load_json
from egibench.services import egi_results_file_read
from enterpriseval.documents import (
    MAX_DEPTH,
    DocumentLimitError,
    config_data,
    document_read,
)
from enterpriseval.errors import ServiceError
from enterpriseval.jsonl import decode_object_line
from gates.decision_file import DecisionFileError, load_decision_file
from scorecards.evidence import evidence_manifest, evidence_verify

KEY = "CREDIT-MEMO-B"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"


def billion_laughs(levels: int = 9) -> str:
    lines = ['lol0: &lol0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"lol{level}: &lol{level} [{', '.join([f'*lol{level - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


DEEP_YAML = "model:\n  parameters: " + "[" * 10_000 + "]" * 10_000 + "\n"
DEEP_JSON = '{"model": ' + "[" * 10_000 + "]" * 10_000 + "}"
HUGE_INTEGER = "9" * 5_000


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


# --------------------------------------------------------------------------- the reader


def test_a_billion_laughs_document_is_refused_at_its_first_anchor_within_a_few_mb():
    tracemalloc.start()
    try:
        with pytest.raises(DocumentLimitError) as refused:
            document_read(billion_laughs(), fmt="yaml")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024
    assert (refused.value.line, refused.value.column) == (1, 7)
    assert "anchor (&lol0) is not accepted" in refused.value.message


def test_an_alias_alone_is_refused_naming_its_line():
    with pytest.raises(DocumentLimitError) as refused:
        document_read("a: 1\nb: *a\n", fmt="yaml")
    assert refused.value.line == 2
    assert "alias (*a)" in refused.value.message


@pytest.mark.parametrize(("text", "fmt"), [(DEEP_YAML, "yaml"), (DEEP_JSON, "json")])
def test_nesting_past_the_depth_limit_is_refused_naming_the_line(text, fmt):
    with pytest.raises(DocumentLimitError) as refused:
        document_read(text, fmt=fmt)
    assert refused.value.line == (2 if fmt == "yaml" else 1)
    assert f"nested more than {MAX_DEPTH} levels" in refused.value.message


def test_nesting_at_the_depth_limit_is_read():
    text = "[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH
    assert document_read(text, fmt="json").data is not None
    assert document_read(text, fmt="yaml").data is not None


def test_brackets_inside_json_strings_do_not_count_as_nesting():
    text = json.dumps({"s": "[" * 1_000 + '\\"{' * 100, "t": [[1]]})
    assert document_read(text, fmt="json").data["t"] == [[1]]


@pytest.mark.parametrize(
    ("text", "fmt", "line"),
    [
        (f"a: 1\nb: {HUGE_INTEGER}\n", "yaml", 2),
        (f'{{\n "a": 1,\n "b": {HUGE_INTEGER}\n}}', "json", 3),
    ],
)
def test_an_integer_past_the_length_limit_is_refused_naming_the_line(text, fmt, line):
    with pytest.raises(DocumentLimitError) as refused:
        document_read(text, fmt=fmt)
    assert refused.value.line == line
    assert "integer of 5,000 characters" in refused.value.message


def test_a_configuration_file_with_an_alias_is_refused_in_one_line_naming_the_file():
    with pytest.raises(ValueError, match=r"^routing\.yaml: not valid YAML \(line 2, column 4: an"):
        config_data("a: 1\nb: &x 2\nc: *x\n", "routing.yaml")


def test_a_jsonl_line_nested_too_deep_or_with_a_huge_integer_is_a_line_error():
    deep = decode_object_line(7, DEEP_JSON.encode())
    assert deep.problem is not None
    assert deep.problem[0] == "line" and "nested more than" in deep.problem[1]
    huge = decode_object_line(8, f'{{"a": {HUGE_INTEGER}}}'.encode())
    assert huge.problem is not None
    assert "integer of 5,000 characters" in huge.problem[1]


# --------------------------------------------------------------------------- σ and charter


@pytest.mark.parametrize(
    ("body", "content_type", "line"),
    [
        (billion_laughs(), "application/yaml", 1),
        (DEEP_YAML, "application/yaml", 2),
        (DEEP_JSON, "application/json", 1),
        (f"schema_version: '1'\nmodel:\n  parameters:\n    seed: {HUGE_INTEGER}\n", "text/yaml", 4),
    ],
)
def test_a_hostile_sigma_is_a_400_naming_the_line_and_nothing_is_frozen(
    personas, body, content_type, line
):
    response = api(personas.model_owner).post(
        reverse("api-configuration-list", args=[KEY]) + "?name=bomb",
        data=body,
        content_type=content_type,
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["details"][0]["line"] == line
    assert "refused" in error["message"]
    assert not Configuration.objects.exists()


@pytest.mark.parametrize(
    ("body", "content_type"),
    [(billion_laughs(), "application/yaml"), (DEEP_JSON, "application/json")],
)
def test_a_hostile_charter_is_a_400_naming_the_line_and_nothing_is_written(
    personas, body, content_type
):
    response = api(personas.owner).post(
        reverse("api-charter-list", args=[KEY]), body.encode(), content_type=content_type
    )
    assert response.status_code == 400
    assert "refused" in response.json()["error"]["message"]
    assert "line 1" in response.json()["error"]["message"]
    assert not Charter.objects.exists()


def test_a_hostile_charter_file_on_the_web_page_is_a_400_naming_the_file(client, personas):
    client.force_login(personas.owner)
    upload = io.BytesIO(billion_laughs().encode())
    upload.name = "charter.yaml"
    response = client.post(reverse("charter-upload", args=[KEY]), {"file": upload})
    assert response.status_code == 400
    assert "charter.yaml" in response.content.decode()
    assert "anchor (&amp;lol0) is not accepted" in response.content.decode()
    assert not Charter.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_sigma_is_parsed_before_its_transaction_opens(personas, monkeypatch):
    from charters.services import configurations as service

    seen: list[bool] = []
    real = service.configuration_load

    def spying(*args, **kwargs):
        seen.append(connection.in_atomic_block)
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "configuration_load", spying)
    response = api(personas.model_owner).post(
        reverse("api-configuration-list", args=[KEY]) + "?name=gemini",
        data=(EXAMPLES / "sigma-gemini-2.5.yaml").read_text(),
        content_type="application/yaml",
    )
    assert response.status_code == 201, response.json()
    assert seen == [False]


# --------------------------------------------------------------------------- size caps


def limits(**caps: int) -> dict[str, int]:
    from django.conf import settings

    return {**settings.ENTERPRISEVAL_UPLOAD_LIMITS, **caps}


def test_a_sigma_over_its_cap_is_a_413_naming_the_file_and_the_setting(personas):
    upload = io.BytesIO((EXAMPLES / "sigma-gemini-2.5.yaml").read_bytes())
    upload.name = "sigma.yaml"
    with override_settings(ENTERPRISEVAL_UPLOAD_LIMITS=limits(sigma=100)):
        response = api(personas.model_owner).post(
            reverse("api-configuration-list", args=[KEY]),
            {"name": "gemini", "file": upload},
            format="multipart",
        )
    assert response.status_code == 413
    message = response.json()["error"]["message"]
    assert message.startswith("sigma.yaml: the σ document is ")
    assert "the limit is 100 bytes (raise ENTERPRISEVAL_MAX_SIGMA_BYTES" in message
    assert not Configuration.objects.exists()


def test_a_task_file_over_its_cap_is_a_413_in_the_api_and_on_the_page(personas):
    line = json.dumps(
        {"id": "t1", "split": "graded", "input": "x" * 500, "sources": [], "key_elements": []}
    )
    data = (line + "\n").encode()
    with override_settings(ENTERPRISEVAL_UPLOAD_LIMITS=limits(task_set=200)):
        upload = io.BytesIO(data)
        upload.name = "tasks.jsonl"
        response = api(personas.owner).post(
            reverse("api-task-set-list", args=[KEY]),
            {"name": "memo", "file": upload},
            format="multipart",
        )
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "too_large"
        assert "tasks.jsonl: the task file is" in response.json()["error"]["message"]

        client = Client()
        client.force_login(personas.owner)
        page_upload = io.BytesIO(data)
        page_upload.name = "tasks.jsonl"
        page = client.post(
            reverse("task-set-import", args=[KEY]), {"name": "memo", "file": page_upload}
        )
        assert page.status_code == 413
        assert "ENTERPRISEVAL_MAX_TASK_SET_BYTES" in page.content.decode()
    assert not TaskSet.objects.exists()


def test_a_streamed_body_is_cut_off_at_the_cap_before_the_parser_reads_past_it(settings):
    from enterpriseval.limits import UploadKind, UploadTooLarge, upload_stream

    settings.ENTERPRISEVAL_UPLOAD_LIMITS = limits(grades=1_000)
    stream = upload_stream(
        kind=UploadKind.GRADES, fileobj=io.BytesIO(b"{}\n" * 10_000), filename="grades.jsonl"
    )
    read = 0
    with pytest.raises(UploadTooLarge, match="more than 1,000 bytes"):
        while line := stream.readline():
            read += len(line)
    assert read <= 1_000


def test_a_decision_file_over_its_cap_names_the_file(tmp_path, settings):
    settings.ENTERPRISEVAL_UPLOAD_LIMITS = limits(decision=10)
    path = tmp_path / "decision.yaml"
    path.write_text("metrics: []\n" * 5)
    with pytest.raises(DecisionFileError, match=r"decision\.yaml: is 60 bytes; the limit is 10"):
        load_decision_file(path)


# --------------------------------------------------------------------------- evidence packs


def bomb_pack(inflated: int, declared: int) -> bytes:
    """A pack whose member inflates to ``inflated`` bytes; its manifest says ``declared``."""
    files = {"decision.json": {"sha256": "0" * 64, "bytes": declared}}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("decision.json", "w", force_zip64=True) as member:
            chunk = b"\0" * (1024 * 1024)
            for _ in range(inflated // len(chunk)):
                member.write(chunk)
        archive.writestr("manifest.json", json.dumps({"files": files, "decision_sha256": "0" * 64}))
    return buffer.getvalue()


@pytest.fixture
def inflations(monkeypatch) -> list[int]:
    """Count the bytes inflated from any zip member."""
    counted: list[int] = []
    real = zipfile.ZipExtFile.read

    def read(self, n=-1):
        data = real(self, n)
        counted.append(len(data))
        return data

    monkeypatch.setattr(zipfile.ZipExtFile, "read", read)
    return counted


def test_a_member_larger_than_its_manifest_says_is_refused_without_inflating_it(inflations):
    data = bomb_pack(64 * 1024 * 1024, declared=10)
    assert len(data) < 1024 * 1024
    inflations.clear()
    result = evidence_verify(data)
    assert not result.ok
    assert result.reason == "decision.json has 67108864 bytes, the manifest says 10"
    assert sum(inflations) < 1024  # the manifest only


def test_members_larger_than_a_pack_may_hold_are_refused_without_inflating(inflations):
    data = bomb_pack(64 * 1024 * 1024, declared=64 * 1024 * 1024)
    inflations.clear()
    result = evidence_verify(data, max_bytes=32 * 1024 * 1024)
    assert not result.ok
    assert "more than the 33,554,432 a pack may hold" in result.reason
    assert sum(inflations) < 1024


def test_an_honest_pack_still_verifies():
    members = {"decision.json": b'{"a": 1}', "scorecard.pdf": b"%PDF-1.7 " * 1000}
    from hashlib import sha256

    manifest = evidence_manifest(
        members,
        decision_sha256=sha256(members["decision.json"]).hexdigest(),
        created_at="2026-01-01T00:00:00Z",
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
        archive.writestr("manifest.json", manifest)
    assert evidence_verify(buffer.getvalue()).ok


# --------------------------------------------------------------------------- EGI result files


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # egibench counts brackets before any parser runs (egibench/importers.py).
        (DEEP_JSON, ": nested deeper than 64 levels (line 1): not a result file"),
        (
            f'{{"a": {HUGE_INTEGER}}}',
            ": refused JSON (line 1, column 7: an integer of 5,000 characters",
        ),
    ],
)
def test_an_egi_native_file_nested_too_deep_or_with_a_huge_integer_names_the_file(
    tmp_path, text, expected
):
    path = tmp_path / "results.json"
    path.write_text(text)
    with pytest.raises(BenchmarkFileError) as refused:
        _load_json(path)
    assert str(refused.value).startswith(f"{path}{expected}")


def test_an_egi_results_file_nested_too_deep_or_over_its_cap_names_the_file(tmp_path, settings):
    path = tmp_path / "roster.json"
    path.write_text(DEEP_JSON)
    with pytest.raises(ServiceError, match=rf"^{path}: refused JSON \(line 1: the document is"):
        egi_results_file_read(path)
    settings.ENTERPRISEVAL_UPLOAD_LIMITS = limits(egi_result=100)
    with pytest.raises(ServiceError, match=r"roster\.json: the EGI-Bench result file is"):
        egi_results_file_read(path)
