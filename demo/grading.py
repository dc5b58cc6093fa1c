"""Blinded grading in the demo: a session over both σ's outputs, graded by simulated experts.

``make demo`` draws a seeded stratified sample of 40 credit-memo outputs of each σ (the
planned n is per σ), assigns each to two of three graders, loads the simulated graders'
answers (``examples/credit_memo/make_grades.py``: known error rates of 2–5 % per field)
through the same services as the browser's autosave and submit, and has the adjudicator
resolve every disagreement with the planted truth. The session is then closed: every
assignment submitted, every disagreement adjudicated, as ``decision_create`` requires.

What is left for a person to try in the browser lives apart, in a small practice session and
a practice oversight study that no decision rests on (:func:`demo_practice`). Every step is
idempotent: a second run finds what the first made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np
from django.contrib.auth import get_user_model

from charters.models import UseCase
from demo.loaders import DemoObjects, JudgedRun
from examples.credit_memo import make_grades
from grading.models import (
    Assignment,
    AssignmentStatus,
    GradingSession,
    OversightItem,
    OversightStudy,
    SessionArtefact,
    SessionMode,
    SessionStatus,
    StopReason,
)
from grading.selectors.adjudication import dispute_catalogue
from grading.selectors.agreement import AgreementReport, agreement_report
from grading.selectors.artefacts import submitted_field_values
from grading.selectors.oversight import OversightResults, oversight_results
from grading.services.grades import (
    MAX_ELAPSED_PER_CALL,
    GradeChange,
    adjudication_record,
    assignment_heartbeat,
    assignment_submit,
    grades_save,
)
from grading.services.oversight import oversight_item_decide, oversight_study_create
from grading.services.sessions import session_close, session_create
from runs.services.judging import judge_get_or_create

SESSION_NAME = "Credit memo blind review, round 1"
SESSION_SEED = 20261130
SAMPLE_SIZE = 40  # per σ: the planned n is per σ (SPEC §5.3), so 80 outputs over the two σ
STUDY_NAME = "Credit memo review queue, round 1"
STUDY_SEED = 20261201
STUDY_ITEMS_PER_REVIEWER = 30
STUDY_DEFECT_SHARE = 0.4

#: The person's own work in the browser: a practice session and study no decision rests on.
BROWSER_GRADER = "demo-grader"
PRACTICE_SESSION_NAME = "Credit memo practice round (no decision rests on it)"
PRACTICE_SESSION_SEED = 20261202
PRACTICE_SAMPLE_SIZE = 3  # per σ: 6 outputs, 12 assignments over the three graders
PRACTICE_STUDY_NAME = "Credit memo review queue, practice (no decision rests on it)"
PRACTICE_STUDY_SEED = 20261203
PRACTICE_STUDY_ITEMS = 10


AGREEMENT_DRAWS = 200


@dataclass(frozen=True)
class DemoGrading:
    session: GradingSession
    submitted: int
    assignments: int
    adjudicated: int
    agreement: AgreementReport
    expected: dict[str, tuple[float, float, float]]  # field → (mean, 2.5 %, 97.5 %) of α


@dataclass(frozen=True)
class DemoPractice:
    session: GradingSession
    study: OversightStudy
    left_to_grade: int  # BROWSER_GRADER's assignments not yet submitted
    left_to_adjudicate: int  # disagreements between the simulated graders, not adjudicated
    left_to_review: int  # BROWSER_GRADER's undecided oversight items


def demo_grading(
    *,
    objects: DemoObjects,
    runs: Sequence[JudgedRun],
    log: Callable[[str], None],
    grades: ModuleType = make_grades,
    name: str = SESSION_NAME,
    sample_size: int = SAMPLE_SIZE,
    seed: int = SESSION_SEED,
    agreement_draws: int = AGREEMENT_DRAWS,
) -> DemoGrading:
    """Create (or find) the demo's grading session, grade it, adjudicate it, close it.

    ``grades`` is the example's simulated graders and planted truth (``GRADERS``,
    ``grader_answers``, ``truth_records``, ``task_guidance``, ``true_grades``,
    ``expected_agreement_draws``); the credit memo's by default.
    """
    users = _demo_users()
    session = _session(
        objects.use_case,
        runs,
        users,
        name=name,
        sample_size=sample_size,
        seed=seed,
    )
    log(
        f"session {session.public_id} '{session.name}': {session.design} sample of "
        f"{session.sample_size} of {session.population_size} outputs (seed {session.seed}), "
        f"{session.graders_per_artefact} graders each, adjudicator demo-adjudicator"
    )
    for arm in session.arms:
        log(
            f"  {arm['label']}: {arm['sampled']} of {arm['population']} outputs sampled "
            f"(the charter plans {arm['planned']}"
            + (f", set by {arm['planned_by']}" if arm["planned_by"] else "")
            + "); π "
            + ", ".join(f"{pi:.4f}" for pi in arm["inclusion_probabilities"].values())
        )
    sigma_of = {judged.run.pk: judged.sigma for judged in runs}
    loaded, submitted, total = _grade(session, sigma_of, skip=(), grades=grades)
    log(
        "simulated graders (error rate per field "
        + ", ".join(f"{g.username} {g.error_rate:.0%}" for g in make_grades.GRADERS)
        + f"): {submitted} of {total} assignments submitted"
        + (f" ({loaded} loaded now)" if loaded else "")
    )
    adjudicated, pending = _adjudicate(
        session, sigma_of, users["demo-adjudicator"], resolve_all=True, grades=grades
    )
    log(
        f"adjudication: {adjudicated} disputed fields resolved by demo-adjudicator with the "
        f"planted truth; {pending} pending — the session is closed"
    )
    report = agreement_report(session=session)
    expected = _expected_agreement(
        session, sigma_of, [row.agreement.field for row in report.fields], grades, agreement_draws
    )
    log(
        f"agreement on the {report.artefacts_complete} fully graded artefacts (target "
        f"{report.kappa_target:.2f}); expected = {agreement_draws} re-simulations of the same "
        "design from the graders' known error rates:"
    )
    for row in report.fields:
        agreement = row.agreement
        mean, low, high = expected[agreement.field]
        inside = "within" if low <= agreement.point <= high else "OUTSIDE"
        log(
            f"  {agreement.field:<12} {agreement.symbol} = {agreement.point:.3f} "
            f"[{agreement.lo:.3f}, {agreement.hi:.3f}]  expected {mean:.3f} "
            f"(95% of draws {low:.3f}–{high:.3f}: {inside})  "
            f"{'meets' if row.passes else 'BELOW'} target"
        )
    eligible = [r.metric_id for r in report.eligibility if r.eligibility and r.eligibility.eligible]
    log(f"  gate-eligible human-graded metrics: {', '.join(eligible) or 'none'}")
    return DemoGrading(session, submitted, total, adjudicated, report, expected)


def demo_practice(
    *, objects: DemoObjects, runs: Sequence[JudgedRun], log: Callable[[str], None]
) -> DemoPractice:
    """Create (or find) the practice session and study left for a person in the browser.

    A small grading session over the same runs: the two other simulated graders grade their
    assignments, ``demo-grader``'s are left to grade in the browser, and the disagreements on
    the artefacts the simulated graders share are left for ``demo-adjudicator``. A practice
    oversight study gives ``demo-grader`` a blind review queue. No decision rests on either.
    """
    users = _demo_users()
    session = _session(
        objects.use_case,
        runs,
        users,
        name=PRACTICE_SESSION_NAME,
        sample_size=PRACTICE_SAMPLE_SIZE,
        seed=PRACTICE_SESSION_SEED,
    )
    sigma_of = {judged.run.pk: judged.sigma for judged in runs}
    _grade(session, sigma_of, skip=(BROWSER_GRADER,))
    _adjudicated, pending = _adjudicate(
        session, sigma_of, users["demo-adjudicator"], resolve_all=False
    )
    left_to_grade = (
        Assignment.objects.filter(session=session, grader__username=BROWSER_GRADER)
        .exclude(status=AssignmentStatus.SUBMITTED)
        .count()
    )
    study = OversightStudy.objects.filter(
        use_case=objects.use_case, name=PRACTICE_STUDY_NAME
    ).first()
    if study is None:
        study = oversight_study_create(
            actor=users["demo-owner"],
            use_case=objects.use_case,
            name=PRACTICE_STUDY_NAME,
            runs=[judged.run for judged in runs],
            reviewers=[users[BROWSER_GRADER]],
            items_per_reviewer=PRACTICE_STUDY_ITEMS,
            defect_share=STUDY_DEFECT_SHARE,
            seed=PRACTICE_STUDY_SEED,
        )
    left_to_review = OversightItem.objects.filter(study=study, decided_at__isnull=True).count()
    log(
        f"practice session {session.public_id} '{session.name}': {session.sample_size} outputs; "
        f"{left_to_grade} assignments left for {BROWSER_GRADER} to grade at /grading/, "
        f"{pending} disagreements between the simulated graders left for demo-adjudicator "
        "in its adjudication queue"
    )
    log(
        f"practice oversight study {study.public_id} '{study.name}': {left_to_review} copies "
        f"left for {BROWSER_GRADER} to review"
    )
    return DemoPractice(session, study, left_to_grade, pending, left_to_review)


def _demo_users() -> dict:
    return {u.username: u for u in get_user_model().objects.filter(username__startswith="demo-")}


def _grade(
    session: GradingSession,
    sigma_of: dict[int, str],
    *,
    skip: Sequence[str],
    grades: ModuleType = make_grades,
) -> tuple[int, int, int]:
    """Load the simulated graders' answers on every open assignment but ``skip``'s graders'.

    Return (loaded now, submitted, assignments).
    """
    graders = {g.username: g for g in grades.GRADERS}
    assignments = list(
        Assignment.objects.filter(session=session)
        .select_related("grader", "artefact__output", "artefact__task", "session")
        .order_by("grader__username", "position")
    )
    loaded = 0
    for assignment in assignments:
        username = assignment.grader.username
        if assignment.status == AssignmentStatus.SUBMITTED or username in skip:
            continue
        output = assignment.artefact.output
        assert output is not None
        answers, seconds = grades.grader_answers(
            graders[username],
            sigma_of[output.run_id],
            assignment.artefact.task.external_id,
            output.repeat_index,
        )
        _load(assignment, answers, seconds)
        loaded += 1
    submitted = Assignment.objects.filter(
        session=session, status=AssignmentStatus.SUBMITTED
    ).count()
    return loaded, submitted, len(assignments)


def _expected_agreement(
    session: GradingSession,
    sigma_of: dict[int, str],
    fields: Sequence[str],
    grades: ModuleType = make_grades,
    n_draws: int = AGREEMENT_DRAWS,
) -> dict[str, tuple[float, float, float]]:
    """Return the mean and central 95 % of α over re-simulations of the session's design."""
    graders = {g.username: g for g in grades.GRADERS}
    guidance = grades.task_guidance()
    by_artefact: dict[int, list[Assignment]] = {}
    for assignment in Assignment.objects.filter(session=session).select_related(
        "grader", "artefact__output", "artefact__task"
    ):
        by_artefact.setdefault(assignment.artefact_id, []).append(assignment)
    truths, pairs = [], []
    for pk in sorted(by_artefact):
        group = by_artefact[pk]
        if any(a.status != AssignmentStatus.SUBMITTED for a in group):
            continue
        artefact = group[0].artefact
        assert artefact.output is not None
        record = grades.truth_records(sigma_of[artefact.output.run_id])[
            (artefact.task.external_id, artefact.output.repeat_index)
        ]
        truths.append(grades.true_grades(record, guidance[artefact.task.external_id]))
        pairs.append([graders[a.grader.username] for a in group])
    draws = grades.expected_agreement_draws(truths, pairs, fields, draws=n_draws)
    return {
        field: (
            float(np.nanmean(values)),
            float(np.nanpercentile(values, 2.5)),
            float(np.nanpercentile(values, 97.5)),
        )
        for field, values in draws.items()
    }


