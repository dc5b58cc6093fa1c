"""Writes of scorecards: create, edit the committee's fields, sign off, evidence packs (SPEC §7)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from audit.canonical import canonical_json, sha256_hex
from audit.models import HASHED_FIELDS, AuditEntry
from audit.selectors import audit_entries_for_use_case, audit_head
from audit.services import audit_record
from charters.models import Role, Stage
from charters.permissions import require_role, user_roles
from charters.services.use_cases import use_case_advance
from enterpriseval.errors import ConflictError, ImmutableError, ServiceError
from gates.models import Decision
from gates.services import DECISION_ROLES
from grading.selectors.sessions import session_grade_rows
from runs.models import JudgeScore
from scorecards.evidence import DECISION_MEMBER, evidence_zip
from scorecards.models import Scorecard, ScorecardStatus
from scorecards.selectors import assemble_content

#: Who may draft a scorecard and write its committee fields.
EDIT_ROLES = (Role.CHARTER_OWNER, Role.REVIEWER)
#: Who may sign a scorecard off: the second line (SPEC §1).
SIGN_OFF_ROLES = (Role.REVIEWER,)
EDITABLE_FIELDS = (
    "failure_modes",
    "conditions_of_use",
    "compensating_controls",
    "reevaluation_triggers",
    "next_review_date",
)
MAX_TEXT = 20_000


@transaction.atomic
def scorecard_create(*, actor: AbstractBaseUser, decision: Decision) -> Scorecard:
    """Start the draft scorecard of ``decision``; triggers and review date from its charter.

    One scorecard per decision ("one per use case per cycle", seed 003 Table 11).
    """
    require_role(actor, decision.use_case, EDIT_ROLES)
    if Scorecard.objects.filter(decision=decision).exists():
        raise ConflictError(
            f"Decision {decision.pk} already has a scorecard; edit that one.", field="decision"
        )
    charter = decision.charter
    scorecard = Scorecard.objects.create(
        use_case=decision.use_case,
        decision=decision,
        reevaluation_triggers=list(charter.reevaluation_triggers or []),
        next_review_date=charter.next_review_date,
        created_by=actor,
    )
    audit_record(
        actor=actor,
        action="scorecard.create",
        target=scorecard,
        payload={"decision": decision.pk, "decision_sha256": decision.sha256},
    )
    return scorecard


@transaction.atomic
def scorecard_update(
    *, actor: AbstractBaseUser, scorecard: Scorecard, changes: Mapping[str, Any]
) -> Scorecard:
    """Write the committee's fields of a draft scorecard; a final one is immutable.

    ``changes`` may hold failure_modes, conditions_of_use, compensating_controls (text),
    reevaluation_triggers (a list of strings) and next_review_date (a date or ISO string).
    """
    require_role(actor, scorecard.use_case, EDIT_ROLES)
    locked = Scorecard.objects.select_for_update().get(pk=scorecard.pk)
    if locked.status == ScorecardStatus.FINAL:
        raise ImmutableError(
            f"Scorecard {locked.pk} is final (signed off {locked.signed_off_at:%Y-%m-%d}): it "
            "cannot be edited. Record a new decision and draft a new scorecard."
        )
    unknown = sorted(set(changes) - set(EDITABLE_FIELDS))
    if unknown:
        raise ServiceError(
            f"{unknown[0]}: not an editable scorecard field (editable: "
            + ", ".join(EDITABLE_FIELDS)
            + ")",
            field=unknown[0],
        )
    before = {name: _field_value(locked, name) for name in changes}
    for name, value in changes.items():
        setattr(locked, name, _clean(name, value))
    locked.save(update_fields=[*changes, "updated_at"])
    after = {name: _field_value(locked, name) for name in changes}
    changed = {
        name: {"before": before[name], "after": after[name]}
        for name in changes
        if before[name] != after[name]
    }
    if changed:
        audit_record(actor=actor, action="scorecard.edit", target=locked, payload=changed)
    return locked


def _field_value(scorecard: Scorecard, name: str) -> Any:
    value = getattr(scorecard, name)
    return value.isoformat() if isinstance(value, dt.date) else value


def _clean(name: str, value: Any) -> Any:
    if name == "next_review_date":
        if value in (None, ""):
            return None
        if isinstance(value, dt.date):
            return value
        try:
            return dt.date.fromisoformat(str(value))
        except ValueError:
            raise ServiceError(
                f"next_review_date: {value!r} is not a date (YYYY-MM-DD)", field=name
            ) from None
    if name == "reevaluation_triggers":
        if isinstance(value, str):
            value = [line for line in value.splitlines()]
        if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
            raise ServiceError(
                "reevaluation_triggers: expected a list of strings (one trigger each)", field=name
            )
        triggers = [v.strip() for v in value if v.strip()]
        if any(len(v) > 500 for v in triggers):
            raise ServiceError(
                "reevaluation_triggers: a trigger is over 500 characters", field=name
            )
        return triggers
    if not isinstance(value, str):
        raise ServiceError(f"{name}: expected text", field=name)
    if len(value) > MAX_TEXT:
        raise ServiceError(f"{name}: over {MAX_TEXT:,} characters", field=name)
    return value.strip()


@transaction.atomic
def scorecard_sign_off(*, actor: AbstractBaseUser, scorecard: Scorecard) -> Scorecard:
    """Sign a complete draft off as its second-line reviewer: freeze, hash and audit it.

    Refused while any Table 11 field is missing (the message lists them). At evaluation
    intensity E4 the second-line sign-off must be independent (SPEC §6.4): the reviewer
    may not also own the use case or the model. The frozen content names the reviewer and
    the time; from then on the scorecard is immutable.
    """
    use_case = scorecard.use_case
    held = require_role(actor, use_case, SIGN_OFF_ROLES)
    locked = (
        Scorecard.objects.select_for_update()
        .select_related("use_case", "decision")
        .get(pk=scorecard.pk)
    )
    if locked.status == ScorecardStatus.FINAL:
        raise ImmutableError(f"Scorecard {locked.pk} is already final.")
    if use_case.intensity >= 4 and held & {Role.CHARTER_OWNER, Role.MODEL_OWNER}:
        raise ConflictError(
            f"E{use_case.intensity} needs an independent second-line sign-off: you also hold "
            "the charter-owner or model-owner role on this use case."
        )
    now = timezone.now()
    user = actor
    signed_off = {
        "by": user.get_full_name() or user.get_username(),  # type: ignore[attr-defined]
        "username": user.get_username(),
        "role": str(Role.REVIEWER.label),
        "at": now.astimezone(dt.UTC).isoformat(),
    }
    content = assemble_content(scorecard=locked, signed_off=signed_off)
    if content["missing"]:
        raise ConflictError(
            "The scorecard cannot be final while fields are missing: "
            + "; ".join(f"{row['label']}: {row['why']}" for row in content["missing"]),
            details=list(content["missing"]),
        )
    # The log's head at sign-off: the signed content anchors the log up to here.
    content["audit_head"] = audit_head()
    text = canonical_json(content)
    locked.content = content
    locked.canonical_json = text
    locked.sha256 = sha256_hex(text)
    locked.signed_off_by = actor
    locked.signed_off_at = now
    locked.status = ScorecardStatus.FINAL
    # The signed document itself, rendered before the one save (a final row cannot change).
    locked.pdf = signed_pdf(locked)
    locked.pdf_sha256 = hashlib.sha256(locked.pdf).hexdigest()
    locked.save()
    audit_record(
        actor=actor,
        action="scorecard.sign_off",
        target=locked,
        payload={
            "sha256": locked.sha256,
            "decision_sha256": locked.decision.sha256,
            "pdf_sha256": locked.pdf_sha256,
        },
    )
    use_case_advance(
        actor=actor, use_case=use_case, stage=Stage.DECIDE, note=f"scorecard {locked.pk} signed off"
    )
    return locked


def signed_pdf(scorecard: Scorecard) -> bytes:
    """Render the PDF of a scorecard about to be final, its links to the site's address."""
    from scorecards.report import scorecard_pdf
    from scorecards.selectors import scorecard_view

    return scorecard_pdf(
        scorecard_view(scorecard=scorecard), base_url=settings.ENTERPRISEVAL_SITE_URL.rstrip("/")
    )


