"""Every charter metric estimated from the evidence of one run (SPEC §4, §5.2, §6.4).

:func:`charter_estimates` is the one place that turns the database into metric records: the
unit-level metrics from judge scores and final human grades (PPI where a judge scored every
output and enough outputs are graded; human-only otherwise), κ from the session's agreement,
reliability and cost from the run's outputs, oversight metrics from an oversight study. A
metric with no evidence of its kind gets a record without a value and the reason, so the gate
says Undetermined for a gated one instead of guessing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from charters.catalogue import RUBRIC_LABEL_CORRECT, SUCCESS_HUMAN_ACCEPTABLE, default_pass_k
from charters.models import Charter
from charters.validation import LABEL_METRICS
from charters.validation import SUCCESS_METRICS as SUCCESS_METRIC_IDS
from grading.agreement import Eligibility
from grading.models import GradingSession, OversightStudy
from grading.selectors.agreement import metric_verdicts
from grading.selectors.oversight import oversight_results
from metrics.classification import (
    classification_estimate,
    human_classification_estimate,
    human_label_grades,
    run_labels,
)
from metrics.estimate import MetricEstimate
from metrics.evidence import RunEvidenceSource, unit_metric_evidence
from metrics.sequential import sequential_estimates
from metrics.success import RunSuccesses, run_successes
from metrics.task_estimators import (
    DEFAULT_PASS_KS,
    catch_rate_estimate,
    cost_per_successful_task_estimate,
    dispersion_estimate,
    false_acceptance_rate_estimate,
    net_time_reduction_estimate,
    pass_hat_k_estimates,
    review_burden_estimate,
)
from metrics.unit_estimators import UNIT_METRICS, estimate_unit_metric
from runs.models import Judge, Output, Run

SECONDS_PER_MINUTE = 60.0
SUCCESS_METRICS = frozenset(SUCCESS_METRIC_IDS)
CLASSIFICATION_METRICS = frozenset(LABEL_METRICS)


def charter_estimates(
    *,
    charter: Charter,
    run: Run,
    session: GradingSession | None = None,
    judge: Judge | None = None,
    oversight_study: OversightStudy | None = None,
    evidence_source: RunEvidenceSource | None = None,
    verdicts: Mapping[str, Eligibility] | None = None,
) -> dict[str, MetricEstimate]:
    """Return a record for every metric of ``charter`` (gated and informational) on ``run``.

    ``evidence_source`` (the run's evidence, read once) and ``verdicts`` (the session's
    agreement verdicts, :func:`grading.selectors.agreement.metric_verdicts`) may be passed by a
    caller that needs them too, so neither is computed twice.
    """
    confidence = charter.confidence
    if evidence_source is None:
        evidence_source = RunEvidenceSource(run=run, session=session, judge=judge)
    kappas = _metric_kappas(session, charter, verdicts) if session is not None else {}
    metrics = list(charter.metrics.order_by("position", "pk"))
    wanted = {metric.metric_id for metric in metrics}
    successes = (
        run_successes(run=run, rule=charter.success_rule, judge=judge, session=session)
        if wanted & SUCCESS_METRICS
        else None
    )
    human_labels = RUBRIC_LABEL_CORRECT in (charter.rubric_fields or ())
    labels = run_labels(run=run) if wanted & CLASSIFICATION_METRICS else None
    judged = (
        human_label_grades(run=run, session=session)
        if wanted & CLASSIFICATION_METRICS and human_labels and session is not None
        else None
    )
    oversight = oversight_results(study=oversight_study) if oversight_study is not None else None
    estimates: dict[str, MetricEstimate] = {}
    for metric in metrics:
        metric_id = metric.metric_id
        planned = metric.planned_n
        if metric_id in UNIT_METRICS:
            evidence = unit_metric_evidence(
                metric_id=metric_id, run=run, session=session, judge=judge, source=evidence_source
            )
            kappa, kappa_note = kappas.get(metric_id, (None, ""))
            try:
                estimate = estimate_unit_metric(
                    metric_id, evidence.units, confidence=confidence, planned_n=planned, kappa=kappa
                )
            except ValueError as error:
                estimate = _missing(metric_id, confidence, "H", str(error))
            notes = [n for n in (kappa_note, _pending_note(evidence.pending)) if n]
            if notes:
                estimate = _with_notes(estimate, notes)
        elif metric_id in CLASSIFICATION_METRICS and human_labels:
            found = human_classification_estimate(
                metric_id=metric_id, grades=judged, confidence=confidence, planned_n=planned
            )
            estimate = _human_labelled(metric_id, found, confidence, kappas)
        elif metric_id in CLASSIFICATION_METRICS:
            found = classification_estimate(
                metric_id=metric_id, labels=labels, confidence=confidence, planned_n=planned
            )
            estimate = (
                _missing(metric_id, confidence, "A", found) if isinstance(found, str) else found
            )
        elif metric_id == "pass_hat_k":
            assert successes is not None
            k = metric.k if metric.k is not None else default_pass_k(charter.repeats_k)
            estimate = _by_success(
                _pass_hat_gated(successes, k, confidence, planned), successes, kappas
            )
        elif metric_id == "dispersion":
            assert successes is not None
            estimate = _by_success(_dispersion(successes, confidence, planned), successes, kappas)
        elif metric_id == "cost_per_successful_task":
            assert successes is not None
            estimate = _by_success(_cost(run, successes, confidence, planned), successes, kappas)
        elif metric_id in ("catch_rate", "false_acceptance_rate") and oversight is not None:
            overall = oversight.overall
            if metric_id == "catch_rate":
                estimate = catch_rate_estimate(
                    overall.catch.successes,
                    overall.catch.n,
                    confidence=confidence,
                    planned_n=planned,
                )
            else:
                estimate = false_acceptance_rate_estimate(
                    overall.false_acceptance.successes,
                    overall.false_acceptance.n,
                    confidence=confidence,
                    planned_n=planned,
                )
        elif metric_id == "net_time_reduction" and oversight_study is not None:
            estimate = _time_reduction(charter, run, oversight_study, confidence, planned)
        elif metric_id == "review_burden" and oversight_study is not None:
            # this σ's own outputs only: a study may queue several σ (SPEC §6.3)
            minutes = [
                seconds / SECONDS_PER_MINUTE
                for seconds in oversight_study.items.filter(
                    decided_at__isnull=False, source_output__run=run
                ).values_list("seconds_spent", flat=True)
            ]
            estimate = review_burden_estimate(minutes, confidence=confidence, planned_n=planned)
        else:
            estimate = _missing(metric_id, confidence, "A", _no_evidence(metric_id))
        estimates[metric_id] = estimate
    if session is not None and session.is_sequential and session.stop:
        return sequential_estimates(session=session, estimates=estimates)
    return estimates


def _time_reduction(
    charter: Charter,
    run: Run,
    study: OversightStudy,
    confidence: float,
    planned: int | None,
) -> MetricEstimate:
    """Δeff from the recorded review and generation times of this run's reviewed outputs.

    The manual time is the charter's ``t_manual`` (hours per task), and the interval carries
    its uncertainty: a range ``{low, mode, high}`` is drawn triangular in each resample
    (point: the mode), observed ``{samples}`` are resampled apart from the AI times, and a
    single number is taken as exact (a note says so). The record is labelled with the
    charter's measurement mode: an estimated baseline stays "estimated" and may not feed a
    value claim (SPEC §4, §6.3).
    """
    given = (charter.value_inputs or {}).get("t_manual")
    manual_range = None
    samples: list[float] | None = None
    manual: object = given
    if isinstance(given, dict) and "samples" in given:
        samples = [float(x) for x in given["samples"] if isinstance(x, int | float)]
        manual = sum(samples) / len(samples) if samples else None
    elif isinstance(given, dict):
        manual = given.get("mode")
        parts = (given.get("low"), manual, given.get("high"))
        if all(isinstance(part, int | float) for part in parts):
            manual_range = tuple(float(part) for part in parts)  # type: ignore[arg-type]
    if not isinstance(manual, int | float) or manual <= 0:
        return _missing(
            "net_time_reduction", confidence, "A", "the charter gives no manual time (t_manual)"
        )
    reviewed = list(
        study.items.filter(decided_at__isnull=False, source_output__run=run).values_list(
            "seconds_spent", "source_output__generation_seconds"
        )
    )
    if not reviewed or any(generation is None for _review, generation in reviewed):
        return _missing(
            "net_time_reduction",
            confidence,
            "A",
            "no reviewed output of this run with recorded review and generation times",
        )
    baseline = "observed" if charter.measurement_mode == "observed" else "estimated"
    review_hours = [review / 3600.0 for review, _generation in reviewed]
    generation_hours = [generation / 3600.0 for _review, generation in reviewed]
    if samples:
        return net_time_reduction_estimate(
            samples,
            review_hours,
            generation_hours,
            baseline=baseline,
            confidence=confidence,
            planned_n=planned,
            paired=False,
        )
    estimate = net_time_reduction_estimate(
        [float(manual)] * len(reviewed),
        review_hours,
        generation_hours,
        baseline=baseline,
        confidence=confidence,
        planned_n=planned,
        manual_range=manual_range,
    )
    if manual_range is None:
        # one number: the paired bootstrap's manual column is constant, so nothing of the
        # baseline's uncertainty is in the interval; say so instead of the spread note
        notes = tuple(
            note for note in estimate.notes if not note.startswith("baseline uncertainty")
        )
        estimate = replace(
            estimate,
            notes=(
                *notes,
                f"baseline taken as exact: the charter gives one manual time ({manual:g} h), "
                "so the interval carries the recorded times' spread only",
            ),
        )
    return estimate


def _metric_kappas(
    session: GradingSession, charter: Charter, verdicts: Mapping[str, Eligibility] | None
) -> dict[str, tuple[float | None, str]]:
    """Return, per human-graded metric, the lowest κ/α on its criteria and a note.

    Agreement is measured on the criteria the metric uses (SPEC §5.1), and the note names
    the charter's rule and its verdict. An undefined agreement gives no κ (the gate then
    reads the verdict, which is not eligible).
    """
    kappas: dict[str, tuple[float | None, str]] = {}
    if verdicts is None:
        verdicts = metric_verdicts(session=session, charter=charter)
    for metric_id, verdict in verdicts.items():
        defined = [a for a in verdict.agreements if a.defined]
        lowest = min(defined, key=lambda a: a.point) if defined else None
        state = "eligible" if verdict.eligible else "not eligible"
        kappas[metric_id] = (
            round(lowest.point, 6) if lowest is not None else None,
            f"agreement rule {verdict.rule.text}: {state} ({'; '.join(verdict.reasons)})",
        )
    return kappas


def _human_labelled(
    metric_id: str,
    found: MetricEstimate | str,
    confidence: float,
    kappas: Mapping[str, tuple[float | None, str]],
) -> MetricEstimate:
    """Return a record resting on human labels (mode H) with its κ and agreement note."""
    estimate = _missing(metric_id, confidence, "H", found) if isinstance(found, str) else found
    kappa, note = kappas.get(metric_id, (None, ""))
    estimate = replace(estimate, mode="H", kappa=kappa)
    return _with_notes(estimate, [note]) if note else estimate


def _by_success(
    estimate: MetricEstimate,
    successes: RunSuccesses,
    kappas: Mapping[str, tuple[float | None, str]],
) -> MetricEstimate:
    """Return the record as human-graded when success is read from human grades (SPEC §5.1)."""
    if successes.rule != SUCCESS_HUMAN_ACCEPTABLE:
        return estimate
    return _human_labelled(estimate.metric_id, estimate, estimate.confidence, kappas)


def _pending_note(pending: int) -> str:
    if not pending:
        return ""
    return (
        f"{pending} sampled output(s) not yet completely graded or adjudicated: counted as ungraded"
    )


def _with_notes(estimate: MetricEstimate, notes: list[str]) -> MetricEstimate:
    return replace(estimate, notes=(*estimate.notes, *notes))


def _missing(metric_id: str, confidence: float, mode: str, reason: str) -> MetricEstimate:
    return MetricEstimate(
        metric_id=metric_id,
        point=None,
        lo=None,
        hi=None,
        confidence=confidence,
        n=0,
        n_clusters=0,
        mode=mode,  # type: ignore[arg-type]
        estimator="none",
        reason=reason,
    )


def _no_evidence(metric_id: str) -> str:
    if metric_id in ("catch_rate", "false_acceptance_rate", "review_burden"):
        return "no oversight study was run for this decision"
    if metric_id == "net_time_reduction":
        return (
            "no per-task manual times were recorded (the baseline is the charter's estimate); "
            "Δeff needs a timed study"
        )
    return "the run holds no evidence of this kind (no trajectories, labels or item lists)"


def _success_words(successes: RunSuccesses) -> str:
    return f"success: {successes.method}"


def _pass_hat_gated(
    successes: RunSuccesses, k: int, confidence: float, planned: int | None
) -> MetricEstimate:
    """Return pass^k at the charter's k, with pass^1, 2, 4 and K in its notes (SPEC §4)."""
    if successes.successes is None:
        return _missing("pass_hat_k", confidence, "A", successes.reason)
    trials = successes.trials
    records = pass_hat_k_estimates(
        successes.successes,
        trials,
        confidence=confidence,
        ks=sorted({*DEFAULT_PASS_KS, trials, k}),
        planned_n=planned,
    )
    others = [
        f"pass^{j} = {r.point:.1f} [{r.lo:.1f}, {r.hi:.1f}]"
        if r.has_value and r.lo is not None and r.hi is not None
        else f"pass^{j}: {r.reason}"
        for j, r in sorted(records.items())
        if j != k
    ]
    gated = records[k]
    return replace(
        gated, notes=(*gated.notes, f"gated k = {k}", _success_words(successes), *others)
    )


