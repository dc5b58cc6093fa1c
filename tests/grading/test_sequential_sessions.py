"""Sequential grading sessions (SPEC §5.5): draws recorded with q_t, blind, stopped by the rule."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import DatabaseError, transaction
from django.urls import reverse

from audit.models import AuditEntry
from charters.models import Charter, Role
from charters.services.use_cases import membership_revoke
from demo.testing.grading import fill, grade_all_open, make_world, sequential_session
from enterpriseval.errors import ServiceError
from gates.services import decision_create
from grading.models import (
    Assignment,
    AssignmentStatus,
    SequentialDraw,
    SessionMode,
    SessionStatus,
    StopReason,
)
from grading.selectors.sequential import judge_uncertainty, population_outputs
from grading.sequential import next_draw
from grading.services.grades import assignment_submit
from grading.services.sessions import session_create
from runs.services.judging import judge_get_or_create, judge_run

SEED = 424242


@pytest.fixture
def world(db):
    world = make_world()
    judge = judge_get_or_create(kind="offline")
    judge_run(actor=world.model_owner, run=world.runs[0], judge=judge, purpose="gated")
    world.judge = judge
    return world


def sequential(world, **kwargs):
    return sequential_session(world, **({"seed": SEED, "judge": world.judge} | kwargs))


def test_it_draws_ahead_and_records_each_q_as_recomputed_from_the_seed(world):
    session = sequential(world)
    draws = list(SequentialDraw.objects.filter(session=session).order_by("index"))
    assert len(draws) == session.lookahead
    outputs = population_outputs(run=world.runs[0])
    metrics = [
        m.metric_id
        for m in Charter.objects.get(pk=session.charter_id).metrics.filter(treatment="gated")
        if m.metric_id in draws[0].undecided
    ]
    uncertainty = judge_uncertainty(judge=world.judge, outputs=outputs, metrics=metrics)
    drawn: list[int] = []
    for draw in draws:
        again = next_draw(
            uncertainty=uncertainty,
            undecided=draw.undecided,
            drawn=drawn,
            n_outputs=len(outputs),
            tau=0.5,
            seed=SEED,
            index=draw.index,
        )
        assert outputs[again.position] == draw.artefact.output_id
        assert draw.q == pytest.approx(again.q)
        assert 0.5 / len(outputs) <= draw.q <= 1.0  # the uniform floor τ/|U_t| at least
        assert draw.remaining == len(outputs) - len(drawn)
        drawn.append(again.position)
    assert AuditEntry.objects.filter(action="grading_session.draw").count() == len(draws)
    assert len(session.agreement_sample) == 3
    # Every drawn output is served to two graders.
    for draw in draws:
        assert Assignment.objects.filter(artefact=draw.artefact).count() == 2
    # The draw record is append-only at the database.
    draw = draws[0]
    with pytest.raises(DatabaseError), transaction.atomic():
        SequentialDraw.objects.filter(pk=draw.pk).update(q=0.5)
    with pytest.raises(DatabaseError), transaction.atomic():
        SequentialDraw.objects.filter(pk=draw.pk).delete()
    # Refusals name the field at fault.
    with pytest.raises(ServiceError) as error:
        sequential(world, judge=None)
    assert error.value.field == "judge"
    with pytest.raises(ServiceError) as error:
        session_create(
            actor=world.owner,
            use_case=world.use_case,
            name="Two runs",
            runs=world.runs,
            graders=world.graders,
            adjudicators=[world.adjudicator],
            mode=SessionMode.SEQUENTIAL,
            judge=world.judge,
        )
    assert error.value.field == "runs"
    with pytest.raises(ServiceError) as error:
        sequential(world, budget=13)
    assert error.value.field == "budget"


def test_later_draws_go_only_to_graders_who_still_hold_the_role(world):
    session = sequential(world, budget=12)
    revoked = world.graders[2]
    assert Assignment.objects.filter(session=session, grader=revoked).exists()
    membership_revoke(actor=world.owner, use_case=world.use_case, user=revoked, role=Role.GRADER)
    last_before = Assignment.objects.filter(session=session).order_by("-pk").first().pk
    grade_all_open(session)  # the draws in flight become final; more are drawn after them
    later = Assignment.objects.filter(session=session, pk__gt=last_before)
    assert later.exists()
    assert set(later.values_list("grader_id", flat=True)) == {g.pk for g in world.graders[:2]}
    # Each later draw still goes to two graders (SPEC §5.5 ≥ 2 blind graders).
    for artefact_id in later.values_list("artefact_id", flat=True).distinct():
        assert Assignment.objects.filter(artefact_id=artefact_id).count() == 2


def test_it_stops_on_reject_at_the_budget_or_when_closed_withdrawing_open_work(world, monkeypatch):
    from grading.services.sessions import session_close

    monkeypatch.setattr("metrics.sequential.settle", lambda *args: "reject")
    session = sequential(world, name="Round A")
    grade_all_open(session)
    session.refresh_from_db()
    assert session.status == SessionStatus.CLOSED
    assert session.stop["reason"] == StopReason.REJECT
    assert session.stop["grades_used"] >= 1  # the first final prefix settles it
    withdrawn = Assignment.objects.filter(session=session, status=AssignmentStatus.WITHDRAWN)
    assert withdrawn.count() == session.stop["withdrawn"] > 0
    assert AuditEntry.objects.filter(action="grading_session.stop").count() == 1

    monkeypatch.setattr("metrics.sequential.settle", lambda *args: None)
    session = sequential(world, name="Round B", budget=4)
    grade_all_open(session)
    session.refresh_from_db()
    assert session.stop["reason"] == StopReason.BUDGET
    assert session.stop["undecided_at_budget"] is True
    assert session.stop["grades_used"] == 4
    assert SequentialDraw.objects.filter(session=session).count() == 4
    for entry in session.stop["metrics"].values():
        assert entry["status"] is None
        assert entry["expected_more"] >= 0
        assert len(entry["lower"]) == 4

    session = sequential(world, name="Round C")
    first = Assignment.objects.filter(artefact=session.draws.get(index=1).artefact)
    for assignment in first.select_related("grader", "artefact", "session"):
        fill(assignment)
        assignment_submit(actor=assignment.grader, assignment=assignment)
    closed = session_close(actor=world.owner, session=session)
    assert closed.status == SessionStatus.CLOSED
    assert closed.stop["reason"] == StopReason.CLOSED
    assert closed.stop["undecided_at_budget"] is True
    assert closed.stop["grades_used"] == 1
    assert not Assignment.objects.filter(
        session=session, status__in=[AssignmentStatus.PENDING, AssignmentStatus.IN_PROGRESS]
    ).exists()


def test_the_decision_records_the_sequential_stop(world, client):
    session = sequential(world, budget=12)
    grade_all_open(session)
    session.refresh_from_db()
    assert session.status == SessionStatus.CLOSED
    charter = Charter.objects.get(pk=session.charter_id)
    decision = decision_create(
        actor=world.reviewer, charter=charter, run=world.runs[0], session=session, judge=world.judge
    )
    grading = decision.record["grading"]
    assert grading["mode"] == "sequential"
    assert grading["grades_used"] == session.stop["grades_used"]
    estimates = {e["metric_id"]: e for e in decision.record["estimates"]}
    for metric_id, entry in grading["metrics"].items():
        assert estimates[metric_id]["lo"] == pytest.approx(entry["lower"][-1])
        assert estimates[metric_id]["hi"] == pytest.approx(entry["upper"][-1])
        assert "sequential draws" in estimates[metric_id]["estimator"]
    client.force_login(world.reviewer)
    page = client.get(reverse("decision-detail", args=[world.use_case.key, decision.pk]))
    assert page.status_code == 200
    assert "sequential draws" in page.content.decode()
    # The bounds narrow (a running intersection) grade by grade.
    for entry in grading["metrics"].values():
        assert np.all(np.diff(entry["lower"]) >= -1e-9)
        assert np.all(np.diff(entry["upper"]) <= 1e-9)


def test_the_api_cli_and_page_create_and_show_a_sequential_session(world, client):
    from io import StringIO

    from django.core.management import call_command

    client.force_login(world.owner)
    response = client.post(
        f"/api/v1/use-cases/{world.use_case.key}/grading/sessions/",
        {
            "name": "Round 3",
            "runs": [world.runs[0].pk],
            "graders": [g.username for g in world.graders],
            "adjudicators": [world.adjudicator.username],
            "mode": "sequential",
            "judge": world.judge.pk,
            "budget": 6,
            "agreement_size": 2,
            "seed": 7,
        },
        content_type="application/json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["mode"] == "sequential" and body["budget"] == 6 and body["tau"] == 0.5
    bad = client.post(
        f"/api/v1/use-cases/{world.use_case.key}/grading/sessions/",
        {
            "name": "Round 4",
            "runs": [world.runs[0].pk],
            "graders": [g.username for g in world.graders],
            "adjudicators": [world.adjudicator.username],
            "mode": "sequential",
        },
        content_type="application/json",
    )
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "judge"

    out = StringIO()
    call_command(
        "session_create",
        "--use-case", world.use_case.key,
        "--name", "Round 5",
        "--run", str(world.runs[0].pk),
        *[arg for g in world.graders for arg in ("--grader", g.username)],
        "--adjudicator", world.adjudicator.username,
        "--mode", "sequential",
        "--judge", str(world.judge.pk),
        "--budget", "5",
        "--as", world.owner.username,
        stdout=out,
    )  # fmt: skip
    assert "Sequential session" in out.getvalue() and "up to 5 of 12 outputs" in out.getvalue()

    session = sequential(world, name="Round 6", budget=5)
    grade_all_open(session)
    page = client.get(f"/use-cases/{world.use_case.key}/grading/{session.public_id}/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "Decided after" in text and 'class="card sequence-plot"' in text
    assert "data:image/svg+xml;base64," in text
