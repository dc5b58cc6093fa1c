"""Writes of sequential grading sessions: create, draw, stop (SPEC §5.5).

A sequential session draws its outputs one at a time while grading proceeds
(:func:`grading.sequential.next_draw`), keeps ``lookahead`` draws ahead of the final values so
graders are not starved, and assigns each drawn output to ``graders_per_artefact`` graders,
blind as in a fixed-n session. A uniform sub-sample drawn at creation is double-graded beside
the draws: agreement (SPEC §5.1) is measured on it alone, since active draws over-sample hard
outputs.

Whether to stop is a question for the estimators (``metrics.sequential``), a later stage of
the pipeline than grading: they register their rule here (:func:`stopping_rule_register`, from
``metrics.apps``) and every service that can make a value final (submit, import, adjudicate)
calls :func:`sequential_after_final`, which asks the rule and then tops the draws up.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from audit.canonical import canonical_json, sha256_hex
from audit.services import audit_record
from charters.models import Charter, Role, Stage, UseCase
from charters.services.use_cases import use_case_advance
from enterpriseval.errors import ConflictError, ServiceError
from grading.models import (
    ArtefactKind,
    Assignment,
    AssignmentStatus,
    GradingSession,
    SampleDesign,
    SequentialDraw,
    SessionArtefact,
    SessionMode,
    SessionStatus,
    StopReason,
    TauRule,
)
from grading.sampling import Candidate, draw_sample
from grading.selectors.sequential import (
    draw_is_final,
    draw_states,
    judge_uncertainty,
    population_outputs,
    sequential_metrics,
)
from grading.sequential import next_draw, next_tau
from runs.models import Judge, JudgeScore, Output, Run

DEFAULT_TAU = 0.5
#: Outputs of the uniform sub-sample double-graded for agreement, by default (SPEC §5.1).
DEFAULT_AGREEMENT_SIZE = 10

#: The rule: (actor, session, closing) → None. ``closing``: stop now whatever it reads.
StoppingRule = Callable[[AbstractBaseUser, GradingSession, bool], None]
_stopping_rules: list[StoppingRule] = []


def stopping_rule_register(rule: StoppingRule) -> None:
    """Register the rule that evaluates a sequential session after a final value (once)."""
    if rule not in _stopping_rules:
        _stopping_rules.append(rule)


def sequential_session_create(
    *,
    actor: AbstractBaseUser,
    use_case: UseCase,
    charter: Charter,
    name: str,
    run: Run,
    grader_ids: Sequence[int],
    adjudicator_ids: Sequence[int],
    graders_per_artefact: int,
    seed: int,
    judge: Judge | None,
    tau: float,
    tau_rule: str,
    budget: int | None,
    planned: int,
    agreement_size: int | None,
) -> GradingSession:
    """Create a sequential session of ``run`` and make its first draws (SPEC §5.5).

    Called by ``grading.services.sessions.session_create`` inside its transaction, once the
    people, runs and seed are checked. ``planned`` is the charter's planned n for the σ,
    the budget when none is given.
    """
    metrics = sequential_metrics(charter=charter)
    if not metrics:
        raise ServiceError(
            f"Charter v{charter.version} gates no human-graded unit metric: a sequential "
            "session has nothing to decide. Create a fixed-n session.",
            field="mode",
        )
    if judge is None:
        raise ServiceError(
            "A sequential session draws by the judge's uncertainty: choose a judge that "
            f"scored run {run.pk}.",
            field="judge",
        )
    outputs = population_outputs(run=run)
    if not outputs:
        raise ServiceError("The run has no succeeded outputs of graded tasks.", field="runs")
    if not JudgeScore.objects.filter(judge=judge, unit__output__run=run).exists():
        raise ServiceError(
            f"Judge {judge.name} {judge.version} has not scored run {run.pk}; judge the run "
            "first, or choose a judge that scored it.",
            field="judge",
        )
    if not 0.0 < tau <= 1.0:
        raise ServiceError(f"tau must be in (0, 1], got {tau}.", field="tau")
    budget = planned if budget is None else budget
    if not 1 <= budget <= len(outputs):
        raise ServiceError(
            f"budget must be between 1 and the run's {len(outputs)} outputs, got {budget}.",
            field="budget",
        )
    size = min(DEFAULT_AGREEMENT_SIZE, budget) if agreement_size is None else agreement_size
    if not 1 <= size <= budget:
        raise ServiceError(
            f"agreement_size must be between 1 and the budget {budget}, got {size}.",
            field="agreement_size",
        )
    session = GradingSession.objects.create(
        use_case=use_case,
        name=name,
        charter=charter,
        task_set=run.task_set,
        design=SampleDesign.UNIFORM,
        seed=seed,
        population_size=len(outputs),
        sample_size=0,
        arms=[],
        graders_per_artefact=graders_per_artefact,
        created_by=actor,
        mode=SessionMode.SEQUENTIAL,
        tau=tau,
        tau_rule=tau_rule,
        budget=budget,
        lookahead=max(2, math.ceil(len(grader_ids) / graders_per_artefact) * 2),
        judge=judge,
    )
    session.runs.set([run])
    session.adjudicators.set(adjudicator_ids)
    session.graders.set(grader_ids)
    task_of = dict(Output.objects.filter(pk__in=outputs).values_list("pk", "task_id"))
    uniform = draw_sample([Candidate(pk) for pk in outputs], size, seed=seed)
    reliability = [
        _artefact(session, int(item.id), task_of[int(item.id)], item.inclusion_probability)
        for item in uniform
    ]
    GradingSession.objects.filter(pk=session.pk).update(
        agreement_sample=[a.pk for a in reliability], sample_size=len(reliability)
    )
    session.refresh_from_db()
    for artefact in reliability:
        _assign(session, artefact, salt=0)
    audit_record(
        actor=actor,
        action="grading_session.create",
        target=session,
        payload={
            "name": name,
            "mode": SessionMode.SEQUENTIAL,
            "charter_version": charter.version,
            "runs": [run.pk],
            "judge": judge.pk,
            "seed": str(seed),
            "tau": tau,
            "tau_rule": tau_rule,
            "budget": budget,
            "population": len(outputs),
            "metrics": metrics,
            "graders_per_artefact": graders_per_artefact,
            "graders": sorted(grader_ids),
            "adjudicators": sorted(adjudicator_ids),
            "agreement_sample_sha256": sha256_hex(
                canonical_json([a.public_id for a in reliability])
            ),
        },
    )
    use_case_advance(
        actor=actor, use_case=use_case, stage=Stage.GRADE, note=f"grading session {name}"
    )
    sequential_top_up(actor=actor, session=session)
    return session


def _artefact(session: GradingSession, output_id: int, task_id: int, pi: float) -> SessionArtefact:
    return SessionArtefact.objects.create(
        session=session,
        kind=ArtefactKind.OUTPUT,
        output_id=output_id,
        task_id=task_id,
        stratum="",
        inclusion_probability=pi,
        asks=session.charter.rubric_fields or None,
    )


def _assign(session: GradingSession, artefact: SessionArtefact, *, salt: int) -> list[Assignment]:
    """Assign ``artefact`` to the graders with the least open work, at the end of their queue.

    Ties are broken by a draw seeded with the session's seed and ``salt``, so no grader can
    read anything into being chosen. Only the session's graders who still hold the grader
    role on the use case are chosen: one whose role was revoked could not open the work
    (``graders_own``), and the draw would wait for a final value that never comes.
    """
    grader_ids = sorted(
        session.graders.filter(
            memberships__use_case_id=session.use_case_id, memberships__role=Role.GRADER
        ).values_list("pk", flat=True)
    )
    open_work = dict.fromkeys(grader_ids, 0)
    total = dict.fromkeys(grader_ids, 0)
    last = dict.fromkeys(grader_ids, 0)
    for grader_id, status, position in Assignment.objects.filter(
        session=session, grader_id__in=grader_ids
    ).values_list("grader_id", "status", "position"):
        total[grader_id] += 1
        last[grader_id] = max(last[grader_id], position)
        if status in (AssignmentStatus.PENDING, AssignmentStatus.IN_PROGRESS):
            open_work[grader_id] += 1
    tiebreak = np.random.default_rng([session.seed, artefact.pk, salt]).permutation(len(grader_ids))
    ranked = sorted(
        range(len(grader_ids)),
        key=lambda i: (open_work[grader_ids[i]], total[grader_ids[i]], tiebreak[i]),
    )
    chosen = [grader_ids[i] for i in ranked[: session.graders_per_artefact]]
    return Assignment.objects.bulk_create(
        Assignment(session=session, artefact=artefact, grader_id=g, position=last[g] + 1)
        for g in chosen
    )


@transaction.atomic
def sequential_top_up(*, actor: AbstractBaseUser, session: GradingSession) -> list[SequentialDraw]:
    """Draw until ``lookahead`` draws wait for final values, within the budget (SPEC §5.5).

    Each draw's q_t is computed from what is known at draw time: the outputs already drawn
    and the metrics not yet settled (``session.sequence``). Recorded, audited, assigned.
    With the adaptive uniform share, τ_t = :func:`~grading.sequential.next_tau` of the floor,
    the last draw's τ and the share the undecided metrics asked for after the final prefix
    last evaluated (``session.sequence["tau_next"]``): only earlier grades, so predictable.
    """
    locked = GradingSession.objects.select_for_update().get(pk=session.pk)
    if not locked.is_sequential or locked.status != SessionStatus.OPEN:
        return []
    assert locked.judge is not None and locked.budget is not None and locked.tau is not None
    run = locked.runs.get()
    outputs = population_outputs(run=run)
    known = int((locked.sequence or {}).get("grades_used") or 0)
    states = draw_states(session=locked, known_final=known)
    waiting = sum(1 for s in states if not s.final)
    drawn_n = len(states)
    room = min(locked.lookahead - waiting, locked.budget - drawn_n, len(outputs) - drawn_n)
    if room <= 0:
        return []
    metrics = sequential_metrics(charter=locked.charter)
    settled = set((locked.sequence or {}).get("settled", {}))
    undecided = [m for m in metrics if m not in settled]
    uncertainty = judge_uncertainty(judge=locked.judge, outputs=outputs, metrics=undecided)
    tau, basis = locked.tau, None
    if locked.tau_rule == TauRule.ADAPTIVE:
        asked = (locked.sequence or {}).get("tau_next")
        previous = states[-1].tau if states else None
        tau = next_tau(locked.tau, previous, [] if asked is None else [float(asked)])
        basis = known
    position = {pk: i for i, pk in enumerate(outputs)}
    drawn = [position[s.output_id] for s in states]
    existing = {
        a.output_id: a
        for a in SessionArtefact.objects.filter(pk__in=locked.agreement_sample).select_related(
            "output"
        )
    }
    task_of = dict(Output.objects.filter(pk__in=outputs).values_list("pk", "task_id"))
    made: list[SequentialDraw] = []
    for _ in range(room):
        index = len(drawn) + 1
        draw = next_draw(
            uncertainty=uncertainty,
            undecided=undecided,
            drawn=drawn,
            n_outputs=len(outputs),
            tau=tau,
            seed=locked.seed,
            index=index,
        )
        drawn.append(draw.position)
        output_id = outputs[draw.position]
        artefact = existing.get(output_id)
        if artefact is None:
            artefact = _artefact(locked, output_id, task_of[output_id], draw.q)
            _assign(locked, artefact, salt=index)
        made.append(
            SequentialDraw.objects.create(
                session=locked,
                index=index,
                artefact=artefact,
                q=draw.q,
                remaining=draw.remaining,
                undecided=undecided,
                tau=tau,
                tau_grades=basis,
            )
        )
        audit_record(
            actor=actor,
            action="grading_session.draw",
            target=locked,
            payload={
                "index": index,
                "artefact": artefact.public_id,
                "q": draw.q,
                "remaining": draw.remaining,
                "undecided": undecided,
                "tau": tau,
                "tau_grades": basis,
            },
        )
    artefacts = SessionArtefact.objects.filter(session=locked).count()
    GradingSession.objects.filter(pk=locked.pk).update(sample_size=artefacts)
    return made


@transaction.atomic
def sequential_after_final(
    *,
    actor: AbstractBaseUser,
    session: GradingSession,
    artefact: SessionArtefact | None = None,
) -> None:
    """After a value became final: ask the stopping rule, then keep the draws topped up.

    With ``artefact`` (the one just submitted or adjudicated), nothing is done unless it is a
    draw whose value is now final: nothing else can move the sequences or free a grader.
    """
    if session.mode != SessionMode.SEQUENTIAL:
        return
    if artefact is not None and not draw_is_final(artefact=artefact):
        return
    for rule in _stopping_rules:
        rule(actor, session, False)
    sequential_top_up(actor=actor, session=session)


@transaction.atomic
def sequential_close(*, actor: AbstractBaseUser, session: GradingSession) -> GradingSession:
    """Stop a sequential session now, at its final prefix (the owner closing it early).

    The sequences are read as they stand, so the decision still rests on valid bounds, and
    the stop is flagged undecided unless every gated metric happens to be settled.
    """
    for rule in _stopping_rules:
        rule(actor, session, True)
    return GradingSession.objects.get(pk=session.pk)


@transaction.atomic
def session_sequence_record(*, session: GradingSession, sequence: Mapping[str, Any]) -> None:
    """Keep the latest evaluation of each gated metric's sequence for the session page."""
    GradingSession.objects.filter(pk=session.pk).update(sequence=dict(sequence))
    session.sequence = dict(sequence)


