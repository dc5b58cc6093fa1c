"""Re-derive a submitted assignment's grades digest from the grades now (``verify_audit``).

The digest the log recorded at submission is of the grades then; every later change is a
revision (a row and a ``grade.revise`` entry). Undoing the revisions, newest first, on the
grades as stored now must give back the digest recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from audit.canonical import canonical_json, sha256_hex
from grading.models import Grade, GradeRevision


def assignment_submit_check(target_id: str, payload: Mapping[str, Any]) -> str | None:
    """Compare the grades at submission (now, revisions undone) with the recorded digest."""
    recorded = payload.get("grades_sha256")
    if not recorded:
        return None
    grades: dict[str, dict[str, str]] = {}
    for unit_key, field, value in Grade.objects.filter(assignment_id=target_id).values_list(
        "unit_key", "field", "value"
    ):
        grades.setdefault(unit_key, {})[field] = value
    revisions = GradeRevision.objects.filter(assignment_id=target_id).order_by("-created_at", "-pk")
    for unit_key, field, old, new in revisions.values_list(
        "unit_key", "field", "old_value", "new_value"
    ):
        unit = grades.setdefault(unit_key, {})
        if unit.get(field, "") != new:
            return (
                f"assignment {target_id}'s grade {unit_key} {field} is {unit.get(field)!r}, "
                f"but its latest revision set {new!r}: the grade was changed without one"
            )
        if old:
            unit[field] = old
        else:
            unit.pop(field, None)
    grades = {unit_key: unit for unit_key, unit in grades.items() if unit}
    derived = sha256_hex(canonical_json(grades))
    if derived != recorded:
        return (
            f"assignment {target_id}'s grades at submission hash to {derived[:12]}…, the log "
            f"recorded {recorded[:12]}…: a grade was changed behind the log"
        )
    return None
