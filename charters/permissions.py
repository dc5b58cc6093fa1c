"""Per-use-case roles (SPEC §1): membership on one use case gives nothing on another.

Every view and API endpoint resolves its use case through :func:`use_case_for`, so an
outsider gets 404 (the use case's existence does not leak) and a member without the needed
role gets 403.

Blinding is a property of a person on a use case (docs/security.md): whoever holds the
grader role there acts there as a grader only. :func:`user_roles` applies this once for
every view, API, selector and service: for a grader it returns ``{grader}``, whatever else
the person holds, so no role-gated page that names provenance (σ, runs, outputs, the audit
log, the charter, oversight results, decisions, scorecards) admits them. The one exception
is a page that is blind by design (the adjudication queue, which shows "Grader 1/2" and an
artefact's content, never where it came from): asked with ``blind=True``, a grader's
adjudicator role counts. The roles a grader may not hold at all on the same use case
(:data:`ROLES_EXCLUDED_FOR_GRADERS`) are refused by :func:`membership_conflict`, which the
grant service (and so the API and the admin form) uses.
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

#: The site-level permission to create use cases (Django's default "add" permission of
#: UseCase), granted by an administrator to a user or a group (docs/operations.md).
USE_CASE_CREATE_PERMISSION = "charters.add_usecase"


def can_create_use_case(user: AnyUser) -> bool:
    """Return whether ``user`` may create use cases (:data:`USE_CASE_CREATE_PERMISSION`)."""
    return bool(user.is_authenticated and user.has_perm(USE_CASE_CREATE_PERMISSION))


def require_use_case_create(user: AnyUser) -> None:
    """Raise 403 unless ``user`` holds :data:`USE_CASE_CREATE_PERMISSION`."""
    if not can_create_use_case(user):
        raise PermissionDenied(
            "Creating a use case needs the site permission “Can add use case” "
            f"({USE_CASE_CREATE_PERMISSION}); ask an administrator to grant it to you or "
            "to one of your groups."
        )


#: Roles that see provenance by design: never held together with the grader role.
ROLES_EXCLUDED_FOR_GRADERS = (Role.CHARTER_OWNER, Role.MODEL_OWNER, Role.REVIEWER)
#: Roles that a grader may also hold; they count only on pages that are blind by design.
ROLES_BLIND_FOR_GRADERS = (Role.ADJUDICATOR,)


def held_roles(user: AnyUser, use_case: UseCase) -> set[str]:
    """Return the roles ``user`` holds on ``use_case`` as granted (the policy not applied)."""
    if not user.is_authenticated:
        return set()
    return set(
        Membership.objects.filter(use_case=use_case, user=user).values_list("role", flat=True)
    )


def acting_roles(held: set[str], *, blind: bool = False) -> set[str]:
    """Return the roles a person holding ``held`` acts in (the blinding policy).

    A grader acts as a grader only; on a page that is blind by design (``blind``) their
    adjudicator role counts too. Anyone else acts in every role they hold.
    """
    if Role.GRADER not in held:
        return set(held)
    kept = {str(Role.GRADER)}
    if blind:
        kept |= held & {str(role) for role in ROLES_BLIND_FOR_GRADERS}
    return kept


def user_roles(user: AnyUser, use_case: UseCase, *, blind: bool = False) -> set[str]:
    """Return the roles ``user`` acts in on ``use_case`` (see :func:`acting_roles`)."""
    return acting_roles(held_roles(user, use_case), blind=blind)


def membership_conflict(held: set[str], role: Role | str) -> str | None:
    """Return why ``role`` cannot join ``held`` on one use case, or ``None`` if it can."""
    role = Role(role)
    excluded = {str(r) for r in ROLES_EXCLUDED_FOR_GRADERS}
    if (role == Role.GRADER and held & excluded) or (role in excluded and Role.GRADER in held):
        other = role if role != Role.GRADER else Role(sorted(held & excluded)[0])
        return (
            f"a grader cannot also be {other.label.lower()} on the same use case: graders "
            "must stay blind to provenance (docs/security.md)"
        )
    return None


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
        _refuse_unless(user, use_case, held, roles)
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
    _refuse_unless(user, use_case, held, roles)
    return held


def _refuse_unless(
    user: AnyUser, use_case: UseCase, held: set[str], roles: Iterable[Role | str]
) -> None:
    needed = {str(role) for role in roles}
    if held & needed:
        return
    if Role.GRADER in held and held_roles(user, use_case) & needed:
        raise PermissionDenied(
            f"Graders do not act in other roles on {use_case.key}: you grade there, so you "
            "see nothing that names the provenance of what you grade (SPEC §5.1, "
            "docs/security.md)."
        )
    labels = ", ".join(sorted(Role(role).label for role in needed))
    raise PermissionDenied(f"This needs one of these roles on {use_case.key}: {labels}.")


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


def can_read_benchmarks(user: AnyUser) -> bool:
    """Return whether ``user`` may read the EGI-Bench pages (docs/operations.md, "Access").

    The roster names the models behind configurations σ, which graders must not learn
    (SPEC §5.1): whoever grades on any use case is refused, whatever else they hold or
    however staff they are; the others need a role on some use case, or staff status.
    """
    if not user.is_authenticated:
        return False
    roles = set(Membership.objects.filter(user=user).values_list("role", flat=True))
    if Role.GRADER in roles:
        return False
    return bool(roles) or bool(user.is_staff)


def require_benchmark_reader(user: AnyUser) -> None:
    """Raise 403 unless ``user`` may read the EGI-Bench pages (:func:`can_read_benchmarks`)."""
    if not can_read_benchmarks(user):
        raise PermissionDenied(
            "The benchmark pages are for staff and for members of a use case who do not "
            "grade: they name the models behind configurations, which graders must not see."
        )
