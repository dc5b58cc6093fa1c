"""``enterpriseval judging_cancel``: cancel a stuck judging from the command line."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry
from runs.models import JudgingStatus
from runs.services.judging import run_judge_execute, run_judge_start


def cancel(world, run_id: int, judging_id: int, actor: str, *extra: str) -> str:
    out = io.StringIO()
    call_command(
        "judging_cancel",
        f"--use-case={world.key}",
        f"--run={run_id}",
        f"--judging={judging_id}",
        f"--as={actor}",
        *extra,
        stdout=out,
    )
    return out.getvalue()


@pytest.fixture
def judging(runs_world, finished_run):
    return run_judge_start(
        actor=runs_world.model_owner,
        run=finished_run(2),
        kind="offline",
        purpose="gated",
        enqueue=False,
    )


def test_it_cancels_and_records_the_reason(runs_world, judging):
    printed = cancel(runs_world, judging.run_id, judging.pk, "model_owner", "--reason", "stuck")
    judging.refresh_from_db()
    assert judging.status == JudgingStatus.CANCELLED
    assert AuditEntry.objects.get(action="run.judge_cancel").payload["reason"] == "stuck"
    assert printed.strip() == (
        f"Judging {judging.pk} of run {judging.run_id} cancelled after 0 of 0 outputs; "
        "0 scores written stay."
    )


def test_json_is_the_judging_as_the_api_gives_it(runs_world, judging):
    data = json.loads(cancel(runs_world, judging.run_id, judging.pk, "owner", "--format=json"))
    assert data["id"] == judging.pk and data["status"] == "cancelled"


def test_a_finished_judging_is_refused_naming_the_option(runs_world, judging):
    run_judge_execute(judging_id=judging.pk)
    with pytest.raises(CommandError) as refused:
        cancel(runs_world, judging.run_id, judging.pk, "owner")
    assert refused.value.returncode == 2
    assert str(refused.value).startswith(f"--judging: judging {judging.pk} of run")
    assert "is completed" in str(refused.value)


@pytest.mark.parametrize(
    ("actor", "start"),
    [
        ("reviewer", "--as: To start, import or judge runs"),
        ("grader", "--as: "),
        ("outsider", "--as: outsider holds no role on"),
    ],
)
def test_those_who_may_not_judge_are_refused(runs_world, judging, actor, start):
    with pytest.raises(CommandError) as refused:
        cancel(runs_world, judging.run_id, judging.pk, actor)
    assert refused.value.returncode == 2 and str(refused.value).startswith(start)
    judging.refresh_from_db()
    assert judging.status == JudgingStatus.PENDING


def test_unknown_runs_and_judgings_are_refused(runs_world, judging):
    with pytest.raises(CommandError) as refused:
        cancel(runs_world, 999999, judging.pk, "owner")
    assert str(refused.value) == f"--run: no run 999999 in {runs_world.key}"
    with pytest.raises(CommandError) as refused:
        cancel(runs_world, judging.run_id, 999999, "owner")
    assert str(refused.value) == f"--judging: no judging 999999 of run {judging.run_id}"
