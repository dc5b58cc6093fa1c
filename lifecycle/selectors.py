"""Reads across every stage: a use case's overview, its lifecycle, what blocks it, what is next."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Q

from charters.models import (
    Charter,
    Configuration,
    Membership,
    Role,
    Stage,
    StageEvent,
    TaskSet,
    UseCase,
)
from charters.models.charters import SIGNING_ROLES
from charters.selectors.charters import charter_content_sha256
from charters.selectors.use_cases import membership_list
from charters.validation import intensity_requirements
from gates.models import Decision
from grading.models import Assignment, AssignmentStatus, GradingSession, SessionStatus
from runs.models import Run, RunStatus
from scorecards.models import ReevaluationFlag, Scorecard, ScorecardStatus
from scorecards.selectors import scorecard_list, scorecard_state

#: What a lifecycle step shows (SPEC §3): stages passed, the one in progress, the next one
#: (blocked or ready), and the ones after it.
STAGE_STATES = {
    "done": "done",
    "skipped": "passed without an entry",
    "current": "in progress",
    "blocked": "blocked",
    "ready": "ready to start",
    "upcoming": "not started",
}


@dataclass(frozen=True)
class StageRow:
    stage: int
    label: str
    entered_at: datetime | None
    current: bool
    done: bool
    name: str = ""
    state: str = "upcoming"
    actor: str = ""
    note: str = ""
    blockers: tuple[str, ...] = ()

    @property
    def state_label(self) -> str:
        return STAGE_STATES[self.state]


@dataclass(frozen=True)
class ScorecardRow:
    scorecard: Scorecard
    state: str
    flags: list[ReevaluationFlag]


@dataclass(frozen=True)
class SessionProgress:
    name: str
    open: bool
    total: int
    not_submitted: int


@dataclass(frozen=True)
class LifecycleFacts:
    """What the lifecycle's blockers are read from: one fixed set of queries per use case."""

    held_roles: set[str]
    charters: list[Charter]
    configuration_count: int
    task_sets: list[TaskSet]
    run_statuses: list[str]
    sessions: list[SessionProgress]
    decision_count: int
    scorecards: list[Scorecard]


@dataclass(frozen=True)
class UseCaseOverview:
    use_case: UseCase
    roles: list[str]
    stages: list[StageRow]
    requirements: list[str]
    next_steps: list[str]
    members: list[Membership]
    current_charter: Charter | None
    configuration_count: int
    task_set_count: int
    scorecards: list[ScorecardRow] = field(default_factory=list)
    shows_scorecards: bool = False


def use_case_overview(
    *, use_case: UseCase, user: AbstractBaseUser | AnonymousUser
) -> UseCaseOverview:
    """Return what the use-case page shows: lifecycle, requirements, members, next steps.

    Graders get no scorecards (their reasons name σ) and no names of who entered a stage
    (the member list is hidden from them too: SPEC §5.1). They see the lifecycle up to
    grading and, as next steps, only their own grading: whether a decision was recorded or
    a scorecard signed off is not theirs to know while they grade.
    """
    members = membership_list(use_case=use_case)
    roles = sorted(m.role for m in members if m.user_id == user.pk)
    blinded = Role.GRADER in roles
    facts = lifecycle_facts(use_case=use_case, members=members)
    stages = lifecycle_stages(use_case=use_case, facts=facts, names=not blinded)
    if blinded:
        stages = [row for row in stages if row.stage <= Stage.GRADE]
    return UseCaseOverview(
        use_case=use_case,
        roles=roles,
        stages=stages,
        requirements=intensity_requirements(use_case.intensity),
        next_steps=_grading_steps(use_case, user)
        if blinded
        else next_steps(facts=facts, stage=use_case.stage),
        members=members,
        current_charter=facts.charters[0] if facts.charters else None,
        configuration_count=facts.configuration_count,
        task_set_count=len(facts.task_sets),
        scorecards=[] if blinded else _scorecard_rows(facts.scorecards),
        shows_scorecards=not blinded,
    )


