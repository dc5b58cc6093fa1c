"""Cancelling a stuck judging: the service, the worker stopping, the API and the run page."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from rest_framework.test import APIClient

from audit.models import AuditEntry
from enterpriseval.errors import ConflictError
from runs.models import JudgeScore, Judging, JudgingStatus
from runs.services import judging as judging_service
from runs.services.judging import judging_cancel, run_judge_execute, run_judge_start


def requested(world, run) -> Judging:
    return run_judge_start(
        actor=world.model_owner, run=run, kind="offline", purpose="gated", enqueue=False
    )


def test_a_queued_judging_is_cancelled_recorded_and_never_runs(runs_world, finished_run):
    run = finished_run(3)
    judging = requested(runs_world, run)
    judging_cancel(actor=runs_world.owner, judging=judging, reason="queued twice by mistake")
    judging.refresh_from_db()
    assert judging.status == JudgingStatus.CANCELLED and judging.finished_at is not None
    assert judging.error == "Cancelled by owner: queued twice by mistake"
    entry = AuditEntry.objects.get(action="run.judge_cancel")
    assert entry.actor_id == runs_world.owner.pk
    assert entry.payload["was"] == "pending" and entry.payload["judging"] == judging.pk
    assert entry.payload["reason"] == "queued twice by mistake"
    # The worker picks the task up later: it does nothing.
    assert run_judge_execute(judging_id=judging.pk).status == JudgingStatus.CANCELLED
    assert not JudgeScore.objects.exists()
    assert not AuditEntry.objects.filter(action="run.judge").exists()


def test_a_running_judging_stops_before_its_next_batch(runs_world, finished_run, monkeypatch):
    run = finished_run(3)
    judging = requested(runs_world, run)
    monkeypatch.setitem(judging_service.judge_run.__kwdefaults__, "batch_size", 1)
    seen = []

    def cancel_once_started(counters):
        seen.append(dict(counters))
        if len(seen) == 1:  # the outputs to judge are known; no batch judged yet
            judging_cancel(actor=runs_world.model_owner, judging=judging)

    finished = run_judge_execute(judging_id=judging.pk, on_progress=cancel_once_started)
    assert finished.status == JudgingStatus.CANCELLED
    assert finished.error == "Cancelled by model_owner."
    judged = set(JudgeScore.objects.values_list("unit__output_id", flat=True))
    assert len(judged) == 1  # the batch under way finished; the two after it never started
    assert seen[0]["outputs_total"] == 3 and len(seen) == 1
    assert not AuditEntry.objects.filter(action="run.judge").exists()
    assert AuditEntry.objects.get(action="run.judge_cancel").payload["was"] == "running"


def test_a_finished_judging_cannot_be_cancelled(runs_world, finished_run):
    run = finished_run(2)
    judging = requested(runs_world, run)
    run_judge_execute(judging_id=judging.pk)
    with pytest.raises(ConflictError) as refused:
        judging_cancel(actor=runs_world.owner, judging=judging)
    assert "is completed: only a pending or running judging can be cancelled" in str(refused.value)
    judging.refresh_from_db()
    assert judging.status == JudgingStatus.COMPLETED
    assert not AuditEntry.objects.filter(action="run.judge_cancel").exists()


@pytest.mark.parametrize("persona", ["grader", "adjudicator", "reviewer", "outsider"])
def test_only_owners_cancel(runs_world, finished_run, persona):
    judging = requested(runs_world, finished_run(1))
    with pytest.raises(PermissionDenied):
        judging_cancel(actor=runs_world.by_name(persona), judging=judging)
    judging.refresh_from_db()
    assert judging.status == JudgingStatus.PENDING


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def cancel_url(world, judging) -> str:
    return f"/api/v1/use-cases/{world.key}/runs/{judging.run_id}/judgings/{judging.pk}/cancel/"


def test_the_api_cancels_and_answers_the_judging(runs_world, finished_run):
    judging = requested(runs_world, finished_run(1))
    response = api(runs_world.model_owner).post(
        cancel_url(runs_world, judging), {"reason": "worker lost"}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["status"] == "cancelled"
    assert response.json()["error"] == "Cancelled by model_owner: worker lost"
    again = api(runs_world.model_owner).post(cancel_url(runs_world, judging), {}, format="json")
    assert again.status_code == 409
    assert again.json()["error"]["field"] == "judging"


@pytest.mark.parametrize(
    ("persona", "status"), [("reviewer", 403), ("grader", 403), ("outsider", 404)]
)
def test_the_api_refuses_those_who_may_not_judge(runs_world, finished_run, persona, status):
    judging = requested(runs_world, finished_run(1))
    response = api(runs_world.by_name(persona)).post(cancel_url(runs_world, judging), {})
    assert response.status_code == status
    judging.refresh_from_db()
    assert judging.status == JudgingStatus.PENDING


def test_the_run_page_offers_the_button_while_it_runs_and_shows_the_cancellation(
    runs_world, finished_run, client
):
    judging = requested(runs_world, finished_run(1))
    page = f"/use-cases/{runs_world.key}/runs/{judging.run_id}/"
    client.force_login(runs_world.owner)
    action = f"/use-cases/{runs_world.key}/runs/{judging.run_id}/judgings/{judging.pk}/cancel/"
    assert action in client.get(page).content.decode()
    response = client.post(action, {"reason": "stuck"}, follow=True)
    body = response.content.decode()
    assert f"Judging {judging.pk} of run {judging.run_id} cancelled." in body
    assert "Cancelled by owner: stuck" in body
    assert action not in body  # no button on a finished judging
    client.force_login(runs_world.reviewer)
    assert action not in client.get(page).content.decode()  # the reviewer may not judge
