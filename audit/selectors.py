"""Reading the audit log: entries for a use case, and verification of the whole chain."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from audit.models import GENESIS_HASH, HASHED_FIELDS, AuditEntry, entry_hash

VERIFY_CHUNK_SIZE = 2000


@dataclass(frozen=True)
class VerificationResult:
    """The outcome of :func:`audit_verify`.

    ``first_broken_sequence`` is the lowest sequence number at which the chain is not
    intact (for a missing entry, the missing number); ``head_hash`` is the last entry's
    hash when the chain is intact (``None`` for an empty log or a broken chain).
    """

    ok: bool
    entries_checked: int
    first_broken_sequence: int | None = None
    reason: str | None = None
    head_hash: str | None = None


def audit_entries_for_use_case(*, use_case_id: int) -> QuerySet[AuditEntry]:
    """Return the use case's audit entries in sequence order, with their actors."""
    return (
        AuditEntry.objects.filter(use_case_id=use_case_id)
        .select_related("actor")
        .order_by("sequence")
    )


def audit_verify() -> VerificationResult:
    """Recompute every entry's hash and link in sequence order; report the first break.

    Streams the log in one query (constant memory). An entry is intact when its sequence is
    one more than the previous entry's (the first is 1), its ``previous_hash`` is the
    previous entry's ``entry_hash`` (the first's is 64 zeros), and its ``entry_hash`` is the
    hash of its contents (:func:`audit.models.entry_hash`). A changed entry fails its own
    hash; a changed entry whose hash was recomputed fails the next entry's link; a removed
    entry leaves a gap.
    """
    entries = (
        AuditEntry.objects.order_by("sequence")
        .values(*HASHED_FIELDS, "entry_hash")
        .iterator(chunk_size=VERIFY_CHUNK_SIZE)
    )
    checked = 0
    expected_sequence = 1
    previous_hash = GENESIS_HASH
    for entry in entries:
        checked += 1
        sequence = entry["sequence"]
        if sequence != expected_sequence:
            if expected_sequence == 1:
                reason = f"missing (the log starts at #{sequence})"
            else:
                reason = f"missing (the log jumps from #{expected_sequence - 1} to #{sequence})"
            return VerificationResult(False, checked, expected_sequence, reason)
        broken: str | None = None
        if entry["previous_hash"] != previous_hash:
            if sequence == 1:
                broken = "its previous_hash is not the genesis value (64 zeros)"
            else:
                broken = (
                    f"its previous_hash {entry['previous_hash'][:12]}… does not match the hash "
                    f"of entry #{sequence - 1} ({previous_hash[:12]}…): one of them was altered"
                )
        else:
            recomputed = entry_hash(entry)
            if recomputed != entry["entry_hash"]:
                broken = (
                    f"its contents do not match its hash (stored {entry['entry_hash'][:12]}…, "
                    f"recomputed {recomputed[:12]}…): the entry was altered"
                )
        if broken is not None:
            return VerificationResult(False, checked, sequence, broken)
        previous_hash = entry["entry_hash"]
        expected_sequence += 1
    return VerificationResult(True, checked, head_hash=previous_hash if checked else None)
