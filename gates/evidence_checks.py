"""Re-derive the hash the audit log records for a decision (``verify_audit``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from audit.canonical import canonical_json, sha256_hex
from gates.models import Decision


def decision_record_check(target_id: str, payload: Mapping[str, Any]) -> str | None:
    """Re-hash a decision from its record and evidence columns; compare with the log's hash."""
    row = (
        Decision.objects.filter(pk=target_id)
        .values("record", "evidence", "canonical_json", "sha256")
        .first()
    )
    if row is None:
        return f"decision {target_id} it recorded no longer exists"
    recorded = payload["sha256"]
    text = canonical_json({"record": row["record"], "evidence": row["evidence"]})
    if text != row["canonical_json"]:
        return f"decision {target_id}'s record or evidence no longer matches its canonical JSON"
    derived = sha256_hex(text)
    if derived != recorded or row["sha256"] != recorded:
        return (
            f"decision {target_id} hashes to {derived[:12]}…, the log recorded "
            f"{recorded[:12]}…: the decision was altered"
        )
    return None
