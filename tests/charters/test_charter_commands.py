"""``enterpriseval charter_create|charter_update|charter_validate|charter_sign``: a charter from
a file to frozen, through the services the editor and the API call."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry
from charters.models import Charter, Signature

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "charter.yaml"
METRICS = EXAMPLE.read_text(encoding="utf-8").count("\n  - id: ")


def run(command: str, *args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(command, "--use-case", "CREDIT-MEMO-B", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def refused(command: str, *args: str) -> str:
    with pytest.raises(CommandError) as error:
        run(command, *args)
    assert error.value.returncode == 2
    return str(error.value)


@pytest.fixture
def inverted(tmp_path) -> Path:
    """The example charter with an inverted threshold pair (an error that blocks signing)."""
    text = EXAMPLE.read_text(encoding="utf-8").replace("theta_in: 70", "theta_in: 60", 1)
    path = tmp_path / "inverted.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_create_saves_the_draft_and_prints_its_validation(personas):
    printed, _ = run("charter_create", "--file", str(EXAMPLE), "--as", "owner")
    charter = Charter.objects.get(use_case=personas.use_case)
    assert charter.version == 1 and not charter.is_frozen
    assert charter.metrics.count() == METRICS == 13
    entry = AuditEntry.objects.get(action="charter.create")
    assert entry.actor_id == personas.owner.pk and entry.payload["metrics"] == METRICS
    assert printed.startswith(f"Charter v1 of CREDIT-MEMO-B created as a draft from {EXAMPLE}")
    assert "0 error(s)" in printed and "ready to sign" in printed


def test_create_json_is_the_charter_as_the_api_gives_it(personas):
    printed, _ = run("charter_create", "--file", str(EXAMPLE), "--as", "owner", "--format", "json")
    data = json.loads(printed)
    assert data["version"] == 1 and data["status"] == "draft"
    assert next(m["id"] for m in data["document"]["metrics"]) == "citation_precision_lenient"


def test_an_unreadable_file_is_refused_with_its_line_and_field(personas, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("metrics:\n  - id: hallucination_rate\n    treatment: yes\n", encoding="utf-8")
    message = refused("charter_create", "--file", str(bad), "--as", "owner")
    assert message.startswith(f"{bad}:3: metrics[0].treatment: ")
    assert not Charter.objects.exists()


def test_a_missing_file_is_refused_naming_the_option(personas, tmp_path):
    message = refused("charter_create", "--file", str(tmp_path / "none.yaml"), "--as", "owner")
    assert message.startswith("--file: ") and "No such file" in message


def test_a_second_charter_is_refused(personas):
    run("charter_create", "--file", str(EXAMPLE), "--as", "owner")
    message = refused("charter_create", "--file", str(EXAMPLE), "--as", "owner")
    assert "already has a draft charter v1; edit that draft" in message
    assert Charter.objects.count() == 1


@pytest.mark.parametrize("actor", ["model_owner", "grader", "adjudicator", "reviewer"])
def test_only_the_charter_owner_creates_it(personas, actor):
    message = refused("charter_create", "--file", str(EXAMPLE), "--as", actor)
    assert message.startswith("--as: ")
    assert not Charter.objects.exists()


def test_validate_prints_each_error_with_its_line_and_exits_2(personas, inverted):
    with pytest.raises(CommandError) as error:
        out = io.StringIO()
        call_command(
            "charter_validate",
            "--use-case=CREDIT-MEMO-B",
            f"--file={inverted}",
            "--as=reviewer",
            stdout=out,
        )
    assert error.value.returncode == 2
    lines = out.getvalue().splitlines()
    line = EXAMPLE.read_text(encoding="utf-8").splitlines().index("    theta_in: 70") + 1
    assert any(
        entry.startswith(f"{inverted}:{line}: error: metrics[citation_precision_lenient].theta_in")
        for entry in lines
    ), lines
    assert "error(s) block signing" in str(error.value)
    assert not Charter.objects.exists()


def test_validate_of_a_sound_file_exits_0_and_json_is_the_api_report(personas):
    printed, _ = run(
        "charter_validate", "--file", str(EXAMPLE), "--as", "owner", "--format", "json"
    )
    report = json.loads(printed)
    assert report["ok"] is True and report["intensity"] == "E2"


def test_validate_refuses_a_grader(personas):
    message = refused("charter_validate", "--file", str(EXAMPLE), "--as", "grader")
    assert message.startswith("--as: Graders do not see the charter")


def test_update_replaces_the_draft_and_sign_refuses_it_while_it_has_errors(personas, inverted):
    run("charter_create", "--file", str(EXAMPLE), "--as", "owner")
    printed, _ = run("charter_update", "--charter", "1", "--file", str(inverted), "--as", "owner")
    assert "saved as a draft" in printed and "fix the errors before signing" in printed
    assert AuditEntry.objects.filter(action="charter.update").count() == 1
    message = refused("charter_sign", "--charter", "1", "--role", "charter_owner", "--as", "owner")
    assert "validation error" in message and "fix them before signing" in message
    assert not Signature.objects.exists()


def test_three_signatures_freeze_the_charter(personas):
    run("charter_create", "--file", str(EXAMPLE), "--as", "owner")
    run("charter_sign", "--charter", "1", "--role", "charter_owner", "--as", "owner")
    run("charter_sign", "--charter", "1", "--role", "model_owner", "--as", "model_owner")
    printed, _ = run("charter_sign", "--charter", "1", "--role", "reviewer", "--as", "reviewer")
    charter = Charter.objects.get()
    assert charter.is_frozen
    assert f"frozen: SHA-256 {charter.sha256}" in printed
    assert AuditEntry.objects.filter(action="charter.sign").count() == 3
    assert AuditEntry.objects.get(action="charter.freeze").payload["sha256"] == charter.sha256
    message = refused("charter_update", "--charter", "1", "--file", str(EXAMPLE), "--as", "owner")
    assert message.startswith("--charter: charter v1 of CREDIT-MEMO-B is signed and frozen")


def test_signing_in_a_role_not_held_is_refused(personas):
    run("charter_create", "--file", str(EXAMPLE), "--as", "owner")
    message = refused("charter_sign", "--charter", "1", "--role", "reviewer", "--as", "owner")
    assert message.startswith("--as: This needs one of these roles")
    assert not Signature.objects.exists()
    message = refused("charter_sign", "--charter", "2", "--role", "reviewer", "--as", "reviewer")
    assert message == "--charter: CREDIT-MEMO-B has no charter v2"
