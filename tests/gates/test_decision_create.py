"""Recording a decision as users do (``decision_create``): each refusal says what to do."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from audit.models import AuditEntry
from charters.models import Charter, Membership, Role, UseCase
from charters.services.configurations import configuration_upload
from charters.services.use_cases import use_case_create
from demo.testing.decisions import EXAMPLES, make_decidable_world
from demo.testing.grading import GradingWorld, fill, make_world
from enterpriseval.errors import ConflictError, ServiceError
from gates.models import Decision
from gates.services import decision_create
from grading.models import Assignment
from grading.rubric import FIELDS_BY_NAME
from grading.services.adjudication import adjudication_take
from grading.services.grades import assignment_submit
from grading.services.oversight import oversight_study_create
from grading.services.sessions import session_create
from runs.services.judging import judge_get_or_create, judge_run


@pytest.fixture
def decidable(db):
    return make_decidable_world()


def charter_of(world: GradingWorld) -> Charter:
    return Charter.objects.get(use_case=world.use_case, version=1)


def create(world: GradingWorld, judge, **overrides):
    arguments = {
        "actor": world.owner,
        "charter": charter_of(world),
        "run": world.runs[0],
        "session": world.session,
        "judge": judge,
        **overrides,
    }
    return decision_create(**arguments)


def other_use_case(world: GradingWorld) -> UseCase:
    other = use_case_create(
        actor=world.owner,
        key="other-uc",
        name="Another use case",
        business_outcome="b",
        value_hypothesis="v",
        autonomy=1,
        consequence=2,
    )
    configuration_upload(
        actor=world.owner,
        use_case=other,
        name="other-sigma",
        content=(EXAMPLES / "sigma-llama-4.yaml").read_text(encoding="utf-8"),
        filename="sigma-llama-4.yaml",
    )
    return other


def test_a_decision_on_complete_evidence_is_recorded_with_one_audit_entry(decidable):
    world, judge = decidable
    decision = create(world, judge)
    assert Decision.objects.get() == decision
    assert decision.session == world.session and decision.judge == judge
    assert AuditEntry.objects.filter(action="decision.record").count() == 1
    assert "session_open_work" not in decision.evidence


@pytest.fixture
def open_world(db):
    """The decidable world but one assignment left unsubmitted."""
    world = make_world()
    judge = judge_get_or_create(kind="offline")
    for run in world.runs:
        judge_run(actor=world.model_owner, run=run, judge=judge, purpose="gated")
    assignments = list(Assignment.objects.filter(session=world.session).order_by("pk"))
    for assignment in assignments[1:]:
        fill(assignment)
        assignment_submit(actor=assignment.grader, assignment=assignment)
    return world, judge, assignments[0]


def test_recording_the_same_decision_again_is_refused_naming_the_recorded_one(decidable):
    world, judge = decidable
    decision = create(world, judge)
    with pytest.raises(ConflictError) as refused:
        create(world, judge)
    assert f"already recorded as decision {decision.pk}" in refused.value.message
    assert Decision.objects.count() == 1


def test_it_refuses_an_open_session_saying_what_is_left(open_world):
    world, judge, _left = open_world
    with pytest.raises(ConflictError) as refused:
        create(world, judge)
    assert refused.value.field == "session"
    total = Assignment.objects.filter(session=world.session).count()
    assert f"1 of {total} assignments not submitted" in refused.value.message
    assert "have the graders submit" in refused.value.message
    assert not Decision.objects.exists()


def test_it_refuses_a_session_with_a_disagreement_not_adjudicated(open_world):
    world, judge, left = open_world
    fill(left, choose=lambda unit_key, field: FIELDS_BY_NAME[field].values[-1])
    assignment_submit(actor=left.grader, assignment=left)
    with pytest.raises(ConflictError) as refused:
        create(world, judge)
    assert refused.value.field == "session"
    assert "0 of" in refused.value.message and "awaiting adjudication" in refused.value.message
    assert "adjudicator resolve every disagreement" in refused.value.message


def test_an_open_session_has_no_escape_and_is_decided_once_closed(open_world):
    world, judge, left = open_world
    # No caller, the demo included, can ask for a decision on open grading work.
    with pytest.raises(TypeError):
        create(world, judge, allow_open_session=True)
    assert not Decision.objects.exists()
    fill(left)  # agrees with the others: nothing to adjudicate
    assignment_submit(actor=left.grader, assignment=left)
    decision = create(world, judge)
    assert decision.session == world.session
    assert "session_open_work" not in decision.evidence


def test_it_refuses_a_judge_whose_model_is_sigmas_own_naming_both_models(decidable):
    world, _judge = decidable
    run = world.runs[0]
    sigma_model = run.configuration.document["model"]
    self_judge = judge_get_or_create(kind="llm", model_ref=f"gemini/{sigma_model['id']}")
    with pytest.raises(ConflictError) as refused:
        create(world, self_judge, run=run)
    message = refused.value.message
    assert refused.value.field == "judge"
    assert self_judge.model_ref in message
    assert f"{sigma_model['provider']}/{sigma_model['id']}" in message
    assert "never grades itself for a gated metric" in message
    assert not Decision.objects.exists()


def test_it_refuses_a_judge_that_has_not_scored_the_run(decidable):
    world, _judge = decidable
    unscored = judge_get_or_create(kind="llm", model_ref="openai/gpt-4o")
    with pytest.raises(ServiceError) as refused:
        create(world, unscored)
    assert refused.value.field == "judge" and "judge the run first" in refused.value.message


def test_it_refuses_a_draft_charter(decidable):
    world, judge = decidable
    draft = charter_of(world)
    draft.frozen_at = None  # as a draft looks: unsigned (not saved)
    with pytest.raises(ConflictError) as refused:
        create(world, judge, charter=draft)
    assert refused.value.field == "charter" and "is a draft" in refused.value.message
    assert "sign it" in refused.value.message


def test_it_refuses_a_run_of_another_use_case(decidable):
    world, judge = decidable
    other = other_use_case(world)
    run = world.runs[0]
    run.use_case_id = other.pk  # as a run of the other use case looks (not saved)
    with pytest.raises(ServiceError) as refused:
        create(world, judge, run=run)
    assert refused.value.field == "run" and "belongs to another use case" in refused.value.message


def test_it_refuses_a_run_whose_sigma_belongs_to_another_use_case(decidable):
    world, judge = decidable
    other = other_use_case(world)
    run = world.runs[0]
    run.configuration = other.configurations.get()  # not saved
    with pytest.raises(ServiceError) as refused:
        create(world, judge, run=run)
    assert refused.value.field == "run"
    assert "σ other-sigma v1 belongs to another use case" in refused.value.message


def test_it_refuses_a_session_of_another_use_case(decidable):
    world, judge = decidable
    other = other_use_case(world)
    world.session.use_case_id = other.pk  # not saved
    with pytest.raises(ServiceError) as refused:
        create(world, judge)
    assert refused.value.field == "session" and "another use case" in refused.value.message


def test_it_refuses_a_session_that_did_not_sample_the_run(decidable):
    world, judge = decidable
    only_second = session_create(
        actor=world.owner,
        use_case=world.use_case,
        name="Round 2",
        runs=[world.runs[1]],
        graders=world.graders,
        adjudicators=[world.adjudicator],
        design="uniform",
        sample_size=2,
        seed=7,
    )
    with pytest.raises(ServiceError) as refused:
        create(world, judge, run=world.runs[0], session=only_second)
    assert refused.value.field == "session"
    assert f"did not sample run {world.runs[0].pk}" in refused.value.message


def test_it_refuses_an_oversight_study_of_another_run(decidable):
    world, judge = decidable
    study = oversight_study_create(
        actor=world.owner,
        use_case=world.use_case,
        name="Review queue",
        runs=[world.runs[1]],
        reviewers=[world.graders[1]],
        items_per_reviewer=2,
        seed=3,
    )
    with pytest.raises(ServiceError) as refused:
        create(world, judge, oversight_study=study)
    assert refused.value.field == "oversight_study"


def test_it_refuses_no_session_where_the_intensity_needs_human_grading(decidable):
    world, judge = decidable
    assert world.use_case.intensity >= 2
    with pytest.raises(ServiceError) as refused:
        create(world, judge, session=None)
    assert refused.value.field == "session" and "closed grading session" in refused.value.message


def test_graders_never_record_a_decision_even_holding_the_reviewer_role(decidable):
    world, judge = decidable
    grader = world.graders[1]
    with pytest.raises(PermissionDenied):
        create(world, judge, actor=grader)
    # membership_grant refuses the pair; a row written before that rule must not help
    Membership.objects.create(use_case=world.use_case, user=grader, role=Role.REVIEWER)
    # The blinding policy (docs/security.md) refuses before the service's own check.
    with pytest.raises(PermissionDenied, match="Graders do not act in other roles"):
        create(world, judge, actor=grader)
    with pytest.raises(PermissionDenied):
        create(world, judge, actor=world.model_owner)
    assert not Decision.objects.exists()


def test_a_session_whose_not_assertive_sentences_were_taken_is_closed_and_decided(open_world):
    """The last grader calls every sentence not assertive (so is not asked "supported"); taking
    that grader's values resolves the artefact: "supported" is moot, not a pending dispute."""
    world, judge, left = open_world
    fill(
        left,
        choose=lambda unit_key, field: (
            "N" if field == "assertive" else (FIELDS_BY_NAME[field].values[0])
        ),
    )
    assignment_submit(actor=left.grader, assignment=left)
    ordered = list(
        Assignment.objects.filter(artefact=left.artefact)
        .order_by("public_id")
        .values_list("pk", flat=True)
    )
    outcome = adjudication_take(
        actor=world.adjudicator, artefact=left.artefact, grader=ordered.index(left.pk) + 1
    )
    assert outcome.moot and all(field == "supported" for _key, field in outcome.moot)
    decision = create(world, judge)
    assert decision.session == world.session
