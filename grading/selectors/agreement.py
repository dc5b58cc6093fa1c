"""Reads for the agreement dashboard and the judge calibration view (SPEC §5.1, §5.2).

Both pages name graders and compare them, so they are for the session's managers only (the
charter owner, the second-line reviewer and the adjudicator), as the session pages are;
anyone holding the grader role is refused, whatever else they hold. The statistics live in
the pure :mod:`grading.agreement`; this module reads the rows, in a fixed number of queries.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Max

from charters.catalogue import BIAS_BOUND_RULE, OPTIONAL_RUBRIC_FIELDS, catalogue
from charters.models.charters import Charter
from charters.selectors.charters import charter_document_build
from enterpriseval.errors import ServiceError
from grading.agreement import (
    DEFAULT_RESAMPLES,
    JUDGE_CRITERIA,
    CalibrationRow,
    CriterionAgreement,
    CriterionKey,
    Eligibility,
    FieldAgreement,
    GraderFieldStats,
    UnitRatings,
    agreement_rule,
    compared_text,
    grader_statistics,
    human_criterion_scores,
    judge_calibration,
    metric_agreements,
    metric_bias_bound,
    metric_eligibility,
    session_agreement,
)
from grading.models import ArtefactKind, Assignment, AssignmentStatus, GradingSession
from grading.rubric import SCALED_FIELDS
from grading.selectors.artefacts import submitted_field_values
from grading.selectors.sessions import session_access, session_get
from runs.models import Judge, JudgeScore

JUDGE_REF = re.compile(r"^(?P<name>[-a-zA-Z0-9_]{1,80}):(?P<version>[-a-zA-Z0-9_.]{1,40})\Z")

#: The label rates shown per grader: (field, label, caption).
HEADLINE_RATES: tuple[tuple[str, str, str], ...] = (
    ("assertive", "N", "not assertive"),
    ("supported", "not", "not supported"),
    ("relevant", "N", "not relevant"),
    ("citation", "not", "citation not used"),
    ("key_element", "absent", "key element absent"),
    ("guidance", "FN", "breach not flagged (FN)"),
)


def agreement_session(
    user: AbstractBaseUser | AnonymousUser, key: str, public_id: str
) -> GradingSession:
    """Return the session if ``user`` manages it: 404 for outsiders, 403 for graders and others.

    The same readers as the session pages (:func:`grading.selectors.sessions.session_access`).
    """
    return session_get(use_case=session_access(user, key), public_id=public_id)


class AssignmentRow(NamedTuple):
    artefact: int
    grader: int
    username: str
    status: str
    seconds: float


@dataclass(frozen=True)
class SessionRatings:
    """A session's submitted ratings as pure rows, with the assignments behind them."""

    rows: list[UnitRatings]
    artefacts_total: int
    artefacts_complete: int
    output_of: dict[int, int]  # artefact pk → output pk (output artefacts only)
    assignments: list[AssignmentRow]


def session_ratings(*, session: GradingSession) -> SessionRatings:
    """Return every field of every unit of the artefacts whose assignments are all submitted.

    A sequential session's agreement is read on its uniform sub-sample only (SPEC §5.5: the
    active draws over-sample hard outputs and would bias κ).
    """
    artefacts_of = session.artefacts.all()
    assigned = Assignment.objects.filter(session=session)
    if session.is_sequential:
        artefacts_of = artefacts_of.filter(pk__in=session.agreement_sample)
        assigned = assigned.filter(artefact_id__in=session.agreement_sample)
    artefacts = list(artefacts_of.only("pk", "kind", "output_id", "session_id"))
    assignments = list(
        assigned.order_by("pk").values_list(
            "pk", "artefact_id", "grader_id", "grader__username", "status", "seconds_spent"
        )
    )
    grader_of = {pk: grader for pk, _a, grader, _n, _s, _t in assignments}
    values = submitted_field_values(artefacts)
    rows = [
        UnitRatings(
            artefact=fv.artefact_id,
            unit_key=fv.unit_key,
            field=fv.field,
            ratings={grader_of[pk]: value for pk, value in fv.values.items()},
            final=fv.final,
        )
        for fv in values
    ]
    rows_of_assignments = [AssignmentRow(*row[1:]) for row in assignments]
    open_artefacts = {
        a.artefact for a in rows_of_assignments if a.status != AssignmentStatus.SUBMITTED
    }
    assigned = {a.artefact for a in rows_of_assignments}
    return SessionRatings(
        rows=rows,
        artefacts_total=len(artefacts),
        artefacts_complete=len(assigned - open_artefacts),
        output_of={
            a.pk: a.output_id
            for a in artefacts
            if a.kind == ArtefactKind.OUTPUT and a.output_id is not None
        },
        assignments=rows_of_assignments,
    )


