"""Grading sessions: the seeded sample, balanced assignment, blind orders, the audit entry."""

from __future__ import annotations

from collections import Counter

import pytest

from audit.models import AuditEntry
from charters.charter_document import document_from_text
from charters.models import Role
from charters.models.charters import SIGNING_ROLES
from charters.services.charters import charter_revise, charter_sign, charter_update
from charters.services.use_cases import membership_grant
from demo.testing.grading import EXAMPLES, make_world
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


def sign_charter_planning(world, planned: dict[str, int]) -> None:
    """Sign a new charter version planning ``planned`` (1 unit for the other gated metrics)."""
    path = EXAMPLES / "charter.yaml"
    document = document_from_text(path.read_text(encoding="utf-8"), fmt="yaml", source=str(path))
    for metric in document["metrics"]:
        if metric.get("planned_n") is not None:
            metric["planned_n"] = planned.get(metric["id"], 1)
    draft = charter_revise(actor=world.owner, charter=world.session.charter, reason="")
    charter = charter_update(actor=world.owner, charter=draft, document=document)
    signers = {
        Role.CHARTER_OWNER: world.owner,
        Role.MODEL_OWNER: world.model_owner,
        Role.REVIEWER: world.reviewer,
    }
    for role in SIGNING_ROLES:
        charter_sign(actor=signers[role], charter=charter, role=role)


def test_the_planned_n_is_drawn_for_each_sigma_with_the_sigmas_own_pi(grading_world):
    # The hallucination rate plans 40 sentences (every other gated metric 1 unit, 1 output).
    # σ gemini-2-5 has 81 sentences in its 12 outputs (6.75 per output) so needs
    # ⌈40 / 6.75⌉ = 6 outputs, π = 6/12; σ llama-4
    # has 78 (6.5 per output) so needs ⌈40 / 6.5⌉ = 7, π = 7/12. A plan shared by the two σ
    # (159 sentences in 24 outputs) would draw ⌈40 / 6.625⌉ = 7 outputs for both together.
    sign_charter_planning(grading_world, {"hallucination_rate": 40})
    gemini, llama = grading_world.runs
    session = session_create(
        actor=grading_world.owner,
        use_case=grading_world.use_case,
        name="Round 2",
        runs=grading_world.runs,
        graders=grading_world.graders,
        adjudicators=[grading_world.adjudicator],
        design="stratified",
        seed=5,
    )
    per_run = Counter(session.artefacts.values_list("output__run_id", flat=True))
    assert per_run == {gemini.pk: 6, llama.pk: 7}
    assert session.sample_size == 13 and session.population_size == 24
    pi = dict(session.artefacts.values_list("output__run_id", "inclusion_probability"))
    assert pi == {gemini.pk: pytest.approx(6 / 12), llama.pk: pytest.approx(7 / 12)}
    assert [
        (arm["label"], arm["population"], arm["planned"], arm["sampled"], arm["planned_by"])
        for arm in session.arms
    ] == [
        ("σ gemini-2-5 v1", 12, 6, 6, "hallucination_rate"),
        ("σ llama-4 v1", 12, 7, 7, "hallucination_rate"),
    ]
    assert session.arms[0]["inclusion_probabilities"] == {f"run:{gemini.pk}": 0.5}
    assert session.arms[1]["inclusion_probabilities"] == {f"run:{llama.pk}": 7 / 12}
    entry = AuditEntry.objects.filter(action="grading_session.create").latest("pk")
    assert entry.payload["arms"] == session.arms and entry.payload["sample_size"] == 13


def test_an_explicit_size_is_drawn_for_each_sigma(grading_world):
    session = grading_world.session  # sample_size=4 over two σ of 12 outputs each
    assert [(arm["sampled"], arm["population"]) for arm in session.arms] == [(4, 12), (4, 12)]
    assert session.sample_size == 8


@pytest.mark.django_db
def test_baselines_are_an_arm_of_their_own():
    world = make_world(include_baselines=True, sample_size=3)
    arms = {arm["arm"]: arm for arm in world.session.arms}
    assert arms["baseline"]["sampled"] == 3
    assert sorted(Counter(world.session.artefacts.values_list("stratum", flat=True)).values()) == [
        3,
        3,
        3,
    ]
