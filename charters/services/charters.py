"""Writes for charters: drafts, signatures and freezing, revisions, deviations, unblinding.

A charter is a draft until the charter owner, the model owner and a second-line reviewer —
three different people — have signed the same content; the third signature freezes its
canonical JSON and SHA-256 (SPEC §2). After results are first shown (an unblinding event),
every new version is a deviation with who, when and why.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit.canonical import canonical_json, sha256_hex
from audit.services import audit_record
from charters.charter_document import (
    CharterDocumentError,
    document_content,
    document_diff,
    document_normalise,
)
from charters.models import (
    Charter,
    CharterMetric,
    Deviation,
    Role,
    Signature,
    UnblindingEvent,
    UseCase,
)
from charters.models.charters import SIGNING_ROLES
from charters.permissions import require_role, user_roles
from charters.selectors.charters import charter_document_build
from charters.selectors.task_sets import task_set_supply
from charters.signals import deviation_recorded
from charters.validation import charter_validate
from enterpriseval.errors import ConflictError, ImmutableError, ServiceError

SCALAR_FIELDS = (
    "nu_max",
    "confidence",
    "kappa_target",
    "repeats_k",
    "alternative_weights",
    "baseline",
    "measurement_mode",
    "value_inputs",
    "reevaluation_triggers",
    "next_review_date",
)
MAX_REASON = 300  # UnblindingEvent.reason


@transaction.atomic
def charter_create(
    *, actor: AbstractBaseUser, use_case: UseCase, document: dict[str, Any] | None = None
) -> Charter:
    """Create the use case's first charter, a draft v1 (from ``document`` if given).

    A use case has one charter lineage: once v1 exists, later versions come from
    :func:`charter_revise` (after signing) and drafts change through :func:`charter_update`.
    """
    require_role(actor, use_case, [Role.CHARTER_OWNER])
    UseCase.objects.select_for_update().filter(pk=use_case.pk).first()
    latest = Charter.objects.filter(use_case=use_case).order_by("-version").first()
    if latest is not None:
        if latest.is_frozen:
            raise ConflictError(
                f"{use_case.key} already has a signed charter v{latest.version}; revise it to "
                f"start v{latest.version + 1}",
                field="version",
            )
        raise ConflictError(
            f"{use_case.key} already has a draft charter v{latest.version}; edit that draft",
            field="version",
        )
    content = _content(document or {}, use_case=use_case, version=1)
    charter = Charter(use_case=use_case, version=1, created_by=actor)
    _apply(charter, content)
    _full_clean(charter)
    charter.save()
    _write_metrics(charter, content["metrics"])
    audit_record(
        actor=actor,
        action="charter.create",
        target=charter,
        payload={
            "version": charter.version,
            "content_sha256": _content_sha256(charter),
            "metrics": len(content["metrics"]),
        },
    )
    return charter


@transaction.atomic
def charter_update(
    *, actor: AbstractBaseUser, charter: Charter, document: dict[str, Any]
) -> Charter:
    """Replace a draft's fields and metrics with ``document``; a signed charter is immutable.

    Signatures already given to the draft's earlier content stop counting (they are stale).
    """
    locked = Charter.objects.select_for_update().select_related("use_case").get(pk=charter.pk)
    require_role(actor, locked.use_case, [Role.CHARTER_OWNER])
    if locked.is_frozen:
        raise ImmutableError(
            f"charter v{locked.version} of {locked.use_case.key} is signed and frozen "
            f"(SHA-256 {locked.sha256[:12]}…); revise it to make v{locked.version + 1}",
            field="version",
        )
    before = charter_document_build(charter=locked)
    before_sha256 = sha256_hex(canonical_json(before))
    content = _content(document, use_case=locked.use_case, version=locked.version)
    _apply(locked, content)
    _full_clean(locked)
    locked.save(update_fields=[*SCALAR_FIELDS, "success_rule", "rubric_fields"])
    CharterMetric.objects.filter(charter=locked).delete()
    _write_metrics(locked, content["metrics"])
    after = charter_document_build(charter=locked)
    after_sha256 = sha256_hex(canonical_json(after))
    if after_sha256 != before_sha256:
        stale = sorted(
            Signature.objects.filter(charter=locked, content_sha256=before_sha256).values_list(
                "role", flat=True
            )
        )
        audit_record(
            actor=actor,
            action="charter.update",
            target=locked,
            payload={
                "version": locked.version,
                "content_sha256_before": before_sha256,
                "content_sha256_after": after_sha256,
                "changed": [change["path"] for change in document_diff(before, after)],
                "stale_signatures": stale,
            },
        )
    return locked


@transaction.atomic
def charter_sign(*, actor: AbstractBaseUser, charter: Charter, role: Role | str) -> Signature:
    """Sign the draft's current content in ``role``; the third distinct signer freezes it.

    Only a draft whose validation has no errors can be signed. The signature records the
    SHA-256 of the draft's canonical JSON; when the charter owner, the model owner and the
    reviewer (three different users) have signed the same content, its canonical JSON, hash
    and freezing time are written in this transaction.
    """
    if role not in [r.value for r in SIGNING_ROLES]:
        raise ServiceError(
            f"a charter is signed as {', '.join(r.value for r in SIGNING_ROLES)}; got {role!r}",
            field="role",
        )
    role = Role(role)
    locked = Charter.objects.select_for_update().select_related("use_case").get(pk=charter.pk)
    use_case = locked.use_case
    require_role(actor, use_case, [role])
    if locked.is_frozen:
        raise ImmutableError(
            f"charter v{locked.version} of {use_case.key} is already signed and frozen "
            f"(SHA-256 {locked.sha256[:12]}…)",
            field="version",
        )
    document = charter_document_build(charter=locked)
    text = canonical_json(document)
    content_sha256 = sha256_hex(text)
    report = charter_validate(
        document,
        autonomy=use_case.autonomy,
        consequence=use_case.consequence,
        today=timezone.localdate(),
        task_sets=task_set_supply(use_case=use_case),
    )
    if not report.ok:
        errors = report.errors
        raise ServiceError(
            f"charter v{locked.version} has {len(errors)} validation "
            f"error{'s' if len(errors) != 1 else ''}; fix them before signing. First: "
            f"{errors[0].field}: {errors[0].message}",
            field=errors[0].field,
            details=[issue.to_dict() for issue in errors],
        )
    _refuse_unrecorded_deviation(locked)
    current = list(
        Signature.objects.filter(charter=locked, content_sha256=content_sha256).select_related(
            "user"
        )
    )
    for signature in current:
        if signature.role == role:
            raise ConflictError(
                f"{signature.user.get_username()} already signed this content as {role.label}",
                field="role",
            )
        if signature.user_id == actor.pk:
            raise ConflictError(
                f"you already signed this content as {Role(signature.role).label}; the charter "
                "owner, the model owner and the reviewer must be three different people",
                field="role",
            )
    signature = Signature.objects.create(
        charter=locked, role=role, user=actor, content_sha256=content_sha256
    )
    audit_record(
        actor=actor,
        action="charter.sign",
        target=locked,
        payload={"version": locked.version, "role": role.value, "content_sha256": content_sha256},
    )
    signers = {s.role: s.user.get_username() for s in current} | {role.value: actor.get_username()}
    if set(signers) == {r.value for r in SIGNING_ROLES}:
        # The signature rows go in first: the database refuses new rows on a frozen charter.
        locked.canonical_json = text
        locked.sha256 = content_sha256
        locked.frozen_at = timezone.now()
        locked.save(update_fields=["canonical_json", "sha256", "frozen_at"])
        audit_record(
            actor=actor,
            action="charter.freeze",
            target=locked,
            payload={"version": locked.version, "sha256": content_sha256, "signers": signers},
        )
        charter.canonical_json, charter.sha256, charter.frozen_at = (
            locked.canonical_json,
            locked.sha256,
            locked.frozen_at,
        )
    return signature


@transaction.atomic
def charter_revise(*, actor: AbstractBaseUser, charter: Charter, reason: str) -> Charter:
    """Start version n + 1 as a draft copy of the latest signed version n.

    After the use case's first unblinding the change is a deviation: ``reason`` is then
    mandatory and the deviation (who, when, why) is recorded with the new version.
    """
    use_case = charter.use_case
    require_role(actor, use_case, [Role.CHARTER_OWNER])
    versions = list(
        Charter.objects.select_for_update().filter(use_case=use_case).order_by("-version")
    )
    latest = versions[0]
    source = next(c for c in versions if c.pk == charter.pk)
    if latest.pk != source.pk:
        state = "signed" if latest.is_frozen else "a draft"
        raise ConflictError(
            f"charter v{latest.version} of {use_case.key} already exists ({state}); "
            f"revise the latest version, not v{source.version}",
            field="version",
        )
    if not source.is_frozen:
        raise ConflictError(
            f"charter v{source.version} of {use_case.key} is a draft: edit it; only a signed "
            "version is revised",
            field="version",
        )
    reason = (reason or "").strip()
    first = UnblindingEvent.objects.filter(use_case=use_case).order_by("occurred_at", "pk").first()
    if first is not None and not reason:
        raise ServiceError(
            f"results of {use_case.key} were first shown on {first.occurred_at:%Y-%m-%d %H:%M}; "
            "any change is now a deviation and needs a reason (SPEC §2)",
            field="reason",
        )
    content = _content(
        document_content(json.loads(source.canonical_json)),
        use_case=use_case,
        version=source.version + 1,
    )
    revision = Charter(
        use_case=use_case,
        version=source.version + 1,
        previous=source,
        revision_reason=reason,
        created_by=actor,
    )
    _apply(revision, content)
    _full_clean(revision)
    revision.save()
    _write_metrics(revision, content["metrics"])
    payload = {
        "from_version": source.version,
        "to_version": revision.version,
        "previous_sha256": source.sha256,
        "reason": reason,
    }
    if first is not None:
        deviation = Deviation.objects.create(
            charter=revision, previous=source, reason=reason, created_by=actor
        )
        audit_record(
            actor=actor,
            action="charter.deviation",
            target=revision,
            payload=payload | {"first_unblinded_at": first.occurred_at.isoformat()},
        )
        deviation_recorded.send(sender=Deviation, deviation=deviation, actor=actor)
    else:
        audit_record(actor=actor, action="charter.revise", target=revision, payload=payload)
    return revision


@transaction.atomic
def charter_deviation_record(
    *, actor: AbstractBaseUser, charter: Charter, reason: str
) -> Deviation:
    """Record why a revision started before the first unblinding still changes the charter.

    A draft revision begun while results were blind becomes a deviation when results are
    shown before it is signed; it cannot be signed until its reason is recorded.
    """
    locked = Charter.objects.select_for_update().select_related("use_case").get(pk=charter.pk)
    use_case = locked.use_case
    require_role(actor, use_case, [Role.CHARTER_OWNER])
    if locked.is_frozen:
        raise ImmutableError(f"charter v{locked.version} is signed and frozen", field="version")
    if locked.previous_id is None:
        raise ConflictError("the first version of a charter is not a deviation", field="version")
    if Deviation.objects.filter(charter=locked).exists():
        raise ConflictError(
            f"the deviation of charter v{locked.version} is already recorded", field="version"
        )
    if not UnblindingEvent.objects.filter(use_case=use_case).exists():
        raise ConflictError(
            f"results of {use_case.key} have not been shown: v{locked.version} is a revision, "
            "not a deviation",
            field="version",
        )
    reason = (reason or "").strip()
    if not reason:
        raise ServiceError("a deviation needs a reason (SPEC §2)", field="reason")
    previous = Charter.objects.get(pk=locked.previous_id)
    deviation = Deviation.objects.create(
        charter=locked, previous=previous, reason=reason, created_by=actor
    )
    audit_record(
        actor=actor,
        action="charter.deviation",
        target=locked,
        payload={
            "from_version": previous.version,
            "to_version": locked.version,
            "previous_sha256": previous.sha256,
            "reason": reason,
        },
    )
    deviation_recorded.send(sender=Deviation, deviation=deviation, actor=actor)
    return deviation


@transaction.atomic
def use_case_unblind(*, actor: AbstractBaseUser, use_case: UseCase, reason: str) -> UnblindingEvent:
    """Record that results were shown to someone; the first such event fixes the charter.

    Every showing is recorded; from the first one on, every charter change is a deviation.
    """
    if not user_roles(actor, use_case):
        raise ServiceError(f"{actor.get_username()} is not a member of {use_case.key}")
    reason = (reason or "").strip()
    if not reason:
        raise ServiceError("say why and to whom results are shown", field="reason")
    if len(reason) > MAX_REASON:
        raise ServiceError(
            f"the reason has {len(reason)} characters; at most {MAX_REASON}", field="reason"
        )
    UseCase.objects.select_for_update().filter(pk=use_case.pk).first()
    charter = Charter.objects.frozen().filter(use_case=use_case).order_by("-version").first()
    if charter is None:
        raise ConflictError(
            f"{use_case.key} has no signed charter: results cannot be shown before the charter "
            "is signed (its thresholds are the pre-registration)",
            field="charter",
        )
    first = not UnblindingEvent.objects.filter(use_case=use_case).exists()
    event = UnblindingEvent.objects.create(
        use_case=use_case, charter=charter, actor=actor, reason=reason
    )
    audit_record(
        actor=actor,
        action="usecase.unblind",
        target=event,
        payload={
            "charter_version": charter.version,
            "charter_sha256": charter.sha256,
            "reason": reason,
            "first": first,
        },
    )
    return event


# --------------------------------------------------------------------------- helpers


def _content(document: Any, *, use_case: UseCase, version: int) -> dict[str, Any]:
    """Return the storable content of ``document`` for ``use_case`` version ``version``."""
    try:
        normalised = document_normalise(document)
    except CharterDocumentError as error:
        first = error.issues[0]
        raise ServiceError(
            str(error), field=first.field, details=[issue.to_dict() for issue in error.issues]
        ) from None
    expected = {
        "use_case": use_case.key,
        "version": version,
        "autonomy": f"A{use_case.autonomy}",
        "consequence": f"C{use_case.consequence}",
        "intensity": f"E{use_case.intensity}",
    }
    for name, value in expected.items():
        given = normalised.get(name)
        if given is not None and given != value:
            raise ServiceError(
                f"{name}: the document says {given!r} but this is {value!r} "
                f"({use_case.key} charter v{version}); correct the field or remove it",
                field=name,
            )
    return document_content(normalised)


def _apply(charter: Charter, content: dict[str, Any]) -> None:
    for name in SCALAR_FIELDS:
        setattr(charter, name, content[name])
    charter.success_rule = content.get("success_rule")
    charter.rubric_fields = content.get("rubric_fields") or None
    review = content["next_review_date"]
    charter.next_review_date = dt.date.fromisoformat(review) if review else None


def _write_metrics(charter: Charter, metrics: list[dict[str, Any]]) -> None:
    CharterMetric.objects.bulk_create(
        [
            CharterMetric(
                charter=charter,
                metric_id=metric["id"],
                treatment=metric["treatment"],
                theta_out=metric["theta_out"],
                theta_in=metric["theta_in"],
                weight=metric["weight"],
                harm_statement=metric["harm_statement"],
                planned_n=metric["planned_n"],
                reason=metric["reason"],
                agreement=metric.get("agreement"),
                k=metric.get("k"),
                position=position,
            )
            for position, metric in enumerate(metrics)
        ]
    )


def _content_sha256(charter: Charter) -> str:
    return sha256_hex(canonical_json(charter_document_build(charter=charter)))


def _refuse_unrecorded_deviation(charter: Charter) -> None:
    """Refuse to sign a revision that became a deviation without its reason being recorded."""
    if charter.previous_id is None or Deviation.objects.filter(charter=charter).exists():
        return
    first = (
        UnblindingEvent.objects.filter(use_case_id=charter.use_case_id)
        .order_by("occurred_at", "pk")
        .first()
    )
    if first is not None:
        raise ConflictError(
            f"results were shown on {first.occurred_at:%Y-%m-%d %H:%M} while v{charter.version} "
            "was being revised, so it is a deviation: record its reason before signing",
            field="deviation",
        )


def _full_clean(charter: Charter) -> None:
    try:
        charter.full_clean(exclude=["previous", "created_by", "use_case"])
    except ValidationError as error:
        name, messages = next(iter(error.message_dict.items()))
        raise ServiceError(f"{name}: {' '.join(messages)}", field=name) from None