def lifecycle_facts(*, use_case: UseCase, members: list[Membership]) -> LifecycleFacts:
    """Read what every stage's blockers need, in a fixed number of queries."""
    charters = list(
        Charter.objects.filter(use_case=use_case)
        .prefetch_related("signatures")
        .order_by("-version")
    )
    sessions = [
        SessionProgress(
            name=row["name"],
            open=row["status"] == SessionStatus.OPEN,
            total=row["total"],
            not_submitted=row["not_submitted"],
        )
        for row in GradingSession.objects.filter(use_case=use_case)
        .annotate(
            total=Count("assignments"),
            not_submitted=Count(
                "assignments", filter=~Q(assignments__status=AssignmentStatus.SUBMITTED)
            ),
        )
        .order_by("created_at", "pk")
        .values("name", "status", "total", "not_submitted")
    ]
    return LifecycleFacts(
        held_roles={m.role for m in members},
        charters=charters,
        configuration_count=Configuration.objects.filter(use_case=use_case).count(),
        task_sets=list(TaskSet.objects.filter(use_case=use_case)),
        run_statuses=list(Run.objects.filter(use_case=use_case).values_list("status", flat=True)),
        sessions=sessions,
        decision_count=Decision.objects.filter(use_case=use_case).count(),
        scorecards=scorecard_list(use_case=use_case),
    )


def lifecycle_stages(
    *, use_case: UseCase, facts: LifecycleFacts, names: bool = True
) -> list[StageRow]:
    """Return the seven stages (SPEC §3): state, who entered each and when, what blocks next.

    Stage 7 (decide and monitor) is done once a scorecard is signed off, which is what
    enters it. A stage the lifecycle moved past without entering it (e.g. a task set
    imported before any σ) reads "passed without an entry" and keeps its blockers.
    """
    events = {
        event.stage: event
        for event in StageEvent.objects.filter(use_case=use_case)
        .select_related("actor")
        .order_by("entered_at", "pk")
    }
    reached = use_case.stage
    rows = []
    for stage in Stage:
        event = events.get(stage.value)
        blockers: list[str] = []
        if stage.value < reached or stage.value == reached == Stage.DECIDE:
            state = "done" if event is not None else "skipped"
            if event is None:
                blockers = stage_blockers(stage=stage, facts=facts)
            elif stage == Stage.DECIDE:
                blockers = _monitoring(facts)
        elif stage.value == reached:
            state = "current"
        elif stage.value == reached + 1:
            blockers = stage_blockers(stage=stage, facts=facts)
            state = "blocked" if blockers else "ready"
        else:
            state = "upcoming"
        actor = event.actor if event is not None else None
        rows.append(
            StageRow(
                stage=stage.value,
                label=stage.label,
                entered_at=event.entered_at if event is not None else None,
                current=stage.value == reached,
                done=stage.value < reached,
                name=stage.label.partition(" ")[2],
                state=state,
                actor=actor.get_username() if names and actor is not None else "",
                note=event.note if names and event is not None else "",
                blockers=tuple(blockers),
            )
        )
    return rows


