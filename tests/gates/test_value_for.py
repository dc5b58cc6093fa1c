"""The value estimate a decision records, fed by σ's own evidence (SPEC §6.3)."""

from __future__ import annotations

import numpy as np
import pytest

from charters.models import Charter
from demo.testing.grading import make_world
from gates.services import value_for
from grading.models import OversightItem
from grading.services.oversight import oversight_item_decide, oversight_study_create

# Review seconds per σ: the first σ's outputs take ten times as long to review.
SECONDS = {0: 1_500.0, 1: 150.0}


@pytest.fixture
def world(db):
    return make_world()


@pytest.fixture
def study(world):
    """A study over both σ whose reviewers take SECONDS per copy of each σ's output."""
    study = oversight_study_create(
        actor=world.owner,
        use_case=world.use_case,
        name="Review queue",
        runs=world.runs,
        reviewers=world.graders[1:],
        items_per_reviewer=6,
        defect_share=0.5,
        seed=11,
    )
    runs = {run.pk: index for index, run in enumerate(world.runs)}
    for item in study.items.select_related("source_output", "reviewer"):
        index = runs[item.source_output.run_id]
        # seeded copies take 2 seconds more: only the unaltered copies may enter t̄_review
        extra = 2.0 if item.defects else 0.0
        oversight_item_decide(
            actor=item.reviewer,
            item=item,
            decision="accept",
            flags=[],
            elapsed_seconds=SECONDS[index] + extra,
        )
    return study


def _clean_hours(study, run) -> list[float]:
    return [
        seconds / 3600.0
        for seconds, defects in OversightItem.objects.filter(
            study=study, source_output__run=run
        ).values_list("seconds_spent", "defects")
        if not defects
    ]


def test_review_time_comes_from_this_sigmas_own_unaltered_outputs_and_is_labelled(world, study):
    charter = Charter.objects.get(use_case=world.use_case)
    values = [
        value_for(charter=charter, run=run, session=None, judge=None, study=study)
        for run in world.runs
    ]

    for run, value in zip(world.runs, values, strict=True):
        own = _clean_hours(study, run)
        assert own, "the seeded study queued unaltered copies of each σ's outputs"
        source = value["provenance"]["sources"]["t_review"]
        assert value["provenance"]["kinds"]["t_review"] == "oversight study"
        assert source.startswith("oversight study Review queue (seeded-defect review")
        assert f"{len(own)} sample" in source
        assert f"mean {np.mean(own):.3g} h" in source
        assert "overrides the charter range 0.5–1.5 h, mode 1" in source
    # Not pooled across σ (issue 16): each σ's review cost is its own mean time, by hand.
    for index, value in enumerate(values):
        review_cost = -2600 * 95 * SECONDS[index] / 3600.0
        assert value["components"]["review_cost"] == pytest.approx(review_cost, rel=1e-12)
    assert values[0]["point"] < values[1]["point"]


def test_the_point_is_the_median_and_the_sources_are_labelled(world, study):
    charter = Charter.objects.get(use_case=world.use_case)

    value = value_for(charter=charter, run=world.runs[1], session=None, judge=None, study=study)

    assert value["point_rule"] == "median of the Monte Carlo draws"
    assert value["lo"] < value["point"] < value["hi"]
    assert value["draws"] == 10_000 and value["level"] == 0.9
    kinds = value["provenance"]["kinds"]
    assert kinds["t_manual"] == "charter range" and kinds["tasks_per_year"] == "given"
    assert kinds["catch"] == "oversight study"
    assert value["provenance"]["sources"]["catch"].startswith("seeded defects caught ")