def _session(
    use_case: UseCase,
    runs: Sequence[JudgedRun],
    users: dict,
    *,
    name: str,
    sample_size: int,
    seed: int,
) -> GradingSession:
    existing = GradingSession.objects.filter(use_case=use_case, name=name).first()
    if existing is not None:
        return existing
    return session_create(
        actor=users["demo-owner"],
        use_case=use_case,
        name=name,
        runs=[judged.run for judged in runs],
        graders=[users[g.username] for g in make_grades.GRADERS],
        adjudicators=[users["demo-adjudicator"]],
        design="stratified",
        sample_size=sample_size,
        seed=seed,
    )


def _load(assignment: Assignment, answers: dict[str, dict[str, str]], seconds: float) -> None:
    """Save a simulated grader's answers as the workspace would: autosaves, heartbeats, submit."""
    grader = assignment.grader
    changes = [
        GradeChange(unit_key, field, value)
        for unit_key, unit in answers.items()
        for field, value in unit.items()
    ]
    step = min(seconds, MAX_ELAPSED_PER_CALL)
    grades_save(actor=grader, assignment=assignment, changes=changes, elapsed_seconds=step)
    remaining = seconds - step
    while remaining > 0:
        step = min(remaining, MAX_ELAPSED_PER_CALL)
        assignment_heartbeat(actor=grader, assignment=assignment, elapsed_seconds=step)
        remaining -= step
    assignment_submit(actor=grader, assignment=assignment)


