"""Re-derive the hashes the audit log records for a final scorecard (``verify_audit``)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from audit.canonical import canonical_json, sha256_hex
from scorecards.models import Scorecard


def scorecard_sign_off_check(target_id: str, payload: Mapping[str, Any]) -> str | None:
    """Re-hash a final scorecard's content and signed PDF; compare with the log's hashes."""
    row = (
        Scorecard.objects.filter(pk=target_id)
        .values("content", "canonical_json", "sha256", "pdf", "pdf_sha256")
        .first()
    )
    if row is None:
        return f"scorecard {target_id} it signed off no longer exists"
    text = canonical_json(row["content"])
    if text != row["canonical_json"] or sha256_hex(text) != payload["sha256"]:
        return f"scorecard {target_id}'s content no longer hashes to what the log recorded"
    if row["sha256"] != payload["sha256"]:
        return f"scorecard {target_id}'s stored sha256 is not the one the log recorded"
    pdf = bytes(row["pdf"] or b"")
    if payload.get("pdf_sha256") and hashlib.sha256(pdf).hexdigest() != payload["pdf_sha256"]:
        return f"scorecard {target_id}'s signed PDF no longer hashes to what the log recorded"
    return None
