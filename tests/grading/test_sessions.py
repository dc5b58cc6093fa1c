"""Grading sessions: the seeded sample, balanced assignment, blind orders, the audit entry."""

from __future__ import annotations

from collections import Counter

import pytest

from audit.models import AuditEntry
from charters.models import Role
from charters.services.use_cases import membership_grant
from enterpriseval.errors import ServiceError
from grading.models import Assignment, SessionArtefact
from grading.services.sessions import session_create
from runs.models import Output


def test_it_draws_a_stratified_sample_with_inclusion_probabilities(grading_world):
    session = grading_world.session
    artefacts = list(SessionArtefact.objects.filter(session=session).order_by("pk"))
    assert len(artefacts) == session.sample_size == 8
    assert session.population_size == 24
    assert sorted(Counter(a.stratum for a in artefacts).values()) == [4, 4]
    for artefact in artefacts:
        assert artefact.inclusion_probability == pytest.approx(4 / 12)
        assert artefact.output.task_id == artefact.task_id


def test_it_gives_every_artefact_two_distinct_graders_with_balanced_loads(grading_world):
    session = grading_world.session
    per_artefact = Counter(
        Assignment.objects.filter(session=session).values_list("artefact_id", flat=True)
    )
    assert set(per_artefact.values()) == {2}
    loads = Counter(Assignment.objects.filter(session=session).values_list("grader_id", flat=True))
    assert sum(loads.values()) == 16
    assert max(loads.values()) - min(loads.values()) <= 1
    for grader in grading_world.graders:
        positions = [a.position for a in grading_world.assignments_of(grader)]
        assert positions == list(range(1, len(positions) + 1))


def test_two_graders_see_their_shared_artefacts_in_different_orders(grading_world):
    first, second = grading_world.graders[:2]
    order_a = [a.artefact_id for a in grading_world.assignments_of(first)]
    order_b = [a.artefact_id for a in grading_world.assignments_of(second)]
    population = sorted(SessionArtefact.objects.values_list("pk", flat=True))
    assert order_a != sorted(order_a) or order_b != sorted(order_b) or population != order_a


def test_the_same_seed_draws_the_same_sample(grading_world):
    session = grading_world.session
    again = session_create(
        actor=grading_world.owner,
        use_case=grading_world.use_case,
        name="Credit memo round 1 replay",
        runs=grading_world.runs,
        graders=grading_world.graders,
        adjudicators=[grading_world.adjudicator],
        design="stratified",
        sample_size=4,
        seed=session.seed,
    )
    first = sorted(session.artefacts.values_list("output_id", flat=True))
    second = sorted(again.artefacts.values_list("output_id", flat=True))
    assert first == second


def test_it_records_the_seed_and_sample_hash_in_the_audit_log(grading_world):
    entry = AuditEntry.objects.get(action="grading_session.create")
    assert entry.payload["seed"] == str(grading_world.session.seed)
    assert entry.payload["sample_size"] == 8
    assert len(entry.payload["sample_sha256"]) == 64


def test_it_refuses_a_session_name_that_reveals_the_model(grading_world):
    with pytest.raises(ServiceError, match="reveal provenance"):
        session_create(
            actor=grading_world.owner,
            use_case=grading_world.use_case,
            name="Gemini-2-5 check",
            runs=grading_world.runs,
            graders=grading_world.graders,
            adjudicators=[grading_world.adjudicator],
            sample_size=4,
        )


def test_it_refuses_an_adjudicator_who_grades_in_the_session(grading_world):
    membership_grant(
        actor=grading_world.owner,
        use_case=grading_world.use_case,
        user=grading_world.graders[2],
        role=Role.ADJUDICATOR,
    )
    with pytest.raises(ServiceError, match="third person"):
        session_create(
            actor=grading_world.owner,
            use_case=grading_world.use_case,
            name="Round 2",
            runs=grading_world.runs,
            graders=grading_world.graders,
            adjudicators=[grading_world.graders[2]],
            sample_size=4,
        )


def test_the_default_sample_size_is_what_the_charter_plans(grading_world):
    session = session_create(
        actor=grading_world.owner,
        use_case=grading_world.use_case,
        name="Round 2",
        runs=grading_world.runs,
        graders=grading_world.graders,
        adjudicators=[grading_world.adjudicator],
    )
    # The charter plans 800 sentences for the hallucination rate; with ~6 sentences per
    # output that needs more outputs than the 24 imported, so the whole population is drawn.
    assert session.sample_size == session.population_size == Output.objects.count()
