"""Per-output evidence of the unit-level metrics: units, final grades and judge scores."""

from __future__ import annotations

import numpy as np
import pytest

from demo.testing.grading import fill, first_values, make_world
from grading.models import Assignment
from grading.selectors.artefacts import submitted_field_values
from grading.services.grades import adjudication_record, assignment_submit
from metrics.evidence import unit_metric_evidence
from metrics.unit_estimators import estimate_unit_metric
from runs.models import JudgeScore, Output, Unit
from runs.services.judging import judge_get_or_create, judge_run


def _not_supported(key: str, field: str) -> str:
    if field == "supported":
        return "not"
    return first_values(key, field)


@pytest.fixture
def graded_world(db):
    world = make_world()
    judge = judge_get_or_create(kind="offline")
    for run in world.runs:
        judge_run(actor=world.model_owner, run=run, judge=judge, purpose="gated")
    # First grader of each artefact says every assertive sentence is unsupported; the second
    # agrees, except on the very first artefact, which then waits for adjudication.
    first_artefact = world.session.artefacts.order_by("pk").first()
    for assignment in Assignment.objects.filter(session=world.session).order_by("artefact", "pk"):
        split = assignment.artefact_id == first_artefact.pk and assignment.grader != (
            Assignment.objects.filter(artefact=first_artefact).order_by("pk").first().grader
        )
        fill(assignment, first_values if split else _not_supported)
        assignment_submit(actor=assignment.grader, assignment=assignment)
    return world, judge, first_artefact


def test_it_counts_known_denominators_judge_and_final_human_numerators(graded_world):
    world, judge, pending_artefact = graded_world
    run = world.runs[0]
    result = unit_metric_evidence(
        metric_id="hallucination_rate", run=run, session=world.session, judge=judge
    )
    evidence = result.units
    outputs = list(Output.objects.filter(run=run).order_by("pk"))
    assert list(evidence.output_id) == [o.pk for o in outputs]
    for i, output in enumerate(outputs):
        assert evidence.d[i] == Unit.objects.filter(output=output, kind="sentence").count()
        scores = {}
        for unit_id, criterion, score in JudgeScore.objects.filter(
            unit__output=output, judge=judge
        ).values_list("unit_id", "criterion", "score"):
            scores.setdefault(unit_id, {})[criterion] = score
        expected = sum(
            s["assertive"] * (1 - s["supported"])
            for uid, s in scores.items()
            if Unit.objects.get(pk=uid).kind == "sentence"
        )
        assert evidence.f_num[i] == pytest.approx(expected)
    assert result.judge_complete
    sampled = {a.output_id: a for a in world.session.artefacts.filter(output__run=run)}
    for i, output in enumerate(outputs):
        artefact = sampled.get(output.pk)
        if artefact is None or artefact.pk == pending_artefact.pk:
            assert not evidence.labeled[i] and np.isnan(evidence.h_num[i])
            continue
        assert evidence.labeled[i]
        # every sentence graded assertive Y and supported "not" by both graders
        assert evidence.h_num[i] == evidence.d[i]
    assert result.pending == (1 if pending_artefact.output.run_id == run.pk else 0)


def test_an_adjudicated_value_counts_once_the_disputes_are_resolved(graded_world):
    world, judge, artefact = graded_world
    run = artefact.output.run
    for value in submitted_field_values([artefact]):
        if not value.agreed:
            adjudication_record(
                actor=world.adjudicator,
                artefact=artefact,
                unit_key=value.unit_key,
                field=value.field,
                value="fully",
            )
    result = unit_metric_evidence(
        metric_id="hallucination_rate", run=run, session=world.session, judge=judge
    )
    i = list(result.units.output_id).index(artefact.output_id)
    assert result.units.labeled[i] and result.units.h_num[i] == 0
    assert result.pending == 0


def test_guidance_metrics_have_no_judge_estimate(graded_world):
    world, judge, _ = graded_world
    result = unit_metric_evidence(
        metric_id="guidance_recall", run=world.runs[0], session=world.session, judge=judge
    )
    assert not result.judge_complete and result.units.f_num is None
    units = result.units
    assert units.labeled.any() and (units.h_den[units.labeled] >= 0).all()


