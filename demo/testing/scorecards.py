"""Scorecards for tests: a recorded decision on the example's estimates, drafted and signed off.

The decision gates the example's Table 4 estimates (``load_example_estimates``) on a run of the
grading world, with the value model fed by the charter's inputs, so every Table 11 field can be
present; :func:`final_scorecard` fills the committee's fields and signs it off as the reviewer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from charters.models import Charter
from demo.testing.decisions import SIGMA_OF_MODEL, decide
from demo.testing.grading import GradingWorld, fill
from gates.models import Decision
from gates.services import value_for
from metrics.estimate import MetricEstimate
from scorecards.models import Scorecard
from scorecards.services import scorecard_create, scorecard_sign_off, scorecard_update

COMMITTEE_FIELDS = {
    "failure_modes": "Unsupported figures in 4% of sentences; two memos omitted covenants.",
    "conditions_of_use": "Analyst edits every section; senior credit officer reviews it.",
    "compensating_controls": "Figures checked against spreads; monthly production sample.",
}


def recorded_decision(
    world: GradingWorld,
    model: str = "gemini-2.5",
    *,
    grade: bool = True,
    value: bool = True,
    estimates: Sequence[MetricEstimate] | None = None,
) -> Decision:
    """Record a decision on ``model``'s run of ``world`` from the example's estimates.

    ``value=False`` records it without a value estimate (as if the charter gave no inputs);
    ``estimates`` replaces the example's.
    """
    if grade:
        for assignment in world.assignments_of(world.graders[0])[:2]:
            fill(assignment)
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    run = next(r for r in world.runs if r.configuration.name == SIGMA_OF_MODEL[model])
    return decide(
        world,
        model,
        estimates=estimates,
        charter=charter,
        session=world.session,
        value=value_for(charter=charter, run=run, session=None, judge=None, study=None)
        if value
        else {"unavailable": "the charter gives no value inputs"},
    )


def draft_scorecard(
    world: GradingWorld, decision: Decision | None = None, **changes: Any
) -> Scorecard:
    """Return a draft scorecard of ``decision`` (recorded now if not given) with ``changes``."""
    decision = decision or recorded_decision(world)
    scorecard = scorecard_create(actor=world.owner, decision=decision)
    if changes:
        scorecard = scorecard_update(actor=world.owner, scorecard=scorecard, changes=changes)
    return scorecard


def final_scorecard(world: GradingWorld, decision: Decision | None = None) -> Scorecard:
    """Return a scorecard with the committee's fields filled and signed off by the reviewer."""
    scorecard = draft_scorecard(world, decision, **COMMITTEE_FIELDS)
    return scorecard_sign_off(actor=world.reviewer, scorecard=scorecard)
