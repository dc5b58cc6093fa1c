"""Reads for use cases: dashboards, lifecycle and what is missing next."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet

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
from charters.validation import intensity_requirements


def use_case_list(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[UseCase]:
    """Return the use cases ``user`` is a member of, annotated for the dashboard."""
    if not user.is_authenticated:
        return UseCase.objects.none()
    mine = Membership.objects.filter(use_case=OuterRef("pk"), user=user)
    return (
        UseCase.objects.filter(Exists(mine))
        .annotate(
            charter_versions=Count("charters", distinct=True),
            frozen_charters=Count(
                "charters", filter=Q(charters__frozen_at__isnull=False), distinct=True
            ),
            configuration_count=Count("configurations", distinct=True),
            task_set_count=Count("task_sets", distinct=True),
        )
        .prefetch_related(
            Prefetch(
                "memberships",
                queryset=Membership.objects.filter(user=user),
                to_attr="my_memberships",
            )
        )
        .order_by("key")
    )


@dataclass(frozen=True)
class StageRow:
    stage: int
    label: str
    entered_at: object | None
    current: bool
    done: bool


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


def use_case_overview(
    *, use_case: UseCase, user: AbstractBaseUser | AnonymousUser
) -> UseCaseOverview:
    """Return what the use-case page shows: lifecycle, requirements, members, next steps."""
    events = {
        event.stage: event.entered_at
        for event in StageEvent.objects.filter(use_case=use_case).order_by("entered_at")
    }
    stages = [
        StageRow(
            stage=stage.value,
            label=stage.label,
            entered_at=events.get(stage.value),
            current=stage.value == use_case.stage,
            done=stage.value < use_case.stage,
        )
        for stage in Stage
    ]
    members = list(
        Membership.objects.filter(use_case=use_case).select_related("user").order_by("role")
    )
    charters = list(
        Charter.objects.filter(use_case=use_case)
        .prefetch_related("signatures")
        .order_by("-version")
    )
    configuration_count = Configuration.objects.filter(use_case=use_case).count()
    task_sets = list(TaskSet.objects.filter(use_case=use_case))
    return UseCaseOverview(
        use_case=use_case,
        roles=sorted(m.role for m in members if m.user_id == user.pk),
        stages=stages,
        requirements=intensity_requirements(use_case.intensity),
        next_steps=next_steps(
            members=members,
            charters=charters,
            configuration_count=configuration_count,
            task_sets=task_sets,
        ),
        members=members,
        current_charter=charters[0] if charters else None,
        configuration_count=configuration_count,
        task_set_count=len(task_sets),
    )


def next_steps(
    *,
    members: list[Membership],
    charters: list[Charter],
    configuration_count: int,
    task_sets: list[TaskSet],
) -> list[str]:
    """Return what is missing before the evaluation can move on, most urgent first."""
    steps = []
    held = {m.role for m in members}
    for role in (Role.MODEL_OWNER, Role.REVIEWER, Role.GRADER):
        if role not in held:
            steps.append(f"Add a {Role(role).label.lower()} to the use case.")
    if not charters:
        steps.append("Write the charter: gated metrics with θout/θin, weights and harms.")
    else:
        latest = charters[0]
        if not latest.is_frozen:
            signed = {
                s.role for s in latest.signatures.all() if s.content_sha256 == _draft_hash(latest)
            }
            missing = [Role(r).label for r in SIGNING_ROLES if r not in signed]
            steps.append(
                f"Charter v{latest.version} is a draft: it needs the signatures of "
                + ", ".join(missing)
                + "."
            )
    if configuration_count == 0:
        steps.append("Upload and freeze the configuration σ under test.")
    if not task_sets:
        steps.append("Import the task set (dev, graded and stress splits).")
    elif not any(ts.split_counts.get("graded") for ts in task_sets):
        steps.append("The task sets have no graded split: import graded tasks.")
    return steps


def _draft_hash(charter: Charter) -> str:
    """Return the content hash signatures of a draft must carry to count."""
    from charters.selectors.charters import charter_content_sha256

    return charter_content_sha256(charter=charter)