def test_it_refuses_a_metric_that_is_not_unit_level(graded_world):
    world, judge, _ = graded_world
    with pytest.raises(ValueError, match="metric_id"):  # task-level, not unit-level
        unit_metric_evidence(metric_id="pass_hat_k", run=world.runs[0], session=None, judge=judge)


def test_it_reads_the_evidence_in_a_fixed_number_of_queries(
    graded_world, django_assert_num_queries
):
    world, judge, _ = graded_world
    for run in world.runs:
        with django_assert_num_queries(7):
            unit_metric_evidence(
                metric_id="citation_precision_lenient", run=run, session=world.session, judge=judge
            )


def test_the_estimators_read_the_evidence_as_a_human_only_ratio_below_100_outputs(graded_world):
    world, judge, _ = graded_world
    result = unit_metric_evidence(
        metric_id="hallucination_rate", run=world.runs[1], session=world.session, judge=judge
    )
    units = result.units
    estimate = estimate_unit_metric("hallucination_rate", units, confidence=0.95)
    assert estimate.mode == "H"
    labeled = units.labeled
    # every graded sentence was graded assertive and not supported by both graders
    expected = 100 * units.h_num[labeled].sum() / units.d[labeled].sum()
    assert estimate.point == pytest.approx(expected)
    assert estimate.n_clusters == int(labeled.sum())
    assert estimate.judge_only is not None


def _s1_not_assertive(key: str, field: str) -> str:
    if (key, field) == ("s1", "assertive"):
        return "N"
    return _not_supported(key, field)


def test_a_sentence_adjudicated_not_assertive_is_no_unsupported_assertion(db):
    """Grader 1: s1 assertive and not supported; Grader 2: s1 not assertive (so not asked
    whether it is supported). Once s1 is adjudicated not assertive, s1 supported is moot: the
    artefact is labelled, and s1 does not count as an unsupported assertion."""
    world = make_world()
    judge = judge_get_or_create(kind="offline")
    for run in world.runs:
        judge_run(actor=world.model_owner, run=run, judge=judge, purpose="gated")
    artefact = world.session.artefacts.order_by("pk").first()
    for assignment in Assignment.objects.filter(session=world.session).order_by("artefact", "pk"):
        second = assignment.artefact_id == artefact.pk and assignment.grader != (
            Assignment.objects.filter(artefact=artefact).order_by("pk").first().grader
        )
        fill(assignment, _s1_not_assertive if second else _not_supported)
        assignment_submit(actor=assignment.grader, assignment=assignment)
    run = artefact.output.run
    adjudication_record(
        actor=world.adjudicator, artefact=artefact, unit_key="s1", field="assertive", value="N"
    )
    result = unit_metric_evidence(
        metric_id="hallucination_rate", run=run, session=world.session, judge=judge
    )
    i = list(result.units.output_id).index(artefact.output_id)
    sentences = Unit.objects.filter(output=artefact.output, kind="sentence").count()
    assert sentences >= 2
    assert result.units.labeled[i]
    # every other sentence: assertive and not supported by both graders; s1: not assertive
    assert result.units.h_num[i] == sentences - 1
    assert result.pending == 0
    moot = [v for v in submitted_field_values([artefact]) if v.moot]
    assert [(v.unit_key, v.field, v.final) for v in moot] == [("s1", "supported", None)]


def test_guidance_recall_evidence_leaves_non_mandatory_items_out(graded_world):
    # Every grader answered TP (flagged and breached) for every guidance item, so by hand
    # each graded output's recall is its task's mandatory items over themselves: the
    # non-mandatory items (37 of the example's) never enter the denominator (SPEC §4).
    world, judge, _ = graded_world
    run = world.runs[0]
    evidence = unit_metric_evidence(
        metric_id="guidance_recall", run=run, session=world.session, judge=judge
    ).units
    outputs = list(Output.objects.filter(run=run).order_by("pk").select_related("task"))
    checked = 0
    for i, output in enumerate(outputs):
        if not evidence.labeled[i]:
            continue
        items = list(output.task.guidance_items.values_list("mandatory", flat=True))
        assert evidence.h_den[i] == evidence.h_num[i] == sum(items)
        checked += not all(items)
    assert checked  # at least one graded output has a non-mandatory item
