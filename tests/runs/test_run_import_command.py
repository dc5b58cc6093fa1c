"""``enterpriseval run_import``: outputs made elsewhere become a completed run, all or nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry
from runs.models import Output, Run, RunMode, RunStatus

OUTPUTS = (
    Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "outputs-gemini-2-5.jsonl"
)


def import_run(world, path, actor: str, *extra: str, configuration: str = "gemini-2-5:1"):
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "run_import",
        f"--use-case={world.key}",
        f"--configuration={configuration}",
        "--task-set=credit-memo:1",
        "--split=graded",
        f"--file={path}",
        f"--as={actor}",
        *extra,
        stdout=out,
        stderr=err,
    )
    return out.getvalue(), err.getvalue()


def test_it_imports_every_output_as_a_completed_run(runs_world):
    printed, _ = import_run(runs_world, OUTPUTS, "model_owner")
    run = Run.objects.get()
    lines = OUTPUTS.read_text(encoding="utf-8").splitlines()
    assert (run.mode, run.status) == (RunMode.IMPORTED, RunStatus.COMPLETED)
    assert Output.objects.filter(run=run).count() == len(lines) == run.items_done
    assert set(Output.objects.values_list("task__external_id", flat=True)) == {
        json.loads(line)["task_id"] for line in lines
    }
    entry = AuditEntry.objects.filter(target_id=str(run.pk), action__startswith="run.").first()
    assert entry is not None and entry.actor_id == runs_world.model_owner.pk
    assert printed.startswith(f"Run {run.pk} of {runs_world.key} imported from {OUTPUTS}")
    assert f"{len(lines)} output(s), 0 failed" in printed


def test_json_is_the_run_as_the_api_gives_it(runs_world):
    printed, _ = import_run(runs_world, OUTPUTS, "owner", "--format", "json")
    data = json.loads(printed)
    assert data["id"] == Run.objects.get().pk and data["status"] == "completed"


def test_a_bad_line_imports_nothing_and_is_printed_with_its_line(runs_world, tmp_path):
    lines = OUTPUTS.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[3])
    record["task_id"] = "NO-SUCH-TASK"
    lines[3] = json.dumps(record)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        import_run(runs_world, bad, "owner")
    assert refused.value.returncode == 2
    assert str(refused.value).startswith(f"{bad}:4: task_id: ")
    assert not Run.objects.exists() and not Output.objects.exists()


def test_an_unknown_configuration_is_refused_naming_the_option(runs_world):
    with pytest.raises(CommandError) as refused:
        import_run(runs_world, OUTPUTS, "owner", configuration="gemini-2-5:7")
    assert refused.value.returncode == 2
    assert str(refused.value) == f"--configuration: no σ gemini-2-5 v7 in {runs_world.key}"
    with pytest.raises(CommandError) as refused:
        import_run(runs_world, OUTPUTS, "owner", configuration="gemini")
    assert refused.value.returncode == 2
    assert str(refused.value).startswith("--configuration: expected NAME:VERSION")


@pytest.mark.parametrize(
    ("actor", "start"),
    [
        ("reviewer", "--as: To start, import or judge runs"),
        ("grader", "--as: "),
        ("outsider", "--as: outsider holds no role on"),
    ],
)
def test_those_who_may_not_import_are_refused(runs_world, actor, start):
    with pytest.raises(CommandError) as refused:
        import_run(runs_world, OUTPUTS, actor)
    assert refused.value.returncode == 2 and str(refused.value).startswith(start)
    assert not Run.objects.exists()
