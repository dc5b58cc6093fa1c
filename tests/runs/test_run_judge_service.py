"""run_judge_start and run_judge_execute: judging a run on the workers, its refusals and audit."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from audit.models import AuditEntry
from enterpriseval.errors import ConflictError, ServiceError
from runs.models import Judge, JudgeScore, Judging, JudgingStatus, Run, RunStatus, Unit
from runs.services.judging import judge_get_or_create, judge_run, run_judge_execute, run_judge_start


def start(world, run, *, actor=None, **options):
    options.setdefault("kind", "offline")
    options.setdefault("purpose", "gated")
    return run_judge_start(actor=actor or world.model_owner, run=run, **options)


def test_an_offline_judging_is_enqueued_on_commit_and_scores_every_unit(
    runs_world, finished_run, django_capture_on_commit_callbacks
):
    run = finished_run(3)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        judging = start(runs_world, run)
        assert Judging.objects.get(pk=judging.pk).status == JudgingStatus.PENDING
    assert len(callbacks) == 1
    judging.refresh_from_db()
    assert judging.status == JudgingStatus.COMPLETED
    assert (judging.outputs_total, judging.outputs_done, judging.outputs_judged) == (3, 3, 3)
    assert judging.units_scored == Unit.objects.filter(output__run=run).count()
    assert judging.scores_written == JudgeScore.objects.filter(judge=judging.judge).count() > 0
    assert judging.started_at and judging.finished_at and judging.error == ""
    started = AuditEntry.objects.get(action="run.judge_start")
    assert started.actor_username == runs_world.model_owner.username
    assert started.use_case_id == runs_world.use_case.pk
    assert started.payload["judging"] == judging.pk
    assert started.payload["judge"] == "offline"
    assert started.payload["purpose"] == "gated"
    assert started.payload["rubric_sha256"] == judging.judge.rubric_sha256
    assert AuditEntry.objects.get(action="run.judge").payload["outputs_judged"] == 3


def test_a_judge_on_the_systems_model_is_refused_for_a_gated_metric_naming_both(
    runs_world, finished_run
):
    run = finished_run(1)
    with pytest.raises(ServiceError) as raised:
        start(runs_world, run, kind="llm", model_ref="vertex_ai/gemini-2.5-pro")
    message = raised.value.message
    assert raised.value.field == "judge"
    assert "vertex_ai/gemini-2.5-pro" in message  # the judge's model
    assert "gemini/gemini-2.5-pro" in message  # σ's model
    assert "gemini-2-5 v1" in message
    assert "never grades itself for a gated metric" in message
    assert "another model" in message and "informational" in message
    assert not Judging.objects.exists()
    assert not Judge.objects.exists()  # the registration rolled back with the refusal
    assert not AuditEntry.objects.filter(action__startswith="judge.").exists()
    assert not AuditEntry.objects.filter(action="run.judge_start").exists()


def test_the_systems_model_may_judge_an_informational_metric_marked_self_graded(
    runs_world, finished_run, fake_judge, django_capture_on_commit_callbacks
):
    run = finished_run(2)
    with django_capture_on_commit_callbacks(execute=True):
        judging = start(
            runs_world,
            run,
            kind="llm",
            model_ref="gemini-2.5-pro",
            purpose="informational",
            api_base=fake_judge.base_url,
        )
    judging.refresh_from_db()
    assert judging.self_graded
    assert judging.status == JudgingStatus.COMPLETED
    assert fake_judge.calls == 2


def test_an_llm_judge_at_an_endpoint_reads_its_key_from_the_named_variable(
    runs_world, finished_run, fake_judge, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test-secret")
    run = finished_run(3)
    with django_capture_on_commit_callbacks(execute=True):
        judging = start(
            runs_world,
            run,
            kind="llm",
            model_ref="judge-model",
            api_base=fake_judge.base_url,
            api_key_env="JUDGE_TEST_KEY",
            concurrency=2,
        )
    judging.refresh_from_db()
    assert judging.status == JudgingStatus.COMPLETED, judging.error
    assert (judging.outputs_judged, judging.concurrency, fake_judge.calls) == (3, 2, 3)
    assert judging.api_key_env == "JUDGE_TEST_KEY"
    assert fake_judge.requests[0]["model"] == "judge-model"
    stored = AuditEntry.objects.get(action="run.judge_start").payload
    assert stored["api_key_env"] == "JUDGE_TEST_KEY"
    assert "sk-test-secret" not in str(stored)


def test_an_unset_key_variable_fails_the_judging_saying_which_and_where(
    runs_world, finished_run, fake_judge, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.delenv("JUDGE_MISSING_KEY", raising=False)
    run = finished_run(1)
    with django_capture_on_commit_callbacks(execute=True):
        judging = start(
            runs_world,
            run,
            kind="llm",
            model_ref="judge-model",
            api_base=fake_judge.base_url,
            api_key_env="JUDGE_MISSING_KEY",
        )
    judging.refresh_from_db()
    assert judging.status == JudgingStatus.FAILED
    assert "JUDGE_MISSING_KEY is unset" in judging.error
    assert "worker's environment" in judging.error
    assert judging.finished_at is not None
    failed = AuditEntry.objects.get(action="run.judge_fail")
    assert failed.payload == {"run": run.pk, "judging": judging.pk, "reason": judging.error}
    assert fake_judge.calls == 0


@pytest.mark.parametrize(
    ("options", "field", "words"),
    [
        ({"purpose": "decisive"}, "purpose", "gated, informational"),
        ({"rubric_version": "0"}, "rubric_version", "rubric version 1 only"),
        ({"concurrency": 0}, "concurrency", "from 1 to 256"),
        ({"kind": "oracle"}, "kind", "offline, llm"),
        ({"kind": "llm"}, "model_ref", "needs model_ref"),
        ({"api_base": "http://127.0.0.1:9/v1"}, "api_base", "offline judge calls no model"),
        (
            {"kind": "llm", "model_ref": "judge-model", "api_base": "not a url"},
            "api_base",
            "http(s) URL",
        ),
        (
            {"kind": "llm", "model_ref": "judge-model", "api_key_env": "sk-live-0123456789"},
            "api_key_env",
            "never the key itself",
        ),
    ],
)
def test_bad_choices_are_refused_naming_the_field(runs_world, finished_run, options, field, words):
    run = finished_run(1)
    with pytest.raises(ServiceError) as raised:
        start(runs_world, run, **options)
    assert raised.value.field == field
    assert words in raised.value.message
    assert not Judging.objects.exists()


def test_a_run_still_running_is_refused(runs_world, finished_run):
    run = finished_run(1)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    run.refresh_from_db()
    with pytest.raises(ConflictError, match="judge it once it has finished"):
        start(runs_world, run)


def test_a_second_judging_by_the_same_judge_waits_for_the_first(runs_world, finished_run):
    run = finished_run(1)
    first = start(runs_world, run, enqueue=False)
    with pytest.raises(ConflictError, match=f"judging {first.pk}, pending"):
        start(runs_world, run)
    run_judge_execute(judging_id=first.pk)
    assert start(runs_world, run, enqueue=False).pk != first.pk


@pytest.mark.parametrize("persona", ["grader", "adjudicator", "reviewer", "outsider"])
def test_only_owners_judge_a_run(runs_world, finished_run, persona):
    run = finished_run(1)
    with pytest.raises(PermissionDenied):
        start(runs_world, run, actor=runs_world.by_name(persona))
    assert not Judging.objects.exists()


def test_the_charter_owner_may_judge_a_run(runs_world, finished_run):
    run = finished_run(1)
    judging = start(runs_world, run, actor=runs_world.owner, enqueue=False)
    assert run_judge_execute(judging_id=judging.pk).status == JudgingStatus.COMPLETED


def test_executing_a_finished_judging_again_changes_nothing(runs_world, finished_run):
    run = finished_run(2)
    judging = start(runs_world, run, enqueue=False)
    done = run_judge_execute(judging_id=judging.pk)
    entries = AuditEntry.objects.count()
    again = run_judge_execute(judging_id=judging.pk)
    assert (again.status, again.outputs_judged, again.finished_at) == (
        done.status,
        done.outputs_judged,
        done.finished_at,
    )
    assert AuditEntry.objects.count() == entries


def test_a_second_judging_skips_what_the_first_scored(runs_world, finished_run):
    run = finished_run(2)
    run_judge_execute(judging_id=start(runs_world, run, enqueue=False).pk)
    second = run_judge_execute(judging_id=start(runs_world, run, enqueue=False).pk)
    assert second.status == JudgingStatus.COMPLETED
    assert (second.outputs_done, second.outputs_judged, second.scores_written) == (2, 0, 0)


def test_progress_is_reported_after_each_batch(runs_world, finished_run):
    run = finished_run(3)
    seen: list[tuple[int, int]] = []
    judge_run(
        actor=None,
        run=run,
        judge=judge_get_or_create(kind="offline"),
        purpose="gated",
        batch_size=1,
        on_progress=lambda summary: seen.append((summary.outputs_total, summary.outputs_judged)),
    )
    assert seen == [(3, 0), (3, 1), (3, 2), (3, 3)]


def test_the_counters_are_written_while_the_judging_runs(runs_world, finished_run):
    run = finished_run(2)
    judging = start(runs_world, run, enqueue=False)
    seen: list[tuple[str, int, int]] = []

    def look(counters: dict[str, int]) -> None:
        stored = Judging.objects.get(pk=judging.pk)
        seen.append((stored.status, stored.outputs_done, counters["outputs_done"]))

    run_judge_execute(judging_id=judging.pk, on_progress=look)
    assert seen[0] == (JudgingStatus.RUNNING, 0, 0)
    assert seen[-1] == (JudgingStatus.RUNNING, 2, 2)