@dataclass(frozen=True)
class FieldRow:
    agreement: FieldAgreement
    target: float
    passes: bool

    @property
    def point_text(self) -> str:
        """The point with enough digits to read truly against the target (0.599, not 0.60)."""
        return compared_text(self.agreement.point, self.target)


@dataclass(frozen=True)
class EligibilityRow:
    metric_id: str
    name: str
    treatment: str
    eligibility: Eligibility | None  # None: no rubric criterion measures this metric
    agreements: list[CriterionAgreement]  # on the criteria the metric uses

    @property
    def field_names(self) -> list[str]:
        return list(self.eligibility.fields) if self.eligibility else []

    @property
    def blocking(self) -> list[str]:
        return list(self.eligibility.blocking) if self.eligibility else []

    @property
    def blocking_fields(self) -> list[str]:
        blocked = set(self.blocking)
        fields = (a.criterion.field for a in self.agreements if a.criterion.name in blocked)
        return list(dict.fromkeys(fields))

    @property
    def criteria(self) -> list[tuple[CriterionAgreement, str]]:
        """Each criterion's agreement beside its reading under the rule ("α = 0.599 < 0.60")."""
        if self.eligibility is None or not self.eligibility.agreements:
            return [(a, "") for a in self.agreements]
        return list(zip(self.eligibility.agreements, self.eligibility.reasons, strict=True))

    @property
    def rule_text(self) -> str:
        return self.eligibility.rule.text if self.eligibility else ""

    @property
    def low_prevalence(self) -> list[CriterionAgreement]:
        return [a for a in self.agreements if a.low_prevalence]

    @property
    def eligible(self) -> bool | None:
        return None if self.eligibility is None else self.eligibility.eligible

    @property
    def reason(self) -> str:
        if self.eligibility is None:
            return "not graded with this rubric: no field agreement to check"
        return self.eligibility.reason


@dataclass(frozen=True)
class FinalAgreement:
    field: str
    n: int
    agree: int
    percent: float | None


@dataclass(frozen=True)
class GraderRow:
    """One grader's workload, label rates (%) and agreement with the final values (%).

    ``None`` where there is nothing to count (no submitted artefact, no rating).
    """

    grader: str
    artefacts_assigned: int
    artefacts_submitted: int
    mean_seconds: float | None
    headline_rates: list[tuple[str, float | None]]  # (caption, percent)
    label_percent: dict[str, dict[str, float | None]]
    agreement_with_final: list[FinalAgreement]


@dataclass(frozen=True)
class AgreementReport:
    session: GradingSession
    kappa_target: float
    confidence: float
    artefacts_total: int
    artefacts_complete: int
    fields: list[FieldRow]
    eligibility: list[EligibilityRow]
    graders: list[GraderRow]

    @property
    def has_ratings(self) -> bool:
        return self.artefacts_complete > 0


def agreement_report(
    *, session: GradingSession, n_resamples: int = DEFAULT_RESAMPLES
) -> AgreementReport:
    """Return the session's agreement per field, metric eligibility and per-grader statistics.

    The bootstrap is seeded with the session's seed, so the page shows the same interval
    every time for the same grades.
    """
    charter = session.charter
    ratings = session_ratings(session=session)
    agreements = session_agreement(
        ratings.rows,
        confidence=charter.confidence,
        n_resamples=n_resamples,
        seed=session.seed,
    )
    target = charter.kappa_target
    # An optional field (SPEC §4.1) is reported only where the charter asks it: a field no
    # grader was asked has no agreement to show, not one below target.
    asked = set(charter.rubric_fields or ())
    fields = [
        FieldRow(agreement, target, agreement.passes(target))
        for name, agreement in agreements.items()
        if name not in OPTIONAL_RUBRIC_FIELDS or name in asked
    ]
    return AgreementReport(
        session=session,
        kappa_target=target,
        confidence=charter.confidence,
        artefacts_total=ratings.artefacts_total,
        artefacts_complete=ratings.artefacts_complete,
        fields=fields,
        eligibility=_eligibility(
            charter,
            ratings.rows,
            confidence=charter.confidence,
            n_resamples=n_resamples,
            seed=session.seed,
        ),
        graders=_grader_rows(ratings),
    )


