"""Appending to the audit log: the one writer, :func:`audit_record`."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection, models, transaction
from django.utils import timezone

from audit.canonical import canonical_value
from audit.models import CURRENT_HASH_VERSION, GENESIS_HASH, AuditEntry

ACTION_PATTERN = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+")
USE_CASE_LABEL = "charters.usecase"
# Key of the PostgreSQL advisory lock that serialises appends: any fixed 64-bit value that
# no other code uses ("AUDIT" in ASCII).
CHAIN_LOCK_KEY = 0x41_55_44_49_54


def audit_record(
    *,
    actor: AbstractBaseUser | None,
    action: str,
    target: models.Model | None = None,
    use_case_id: int | None = None,
    payload: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append an entry to the audit log and return it.

    Call this from the service that makes the state change, inside its transaction, so the
    change and its record commit or roll back together.

    Parameters
    ----------
    actor
        The user who acted, or ``None`` for the system.
    action
        Dotted lower-case name, ``<object>.<verb>``: ``"charter.sign"``.
    target
        The saved model instance acted on; recorded as ``target_type`` (its
        ``app_label.modelname``) and ``target_id`` (its primary key as a string).
    use_case_id
        Defaults to the target's ``use_case_id`` or, for a use case, its primary key; if
        both are known they must agree.
    payload
        What a reader needs to understand the event (hashes, versions, reasons). Values
        must be canonical-JSON serialisable; they are stored in canonical form
        (``Decimal`` and dates as strings, integral floats as integers).

    Raises
    ------
    ValueError
        On a malformed action, an unsaved target or actor, a use case that disagrees with
        the target's, or a payload that is not canonical-JSON serialisable.
    RuntimeError
        If called outside a transaction.
    """
    if not connection.in_atomic_block:
        raise RuntimeError(
            f"audit_record({action!r}) must run inside the caller's transaction, so the change "
            "and its audit entry commit together; wrap the service in @transaction.atomic"
        )
    if not isinstance(action, str) or not ACTION_PATTERN.fullmatch(action):
        raise ValueError(
            f"audit_record: action must be dotted lower-case like 'charter.sign', got {action!r}"
        )
    actor_username = _actor_username(actor, action)
    target_type, target_id, use_case_id = _target_fields(target, use_case_id, action)
    try:
        stored_payload = canonical_value({} if payload is None else payload, "payload")
    except ValueError as error:
        raise ValueError(f"audit_record({action!r}): {error}") from None
    if not isinstance(stored_payload, dict):
        raise ValueError(f"audit_record({action!r}): payload must be a dict, got {payload!r}")
    if _has_nul(stored_payload):
        raise ValueError(f"audit_record({action!r}): payload text must not contain NUL (\\x00)")

    with transaction.atomic():
        _lock_chain()
        head = AuditEntry.objects.order_by("-sequence").values_list("sequence", "entry_hash")
        last_sequence, previous_hash = head.first() or (0, GENESIS_HASH)
        entry = AuditEntry(
            sequence=last_sequence + 1,
            created_at=timezone.now(),
            actor=actor,
            actor_username=actor_username,
            action=action,
            target_type=target_type,
            target_id=target_id,
            use_case_id=use_case_id,
            payload=stored_payload,
            previous_hash=previous_hash,
            hash_version=CURRENT_HASH_VERSION,
        )
        # Clean before hashing: cleaning may convert values, and the hash must cover what is
        # stored.
        entry.full_clean(
            exclude=["actor", "entry_hash"], validate_unique=False, validate_constraints=False
        )
        entry.entry_hash = entry.compute_hash()
        entry.save()
    return entry


def _actor_username(actor: AbstractBaseUser | None, action: str) -> str:
    if actor is None:
        return ""
    if not isinstance(actor, get_user_model()) or actor.pk is None:
        raise ValueError(
            f"audit_record({action!r}): actor must be a saved user or None, got {actor!r}"
        )
    return actor.get_username()


def _target_fields(
    target: models.Model | None, use_case_id: int | None, action: str
) -> tuple[str, str, int | None]:
    if use_case_id is not None and (
        isinstance(use_case_id, bool) or not isinstance(use_case_id, int) or use_case_id < 1
    ):
        raise ValueError(
            f"audit_record({action!r}): use_case_id must be a positive integer or None, "
            f"got {use_case_id!r}"
        )
    if target is None:
        return "", "", use_case_id
    label = target._meta.label_lower
    if target.pk is None:
        raise ValueError(f"audit_record({action!r}): target {label} is unsaved (no primary key)")
    target_use_case = target.pk if label == USE_CASE_LABEL else getattr(target, "use_case_id", None)
    if use_case_id is None:
        use_case_id = target_use_case
    elif target_use_case is not None and target_use_case != use_case_id:
        raise ValueError(
            f"audit_record({action!r}): use_case_id={use_case_id} but target {label} "
            f"#{target.pk} belongs to use case {target_use_case}"
        )
    return label, str(target.pk), use_case_id


def _has_nul(value: Any) -> bool:
    # PostgreSQL text and jsonb cannot hold U+0000; refuse it on every database alike.
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(key) or _has_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_nul(item) for item in value)
    return False


def _lock_chain() -> None:
    # Two writers must not both read head n and both append n + 1. On PostgreSQL a
    # transaction-scoped advisory lock queues them (released at commit or rollback); SQLite
    # allows one writer at a time, and the unique sequence refuses a fork on any database.
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [CHAIN_LOCK_KEY])