def _adjudicate(
    session: GradingSession,
    sigma_of: dict[int, str],
    adjudicator: object,
    *,
    resolve_all: bool,
    grades: ModuleType = make_grades,
) -> tuple[int, int]:
    """Resolve the session's disagreements with the planted truth, or leave them all.

    Return (adjudicated, pending) disputed fields.
    """
    artefacts = list(
        SessionArtefact.objects.filter(session=session)
        .select_related("output", "task", "session")
        .order_by("pk")
    )
    by_pk = {a.pk: a for a in artefacts}
    disputes = [fv for fv in submitted_field_values(artefacts) if fv.disputed]
    done = pending = 0
    guidance = grades.task_guidance()
    for fv in disputes:
        if fv.adjudicated is not None:
            done += 1
            continue
        if not resolve_all:
            pending += 1
            continue
        artefact = by_pk[fv.artefact_id]
        assert artefact.output is not None
        if dispute_catalogue([artefact])[artefact.pk].is_moot(fv.unit_key, fv.field):
            # Its parent's final value (agreed, or adjudicated just now) does not ask it,
            # e.g. "supported" of a sentence both graders called not assertive.
            continue
        record = grades.truth_records(sigma_of[artefact.output.run_id])[
            (artefact.task.external_id, artefact.output.repeat_index)
        ]
        truth = grades.true_grades(record, guidance[artefact.task.external_id])
        value = truth.get(fv.unit_key, {}).get(fv.field)
        if value is None:  # e.g. "supported" of a sentence that is truly not assertive
            value = next(v for v in fv.values.values() if v is not None)
        adjudication_record(
            actor=adjudicator,  # type: ignore[arg-type]
            artefact=artefact,
            unit_key=fv.unit_key,
            field=fv.field,
            value=value,
            note="simulated adjudicator: the planted truth",
        )
        done += 1
        # A sequential session may stop on this final value (SPEC §5.5): it is then closed
        # and accepts no further adjudication, as the adjudicator's page would say.
        if not GradingSession.objects.filter(pk=session.pk, status=SessionStatus.OPEN).exists():
            break
    return done, pending


