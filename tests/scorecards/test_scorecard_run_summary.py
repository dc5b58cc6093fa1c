"""A scorecard reads the run's reliability and sample sizes from its decision's record (issue 18):
the same content as read from the run's outputs, which only decisions recorded before the record
kept them still need."""

from __future__ import annotations

import copy

import pytest

from charters.models import Charter
from demo.testing.decisions import make_decidable_world
from gates.services import decision_create
from metrics.evidence import graded_outputs
from metrics.selectors import reliability_estimates
from runs.models import Output
from scorecards.selectors import assemble_content
from scorecards.services import scorecard_create


@pytest.fixture
def recorded(db):
    world, judge = make_decidable_world()
    decision = decision_create(
        actor=world.owner,
        charter=Charter.objects.get(use_case=world.use_case, version=1),
        run=world.runs[0],
        session=world.session,
        judge=judge,
    )
    return world, judge, decision


def test_the_record_keeps_the_runs_counts_and_pass_k(recorded):
    world, judge, decision = recorded
    run, charter = decision.run, decision.charter
    summary = decision.record["run_summary"]
    in_split = Output.objects.filter(run=run, task__split=run.split)
    assert summary["outputs"] == in_split.count() == 12
    assert summary["tasks"] == len(set(in_split.values_list("task_id", flat=True)))
    graded = graded_outputs(session=world.session, run=run)
    assert summary["graded"] == {
        "complete": graded.complete,
        "sampled": graded.sampled,
        "population": graded.population,
    }
    records, dispersion, _why, found = reliability_estimates(
        run=run, confidence=charter.confidence, rule=charter.success_rule, judge=judge
    )
    assert found.determined and summary["success"]["method"] == found.method
    assert sorted(int(k) for k in summary["pass_k"]) == sorted(records)
    for k, record in records.items():
        assert summary["pass_k"][str(k)]["point"] == pytest.approx(record.point)
        assert summary["pass_k"][str(k)]["lo"] == pytest.approx(record.lo)
    assert (summary["dispersion"] is None) == (dispersion is None)


def test_a_draft_reads_the_same_content_from_the_record_as_from_the_runs_outputs(recorded):
    world, _judge, decision = recorded
    scorecard = scorecard_create(actor=world.reviewer, decision=decision)
    stored = assemble_content(scorecard=scorecard)
    older = copy.copy(decision)  # as a decision recorded before the record kept the counts
    older.record = {key: v for key, v in decision.record.items() if key != "run_summary"}
    scorecard.decision = older
    live = assemble_content(scorecard=scorecard)
    assert stored == live
    assert stored["reliability"]["pass_k"]["1"]["point"] is not None
    assert stored["sample_sizes"]["outputs"] == 12
