"""Re-derive the hashes the audit log records for σ and signed charters (``verify_audit``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from audit.canonical import sha256_hex
from audit.models import AuditEntry
from charters.models import Charter, Configuration, Membership, Role


def configuration_freeze_check(target_id: str, payload: Mapping[str, Any]) -> str | None:
    """Compare a σ's canonical JSON, hashed now, with the hash its freeze recorded."""
    row = Configuration.objects.filter(pk=target_id).values("canonical_json", "sha256").first()
    if row is None:
        return f"configuration {target_id} it froze no longer exists"
    return _compare("configuration", target_id, row, payload["sha256"])


def charter_freeze_check(target_id: str, payload: Mapping[str, Any]) -> str | None:
    """Compare a signed charter's canonical JSON, hashed now, with the hash its freeze recorded."""
    row = Charter.objects.filter(pk=target_id).values("canonical_json", "sha256").first()
    if row is None:
        return f"charter {target_id} it froze no longer exists"
    return _compare("charter", target_id, row, payload["sha256"])


def _compare(what: str, pk: str, row: Mapping[str, str], recorded: str) -> str | None:
    derived = sha256_hex(row["canonical_json"])
    if derived != recorded:
        return (
            f"{what} {pk}'s canonical JSON hashes to {derived[:12]}…, the log recorded "
            f"{recorded[:12]}…: the {what} was altered"
        )
    if row["sha256"] != recorded:
        return f"{what} {pk}'s stored sha256 {row['sha256'][:12]}… is not the one the log recorded"
    return None


def memberships_check() -> str | None:
    """Replay use-case creations, grants and revocations; compare with the membership rows.

    A use case's creator is its charter owner (``usecase.create``); ``membership.grant`` and
    ``membership.revoke`` add and remove ``(user, role)``. A row the log does not explain (a
    role inserted by hand) or a logged role with no row (deleted by hand) is reported.
    """
    replayed: set[tuple[int, str, str]] = set()
    entries = (
        AuditEntry.objects.filter(
            action__in=("usecase.create", "membership.grant", "membership.revoke")
        )
        .order_by("sequence")
        .values_list("action", "use_case_id", "actor_username", "payload")
    )
    for action, use_case_id, actor, payload in entries.iterator(chunk_size=2000):
        if action == "usecase.create":
            replayed.add((use_case_id, actor, str(Role.CHARTER_OWNER)))
        elif action == "membership.grant":
            replayed.add((use_case_id, payload["user"], payload["role"]))
        else:
            replayed.discard((use_case_id, payload["user"], payload["role"]))
    stored = set(Membership.objects.values_list("use_case_id", "user__username", "role"))
    for use_case_id, username, role in sorted(stored - replayed):
        return (
            f"{username} holds {role} on use case {use_case_id} but the log never granted it: "
            "a membership was written behind the log"
        )
    for use_case_id, username, role in sorted(replayed - stored):
        return (
            f"the log grants {username} {role} on use case {use_case_id} but no membership "
            "says so: a membership was removed behind the log"
        )
    return None
