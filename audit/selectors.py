"""Reading the audit log: entries for a use case, and verification of the whole chain."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from audit.evidence import registered, registered_state
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


def audit_head() -> dict[str, int | str]:
    """Return the log's head as it stands: the last entry's sequence and hash.

    An empty log's head is sequence 0 and the genesis hash. Decisions, final scorecards and
    evidence packs carry the head they were made at, so a log later cut or re-hashed after
    that point no longer reaches it (``verify_audit --against PACK``). One query.
    """
    head = AuditEntry.objects.order_by("-sequence").values_list("sequence", "entry_hash").first()
    sequence, entry_hash_ = head or (0, GENESIS_HASH)
    return {"sequence": sequence, "entry_hash": entry_hash_}


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


def audit_verify_evidence() -> VerificationResult:
    """Re-derive the evidence each entry recorded a hash of; report the first mismatch.

    The checks are registered by the apps that own the evidence (:mod:`audit.evidence`):
    σ and signed charters (canonical JSON SHA-256), decisions (record hash), submitted
    assignments (grades digest, revisions undone), final scorecards (content and PDF); then
    the state checks (the memberships the grants and revocations replay to). One query for
    the entries, one or two per entry checked.
    """
    checks = registered()
    entries = (
        AuditEntry.objects.filter(action__in=list(checks))
        .order_by("sequence")
        .values_list("sequence", "action", "target_id", "payload")
        .iterator(chunk_size=VERIFY_CHUNK_SIZE)
    )
    checked = 0
    for sequence, action, target_id, payload in entries:
        checked += 1
        problem = checks[action](target_id, payload)
        if problem is not None:
            return VerificationResult(False, checked, sequence, f"{action}: {problem}")
    for name, state_check in registered_state().items():
        problem = state_check()
        if problem is not None:
            return VerificationResult(False, checked, None, f"{name}: {problem}")
    return VerificationResult(True, checked)


def audit_verify_against(
    *, anchor: Mapping[str, Any], entries: Sequence[Mapping[str, Any]] = ()
) -> VerificationResult:
    """Check the log against an anchor kept outside the database (an evidence pack's head).

    ``anchor`` is ``{"sequence": n, "entry_hash": h}``: the log must hold entry n with hash
    h (a log cut before n, or re-hashed from any entry up to n, fails), and every extract
    entry in ``entries`` must be in the log with its hash. Run :func:`audit_verify` too:
    this checks the anchor, not the links.
    """
    sequence, expected = anchor["sequence"], anchor["entry_hash"]
    last = AuditEntry.objects.order_by("-sequence").values_list("sequence", flat=True).first()
    if sequence == 0:
        return VerificationResult(True, 0, head_hash=expected)
    stored = dict(
        AuditEntry.objects.filter(
            sequence__in=[sequence, *(entry["sequence"] for entry in entries)]
        ).values_list("sequence", "entry_hash")
    )
    if sequence not in stored:
        return VerificationResult(
            False,
            0,
            sequence,
            f"missing: the pack anchors the log at entry #{sequence} but the log ends at "
            f"#{last or 0}: entries were cut",
        )
    if stored[sequence] != expected:
        return VerificationResult(
            False,
            1,
            sequence,
            f"its hash {stored[sequence][:12]}… is not the anchored {expected[:12]}…: the log "
            "was re-hashed up to this entry",
        )
    for checked, entry in enumerate(sorted(entries, key=lambda e: e["sequence"]), start=1):
        if stored.get(entry["sequence"]) != entry["entry_hash"]:
            return VerificationResult(
                False,
                checked,
                entry["sequence"],
                "the pack's audit extract holds this entry with another hash (or the log "
                "lacks it): the log was altered after the pack was built",
            )
    return VerificationResult(True, len(entries) + 1, head_hash=expected)
