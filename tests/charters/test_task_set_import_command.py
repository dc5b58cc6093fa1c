"""``enterpriseval task_set_import``: import a JSONL task file, all or nothing."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry
from charters.management.cli import PROGRESS_MIN_BYTES
from charters.models import Task, TaskSet

TASKS = Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "tasks.jsonl"


def import_tasks(path: Path, actor: str, *extra: str, name: str = "credit-memo"):
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "task_set_import",
        "--use-case=CREDIT-MEMO-B",
        f"--name={name}",
        f"--file={path}",
        f"--as={actor}",
        *extra,
        stdout=out,
        stderr=err,
    )
    return out.getvalue(), err.getvalue()


def test_it_imports_every_task_and_records_the_manifest(personas):
    printed, _ = import_tasks(TASKS, "model_owner")
    task_set = TaskSet.objects.get(use_case=personas.use_case)
    lines = TASKS.read_text(encoding="utf-8").splitlines()
    assert task_set.line_count == len(lines) == Task.objects.filter(task_set=task_set).count()
    assert task_set.manifest_sha256 == hashlib.sha256(TASKS.read_bytes()).hexdigest()
    splits = {}
    for line in lines:
        split = json.loads(line)["split"]
        splits[split] = splits.get(split, 0) + 1
    assert task_set.split_counts == splits
    entry = AuditEntry.objects.get(action="taskset.import")
    assert entry.payload["task_count"] == len(lines) and entry.actor_id == personas.model_owner.pk
    assert f"Task set credit-memo v1 of CREDIT-MEMO-B imported from {TASKS}" in printed


def test_importing_again_makes_version_2_and_json_is_the_api_manifest(personas):
    import_tasks(TASKS, "owner")
    printed, _ = import_tasks(TASKS, "owner", "--format", "json")
    data = json.loads(printed)
    assert data["name"] == "credit-memo" and data["version"] == 2


def test_bad_lines_are_each_printed_and_nothing_is_imported(personas, tmp_path):
    lines = TASKS.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[2])
    broken["split"] = "training"
    lines[2] = json.dumps(broken)
    lines[5] = "{not json"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        import_tasks(bad, "owner")
    assert refused.value.returncode == 2
    assert str(refused.value).startswith("bad.jsonl: 2 error(s) on 2 line(s); nothing was imported")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command(
            "task_set_import",
            "--use-case=CREDIT-MEMO-B",
            "--name=credit-memo",
            f"--file={bad}",
            "--as=owner",
            stderr=err,
        )
    reported = err.getvalue().splitlines()
    assert reported[0].startswith(f"{bad}:3: split: ")
    assert reported[1].startswith(f"{bad}:6: ")
    assert not TaskSet.objects.exists() and not Task.objects.exists()
    assert not AuditEntry.objects.filter(action="taskset.import").exists()


def test_a_large_file_shows_its_progress_while_checking_then_writing(personas, tmp_path):
    lines = TASKS.read_bytes()
    copies = PROGRESS_MIN_BYTES // len(lines) + 1
    big = tmp_path / "big.jsonl"
    records = []
    for copy in range(copies):
        for line in lines.decode().splitlines():
            record = json.loads(line)
            record["id"] = f"{record['id']}-{copy}"
            for key in ("sources", "key_elements", "guidance"):
                for item in record.get(key) or []:
                    if isinstance(item, dict) and "id" in item:
                        item["id"] = f"{item['id']}-{copy}"
            records.append(json.dumps(record))
    big.write_text("\n".join(records) + "\n", encoding="utf-8")
    _, err = import_tasks(big, "owner")
    assert "checking" in err and "writing" in err and "100%" in err
    assert TaskSet.objects.get().line_count == len(records)


@pytest.mark.parametrize(
    ("actor", "start"),
    [
        ("grader", "--as: This needs one of these roles"),
        ("reviewer", "--as: This needs one of these roles"),
        ("outsider", "--as: outsider holds no role on CREDIT-MEMO-B"),
    ],
)
def test_those_who_may_not_import_are_refused(personas, actor, start):
    with pytest.raises(CommandError) as refused:
        import_tasks(TASKS, actor)
    assert refused.value.returncode == 2 and str(refused.value).startswith(start)
    assert not TaskSet.objects.exists()


def test_a_bad_name_is_refused_naming_the_option(personas):
    with pytest.raises(CommandError) as refused:
        import_tasks(TASKS, "owner", name="bad name")
    assert str(refused.value).startswith("--name: 'bad name' is not a valid task-set name")
