"""The append-only, hash-chained audit log (SPEC §7).

Entry n stores the SHA-256 of its own contents and the hash of entry n − 1, so changing,
removing or inserting any entry breaks the chain at that point (see
:func:`audit.selectors.audit_verify`). Entries are written only by
:func:`audit.services.audit_record`. The model, its queryset and the database (triggers
installed by migration 0002) all refuse updates and deletes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from django.conf import settings
from django.db import models

from audit.canonical import canonical_json, sha256_hex
from enterpriseval.errors import ImmutableError

GENESIS_HASH = "0" * 64
# The fields an entry's hash covers, per hash version, in the order they are documented
# (order is irrelevant to the hash: canonical JSON sorts keys). Version 1 (entries written
# before the actor's id was hashed) keeps verifying as it was written; version 2 adds the
# actor's id, so re-pointing an entry at another user breaks its hash.
HASHED_FIELDS_V1 = (
    "sequence",
    "created_at",
    "actor_username",
    "action",
    "target_type",
    "target_id",
    "use_case_id",
    "payload",
    "previous_hash",
)
HASHED_FIELDS_BY_VERSION = {1: HASHED_FIELDS_V1, 2: (*HASHED_FIELDS_V1, "actor_id", "hash_version")}
CURRENT_HASH_VERSION = 2
#: Every field a hash of any version reads.
HASHED_FIELDS = HASHED_FIELDS_BY_VERSION[CURRENT_HASH_VERSION]


class AuditLogImmutable(ImmutableError):
    """An attempt to change or delete an audit entry."""


def entry_hash(fields: Mapping[str, Any]) -> str:
    """Return the hash of an entry given its hashed fields (extra keys are ignored).

    Notes
    -----
    Version 1: ``SHA-256(canonical_json({sequence, created_at, actor_username, action,
    target_type, target_id, use_case_id, payload, previous_hash}))``; version 2 adds
    ``actor_id`` and ``hash_version`` to the object hashed. ``created_at`` is written as ISO
    8601 in UTC with microseconds (see :mod:`audit.canonical`). An entry without
    ``hash_version`` is version 1.
    """
    version = fields.get("hash_version", 1)
    if version not in HASHED_FIELDS_BY_VERSION:
        raise ValueError(f"hash_version must be one of {sorted(HASHED_FIELDS_BY_VERSION)}")
    names = HASHED_FIELDS_BY_VERSION[version]
    return sha256_hex(canonical_json({name: fields[name] for name in names}))


class AuditEntryQuerySet(models.QuerySet["AuditEntry"]):
    def update(self, **kwargs: Any) -> NoReturn:
        raise AuditLogImmutable("audit entries are append-only: QuerySet.update() is refused")

    update.alters_data = True  # type: ignore[attr-defined]

    def bulk_update(self, objs: Any, fields: Any, batch_size: int | None = None) -> NoReturn:
        raise AuditLogImmutable("audit entries are append-only: QuerySet.bulk_update() is refused")

    bulk_update.alters_data = True  # type: ignore[attr-defined]

    def delete(self) -> NoReturn:
        raise AuditLogImmutable("audit entries are append-only: QuerySet.delete() is refused")

    delete.alters_data = True  # type: ignore[attr-defined]
    delete.queryset_only = True  # type: ignore[attr-defined]


class AuditEntry(models.Model):
    sequence = models.PositiveBigIntegerField(unique=True)
    created_at = models.DateTimeField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="audit_entries",
    )
    # The username at the time of the event; the hash covers this, not the foreign key.
    actor_username = models.CharField(max_length=255, blank=True)
    action = models.CharField(max_length=100, db_index=True)
    target_type = models.CharField(max_length=100, blank=True)
    target_id = models.CharField(max_length=255, blank=True)
    # No foreign key, so the audit log never depends on (or cascades from) the charters app.
    use_case_id = models.PositiveBigIntegerField(null=True, blank=True, db_index=True)
    payload = models.JSONField(default=dict, blank=True)
    previous_hash = models.CharField(max_length=64)
    entry_hash = models.CharField(max_length=64, unique=True)
    # Which fields the hash covers (HASHED_FIELDS_BY_VERSION); itself hashed from version 2.
    hash_version = models.PositiveSmallIntegerField(default=1)

    objects = AuditEntryQuerySet.as_manager()

    class Meta:
        ordering = ("sequence",)
        get_latest_by = "sequence"
        default_permissions = ("view",)
        verbose_name_plural = "audit entries"
        indexes = (models.Index(fields=("target_type", "target_id"), name="audit_target_idx"),)
        constraints = (
            models.CheckConstraint(
                condition=models.Q(sequence__gte=1), name="audit_sequence_from_one"
            ),
        )

    def __str__(self) -> str:
        target = f" {self.target_type}:{self.target_id}" if self.target_type else ""
        return f"#{self.sequence} {self.action}{target}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding or kwargs.get("force_update") or kwargs.get("update_fields"):
            raise AuditLogImmutable(
                f"audit entry #{self.sequence} is append-only: it cannot be saved again"
            )
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise AuditLogImmutable(
            f"audit entry #{self.sequence} is append-only: it cannot be deleted"
        )

    def compute_hash(self) -> str:
        """Return the hash of this entry's contents as they are now."""
        names = HASHED_FIELDS_BY_VERSION[self.hash_version]
        return entry_hash({name: getattr(self, name) for name in names})
