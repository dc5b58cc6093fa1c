"""Evidence packs: built from a recorded decision, checked offline by ``verify_evidence``."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.core.exceptions import PermissionDenied
from django.core.management import call_command

from audit.models import AuditEntry, entry_hash
from charters.models import Charter
from demo.testing.decisions import SIGMA_OF_MODEL, decide, load_example_estimates
from demo.testing.grading import fill, make_world
from gates.algorithm import gate_evaluate
from gates.services import decision_record, gate_input_for, grades_digest
from scorecards.evidence import evidence_verify
from scorecards.services import evidence_pack_build

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = {
    "audit.jsonl",
    "charter.json",
    "configuration.json",
    "decision.json",
    "grades.jsonl",
    "judge_scores.jsonl",
    "task_set_manifest.json",
}


@pytest.fixture
def world(db):
    return make_world()


def members_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def rezip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def verify(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("verify_evidence", str(path), stdout=out, stderr=err)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def graded_decision(world):
    for assignment in world.assignments_of(world.graders[0])[:2]:
        fill(assignment)
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    estimates = load_example_estimates("gemini-2.5")
    run = next(r for r in world.runs if r.configuration.name == SIGMA_OF_MODEL["gemini-2.5"])
    gate = gate_evaluate(
        gate_input_for(charter=charter, estimates={e.metric_id: e for e in estimates}),
        mode="conservative",
    )
    return decision_record(
        actor=world.owner,
        charter=charter,
        run=run,
        estimates=estimates,
        gate=gate,
        evidence={"grades_sha256": grades_digest(session=world.session)},
        session=world.session,
    )


def test_the_manifest_lists_every_member_with_its_sha256(world):
    decision = decide(world)
    members = members_of(evidence_pack_build(decision=decision, actor=world.owner))
    manifest = json.loads(members.pop("manifest.json"))
    assert set(members) == MEMBERS
    assert manifest["files"] == {
        name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        for name, data in members.items()
    }
    assert manifest["decision_sha256"] == decision.sha256
    assert manifest["created_at"] == decision.created_at.isoformat()


def test_decision_json_is_the_decisions_canonical_json(world):
    decision = decide(world)
    members = members_of(evidence_pack_build(decision=decision, actor=world.owner))
    assert members["decision.json"].decode() == decision.canonical_json
    assert hashlib.sha256(members["decision.json"]).hexdigest() == decision.sha256
    assert members["charter.json"].decode() == decision.charter.canonical_json
    assert members["configuration.json"].decode() == decision.configuration.canonical_json
    task_set = json.loads(members["task_set_manifest.json"])
    assert task_set["manifest_sha256"] == decision.run.task_set.manifest_sha256


def test_two_builds_of_a_decision_are_byte_identical(world):
    decision = decide(world)
    first = evidence_pack_build(decision=decision, actor=world.owner)
    assert evidence_pack_build(decision=decision, actor=world.reviewer) == first


def test_the_audit_extract_ends_at_the_decision_entry_with_recomputable_hashes(world):
    decision = decide(world)
    members = members_of(evidence_pack_build(decision=decision, actor=world.owner))
    rows = [json.loads(line) for line in members["audit.jsonl"].splitlines()]
    assert rows[-1]["action"] == "decision.record"
    assert rows[-1]["payload"]["sha256"] == decision.sha256
    assert {row["use_case_id"] for row in rows} == {world.use_case.pk}
    assert all(entry_hash(row) == row["entry_hash"] for row in rows)
    assert [row["sequence"] for row in rows] == sorted(row["sequence"] for row in rows)


def test_grades_jsonl_holds_the_rows_grades_digest_hashes(world):
    decision = graded_decision(world)
    members = members_of(evidence_pack_build(decision=decision, actor=world.owner))
    rows = [json.loads(line) for line in members["grades.jsonl"].splitlines()]
    assert rows
    grades = [
        [r["artefact"], r["grader"], r["unit_key"], r["field"], r["value"]]
        for r in rows
        if r["kind"] == "grade"
    ]
    adjudications = [
        [r["artefact"], r["unit_key"], r["field"], r["value"]]
        for r in rows
        if r["kind"] == "adjudication"
    ]
    text = json.dumps(
        {"grades": grades, "adjudications": adjudications},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert hashlib.sha256(text.encode()).hexdigest() == decision.evidence["grades_sha256"]


def test_building_records_the_packs_sha256_in_the_audit_log(world):
    decision = decide(world)
    data = evidence_pack_build(decision=decision, actor=world.owner)
    entry = AuditEntry.objects.get(action="evidence_pack.build")
    assert entry.actor == world.owner
    assert (entry.target_type, entry.target_id) == ("gates.decision", str(decision.pk))
    assert entry.payload["sha256"] == hashlib.sha256(data).hexdigest()
    assert entry.payload["decision_sha256"] == decision.sha256


def test_an_outsider_cannot_build_a_pack(world):
    decision = decide(world)
    with pytest.raises(PermissionDenied):
        evidence_pack_build(decision=decision, actor=world.outsider)
    assert not AuditEntry.objects.filter(action="evidence_pack.build").exists()


def test_an_extra_file_is_packed_and_listed(world):
    decision = decide(world)
    data = evidence_pack_build(
        decision=decision, actor=world.owner, extra_files={"scorecard.pdf": b"%PDF-1.7"}
    )
    assert evidence_verify(data).checked.count("scorecard.pdf") == 1


def test_evidence_pack_command_writes_a_pack_that_verifies(world, tmp_path):
    decision = decide(world)
    out = tmp_path / "pack.zip"
    call_command(
        "evidence_pack",
        "--decision",
        str(decision.pk),
        "--out",
        str(out),
        "--as",
        world.owner.username,
        stdout=io.StringIO(),
    )
    code, stdout, _ = verify(out)
    assert code == 0
    assert "decision.json" in stdout
    assert "OK: 7 members" in stdout


def test_verify_evidence_runs_as_a_subprocess(world, tmp_path):
    path = tmp_path / "pack.zip"
    path.write_bytes(evidence_pack_build(decision=decide(world), actor=world.owner))
    result = subprocess.run(
        [sys.executable, "manage.py", "verify_evidence", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "evidence pack OK" in result.stdout


def test_verify_evidence_names_a_member_with_one_byte_changed(world, tmp_path):
    members = members_of(evidence_pack_build(decision=decide(world), actor=world.owner))
    members["charter.json"] = members["charter.json"][:-1] + b" "
    path = tmp_path / "altered.zip"
    path.write_bytes(rezip(members))
    code, _, stderr = verify(path)
    assert code == 1
    assert "charter.json" in stderr
    assert "SHA-256" in stderr


def remove_audit(members):
    del members["audit.jsonl"]


def add_notes(members):
    members["notes.txt"] = b"added later"


def break_manifest(members):
    members["manifest.json"] = b"{not json"


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (remove_audit, "audit.jsonl is listed in manifest.json but missing"),
        (add_notes, "notes.txt is in the zip but not listed"),
        (break_manifest, "manifest.json does not parse"),
    ],
)
def test_verify_evidence_names_a_removed_extra_or_unparsable_member(
    world, tmp_path, tamper, message
):
    members = members_of(evidence_pack_build(decision=decide(world), actor=world.owner))
    tamper(members)
    path = tmp_path / "tampered.zip"
    path.write_bytes(rezip(members))
    code, _, stderr = verify(path)
    assert code == 1
    assert message in stderr


def test_verify_evidence_refuses_a_file_that_is_not_a_zip(tmp_path):
    path = tmp_path / "pack.zip"
    path.write_bytes(b"not a zip")
    code, _, stderr = verify(path)
    assert code == 1
    assert "not a zip file" in stderr
