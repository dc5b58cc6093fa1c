"""``enterpriseval judge``: judge a run from the command line, inline or on the workers."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from runs.models import Judging, JudgingStatus


def judge(world, run, *args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(
        "judge", "--use-case", world.key, "--run", str(run.pk), *args, stdout=out, stderr=err
    )
    return out.getvalue(), err.getvalue()


def test_the_offline_judge_runs_inline_with_a_progress_bar_and_a_summary(runs_world, finished_run):
    run = finished_run(3)
    out, err = judge(runs_world, run, "--judge", "offline", "--inline")
    judging = Judging.objects.get()
    assert judging.status == JudgingStatus.COMPLETED
    assert f"Judging {judging.pk}: run {run.pk} by offline 1 for a gated metric (inline)" in out
    assert (
        f"Judging {judging.pk} of run {run.pk} completed: 3 of 3 outputs (3 judged now, 0 "
        f"without a valid reply); {judging.units_scored} units scored" in out
    )
    assert "3/3" in err  # tqdm's bar


def test_an_llm_judge_is_given_its_model_endpoint_and_key_variable(
    runs_world, finished_run, fake_judge, monkeypatch
):
    monkeypatch.setenv("JUDGE_CLI_KEY", "sk-cli")
    run = finished_run(2)
    out, _err = judge(
        runs_world,
        run,
        "--judge",
        "litellm",
        "--model",
        "judge-model",
        "--api-base",
        fake_judge.base_url,
        "--api-key-env",
        "JUDGE_CLI_KEY",
        "--concurrency",
        "2",
        "--purpose",
        "informational",
        "--actor",
        runs_world.owner.username,
        "--inline",
    )
    judging = Judging.objects.get()
    assert (judging.status, judging.requested_by, fake_judge.calls) == (
        JudgingStatus.COMPLETED,
        runs_world.owner,
        2,
    )
    assert "by llm-judge-model 1 for an informational metric (inline)" in out
    assert "completed: 2 of 2 outputs" in out


@pytest.mark.django_db(transaction=True)
def test_without_inline_the_judging_is_enqueued_and_followed(runs_world, finished_run):
    run = finished_run(2)
    out, _err = judge(runs_world, run, "--judge", "offline")
    assert "(enqueued)" in out
    assert "completed: 2 of 2 outputs" in out


def test_judging_with_the_systems_own_model_is_refused_naming_both_models(runs_world, finished_run):
    run = finished_run(1)
    with pytest.raises(CommandError) as raised:
        judge(runs_world, run, "--judge", "litellm", "--model", "vertex_ai/gemini-2.5-pro")
    message = str(raised.value)
    assert message.startswith("--judge: ")
    assert "vertex_ai/gemini-2.5-pro" in message and "gemini/gemini-2.5-pro" in message
    assert not Judging.objects.exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--judge", "litellm"), "--model: an LLM judge needs model_ref"),
        (
            ("--judge", "litellm", "--model", "m", "--api-key-env", "sk-123"),
            "--api-key-env: ",
        ),
        (("--judge", "offline", "--rubric-version", "7"), "--rubric-version: "),
        (("--judge", "offline", "--actor", "nobody"), "--actor: no user 'nobody'"),
        (("--judge", "offline", "--actor", "grader"), "--actor: "),
    ],
)
def test_each_refusal_names_the_option_at_fault(runs_world, finished_run, args, expected):
    run = finished_run(1)
    with pytest.raises(CommandError) as raised:
        judge(runs_world, run, *args)
    assert str(raised.value).startswith(expected)


def test_an_unknown_run_is_named(runs_world, finished_run):
    run = finished_run(1)
    with pytest.raises(CommandError, match=f"--run: no run {run.pk + 5} in CREDIT-MEMO-B"):
        call_command(
            "judge", "--use-case", runs_world.key, "--run", str(run.pk + 5), "--judge", "offline"
        )
