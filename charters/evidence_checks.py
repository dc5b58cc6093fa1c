"""Re-derive the hashes the audit log records for σ and signed charters (``verify_audit``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from audit.canonical import sha256_hex
from charters.models import Charter, Configuration


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
