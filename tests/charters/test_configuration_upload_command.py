"""``enterpriseval configuration_upload``: freeze a σ file as the next version of its name."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry
from charters.models import Configuration

SIGMA = Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "sigma-gemini-2.5.yaml"


def upload(path: Path, actor: str, *extra: str, name: str = "gemini-2-5") -> str:
    out = io.StringIO()
    call_command(
        "configuration_upload",
        "--use-case=CREDIT-MEMO-B",
        f"--name={name}",
        f"--file={path}",
        f"--as={actor}",
        *extra,
        stdout=out,
        stderr=io.StringIO(),
    )
    return out.getvalue()


def refused(path: Path, actor: str, **kwargs: str) -> str:
    with pytest.raises(CommandError) as error:
        upload(path, actor, **kwargs)
    assert error.value.returncode == 2
    return str(error.value)


@pytest.mark.parametrize("actor", ["owner", "model_owner"])
def test_it_freezes_version_1_and_records_it(personas, actor):
    printed = upload(SIGMA, actor)
    sigma = Configuration.objects.get(use_case=personas.use_case)
    assert (sigma.name, sigma.version) == ("gemini-2-5", 1)
    entry = AuditEntry.objects.get(action="configuration.freeze")
    assert entry.payload["sha256"] == sigma.sha256 and entry.payload["version"] == 1
    assert entry.actor.username == actor
    assert f"σ gemini-2-5 v1 of CREDIT-MEMO-B frozen from {SIGMA}" in printed
    assert sigma.sha256 in printed


def test_json_is_the_configuration_as_the_api_gives_it(personas):
    data = json.loads(upload(SIGMA, "model_owner", "--format", "json"))
    assert data["name"] == "gemini-2-5" and data["version"] == 1
    canonical = data["canonical_json"].encode()
    assert data["sha256"] == hashlib.sha256(canonical).hexdigest()


def test_the_same_document_again_is_refused(personas):
    upload(SIGMA, "owner")
    message = refused(SIGMA, "owner")
    assert "is identical to version 1" in message
    assert Configuration.objects.count() == 1


def test_an_invalid_document_is_refused_naming_the_file_line_and_field(personas, tmp_path):
    text = SIGMA.read_text(encoding="utf-8")
    lines = text.splitlines()
    number = next(i for i, line in enumerate(lines) if line.lstrip().startswith("temperature:"))
    indent = lines[number][: len(lines[number]) - len(lines[number].lstrip())]
    lines[number] = f"{indent}temperature: hot"
    bad = tmp_path / "bad.yaml"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    message = refused(bad, "owner")
    assert message.startswith(f"{bad}:{number + 1}: ") and "temperature" in message
    assert not Configuration.objects.exists()


def test_a_bad_name_is_refused_naming_the_option(personas):
    message = refused(SIGMA, "owner", name="no spaces")
    assert message.startswith("--name: name 'no spaces' must be 1–80 letters")


@pytest.mark.parametrize(
    ("actor", "start"),
    [
        ("grader", "--as: Graders"),
        ("reviewer", "--as: To upload σ on CREDIT-MEMO-B you need one of"),
        ("adjudicator", "--as: To upload σ on CREDIT-MEMO-B you need one of"),
        ("outsider", "--as: outsider holds no role on CREDIT-MEMO-B"),
    ],
)
def test_those_who_may_not_upload_are_refused(personas, actor, start):
    assert refused(SIGMA, actor).startswith(start)
    assert not Configuration.objects.exists()