def _dispersion(successes: RunSuccesses, confidence: float, planned: int | None) -> MetricEstimate:
    if successes.successes is None:
        return _missing("dispersion", confidence, "A", successes.reason)
    if successes.trials < 2:
        return _missing(
            "dispersion",
            confidence,
            "A",
            f"dispersion needs K ≥ 2 repeats per task; the run has K = {successes.trials}",
        )
    estimate = dispersion_estimate(
        successes.successes, successes.trials, confidence=confidence, planned_n=planned
    )
    return _with_notes(estimate, [_success_words(successes)])


def _cost(
    run: Run, successes: RunSuccesses, confidence: float, planned: int | None
) -> MetricEstimate:
    """Cost per successful task: the run's costs per task over its successes per task."""
    if successes.successes is None:
        return _missing("cost_per_successful_task", confidence, "A", successes.reason)
    rows = list(
        Output.objects.filter(run=run, task__split=run.split, repeat_index__lt=successes.trials)
        .order_by("task_id", "repeat_index")
        .values_list("task_id", "repeat_index", "cost_usd")
    )
    try:
        estimate = cost_per_successful_task_estimate(
            [math.nan if cost is None else float(cost) for _task, _repeat, cost in rows],
            [int(successes.by_output[(task, repeat)]) for task, repeat, _cost in rows],
            confidence=confidence,
            planned_n=planned,
        )
    except ValueError as error:
        return _missing("cost_per_successful_task", confidence, "A", str(error))
    return _with_notes(estimate, [_success_words(successes)])


def reliability_estimates(
    *,
    run: Run,
    confidence: float,
    rule: str | None,
    judge: Judge | None = None,
    session: GradingSession | None = None,
) -> tuple[dict[int, MetricEstimate], MetricEstimate | None, str, RunSuccesses]:
    """Return pass^k for k = 1, 2, 4 and K, dispersion, why any is missing, and the basis.

    Success per output is the charter's ``rule`` (SPEC §4.1, :mod:`metrics.success`); without
    a rule, or with an output whose success is unknown, there is no estimate and the reason
    says why. Dispersion needs K ≥ 2 repeats. The scorecard's reliability field reads this
    whether or not the charter names the reliability metrics.
    """
    successes = run_successes(run=run, rule=rule, judge=judge, session=session)
    if successes.successes is None:
        return {}, None, successes.reason, successes
    records = pass_hat_k_estimates(successes.successes, successes.trials, confidence=confidence)
    if successes.trials < 2:
        return (
            records,
            None,
            f"dispersion needs K ≥ 2 repeats per task; the run has K = {successes.trials}",
            successes,
        )
    dispersion = dispersion_estimate(successes.successes, successes.trials, confidence=confidence)
    return records, dispersion, "", successes
