"""The agreement rule gates every estimate resting on human labels, PPI included (SPEC §5.1, §6.1).

Recorded as users record: through ``decision_create`` on a closed session.
"""

from __future__ import annotations

import random

import pytest

import metrics.unit_estimators as unit_estimators
from charters.models import Charter
from demo.testing.grading import fill, make_world
from enterpriseval.errors import ServiceError
from gates.selectors import decision_detail
from gates.services import decision_create
from grading.models import Assignment
from grading.rubric import FIELDS_BY_NAME
from grading.services.adjudication import FinalValue, adjudications_record
from grading.services.grades import assignment_submit
from runs.services.judging import judge_get_or_create, judge_run


@pytest.fixture
def ppi_world(db, monkeypatch):
    """A closed session whose graders answer independently at random, decided in PPI mode.

    The example has 65 outputs per σ, fewer than the 100 graded outputs from which the
    estimator gates on PPI, so the threshold is lowered to the session's sample: the estimator
    then chooses PPI, as it does from 100 graded outputs on.
    """
    monkeypatch.setattr(unit_estimators, "MIN_OUTPUTS_FOR_PPI_GATE", 2)
    world = make_world(sample_size=8)
    judge = judge_get_or_create(kind="offline")
    for run in world.runs:
        judge_run(actor=world.model_owner, run=run, judge=judge, purpose="gated")
    rng = random.Random(16)

    def at_random(_unit_key: str, field: str) -> str:
        return rng.choice(FIELDS_BY_NAME[field].values)

    def asserting_at_random(unit_key: str, field: str) -> str:
        # always assertive, so this grader is asked every field the adjudicator takes from
        return "Y" if field == "assertive" else at_random(unit_key, field)

    second_grades = {}
    artefacts = set()
    for assignment in Assignment.objects.filter(session=world.session).order_by("public_id"):
        first = not Assignment.objects.filter(
            artefact=assignment.artefact, public_id__lt=assignment.public_id
        ).exists()
        grades = fill(assignment, choose=asserting_at_random if first else at_random)
        if not first:
            second_grades[assignment.artefact_id] = grades
        assignment_submit(actor=assignment.grader, assignment=assignment)
        artefacts.add(assignment.artefact)
    for artefact in artefacts:
        try:
            outcome = adjudications_record(
                actor=world.adjudicator, artefact=artefact, values=[], take_rest_from=1
            )
        except ServiceError:  # nothing disputed on this artefact
            continue
        if outcome.not_asked:  # severity of an item Grader 1 did not call a breach
            grades = second_grades[artefact.pk]
            adjudications_record(
                actor=world.adjudicator,
                artefact=artefact,
                values=[
                    FinalValue(key, name, grades[key][name]) for key, name in outcome.not_asked
                ],
            )
    return world, judge


def test_a_decision_in_ppi_mode_with_low_agreement_is_undetermined(ppi_world):
    world, judge = ppi_world
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    run = world.runs[0]

    decision = decision_create(
        actor=world.owner, charter=charter, run=run, session=world.session, judge=judge
    )

    estimates = {e["metric_id"]: e for e in decision.record["estimates"]}
    gated = {m["id"]: m for m in decision.record["gate"]["metrics"]}
    hallucination = gated["hallucination_rate"]
    assert estimates["hallucination_rate"]["mode"] == "PPI"
    assert hallucination["grading"] == "PPI"
    assert decision.status == "Undetermined"
    # every gated metric has an estimate: the decision is Undetermined for agreement alone
    assert all(metric["value_used"] is not None for metric in gated.values())
    assert hallucination["status"] == "Undetermined" and hallucination["eligible"] is False
    verdict = hallucination["agreement"]
    assert verdict["rule"] == "kappa" and verdict["threshold"] == 0.6
    assert not verdict["eligible"]
    assert [c["criterion"] for c in verdict["criteria"]] == ["assertive", "supported"]
    for criterion in verdict["criteria"]:
        assert criterion["statistic"] in ("κ", "α") and "ac1" in criterion
    assert any(
        reason.startswith("hallucination_rate: not eligible — rubric needs revision")
        for reason in decision.record["gate"]["reasons"]
    )
    for metric in gated.values():  # no human-labelled metric reads Scale or Conditional
        if metric["grading"] in ("H", "PPI"):
            assert metric["eligible"] or metric["status"] == "Undetermined"

    detail = decision_detail(decision=decision)
    assert "hallucination_rate" in {row.metric.id for row in detail.low_kappa}
