"""Building a recorded decision's evidence pack (SPEC §7)."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from audit.canonical import canonical_json
from audit.models import HASHED_FIELDS, AuditEntry
from audit.selectors import audit_entries_for_use_case
from audit.services import audit_record
from charters.permissions import require_role
from enterpriseval.errors import ConflictError
from gates.models import Decision
from gates.services import DECISION_ROLES
from grading.selectors.sessions import session_grade_rows
from runs.models import JudgeScore
from scorecards.evidence import DECISION_MEMBER, evidence_zip


@transaction.atomic
def evidence_pack_build(
    *,
    decision: Decision,
    actor: AbstractBaseUser,
    extra_files: Mapping[str, bytes] | None = None,
) -> bytes:
    """Return the decision's evidence pack (zip bytes) and record its SHA-256 in the audit log.

    Members: ``decision.json``, ``charter.json``, ``configuration.json``,
    ``task_set_manifest.json``, ``grades.jsonl``, ``judge_scores.jsonl``, ``audit.jsonl``,
    any ``extra_files`` (the scorecard PDF) and ``manifest.json``. The manifest's
    ``created_at`` is the decision's, so building the same decision twice gives the same bytes.
    """
    require_role(actor, decision.use_case, DECISION_ROLES)
    members = evidence_members(decision=decision)
    for name, data in (extra_files or {}).items():
        if name in members:
            raise ConflictError(f"extra_files: {name!r} would replace a standard member")
        members[name] = data
    data = evidence_zip(
        members,
        decision_sha256=decision.sha256,
        created_at=decision.created_at.astimezone(dt.UTC).isoformat(),
    )
    audit_record(
        actor=actor,
        action="evidence_pack.build",
        target=decision,
        payload={
            "decision_sha256": decision.sha256,
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
            "members": sorted(members),
        },
    )
    return data


def evidence_members(*, decision: Decision) -> dict[str, bytes]:
    """Return the pack's standard members (all but the manifest) by name."""
    run = decision.run
    task_set = run.task_set
    return {
        DECISION_MEMBER: decision.canonical_json.encode("utf-8"),
        "charter.json": decision.charter.canonical_json.encode("utf-8"),
        "configuration.json": decision.configuration.canonical_json.encode("utf-8"),
        "task_set_manifest.json": _json(
            {
                "name": task_set.name,
                "version": task_set.version,
                "manifest_sha256": task_set.manifest_sha256,
                "line_count": task_set.line_count,
                "split_counts": task_set.split_counts,
                "run_split": run.split,
            }
        ),
        "grades.jsonl": _jsonl(_grade_rows(decision)),
        "judge_scores.jsonl": _jsonl(_judge_score_rows(decision)),
        "audit.jsonl": _jsonl(_audit_rows(decision)),
    }


def _grade_rows(decision: Decision) -> list[dict[str, Any]]:
    # The rows and order of gates.services.grades_digest: grades, then adjudications.
    if decision.session_id is None:
        return []
    grades, adjudications = session_grade_rows(session_id=decision.session_id)
    return [
        *(
            {"kind": "grade", "artefact": a, "grader": g, "unit_key": k, "field": f, "value": v}
            for a, g, k, f, v in grades
        ),
        *(
            {
                "kind": "adjudication",
                "artefact": a,
                "adjudicator": u,
                "unit_key": k,
                "field": f,
                "value": v,
            }
            for a, k, f, v, u in adjudications
        ),
    ]


def _judge_score_rows(decision: Decision) -> list[dict[str, Any]]:
    if decision.judge_id is None:
        return []
    scores = (
        JudgeScore.objects.filter(judge_id=decision.judge_id, unit__output__run_id=decision.run_id)
        .order_by("unit__output_id", "unit__position", "unit__key", "criterion")
        .values_list(
            "unit__output_id", "unit__output__task__external_id", "unit__key", "criterion", "score"
        )
    )
    return [
        {"output": o, "task": t, "unit_key": k, "criterion": c, "score": s}
        for o, t, k, c, s in scores
    ]


def _audit_rows(decision: Decision) -> list[dict[str, Any]]:
    recorded = (
        AuditEntry.objects.filter(
            action="decision.record", target_type="gates.decision", target_id=str(decision.pk)
        )
        .values_list("sequence", flat=True)
        .first()
    )
    if recorded is None:
        raise ConflictError(
            f"Decision {decision.pk} has no decision.record audit entry: the log is incomplete."
        )
    entries = audit_entries_for_use_case(use_case_id=decision.use_case_id).filter(
        sequence__lte=recorded
    )
    return list(entries.values(*HASHED_FIELDS, "entry_hash"))


def _json(value: Any) -> bytes:
    return canonical_json(value).encode("utf-8")


def _jsonl(rows: Iterable[Any]) -> bytes:
    return b"".join(_json(row) + b"\n" for row in rows)