def metric_verdicts(
    *,
    session: GradingSession,
    charter: Charter,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> dict[str, Eligibility]:
    """Return, per human-graded charter metric with criteria, its verdict under its rule.

    The rule is the one ``charter`` pre-registers for the metric (default κ/α on the
    metric's criteria against the κ target); the agreement is measured on ``session``'s
    submitted ratings, seeded with the session's seed as the agreement page is.
    """
    ratings = session_ratings(session=session)
    rows = _eligibility(
        charter,
        ratings.rows,
        confidence=charter.confidence,
        n_resamples=n_resamples,
        seed=session.seed,
    )
    return {row.metric_id: row.eligibility for row in rows if row.eligibility is not None}


def _eligibility(
    charter: Charter,
    rows: list[UnitRatings],
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> list[EligibilityRow]:
    metrics = catalogue()
    document = charter_document_build(charter=charter)
    kappa_target = float(document.get("kappa_target", charter.kappa_target))
    asked = document.get("rubric_fields") or ()
    human = [
        entry
        for entry in document["metrics"]
        if entry["id"] in metrics and metrics[entry["id"]].human_graded_when(asked)
    ]
    measured = metric_agreements(
        rows,
        [entry["id"] for entry in human if metrics[entry["id"]].criteria],
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
    result = []
    for entry in human:
        metric = metrics[entry["id"]]
        verdict = None
        agreements = list(measured.get(metric.id, ()))
        if metric.criteria:
            verdict = _verdict(metric.id, entry, agreements, rows, kappa_target, confidence)
        treatment = entry["treatment"]
        result.append(EligibilityRow(metric.id, metric.name, treatment, verdict, agreements))
    return result


def _verdict(
    metric_id: str,
    entry: dict[str, Any],
    agreements: list[CriterionAgreement],
    rows: list[UnitRatings],
    kappa_target: float,
    confidence: float,
) -> Eligibility:
    """Apply the metric's rule; a bias bound is computed only where the rule asks for it."""
    stated = entry.get("agreement")
    bias = None
    gap = None
    if stated and stated.get("rule") == BIAS_BOUND_RULE:
        gap = abs(float(entry["theta_in"]) - float(entry["theta_out"]))
        # one-sided at the gate's level: the gated bound errs at most α/2 on its side
        bias = metric_bias_bound(rows, metric_id, confidence=1.0 - (1.0 - confidence) / 2.0)
    rule = agreement_rule(stated, kappa_target, gap=gap)
    return metric_eligibility(metric_id, agreements, rule, bias=bias)


def _grader_rows(ratings: SessionRatings) -> list[GraderRow]:
    stats = grader_statistics(ratings.rows)
    names: dict[int, str] = {}
    assigned: dict[int, int] = defaultdict(int)
    submitted: dict[int, list[float]] = defaultdict(list)
    for row in ratings.assignments:
        names[row.grader] = row.username
        assigned[row.grader] += 1
        if row.status == AssignmentStatus.SUBMITTED:
            submitted[row.grader].append(row.seconds)
    rows = []
    for grader in sorted(names, key=names.__getitem__):
        per_field = stats.get(grader, {})
        times = submitted[grader]
        rows.append(
            GraderRow(
                grader=names[grader],
                artefacts_assigned=assigned[grader],
                artefacts_submitted=len(times),
                mean_seconds=sum(times) / len(times) if times else None,
                headline_rates=[
                    (caption, _percent(per_field[f].rate(label)) if f in per_field else None)
                    for f, label, caption in HEADLINE_RATES
                ],
                label_percent={
                    spec.name: {
                        label: _percent(rate)
                        for label, rate in per_field[spec.name].label_rates.items()
                    }
                    for spec in SCALED_FIELDS
                    if spec.name in per_field
                },
                agreement_with_final=[
                    _final_agreement(per_field.get(spec.name) or GraderFieldStats(spec.name))
                    for spec in SCALED_FIELDS
                ],
            )
        )
    return rows


def _final_agreement(stats: GraderFieldStats) -> FinalAgreement:
    return FinalAgreement(
        stats.field,
        stats.n_with_final,
        stats.n_agree_final,
        _percent(stats.agreement_with_final),
    )


def _percent(share: float) -> float | None:
    return 100.0 * share if math.isfinite(share) else None


@dataclass(frozen=True)
class JudgeChoice:
    judge_id: int
    ref: str  # "name:version"
    n_scores: int
    latest: datetime


@dataclass(frozen=True)
class CalibrationReport:
    session: GradingSession
    confidence: float
    judges: list[JudgeChoice]
    judge: JudgeChoice | None
    artefacts_total: int
    artefacts_complete: int
    output_artefacts_complete: int
    rows: list[CalibrationRow]

    @property
    def has_pairs(self) -> bool:
        return any(row.n_units for row in self.rows)


def calibration_judges(*, output_ids: Sequence[int]) -> list[JudgeChoice]:
    """Return the judges with scores on these outputs' units, most recently scoring first."""
    rows = (
        JudgeScore.objects.filter(unit__output_id__in=list(output_ids))
        .values("judge_id", "judge__name", "judge__version")
        .annotate(latest=Max("created_at"), n_scores=Count("id"))
        .order_by("-latest", "judge_id")
    )
    return [
        JudgeChoice(
            row["judge_id"],
            f"{row['judge__name']}:{row['judge__version']}",
            row["n_scores"],
            row["latest"],
        )
        for row in rows
    ]


def calibration_report(
    *, session: GradingSession, judge_ref: str | None = None
) -> CalibrationReport:
    """Return judge-versus-human κ and bias per judge criterion on the session's outputs.

    Humans' final values (agreed or adjudicated) on output artefacts whose assignments are
    all submitted are compared with ``judge_ref`` (``"name:version"``; default the judge
    that scored these outputs most recently). Baseline artefacts have no judge scores.
    """
    ratings = session_ratings(session=session)
    judges = calibration_judges(output_ids=list(ratings.output_of.values()))
    judge = _chosen_judge(judges, judge_ref)
    complete = {row.artefact for row in ratings.rows if row.artefact in ratings.output_of}
    human = human_criterion_scores(r for r in ratings.rows if r.artefact in complete)
    scores: dict[CriterionKey, float] = {}
    if judge is not None and complete:
        artefact_of = {ratings.output_of[a]: a for a in complete}
        for output_id, unit_key, criterion, score in JudgeScore.objects.filter(
            judge_id=judge.judge_id,
            unit__output_id__in=list(artefact_of),
            criterion__in=JUDGE_CRITERIA,
        ).values_list("unit__output_id", "unit__key", "criterion", "score"):
            scores[(artefact_of[output_id], unit_key, criterion)] = score
    confidence = session.charter.confidence
    return CalibrationReport(
        session=session,
        confidence=confidence,
        judges=judges,
        judge=judge,
        artefacts_total=ratings.artefacts_total,
        artefacts_complete=ratings.artefacts_complete,
        output_artefacts_complete=len(complete),
        rows=judge_calibration(scores, human, confidence=confidence) if judge else [],
    )


def _chosen_judge(judges: list[JudgeChoice], judge_ref: str | None) -> JudgeChoice | None:
    if not judge_ref:
        return judges[0] if judges else None
    match = JUDGE_REF.match(judge_ref)
    if match is None:
        raise ServiceError(
            f'judge must be "name:version", e.g. "offline:1", got {judge_ref!r}', field="judge"
        )
    for choice in judges:
        if choice.ref == judge_ref:
            return choice
    known = ", ".join(choice.ref for choice in judges) or "none yet"
    exists = Judge.objects.filter(name=match["name"], version=match["version"]).exists()
    problem = "has no scores on this session's outputs" if exists else "is not registered"
    raise ServiceError(
        f"judge {judge_ref} {problem}; judges with scores here: {known}", field="judge"
    )