def demo_oversight(
    *, objects: DemoObjects, runs: Sequence[JudgedRun], log: Callable[[str], None]
) -> OversightResults:
    """Create (or find) the demo's oversight study and load the simulated reviewers' decisions.

    ``demo-grader-2`` and ``demo-grader-3`` review with known catch rates
    (``make_grades.REVIEWERS``) and decide every copy of their queues: the study is complete
    before a decision rests on it. ``demo-grader``'s queue is a separate practice study
    (:func:`demo_practice`).
    """
    users = _demo_users()
    study = OversightStudy.objects.filter(use_case=objects.use_case, name=STUDY_NAME).first()
    if study is None:
        study = oversight_study_create(
            actor=users["demo-owner"],
            use_case=objects.use_case,
            name=STUDY_NAME,
            runs=[judged.run for judged in runs],
            reviewers=[users[r.username] for r in make_grades.REVIEWERS],
            items_per_reviewer=STUDY_ITEMS_PER_REVIEWER,
            defect_share=STUDY_DEFECT_SHARE,
            seed=STUDY_SEED,
        )
    reviewers = {r.username: r for r in make_grades.REVIEWERS}
    items = OversightItem.objects.filter(study=study, decided_at__isnull=True).select_related(
        "reviewer"
    )
    for item in items.order_by("reviewer__username", "position"):
        reviewer = reviewers[item.reviewer.username]
        decision, flags, seconds = make_grades.reviewer_decision(
            reviewer,
            f"{study.seed}:{reviewer.username}:{item.position}",
            [defect["target"] for defect in item.defects],
        )
        oversight_item_decide(
            actor=item.reviewer,
            item=item,
            decision=decision,
            flags=flags,
            elapsed_seconds=seconds,
        )
    results = oversight_results(study=study)
    overall = results.overall
    seeded = {r.username: r.catch.n for r in results.reviewers}
    expected = sum(reviewers[u].catch_rate * n for u, n in seeded.items()) / max(
        sum(seeded.values()), 1
    )
    log(
        f"oversight study {study.public_id} '{study.name}': {results.items} copies in "
        f"{len(results.reviewers)} blind queues, every copy decided "
        f"({overall.catch.n} with a seeded defect)"
    )
    log(
        f"  ρ_catch {_share(overall.catch)} — simulated reviewers' known catch rate "
        f"{expected:.1%}; false acceptance rate {_share(overall.false_acceptance)}; "
        f"false alarms on clean copies {_share(results.false_alarm)}"
    )
    return results


