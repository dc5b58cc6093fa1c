"""Reads for configurations σ: versions, one version, and parity between two (SPEC §2, §9)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet

from charters.configurations import ParityReport, parity_report
from charters.models import Configuration, Role, UseCase
from charters.permissions import use_case_for, user_roles

READ_ROLES = (Role.CHARTER_OWNER, Role.MODEL_OWNER, Role.ADJUDICATOR, Role.REVIEWER)
UPLOAD_ROLES = (Role.MODEL_OWNER, Role.CHARTER_OWNER)
GRADER_REFUSAL = (
    "Graders do not see configurations σ: they reveal which model produced the outputs "
    "being graded (SPEC §1)."
)


def configuration_use_case_for(
    user: AbstractBaseUser | AnonymousUser, key: str, *, upload: bool = False
) -> UseCase:
    """Return the use case whose σ ``user`` may read (or, with ``upload``, upload).

    Outsiders get 404. Anyone holding the grader role gets 403 even with another role: σ
    names the model, and a grader must never see provenance (SPEC §1, §5.1).
    """
    return configuration_access(user, key, upload=upload)[0]


def configuration_access(
    user: AbstractBaseUser | AnonymousUser, key: str, *, upload: bool = False
) -> tuple[UseCase, set[str]]:
    """Return the use case and the roles ``user`` holds; refuse as configuration_use_case_for."""
    use_case = use_case_for(user, key)
    held = user_roles(user, use_case)
    if Role.GRADER in held:
        raise PermissionDenied(GRADER_REFUSAL)
    needed = UPLOAD_ROLES if upload else READ_ROLES
    if not held & set(needed):
        labels = ", ".join(sorted(role.label for role in needed))
        action = "upload" if upload else "see"
        raise PermissionDenied(f"To {action} σ on {use_case.key} you need one of: {labels}.")
    return use_case, held


def can_upload(roles: set[str]) -> bool:
    """Return whether these roles allow uploading σ."""
    return Role.GRADER not in roles and bool(roles & set(UPLOAD_ROLES))


def configuration_list(*, use_case: UseCase) -> QuerySet[Configuration]:
    """Return every σ version of ``use_case``, by name then version, without the documents."""
    return (
        Configuration.objects.filter(use_case=use_case)
        .select_related("created_by")
        .defer("document", "canonical_json")
        .order_by("name", "version")
    )


def configuration_get(*, use_case: UseCase, name: str, version: int) -> Configuration | None:
    """Return version ``version`` of σ ``name`` in ``use_case``, or ``None``."""
    return (
        Configuration.objects.filter(use_case=use_case, name=name, version=version)
        .select_related("created_by")
        .first()
    )


def configuration_latest(*, use_case: UseCase, name: str) -> Configuration | None:
    """Return the latest version of σ ``name`` in ``use_case``, or ``None``."""
    return (
        Configuration.objects.filter(use_case=use_case, name=name)
        .defer("document", "canonical_json")
        .order_by("-version")
        .first()
    )


def configuration_parity(*, a: Configuration, b: Configuration) -> ParityReport:
    """Return which σ components differ between ``a`` and ``b``, leaf by leaf (SPEC §9)."""
    return parity_report(a.document, b.document)
