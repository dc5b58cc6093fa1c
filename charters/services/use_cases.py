"""Writes for use cases, memberships and the lifecycle."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from audit.services import audit_record
from charters.models import Membership, Role, Stage, StageEvent, UseCase
from charters.permissions import held_roles, membership_conflict
from enterpriseval.errors import ConflictError, ServiceError


@transaction.atomic
def use_case_create(
    *,
    actor: AbstractBaseUser,
    key: str,
    name: str,
    business_outcome: str,
    value_hypothesis: str,
    autonomy: int,
    consequence: int,
    charter_owner: AbstractBaseUser | None = None,
) -> UseCase:
    """Create a use case in stage 1; ``charter_owner`` (default: its creator) owns its charter.

    An administrator creating a use case for a business owner names them; the creator then
    holds no role on it.
    """
    owner = actor if charter_owner is None else charter_owner
    if UseCase.objects.filter(key=key).exists():
        raise ConflictError(f"a use case with key {key!r} already exists", field="key")
    use_case = UseCase(
        key=key,
        name=name,
        business_outcome=business_outcome,
        value_hypothesis=value_hypothesis,
        autonomy=autonomy,
        consequence=consequence,
        created_by=actor,
    )
    _full_clean(use_case)
    use_case.save()
    StageEvent.objects.create(use_case=use_case, stage=Stage.CHARTER, actor=actor)
    Membership.objects.create(
        use_case=use_case, user=owner, role=Role.CHARTER_OWNER, granted_by=actor
    )
    audit_record(
        actor=actor,
        action="usecase.create",
        target=use_case,
        payload={
            "key": key,
            "autonomy": f"A{autonomy}",
            "consequence": f"C{consequence}",
            "intensity": f"E{use_case.intensity}",
            "charter_owner": owner.get_username(),
        },
    )
    return use_case


@transaction.atomic
def membership_grant(
    *, actor: AbstractBaseUser, use_case: UseCase, user: AbstractBaseUser, role: Role | str
) -> Membership:
    """Give ``user`` a role on ``use_case`` (idempotent).

    Graders are blind to provenance (SPEC §1), so the grader role cannot be combined with a
    role that sees configurations: charter owner, model owner or reviewer
    (:func:`charters.permissions.membership_conflict`, docs/security.md).
    """
    role = Role(role)
    conflict = membership_conflict(held_roles(user, use_case), role)
    if conflict is not None:
        raise ConflictError(f"{user.get_username()}: {conflict}", field="role")
    membership, created = Membership.objects.get_or_create(
        use_case=use_case, user=user, role=role, defaults={"granted_by": actor}
    )
    if created:
        audit_record(
            actor=actor,
            action="membership.grant",
            target=use_case,
            payload={"user": user.get_username(), "role": role.value},
        )
    return membership


@transaction.atomic
def membership_revoke(
    *, actor: AbstractBaseUser, use_case: UseCase, user: AbstractBaseUser, role: Role | str
) -> None:
    """Take a role away; the last charter owner cannot be removed."""
    role = Role(role)
    memberships = Membership.objects.filter(use_case=use_case, role=role)
    if role == Role.CHARTER_OWNER and memberships.count() <= 1:
        raise ConflictError("a use case needs at least one charter owner", field="role")
    deleted, _ = memberships.filter(user=user).delete()
    if deleted:
        audit_record(
            actor=actor,
            action="membership.revoke",
            target=use_case,
            payload={"user": user.get_username(), "role": role.value},
        )


@transaction.atomic
def use_case_advance(
    *, actor: AbstractBaseUser | None, use_case: UseCase, stage: Stage | int, note: str = ""
) -> UseCase:
    """Move the use case to a later lifecycle stage and timestamp the entry (SPEC §3).

    Stages never move backwards: a later step (e.g. a second σ) leaves the stage as it is.
    A stage the lifecycle passed without entering it (σ frozen after the task set was
    imported) gets its entry, who and when, the first time its step happens; the use case
    stays where it is.
    """
    stage = Stage(stage)
    locked = UseCase.objects.select_for_update().get(pk=use_case.pk)
    if stage <= locked.stage:
        if stage == locked.stage or locked.stage_events.filter(stage=stage).exists():
            return locked
    else:
        locked.stage = stage
        locked.save(update_fields=["stage"])
    StageEvent.objects.create(use_case=locked, stage=stage, actor=actor, note=note)
    audit_record(
        actor=actor,
        action="usecase.stage",
        target=locked,
        payload={
            "stage": int(stage),
            "label": stage.label,
            "note": note,
            "at": timezone.now().isoformat(),
        },
    )
    use_case.stage = locked.stage
    return locked


def _full_clean(instance: UseCase) -> None:
    from django.core.exceptions import ValidationError

    try:
        instance.full_clean()
    except ValidationError as error:
        field, messages = next(iter(error.message_dict.items()))
        raise ServiceError(f"{field}: {' '.join(messages)}", field=field) from None
