"""Scorecards in the demo: each σ's decision drafted, filled in, signed off, written out.

The committee's fields are written from the decision itself (the metrics below their inner
threshold, the rubrics whose agreement fell short of the κ target, what the oversight study
showed), the way a second-line reviewer would summarise them; `demo-reviewer` signs each off.
Then the PDF and the evidence pack of each go under ``out/`` and the pack is verified offline.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model

from gates.models import Decision
from scorecards.evidence import evidence_verify
from scorecards.models import Scorecard, ScorecardStatus
from scorecards.report import scorecard_pdf_write
from scorecards.selectors import scorecard_view
from scorecards.services import (
    scorecard_create,
    scorecard_evidence_pack,
    scorecard_sign_off,
    scorecard_update,
)


def demo_scorecards(
    *,
    decisions: Sequence[Decision],
    out_dir: Path,
    log: Callable[[str], None],
    prefix: str = "credit_memo",
    fields: Callable[[Decision], dict[str, Any]] | None = None,
) -> list[tuple[Scorecard, Path, Path]]:
    """Draft, fill in and sign off each decision's scorecard; write its PDF and evidence pack.

    The files are ``<prefix>_<σ>_scorecard.pdf`` and its ``_evidence.zip``; ``fields`` writes
    the committee's fields from a decision (:func:`committee_fields` by default).
    """
    fill = fields or committee_fields
    reviewer = get_user_model().objects.get(username="demo-reviewer")
    written = []
    for decision in decisions:
        scorecard = Scorecard.objects.filter(decision=decision).first()
        if scorecard is None:
            scorecard = scorecard_create(actor=reviewer, decision=decision)
        if scorecard.status != ScorecardStatus.FINAL:
            scorecard = scorecard_update(
                actor=reviewer, scorecard=scorecard, changes=fill(decision)
            )
            scorecard = scorecard_sign_off(actor=reviewer, scorecard=scorecard)
        stem = f"{prefix}_{decision.configuration.name}_scorecard"
        view = scorecard_view(scorecard=scorecard)
        pdf = scorecard_pdf_write(view, out_dir / f"{stem}.pdf")
        pack = out_dir / f"{stem}_evidence.zip"
        data = scorecard_evidence_pack(actor=reviewer, scorecard=scorecard)
        pack.write_bytes(data)
        check = evidence_verify(data)
        if not check.ok:
            raise RuntimeError(f"{pack}: the evidence pack does not verify: {check.reason}")
        signer = scorecard.signed_off_by.get_username() if scorecard.signed_off_by else "—"
        log(
            f"σ {decision.configuration.name}: scorecard {scorecard.pk} {view.state} "
            f"(signed off by {signer}), "
            f"SHA-256 {view.sha256[:16]}…; evidence pack verifies "
            f"({len(check.checked)} members, SHA-256 {hashlib.sha256(data).hexdigest()[:16]}…)"
        )
        written.append((scorecard, pdf, pack))
    return written


def committee_fields(
    decision: Decision,
    *,
    conditions_of_use: str | None = None,
    compensating_controls: str | None = None,
) -> dict[str, Any]:
    """Return the committee's fields a reviewer would write from the decision's evidence.

    The conditions of use and compensating controls are the credit memo's unless given.
    """
    record = decision.record
    gate = record["gate"]
    kappa_target = decision.charter.kappa_target
    failures = []
    for metric in gate["metrics"]:
        label = metric.get("label") or metric["id"]
        kappa = metric.get("kappa")
        if metric.get("grading") == "H" and kappa is not None and kappa < kappa_target:
            failures.append(
                f"Graders disagree on {label}: κ = {kappa:.2f} below the target "
                f"{kappa_target:.2f}; the rubric needs revision before this metric can gate."
            )
        if metric["status"] in ("Reject", "Conditional") and metric.get("ci"):
            low, high = metric["ci"]
            failures.append(
                f"{label}: estimate {metric['estimate']:.1f} [{low:.1f}, {high:.1f}] is "
                f"{metric['status']} against θout {metric['theta_out']:g} / θin "
                f"{metric['theta_in']:g}."
            )
    estimates = {row["metric_id"]: row for row in record["estimates"]}
    catch = estimates.get("catch_rate") or {}
    if catch.get("point") is not None:
        failures.append(
            f"Reviewers caught {catch['point']:.0f}% of seeded defects "
            f"[{catch['lo']:.0f}%, {catch['hi']:.0f}%]: analyst review alone does not stop "
            "every defect."
        )
    return {
        "failure_modes": "\n".join(failures) or "No failure mode observed in the graded sample.",
        "conditions_of_use": conditions_of_use
        or (
            "Assistive drafting only (A1): an analyst edits every memo section and a senior "
            "credit officer reviews it before it reaches the credit committee. Not to be "
            "scaled beyond the pilot team until the decision is re-taken with the revised "
            f"rubric (the gate reads {decision.status})."
        ),
        "compensating_controls": compensating_controls
        or (
            "Every cited figure is checked against the spreads by the analyst; a checklist of "
            "the mandatory credit-policy items accompanies each memo; a monthly production "
            "sample of 30 sections is graded against the charter's hallucination threshold."
        ),
    }