def stage_blockers(*, stage: Stage | int, facts: LifecycleFacts) -> list[str]:
    """Return what keeps the evaluation from entering ``stage`` (empty: nothing does)."""
    stage = Stage(stage)
    steps: list[str] = []
    if stage == Stage.CONFIGURE:
        if not facts.charters:
            steps.append("Write the charter: gated metrics with θout/θin, weights and harms.")
        else:
            latest = facts.charters[0]
            if not latest.is_frozen:
                signed = {
                    s.role
                    for s in latest.signatures.all()
                    if s.content_sha256 == charter_content_sha256(charter=latest)
                }
                missing = [Role(r).label for r in SIGNING_ROLES if r not in signed]
                steps.append(
                    f"Charter v{latest.version} is a draft: it needs the signatures of "
                    + ", ".join(missing)
                    + "."
                )
        if facts.configuration_count == 0:
            steps.append("Upload and freeze the configuration σ under test.")
    elif stage == Stage.GOLD_SET:
        if not facts.task_sets:
            steps.append("Import the task set (dev, graded and stress splits).")
        elif not any(ts.split_counts.get("graded") for ts in facts.task_sets):
            steps.append("The task sets have no graded split: import graded tasks.")
    elif stage == Stage.RUN:
        if not facts.run_statuses:
            steps.append("No run yet: execute σ on the graded split or import its outputs.")
        elif RunStatus.COMPLETED not in facts.run_statuses:
            steps.append(_no_completed_run(facts))
    elif stage == Stage.GRADE:
        if Role.GRADER not in facts.held_roles:
            steps.append("Add a grader to the use case.")
        if facts.run_statuses and RunStatus.COMPLETED not in facts.run_statuses:
            steps.append(_no_completed_run(facts))
        if not facts.sessions:
            steps.append(
                "No grading session yet: draw a blinded sample of the runs' outputs for "
                "≥ 2 graders each."
            )
    elif stage == Stage.GATE:
        if not facts.sessions:
            steps.append("No grading session: the gate needs graded estimates.")
        for session in facts.sessions:
            if session.open and session.not_submitted:
                steps.append(
                    f"Grading session “{session.name}” open: {session.not_submitted} of "
                    f"{_count(session.total, 'assignment')} not submitted."
                )
    elif stage == Stage.DECIDE:
        if facts.decision_count == 0:
            steps.append("No decision recorded: the scorecard is drafted from a decision.")
        if not any(s.status == ScorecardStatus.FINAL for s in facts.scorecards):
            drafts = [s.pk for s in facts.scorecards if s.status == ScorecardStatus.DRAFT]
            detail = (
                f": {_count(len(drafts), 'draft')} awaiting second-line sign-off" if drafts else ""
            )
            steps.append(f"No scorecard signed off{detail}.")
        if Role.REVIEWER not in facts.held_roles:
            steps.append("Add a second-line reviewer to sign the scorecard off.")
    return steps


def next_steps(*, facts: LifecycleFacts, stage: int = Stage.CHARTER) -> list[str]:
    """Return what is missing before the evaluation can move on, most urgent first.

    Missing roles, then what stages 2 and 3 need (they stay needed: a charter revision or
    a missing σ blocks everything after), then what blocks the stage after ``stage``.
    """
    steps = []
    for role in (Role.MODEL_OWNER, Role.REVIEWER, Role.GRADER):
        if role not in facts.held_roles:
            steps.append(f"Add a {Role(role).label.lower()} to the use case.")
    wanted = [Stage.CONFIGURE, Stage.GOLD_SET]
    if Stage.GOLD_SET < stage + 1 <= Stage.DECIDE:
        wanted.append(Stage(stage + 1))
    for blocked in wanted:
        steps += [s for s in stage_blockers(stage=blocked, facts=facts) if s not in steps]
    return steps


def _grading_steps(use_case: UseCase, user: AbstractBaseUser | AnonymousUser) -> list[str]:
    """Return a grader's one next step: the assignments they have still to submit here."""
    left = (
        Assignment.objects.filter(session__use_case=use_case, grader_id=user.pk)
        .exclude(status=AssignmentStatus.SUBMITTED)
        .count()
    )
    return [f"You have {_count(left, 'assignment')} to grade: open My grading."] if left else []


def _no_completed_run(facts: LifecycleFacts) -> str:
    return (
        f"No run has completed yet ({_count(len(facts.run_statuses), 'run')} "
        "pending, running or stopped)."
    )


def _monitoring(facts: LifecycleFacts) -> list[str]:
    stale = [
        s
        for s in facts.scorecards
        if s.status == ScorecardStatus.FINAL and list(s.reevaluation_flags.all())
    ]
    if not stale:
        return []
    return [f"Re-evaluation required: {_count(len(stale), 'signed-off scorecard')}."]


def _scorecard_rows(scorecards: list[Scorecard]) -> list[ScorecardRow]:
    rows = []
    for scorecard in scorecards:
        flags = list(scorecard.reevaluation_flags.all())
        rows.append(
            ScorecardRow(scorecard=scorecard, state=scorecard_state(scorecard, flags), flags=flags)
        )
    return rows


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