def _share(proportion: object) -> str:
    successes, n = proportion.successes, proportion.n  # type: ignore[attr-defined]
    lo, hi = proportion.lo, proportion.hi  # type: ignore[attr-defined]
    if not n:
        return "— (none decided)"
    interval = "" if lo is None else f" [{lo:.1%}, {hi:.1%}]"
    return f"{successes / n:.1%} ({successes}/{n}){interval}"


SEQUENTIAL_NAME = "Credit memo grade until decided, round 1"
SEQUENTIAL_SEED = 20261204
SEQUENTIAL_AGREEMENT = 10  # outputs of the uniform sub-sample double-graded for agreement


@dataclass(frozen=True)
class DemoSequential:
    session: GradingSession
    grades_used: int
    fixed_n: int  # outputs the fixed-n session graded for the same σ


def demo_sequential(
    *,
    objects: DemoObjects,
    runs: Sequence[JudgedRun],
    fixed: GradingSession,
    log: Callable[[str], None],
) -> DemoSequential:
    """Grade one σ until decided (SPEC §5.5) with the same simulated graders and adjudicator.

    The budget is the fixed-n session's sample of that σ, so the two are compared on the
    same footing: what the fixed design graded against what the sequential one needed.
    """
    users = _demo_users()
    judged = runs[0]
    fixed_n = next(arm["sampled"] for arm in fixed.arms if judged.run.pk in arm["runs"])
    session = GradingSession.objects.filter(use_case=objects.use_case, name=SEQUENTIAL_NAME).first()
    if session is None:
        session = session_create(
            actor=users["demo-owner"],
            use_case=objects.use_case,
            name=SEQUENTIAL_NAME,
            runs=[judged.run],
            graders=[users[g.username] for g in make_grades.GRADERS],
            adjudicators=[users["demo-adjudicator"]],
            mode=SessionMode.SEQUENTIAL,
            judge=judge_get_or_create(kind="offline"),
            budget=fixed_n,
            agreement_size=SEQUENTIAL_AGREEMENT,
            seed=SEQUENTIAL_SEED,
        )
    sigma_of = {judged.run.pk: judged.sigma}
    # Graders grade what is in their queues; each final value may stop the session or draw
    # the next outputs, so the loop runs until the session has stopped.
    while session.status == SessionStatus.OPEN:
        loaded, _submitted, _total = _grade(session, sigma_of, skip=())
        adjudicated, _pending = _adjudicate(
            session, sigma_of, users["demo-adjudicator"], resolve_all=True
        )
        session.refresh_from_db()
        if not loaded and not adjudicated and session.status == SessionStatus.OPEN:
            session = session_close(actor=users["demo-owner"], session=session)
    stop = session.stop
    log(
        f"sequential session {session.public_id} '{session.name}' on σ {judged.sigma}: "
        f"outputs drawn by the judge's uncertainty (τ = {session.tau}), budget "
        f"{session.budget}; stopped after {stop['grades_used']} graded outputs "
        f"({StopReason(stop['reason']).label.lower()}), {stop['withdrawn']} assignment(s) "
        f"withdrawn; {len(session.agreement_sample)} uniform outputs double-graded for agreement"
    )
    for metric_id, entry in stop["metrics"].items():
        bounds = f"[{entry['lower'][-1]:.1f}, {entry['upper'][-1]:.1f}]" if entry["lower"] else "—"
        status = entry["status"] or f"undecided (about {entry['expected_more']} more)"
        log(f"  {metric_id:<27} {bounds:>15}  {status}")
    log(
        f"grades needed: sequential {stop['grades_used']} outputs (+ the agreement sub-sample) "
        f"against the fixed-n session's {fixed_n} outputs of σ {judged.sigma}"
    )
    return DemoSequential(session, int(stop["grades_used"]), fixed_n)
