"""Reads for use cases: the dashboard's list and a use case's members."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet

from charters.models import Membership, Role, UseCase


def use_case_list(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[UseCase]:
    """Return the use cases ``user`` is a member of, annotated for the dashboard.

    ``blinded`` marks the use cases ``user`` grades: their stage (whether a decision was
    recorded or a scorecard signed off) and σ/task-set counts are not shown to a grader.
    """
    if not user.is_authenticated:
        return UseCase.objects.none()
    mine = Membership.objects.filter(use_case=OuterRef("pk"), user=user)
    return (
        UseCase.objects.filter(Exists(mine))
        .annotate(
            blinded=Exists(mine.filter(role=Role.GRADER)),
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


def membership_list(*, use_case: UseCase) -> list[Membership]:
    """Return the use case's memberships with their users, by role (one query)."""
    return list(
        Membership.objects.filter(use_case=use_case).select_related("user").order_by("role")
    )


GRANT_ACCEPTED = (
    "If an active account has the user name {username}, it now holds the role {role}; the "
    "members list shows every role held."
)
"""What a role grant answers whether or not the user name exists (issue 17: a grant must not
tell real user names from made-up ones)."""


def grantee_get(*, username: str) -> AbstractBaseUser | None:
    """Return the active user named ``username``, or None (one query)."""
    return get_user_model().objects.filter(username=username, is_active=True).first()