@transaction.atomic
def session_stop(
    *,
    actor: AbstractBaseUser,
    session: GradingSession,
    reason: StopReason,
    record: Mapping[str, Any],
) -> GradingSession:
    """Stop a sequential session: close it and withdraw the graders' outstanding work.

    ``record`` is what the decision will rest on (grades used, each metric's sequence at the
    stop); it is stored on the session and hashed into the audit entry. Graders are told only
    that the session has ended.
    """
    locked = GradingSession.objects.select_for_update().get(pk=session.pk)
    if locked.status == SessionStatus.CLOSED:
        raise ConflictError("The session is already closed.", field="status")
    withdrawn = Assignment.objects.filter(session=locked).filter(
        Q(status=AssignmentStatus.PENDING) | Q(status=AssignmentStatus.IN_PROGRESS)
    )
    count = withdrawn.update(status=AssignmentStatus.WITHDRAWN)
    stop = {**dict(record), "reason": str(reason), "withdrawn": count}
    now = timezone.now()
    GradingSession.objects.filter(pk=locked.pk).update(
        status=SessionStatus.CLOSED, closed_at=now, stop=stop
    )
    locked.refresh_from_db()
    audit_record(
        actor=actor,
        action="grading_session.stop",
        target=locked,
        payload={
            "reason": str(reason),
            "grades_used": stop.get("grades_used"),
            "withdrawn": count,
            "statuses": stop.get("statuses", {}),
            "stop_sha256": sha256_hex(canonical_json(stop)),
        },
    )
    return locked