def scorecard_pdf_bytes(*, scorecard: Scorecard, base_url: str = "") -> bytes:
    """Return the scorecard's PDF: as signed, for a final scorecard that has not gone stale;
    rendered now otherwise (a draft, or a final one whose re-evaluation notice it must show).
    """
    from scorecards.report import scorecard_pdf
    from scorecards.selectors import scorecard_view

    stored = _kept_pdf(scorecard)
    if stored is not None and not scorecard.reevaluation_flags.exists():
        return stored
    return scorecard_pdf(scorecard_view(scorecard=scorecard), base_url=base_url)


def _kept_pdf(scorecard: Scorecard) -> bytes | None:
    """Return the PDF kept at sign-off, or ``None`` for a draft (the field is deferred)."""
    if scorecard.status != ScorecardStatus.FINAL:
        return None
    stored = Scorecard.objects.filter(pk=scorecard.pk).values_list("pdf", flat=True).first()
    return bytes(stored) if stored else None


def user_may_edit(user: AbstractBaseUser, scorecard: Scorecard) -> bool:
    return bool(user_roles(user, scorecard.use_case) & {str(r) for r in EDIT_ROLES})


def user_may_sign_off(user: AbstractBaseUser, scorecard: Scorecard) -> bool:
    return bool(user_roles(user, scorecard.use_case) & {str(r) for r in SIGN_OFF_ROLES})


