"""Reads for charters: versions, canonical documents, signing status, deviations, unblinding."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Prefetch
from django.utils import timezone

from audit.canonical import canonical_json, sha256_hex
from charters.charter_document import charter_document, document_diff
from charters.models import Charter, Deviation, Signature, UnblindingEvent, UseCase
from charters.models.charters import SIGNING_ROLES
from charters.models.use_cases import Role
from charters.selectors.task_sets import task_set_supply
from charters.validation import ValidationReport, charter_validate


@dataclass(frozen=True)
class RoleStatus:
    """Whether a signing role has signed the charter's current content."""

    role: str
    label: str
    status: str  # "signed" | "stale" | "missing"
    signature: Signature | None
    stale: list[Signature]


@dataclass(frozen=True)
class DeviationView:
    """A deviation with what changed, from the two versions' canonical documents."""

    from_version: int
    to_version: int
    reason: str
    created_by: Any
    created_at: dt.datetime
    diff: list[dict[str, Any]]
    final: bool  # the new version is signed, so its document (and the diff) cannot change

    @property
    def diff_text(self) -> list[dict[str, str]]:
        """Return the diff with values as display text (JSON for numbers, lists, mappings)."""
        return [
            {
                "path": change["path"],
                "before": _text(change["before"]),
                "after": _text(change["after"]),
            }
            for change in self.diff
        ]


@dataclass
class CharterPage:
    """Everything the charter pages and the detail endpoint show about one version."""

    use_case: UseCase
    charter: Charter
    document: dict[str, Any]
    content_sha256: str
    signing: list[RoleStatus]
    validation: ValidationReport
    versions: list[Charter]
    deviations: list[DeviationView]
    first_unblinding: UnblindingEvent | None
    is_latest: bool
    latest: Charter
    deviation: DeviationView | None = None
    signed_roles: list[str] = field(default_factory=list)


def charter_document_build(*, charter: Charter) -> dict[str, Any]:
    """Return the charter's canonical document: the frozen one if signed, else its draft."""
    if charter.is_frozen:
        document: dict[str, Any] = json.loads(charter.canonical_json)
        return document
    return charter_document(charter, charter.metrics.all(), charter.use_case)


def charter_content_sha256(*, charter: Charter) -> str:
    """Return the SHA-256 of the canonical JSON of the charter's content (what is signed)."""
    if charter.is_frozen:
        return charter.sha256
    return sha256_hex(canonical_json(charter_document_build(charter=charter)))


def charter_queryset(*, use_case: UseCase) -> Any:
    """Return the use case's charter versions with what the pages read, oldest first."""
    return (
        Charter.objects.filter(use_case=use_case)
        .select_related("created_by", "previous", "deviation", "deviation__created_by")
        .prefetch_related(
            Prefetch("signatures", queryset=Signature.objects.select_related("user")),
            "metrics",
        )
        .order_by("version")
    )


def charter_versions(*, use_case: UseCase) -> list[Charter]:
    """Return every charter version of the use case, oldest first (three queries)."""
    versions = list(charter_queryset(use_case=use_case))
    for charter in versions:
        charter.use_case = use_case
    return versions


def charter_current(*, use_case: UseCase) -> Charter | None:
    """Return the latest charter version, draft or signed."""
    return Charter.objects.filter(use_case=use_case).order_by("-version").first()


def charter_in_force(*, use_case: UseCase) -> Charter | None:
    """Return the latest signed (frozen) charter version, the one evaluations use."""
    return Charter.objects.frozen().filter(use_case=use_case).order_by("-version").first()


def charter_signing_status(*, charter: Charter, content_sha256: str) -> list[RoleStatus]:
    """Return, per signing role, the signature on ``content_sha256`` or why none counts.

    A signature on earlier content of a draft is stale: the draft changed after it.
    """
    signatures = list(charter.signatures.all())
    rows = []
    for role in SIGNING_ROLES:
        mine = [s for s in signatures if s.role == role]
        current = next((s for s in mine if s.content_sha256 == content_sha256), None)
        stale = [s for s in mine if s.content_sha256 != content_sha256]
        status = "signed" if current else ("stale" if stale else "missing")
        rows.append(RoleStatus(role.value, Role(role).label, status, current, stale))
    return rows


def charter_deviations(*, use_case: UseCase) -> list[DeviationView]:
    """Return the use case's deviations, oldest first, each with its diff."""
    return _deviations(charter_versions(use_case=use_case))


def use_case_first_unblinding(*, use_case: UseCase) -> UnblindingEvent | None:
    """Return the first time results were shown, which fixes the pre-registration."""
    return (
        UnblindingEvent.objects.filter(use_case=use_case)
        .select_related("actor", "charter")
        .order_by("occurred_at", "pk")
        .first()
    )


def use_case_is_unblinded(*, use_case: UseCase) -> bool:
    """Return whether results have been shown to anyone for the use case."""
    return UnblindingEvent.objects.filter(use_case=use_case).exists()


def charter_page(
    *, use_case: UseCase, version: int | None = None, today: dt.date | None = None
) -> CharterPage | None:
    """Return one charter version (the latest by default) with all it is shown with.

    Five queries whatever the number of versions, metrics and signatures (one reads what
    the use case's task sets supply, for validation).
    """
    versions = charter_versions(use_case=use_case)
    if not versions:
        return None
    by_version = {charter.version: charter for charter in versions}
    charter = versions[-1] if version is None else by_version.get(version)
    if charter is None:
        return None
    document = charter_document_build(charter=charter)
    content_sha256 = charter.sha256 if charter.is_frozen else sha256_hex(canonical_json(document))
    signing = charter_signing_status(charter=charter, content_sha256=content_sha256)
    deviations = _deviations(versions)
    return CharterPage(
        use_case=use_case,
        charter=charter,
        document=document,
        content_sha256=content_sha256,
        signing=signing,
        validation=charter_validate(
            document,
            autonomy=use_case.autonomy,
            consequence=use_case.consequence,
            today=today or timezone.localdate(),
            task_sets=task_set_supply(use_case=use_case),
        ),
        versions=versions,
        deviations=deviations,
        first_unblinding=use_case_first_unblinding(use_case=use_case),
        is_latest=charter is versions[-1],
        latest=versions[-1],
        deviation=next((d for d in deviations if d.to_version == charter.version), None),
        signed_roles=[row.role for row in signing if row.status == "signed"],
    )


def _deviations(versions: list[Charter]) -> list[DeviationView]:
    by_pk = {charter.pk: charter for charter in versions}
    views = []
    for charter in versions:
        deviation = _deviation_of(charter)
        if deviation is None:
            continue
        previous = by_pk[deviation.previous_id]
        views.append(
            DeviationView(
                from_version=previous.version,
                to_version=charter.version,
                reason=deviation.reason,
                created_by=deviation.created_by,
                created_at=deviation.created_at,
                diff=document_diff(
                    charter_document_build(charter=previous),
                    charter_document_build(charter=charter),
                ),
                final=charter.is_frozen,
            )
        )
    return views


def _deviation_of(charter: Charter) -> Deviation | None:
    try:
        return charter.deviation
    except Charter.deviation.RelatedObjectDoesNotExist:  # reverse one-to-one, none recorded
        return None


def _text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=False)
