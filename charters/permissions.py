"""Per-use-case roles (SPEC §1): membership on one use case gives nothing on another.

Every view and API endpoint resolves its use case through :func:`use_case_for`, so an
outsider gets 404 (the use case's existence does not leak) and a member without the needed
role gets 403.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from charters.models import Membership, Role, UseCase

AnyUser = AbstractBaseUser | AnonymousUser

#: Who may read a use case's audit log: those accountable for it, not graders (the log names
#: configurations and runs, i.e. provenance).
AUDIT_READERS = (Role.CHARTER_OWNER, Role.MODEL_OWNER, Role.REVIEWER, Role.ADJUDICATOR)


def user_roles(user: AnyUser, use_case: UseCase) -> set[str]:
    """Return the roles ``user`` holds on ``use_case``."""
    if not user.is_authenticated:
        return set()
    return set(
        Membership.objects.filter(use_case=use_case, user=user).values_list("role", flat=True)
    )


def use_cases_visible_to(user: AnyUser) -> QuerySet[UseCase]:
    """Return the use cases on which ``user`` holds any role."""
    if not user.is_authenticated:
        return UseCase.objects.none()
    return UseCase.objects.filter(memberships__user=user).distinct()


def use_case_for(
    user: AnyUser, key_or_pk: str | int, *, roles: Iterable[Role | str] | None = None
) -> UseCase:
    """Return the use case if ``user`` is a member (else 404) with one of ``roles`` (else 403).

    ``roles=None`` admits any member.
    """
    use_case, held = _membership(user, key_or_pk)
    if roles is not None:
        needed = {str(role) for role in roles}
        if not held & needed:
            labels = ", ".join(sorted(Role(role).label for role in needed))
            raise PermissionDenied(f"This needs one of these roles on {use_case.key}: {labels}.")
    return use_case


def _membership(user: AnyUser, key_or_pk: str | int) -> tuple[UseCase, set[str]]:
    lookup = {"pk": key_or_pk} if isinstance(key_or_pk, int) else {"key": key_or_pk}
    use_case = UseCase.objects.filter(**lookup).first()
    if use_case is None:
        raise Http404("No such use case.")
    held = user_roles(user, use_case)
    if not held:
        raise Http404("No such use case.")
    return use_case, held


def require_role(user: AnyUser, use_case: UseCase, roles: Iterable[Role | str]) -> set[str]:
    """Raise 403 unless ``user`` holds one of ``roles`` on ``use_case``; return the roles held."""
    held = user_roles(user, use_case)
    needed = {str(role) for role in roles}
    if not held & needed:
        labels = ", ".join(sorted(Role(role).label for role in needed))
        raise PermissionDenied(f"This needs one of these roles on {use_case.key}: {labels}.")
    return held


def use_case_for_unblinded(user: AnyUser, key_or_pk: str | int, *, what: str) -> UseCase:
    """Return the use case if ``user`` is a member who does not grade on it (else 404/403).

    Graders must never see provenance (SPEC §1, §5.1): the charter names the baseline
    workflow, a task set holds each task's reference (the human baseline artefact's text)
    and the member list names the other graders. Anyone holding the grader role gets 403,
    even with another role.
    """
    use_case, held = _membership(user, key_or_pk)
    if Role.GRADER in held:
        raise PermissionDenied(
            f"Graders do not see {what} of {use_case.key}: it could reveal the provenance of "
            "the artefacts they grade (SPEC §5.1). The grading workspace shows what grading "
            "needs."
        )
    return use_case