@transaction.atomic
def evidence_pack_build(
    *,
    decision: Decision,
    actor: AbstractBaseUser,
    extra_files: Mapping[str, bytes] | None = None,
    audit_through: int | None = None,
) -> bytes:
    """Return the decision's evidence pack (zip bytes) and record its SHA-256 in the audit log.

    Members: ``decision.json``, ``charter.json``, ``configuration.json``,
    ``task_set_manifest.json``, ``grades.jsonl``, ``judge_scores.jsonl``, ``audit.jsonl``,
    any ``extra_files`` (the scorecard PDF) and ``manifest.json``. The manifest's
    ``created_at`` is the decision's, so building the same decision twice gives the same bytes.
    """
    require_role(actor, decision.use_case, DECISION_ROLES)
    members = evidence_members(decision=decision, audit_through=audit_through)
    audit_rows = json_lines(members["audit.jsonl"])
    last = audit_rows[-1]
    for name, data in (extra_files or {}).items():
        if name in members:
            raise ConflictError(f"extra_files: {name!r} would replace a standard member")
        members[name] = data
    data = evidence_zip(
        members,
        decision_sha256=decision.sha256,
        created_at=decision.created_at.astimezone(dt.UTC).isoformat(),
        # The last entry the extract covers (this use case's): the log up to it is anchored.
        audit_head={"sequence": last["sequence"], "entry_hash": last["entry_hash"]},
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


def evidence_members(*, decision: Decision, audit_through: int | None = None) -> dict[str, bytes]:
    """Return the pack's standard members (all but the manifest) by name.

    The audit extract runs up to the decision's ``decision.record`` entry, or up to sequence
    ``audit_through`` when that is later (a scorecard's sign-off).
    """
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
        "audit.jsonl": _jsonl(_audit_rows(decision, audit_through)),
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


def _audit_rows(decision: Decision, through: int | None = None) -> list[dict[str, Any]]:
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
    last = max(recorded, through or 0)
    entries = audit_entries_for_use_case(use_case_id=decision.use_case_id).filter(
        sequence__lte=last
    )
    return list(entries.values(*HASHED_FIELDS, "entry_hash"))


def json_lines(data: bytes) -> list[dict[str, Any]]:
    """Return the objects of a JSON-lines member."""
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def _json(value: Any) -> bytes:
    return canonical_json(value).encode("utf-8")


def _jsonl(rows: Iterable[Any]) -> bytes:
    return b"".join(_json(row) + b"\n" for row in rows)


def scorecard_evidence_pack(
    *, actor: AbstractBaseUser, scorecard: Scorecard, base_url: str = ""
) -> bytes:
    """Return the scorecard's evidence pack: the decision's pack plus the PDF and content.

    Members beyond the decision's: ``scorecard.pdf`` (a final scorecard's: the PDF as signed;
    a draft's: rendered now) and
    ``scorecard.json`` (the content in canonical JSON; for a final scorecard the frozen
    content whose SHA-256 is in every page footer). The audit extract runs through the
    scorecard's sign-off when it is final.
    """
    from scorecards.report import scorecard_pdf
    from scorecards.selectors import scorecard_view

    view = scorecard_view(scorecard=scorecard)
    pdf = _kept_pdf(scorecard) or scorecard_pdf(view, base_url=base_url)
    content_json = canonical_json(
        {"sha256": view.sha256, "state": view.state, "content": view.content}
    )
    through = None
    if scorecard.status == ScorecardStatus.FINAL:
        through = (
            AuditEntry.objects.filter(
                action="scorecard.sign_off",
                target_type="scorecards.scorecard",
                target_id=str(scorecard.pk),
            )
            .values_list("sequence", flat=True)
            .first()
        )
    return evidence_pack_build(
        decision=scorecard.decision,
        actor=actor,
        extra_files={
            "scorecard.pdf": pdf,
            "scorecard.json": content_json.encode("utf-8"),
        },
        audit_through=through,
    )
