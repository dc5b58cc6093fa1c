"""Writes of the gates app."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction

from audit.canonical import canonical_json, canonical_value, sha256_hex
from audit.selectors import audit_head
from audit.services import audit_record
from charters.catalogue import RUBRIC_LABEL_CORRECT, catalogue, catalogue_metric
from charters.models import Charter, Role, Stage, UseCase
from charters.models.charters import Treatment
from charters.permissions import require_role
from charters.selectors.charters import charter_document_build
from charters.services.charters import use_case_unblind
from charters.services.use_cases import use_case_advance
from charters.validation import MIN_REPEATS_FROM_E3
from enterpriseval.errors import ConflictError, ServiceError
from gates.algorithm import HUMAN_LABELLED, GateInput, GateResult, MetricInput, gate_evaluate
from gates.decision_file import load_decision_file
from gates.models import Decision
from gates.report import DecisionReport, render_decision_pdf
from gates.value_evidence import value_currency, value_inputs_from_charter, value_provenance
from gates.value_model import value_estimate
from grading.agreement import Eligibility
from grading.models import GradingSession, OversightStudy
from grading.selectors.agreement import metric_verdicts
from grading.selectors.oversight import oversight_results
from grading.selectors.sessions import session_detail, session_grade_rows
from metrics.classification import human_run_labels, run_classification, run_labels
from metrics.estimate import MetricEstimate
from metrics.evidence import RunEvidenceSource, unit_metric_evidence
from metrics.selectors import SUCCESS_METRICS, charter_estimates, reliability_estimates
from metrics.success import run_successes
from runs.judges.llm import same_model
from runs.models import Judge, JudgeKind, JudgeScore, Output, Run, RunStatus

#: Who may compute a decision: computing one shows results, so it is an unblinding event.
DECISION_ROLES = (Role.CHARTER_OWNER, Role.REVIEWER)


def display_path(path: Path) -> str:
    """Return ``path`` relative to the project when it lies inside it."""
    base = Path(settings.BASE_DIR)
    return str(path.relative_to(base)) if path.is_relative_to(base) else str(path)


def decision_report_build(*, input_path: Path, title: str | None = None) -> DecisionReport:
    """Evaluate a decision input in conservative and point mode and assemble its report."""
    decision_file = load_decision_file(input_path)
    name = decision_file.about.get("model") or input_path.stem
    return DecisionReport(
        title=title or f"Gate decision — {name}",
        conservative=gate_evaluate(decision_file.gate_input, mode="conservative"),
        point=gate_evaluate(decision_file.gate_input, mode="point"),
        about=decision_file.about,
        source_path=display_path(decision_file.path),
        source_sha256=decision_file.sha256,
    )


def decision_report_write(
    *, input_path: Path, output_path: Path, title: str | None = None
) -> DecisionReport:
    """Render the decision report of a decision input to a PDF at ``output_path``."""
    report = decision_report_build(input_path=input_path, title=title)
    render_decision_pdf(report, output_path)
    return report


def gate_input_for(
    *,
    charter: Charter,
    estimates: Mapping[str, MetricEstimate],
    verdicts: Mapping[str, Eligibility] | None = None,
) -> GateInput:
    """Return the gate input of a signed charter's gated metrics with their estimates.

    ``verdicts`` are the agreement verdicts of the charter's rules on the grading session
    (:func:`grading.selectors.agreement.metric_verdicts`). A metric whose estimate rests on
    human labels (mode H or PPI) carries its verdict into the gate; without one the gate
    checks κ and finds none, so the metric is not eligible (SPEC §5.1, §6.1). Metrics the
    catalogue exempts (an oversight study's reviewer decisions) carry why.

    Thresholds, directions, weights, ν_max, the κ target and the alternative weightings come
    from the charter's frozen document (the content its three signatories signed), not from
    its metric rows or the catalogue. A gated metric without an estimate (or without an
    interval) enters with none, so the gate answers Undetermined and names it (SPEC §6.1).

    Raises
    ------
    ConflictError
        The charter is a draft, or its signed content lacks a value the gate needs (named
        with the metric and the field).
    """
    document = _signed_document(charter)
    metrics = []
    for entry in document["metrics"]:
        if entry["treatment"] != Treatment.GATED:
            continue
        metric_id = entry["id"]
        estimate = estimates.get(metric_id)
        # A judge-only value is informational, never gated (SPEC §2, §5.2).
        known = estimate is not None and estimate.has_value and estimate.mode != "J"
        mode = estimate.mode if estimate is not None else None
        metrics.append(
            MetricInput(
                id=metric_id,
                direction=_signed(charter, entry, "direction", metric_id),
                theta_out=float(_signed(charter, entry, "theta_out", metric_id)),
                theta_in=float(_signed(charter, entry, "theta_in", metric_id)),
                weight=float(_signed(charter, entry, "weight", metric_id)),
                estimate=estimate.point if known and estimate is not None else None,
                ci=(estimate.lo, estimate.hi)  # type: ignore[arg-type]
                if known and estimate is not None
                else None,
                grading=estimate.mode if estimate is not None else None,
                kappa=estimate.kappa if estimate is not None else None,
                n=estimate.n if estimate is not None else None,
                label=catalogue_metric(metric_id).name,
                n_outputs=estimate.n_clusters if estimate is not None else None,
                agreement=_agreement_verdict(metric_id, mode, verdicts or {}),
            )
        )
    return GateInput(
        metrics=tuple(metrics),
        nu_max=float(_signed(charter, document, "nu_max")),
        kappa_min=float(_signed(charter, document, "kappa_target")),
        alternative_weights=_signed(charter, document, "alternative_weights"),
        confidence=float(_signed(charter, document, "confidence")),
    )


def _agreement_verdict(
    metric_id: str, mode: str | None, verdicts: Mapping[str, Eligibility]
) -> dict[str, Any] | None:
    if mode not in HUMAN_LABELLED:
        return None
    exempt = catalogue_metric(metric_id).agreement_exempt
    if exempt:
        return {"eligible": True, "rule": "exempt", "reason": f"no agreement rule: {exempt}"}
    verdict = verdicts.get(metric_id)
    return verdict.to_dict() if verdict is not None else None


def _signed_document(charter: Charter) -> dict[str, Any]:
    """Return the charter's frozen document; a draft has none and cannot be gated."""
    if not charter.is_frozen:
        raise ConflictError(
            f"Charter v{charter.version} is a draft: a decision needs the signed charter whose "
            "thresholds were pre-registered.",
            field="charter",
        )
    return charter_document_build(charter=charter)


def _signed(charter: Charter, entry: Mapping[str, Any], name: str, metric_id: str = "") -> Any:
    """Return ``entry[name]`` of the signed content, or refuse naming what is missing."""
    value = entry.get(name)
    if value is None:
        whose = f" for {metric_id}" if metric_id else ""
        raise ConflictError(
            f"Charter v{charter.version} of {charter.use_case.key}: the signed content has no "
            f"{name}{whose}, which the gate needs; sign a revised charter that states it.",
            field=f"metrics[{metric_id}].{name}" if metric_id else name,
        )
    return value


@transaction.atomic
def decision_record(
    *,
    actor: AbstractBaseUser,
    charter: Charter,
    run: Run,
    estimates: Sequence[MetricEstimate],
    gate: GateResult,
    evidence: Mapping[str, Any],
    value: Mapping[str, Any] | None = None,
    stress: Mapping[str, Any] | None = None,
    session: GradingSession | None = None,
    judge: Judge | None = None,
    oversight_study: OversightStudy | None = None,
    classification: Mapping[str, Any] | None = None,
    success: Mapping[str, Any] | None = None,
    run_summary: Mapping[str, Any] | None = None,
) -> Decision:
    """Record an immutable decision and the evidence it rests on; computing it unblinds.

    ``classification`` (labels, confusion matrix, per-class scores) and ``success`` (the
    success rule, how it was applied to this run, and why it is undetermined) are kept in the
    record when the run has them (SPEC §4.1); ``run_summary`` (:func:`run_summary_for`), what
    the scorecard reports of the run's reliability and sample sizes, when it was computed.

    The decision's canonical JSON (estimates, gate result, value estimate and the SHA-256 of
    the evidence) is hashed and stored; an audit entry carries the hash, and an unblinding
    event is recorded (SPEC §2: from the first one on, every charter change is a deviation).
    """
    use_case = charter.use_case
    require_role(actor, use_case, DECISION_ROLES)
    _signed_document(charter)
    if run.use_case_id != use_case.pk:
        raise ServiceError(f"Run {run.pk} belongs to another use case.", field="run")
    if gate.mode != "conservative":
        raise ServiceError(
            "A recorded decision gates on conservative bounds (SPEC §6.1); point mode is an "
            "illustration only.",
            field="mode",
        )
    record = {
        "charter": {"version": charter.version, "sha256": charter.sha256},
        "configuration": {
            "name": run.configuration.name,
            "version": run.configuration.version,
            "sha256": run.configuration.sha256,
        },
        "run": run.pk,
        "estimates": [asdict(estimate) for estimate in estimates],
        "gate": gate.to_dict(),
        "value": dict(value) if value is not None else None,
        "stress": dict(stress) if stress is not None else None,
    }
    if session is not None and session.is_sequential:
        # SPEC §5.5: the mode, the stopping time, the grades used, each metric's sequence at
        # the stop and the uniform share (the rule, and τ_t of each draw used) enter the
        # hashed record.
        record["grading"] = {
            **session.stop,
            "session": session.public_id,
            "tau": session.tau,
            "tau_rule": session.tau_rule,
        }
    if classification is not None:
        record["classification"] = dict(classification)
    if success is not None:
        record["success"] = dict(success)
    if run_summary is not None:
        record["run_summary"] = dict(run_summary)
    recorded = _same_decision(run=run, charter=charter, record=record, evidence=evidence)
    if recorded is not None:
        raise ConflictError(
            f"This decision is already recorded as decision {recorded}: same charter, run and "
            "evidence. Open it, or record again once the evidence has changed."
        )
    # The log's head when the decision was made: the record anchors the log up to here.
    record["audit_head"] = audit_head()
    document = {"record": record, "evidence": dict(evidence)}
    text = canonical_json(document)
    digest = sha256_hex(text)
    band = gate.ei_band
    decision = Decision.objects.create(
        use_case=use_case,
        charter=charter,
        configuration=run.configuration,
        run=run,
        session=session,
        judge=judge,
        oversight_study=oversight_study,
        status=gate.decision,
        binding_metric=gate.binding_metric or "",
        ei=gate.ei,
        ei_g=gate.ei_g,
        ei_band_lo=band[0] if band else None,
        ei_band_hi=band[1] if band else None,
        record=canonical_value(record),
        evidence=canonical_value(dict(evidence)),
        canonical_json=text,
        sha256=digest,
        created_by=actor,
    )
    audit_record(
        actor=actor,
        action="decision.record",
        target=decision,
        payload={
            "decision": gate.decision,
            "binding_metric": gate.binding_metric or "",
            "charter_version": charter.version,
            "configuration": f"{run.configuration.name}:{run.configuration.version}",
            "run": run.pk,
            "sha256": digest,
        },
    )
    use_case_unblind(
        actor=actor,
        use_case=use_case,
        reason=f"gate decision {digest[:12]} computed for σ {run.configuration.name}",
    )
    use_case_advance(actor=actor, use_case=use_case, stage=Stage.GATE, note="decision recorded")
    return decision


def _same_decision(
    *, run: Run, charter: Charter, record: dict[str, Any], evidence: Mapping[str, Any]
) -> int | None:
    """Return the decision on the same charter, run, record and evidence, if one exists.

    The audit head a record carries differs between two recordings of the same content, so
    the comparison leaves it out.
    """
    wanted = canonical_json({"record": record, "evidence": dict(evidence)})
    for pk, text in Decision.objects.filter(run=run, charter=charter).values_list(
        "pk", "canonical_json"
    ):
        document = json.loads(text)
        document["record"].pop("audit_head", None)
        if canonical_json(document) == wanted:
            return int(pk)
    return None


def intensity_gaps(
    *,
    use_case: UseCase,
    run: Run,
    session: GradingSession | None,
    judge: Judge | None,
    oversight_study: OversightStudy | None,
) -> list[str]:
    """Return the evidence SPEC §6.4 requires at the use case's intensity that is missing."""
    gaps = []
    intensity = use_case.intensity
    if intensity >= 2 and session is None:
        gaps.append(
            f"E{intensity} needs human grading with ≥ 2 graders and κ per field: no grading "
            "session is attached"
        )
    if intensity >= 3:
        if run.repeats < MIN_REPEATS_FROM_E3:
            gaps.append(
                f"E{intensity} needs K ≥ {MIN_REPEATS_FROM_E3} repeats; the run has "
                f"K = {run.repeats}"
            )
        if judge is None:
            gaps.append(f"E{intensity} needs a calibrated judge with PPI; no judge is attached")
    if intensity >= 4 and oversight_study is None:
        gaps.append(
            f"E{intensity} needs an oversight study (seeded defects, ρ_catch, FAR); none is "
            "attached"
        )
    return gaps


def decision_compute(
    *,
    actor: AbstractBaseUser,
    charter: Charter,
    run: Run,
    session: GradingSession | None = None,
    judge: Judge | None = None,
    oversight_study: OversightStudy | None = None,
    stress_run: Run | None = None,
) -> Decision:
    """Estimate every charter metric on ``run``, gate on conservative bounds and record it.

    ``stress_run`` (the same σ on the stress split) is reported separately: its assurance
    metrics are estimated and recorded beside the decision, never mixed into the graded
    split's estimates (SPEC §9).

    Undetermined where SPEC §6.1/§6.4 require: a gated metric without an estimate, a
    human-graded metric whose agreement is below the κ target, or evidence the use case's
    intensity requires that is missing. Users record through :func:`decision_create`, which
    refuses what SPEC §6.1 refuses (an open grading session among them).
    """

    # The run's evidence and the session's agreement, each computed once for the estimates,
    # the gate and the value model (issue 18).
    source = RunEvidenceSource(run=run, session=session, judge=judge)
    verdicts = metric_verdicts(session=session, charter=charter) if session is not None else {}
    estimates = charter_estimates(
        charter=charter,
        run=run,
        session=session,
        judge=judge,
        oversight_study=oversight_study,
        evidence_source=source,
        verdicts=verdicts,
    )
    gate = gate_evaluate(
        gate_input_for(charter=charter, estimates=estimates, verdicts=verdicts),
        mode="conservative",
    )
    gaps = intensity_gaps(
        use_case=charter.use_case,
        run=run,
        session=session,
        judge=judge,
        oversight_study=oversight_study,
    )
    if gaps:
        gate = replace(
            gate,
            decision="Undetermined",
            reasons=(
                "Decision Undetermined: evidence the evaluation intensity requires is missing "
                "(SPEC §6.4)",
                *gaps,
                *gate.reasons,
            ),
        )
    stop = session.stop if session is not None and session.is_sequential else {}
    if stop.get("undecided_at_budget"):
        gate = replace(
            gate,
            reasons=(
                f"Undecided at budget: the sequential session stopped after "
                f"{stop['grades_used']} grades without settling every gated metric; the status "
                "is the conservative one at the stop (SPEC §5.5)",
                *gate.reasons,
            ),
        )
    value = value_for(
        charter=charter,
        run=run,
        session=session,
        judge=judge,
        study=oversight_study,
        evidence_source=source,
    )
    classification, success = structured_evidence(
        charter=charter, run=run, judge=judge, session=session
    )
    stress = stress_report(charter=charter, run=run, stress_run=stress_run, judge=judge)
    evidence = {
        "charter_sha256": charter.sha256,
        "configuration_sha256": run.configuration.sha256,
        "task_set_sha256": run.task_set.manifest_sha256,
        "run_source_sha256": run.source_sha256,
    }
    if judge is not None:
        evidence["judge_rubric_sha256"] = judge.rubric_sha256
    if session is not None:
        evidence["grades_sha256"] = grades_digest(session=session)
    return decision_record(
        actor=actor,
        charter=charter,
        run=run,
        estimates=list(estimates.values()),
        gate=gate,
        evidence=evidence,
        value=value,
        stress=stress,
        session=session,
        judge=judge,
        oversight_study=oversight_study,
        classification=classification,
        success=success,
        run_summary=run_summary_for(charter=charter, run=run, source=source, session=session),
    )


def run_summary_for(
    *, charter: Charter, run: Run, source: RunEvidenceSource, session: GradingSession | None
) -> dict[str, Any]:
    """Return what a scorecard reports of the run beside the estimates, for the record.

    pass^k for k = 1, 2, 4 and K with dispersion (``reliability_estimates``, SPEC §4.1) and
    the sample sizes: the run's tasks and outputs on its split and the outputs the session
    graded completely, sampled and could sample. Read once when the decision is made, so a
    scorecard never reads the run's outputs again (issue 18: flat in the outputs).
    """
    records, dispersion, why, successes = reliability_estimates(
        run=run,
        confidence=charter.confidence,
        rule=charter.success_rule,
        judge=source.judge,
        session=session,
    )
    in_split = run.outputs.filter(task__split=run.split)
    summary: dict[str, Any] = {
        "k": run.repeats,
        "pass_k": {str(k): asdict(record) for k, record in sorted(records.items())},
        "dispersion": asdict(dispersion) if dispersion is not None else None,
        "note": why,
        "success": {
            "determined": successes.determined,
            "method": successes.method,
            "reason": successes.reason,
        },
        "tasks": in_split.values("task_id").distinct().count(),
        "outputs": in_split.count(),
        "graded": None,
    }
    if source.session is not None:
        labels, pending, _strata = source.final_labels
        summary["graded"] = {
            "complete": len(labels),
            "sampled": len(labels) + pending,
            "population": len(source.index),
        }
    return summary


def structured_evidence(
    *, charter: Charter, run: Run, judge: Judge | None, session: GradingSession | None = None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Return the run's classification summary and success basis for the record (SPEC §4.1).

    The classification summary is there when the task set declares a label set and every
    task of the split has its gold label; the success basis when the charter names a metric
    that reads success (pass^k, dispersion, cost per successful task).
    """
    metric_ids = set(charter.metrics.values_list("metric_id", flat=True))
    # Classification graded by humans: the graders' right labels stand where gold would.
    labels = (
        human_run_labels(run=run, session=session)
        if RUBRIC_LABEL_CORRECT in (charter.rubric_fields or ())
        else run_labels(run=run)
    )
    summary = run_classification(labels=labels)
    classification = summary.as_dict() if summary is not None else None
    success = None
    if metric_ids & SUCCESS_METRICS:
        found = run_successes(run=run, rule=charter.success_rule, judge=judge, session=session)
        success = {"rule": found.rule, "method": found.method, "reason": found.reason}
    return classification, success


def stress_report(
    *, charter: Charter, run: Run, stress_run: Run | None, judge: Judge | None
) -> dict[str, Any]:
    """Return the assurance metrics of the σ's stress-split run, reported apart (SPEC §9)."""

    if stress_run is None:
        return {"unavailable": "no stress-split run of this σ was given"}
    if stress_run.configuration_id != run.configuration_id or stress_run.split != "stress":
        raise ServiceError(
            f"Run {stress_run.pk} is not a stress-split run of σ {run.configuration.name}.",
            field="stress_run",
        )
    assurance = {m.id for m in catalogue().values() if m.family == "assurance"}
    estimates = charter_estimates(charter=charter, run=stress_run, judge=judge)
    return {
        "run": stress_run.pk,
        "estimates": [asdict(e) for e in estimates.values() if e.metric_id in assurance],
    }


def value_for(
    *,
    charter: Charter,
    run: Run,
    session: GradingSession | None,
    judge: Judge | None,
    study: OversightStudy | None,
    evidence_source: RunEvidenceSource | None = None,
) -> dict[str, Any]:
    """Return the value-and-risk estimate fed by the evidence, with where each input came from.

    SPEC §6.3: HR and ρ_catch from their graded counts (Beta posteriors), π_err per task from
    HR per sentence and the sentences per graded output, generation times from this run's
    outputs and review times from this σ's own outputs only, never pooled across σ: the
    unaltered copies of this run's outputs reviewed in the oversight study, labelled as a
    time from that study (another activity than production review). The rest comes from
    the charter's value inputs; the point is the median of 10,000 draws seeded by the
    charter's hash, with a 90 % interval. The charter's value inputs and measurement mode
    are read from its signed content, as the thresholds are (``gate_input_for``).
    """
    signed = _signed_document(charter)
    charter_inputs = signed.get("value_inputs") or {}
    if not charter_inputs:
        return {"unavailable": "the charter gives no value inputs"}
    hallucination = None
    graded_outputs = None
    if session is not None:
        units = unit_metric_evidence(
            metric_id="hallucination_rate",
            run=run,
            session=session,
            judge=judge,
            source=evidence_source,
        ).units
        if units.labeled.any() and units.h_num is not None and units.d is not None:
            hallucination = (
                int(units.h_num[units.labeled].sum()),
                int(units.d[units.labeled].sum()),
            )
            graded_outputs = int(units.labeled.sum())
    catch = None
    observed: dict[str, list[float]] = {}
    labels: dict[str, str] = {}
    if study is not None:
        overall = oversight_results(study=study).overall
        if overall.catch.n:
            catch = (overall.catch.successes, overall.catch.n)
        review = [
            seconds / 3600.0
            for seconds in study.items.filter(
                decided_at__isnull=False, source_output__run=run, defects=[]
            ).values_list("seconds_spent", flat=True)
        ]
        if review:
            observed["t_review"] = review
            labels["t_review"] = (
                f"oversight study {study.name} (seeded-defect review, another activity than "
                "production review): unaltered copies of this σ's outputs"
            )
    generation = [
        seconds / 3600.0
        for seconds in Output.objects.filter(run=run, generation_seconds__isnull=False).values_list(
            "generation_seconds", flat=True
        )
    ]
    if generation:
        observed["t_gen"] = generation
    arguments: dict[str, Any] = {
        "measurement_mode": _signed(charter, signed, "measurement_mode"),
        "hallucination": hallucination,
        "catch": catch,
        "observed_times": observed,
        "graded_outputs": graded_outputs,
        "time_sources": labels,
    }
    try:
        currency = value_currency(charter_inputs)
        inputs = value_inputs_from_charter(charter_inputs, **arguments)
        provenance = value_provenance(charter_inputs, **arguments)
    except ValueError as error:
        return {"unavailable": str(error)}
    estimate = value_estimate(inputs, seed=int(charter.sha256[:8], 16))
    estimate = replace(estimate, currency=currency)
    return {**estimate.to_dict(), "provenance": provenance.to_dict()}


def grades_digest(*, session: GradingSession) -> str:
    """Return the SHA-256 of the session's grades and adjudications in canonical JSON."""

    rows, adjudicated = session_grade_rows(session_id=session.pk)
    grades = [list(row) for row in rows]
    adjudications = [[a, k, f, v] for a, k, f, v, _adjudicator in adjudicated]
    return sha256_hex(canonical_json({"grades": grades, "adjudications": adjudications}))


@transaction.atomic
def decision_create(
    *,
    actor: AbstractBaseUser,
    charter: Charter,
    run: Run,
    session: GradingSession | None = None,
    judge: Judge | None = None,
    oversight_study: OversightStudy | None = None,
    stress_run: Run | None = None,
) -> Decision:
    """Record the decision a user asks for (web UI, REST API, CLI), or refuse saying why.

    Refused (SPEC §6.1), each with what to do: a draft charter; a run of another use case,
    whose σ belongs to another use case, or that has not completed; a grading session,
    oversight study or judge of another use case or that did not grade this run; an open
    grading session (SPEC §5.2: an assignment not submitted or a disagreement not
    adjudicated); a judge whose model is σ's own while the charter gates a metric (SPEC §2);
    no session, judge or study where the use case's intensity requires one (SPEC §6.4); a
    stress-split run (reported apart, SPEC §9) that is not a completed stress-split run of the
    same σ. Graders never record a decision, even holding another role. The demo records through
    here too, on a closed session: there is no way round the refusals.
    """
    use_case = charter.use_case
    held = require_role(actor, use_case, DECISION_ROLES)
    if Role.GRADER in held:
        raise PermissionDenied(
            f"Graders do not record decisions on {use_case.key}: a decision shows results "
            "(SPEC §5.1)."
        )
    _refuse_charter(charter)
    _refuse_run(use_case, run)
    _refuse_session(use_case, run, session)
    if session is not None and session.is_sequential and judge != session.judge:
        raise ServiceError(
            f"Grading session {session.public_id} drew its outputs by judge "
            f"{session.judge_id}'s uncertainty and its sequences use that judge: choose it.",
            field="judge",
        )
    _refuse_judge(charter, run, judge)
    _refuse_study(use_case, run, oversight_study)
    _refuse_stress_run(run, stress_run)
    _refuse_missing(use_case, session=session, judge=judge, oversight_study=oversight_study)
    return decision_compute(
        actor=actor,
        charter=charter,
        run=run,
        session=session,
        judge=judge,
        oversight_study=oversight_study,
        stress_run=stress_run,
    )


def _refuse_stress_run(run: Run, stress_run: Run | None) -> None:
    if stress_run is None:
        return
    sigma = f"σ {run.configuration.name} v{run.configuration.version}"
    if stress_run.configuration_id != run.configuration_id or stress_run.split != "stress":
        raise ServiceError(
            f"Run {stress_run.pk} is not a stress-split run of {sigma} (it is σ "
            f"{stress_run.configuration.name} v{stress_run.configuration.version}, split "
            f"{stress_run.split}); choose a run of {sigma} on the stress split, or none.",
            field="stress_run",
        )
    if stress_run.status != RunStatus.COMPLETED:
        raise ConflictError(
            f"Stress-split run {stress_run.pk} is {stress_run.get_status_display().lower()}; "
            "choose it once it has completed.",
            field="stress_run",
        )


def _refuse_charter(charter: Charter) -> None:
    if not charter.is_frozen:
        raise ConflictError(
            f"Charter v{charter.version} of {charter.use_case.key} is a draft: a decision gates "
            "on pre-registered thresholds. Have the charter owner, the model owner and a "
            "second-line reviewer sign it, or choose a signed version.",
            field="charter",
        )


def _refuse_run(use_case: UseCase, run: Run) -> None:
    configuration = run.configuration
    if run.use_case_id != use_case.pk:
        raise ServiceError(
            f"Run {run.pk} belongs to another use case; choose a run of {use_case.key}.",
            field="run",
        )
    if configuration.use_case_id != use_case.pk:
        raise ServiceError(
            f"Run {run.pk}'s σ {configuration.name} v{configuration.version} belongs to another "
            f"use case; choose a run of a σ of {use_case.key}.",
            field="run",
        )
    if run.status != RunStatus.COMPLETED:
        raise ConflictError(
            f"Run {run.pk} is {run.get_status_display().lower()}; record a decision once it "
            "has completed.",
            field="run",
        )


def _refuse_session(use_case: UseCase, run: Run, session: GradingSession | None) -> None:
    """Refuse a session of another use case, that did not sample ``run``, or still open."""
    if session is None:
        return
    if session.use_case_id != use_case.pk:
        raise ServiceError(
            f"Grading session {session.public_id} belongs to another use case; choose a "
            f"session of {use_case.key}.",
            field="session",
        )
    if not session.runs.filter(pk=run.pk).exists():
        raise ServiceError(
            f"Grading session {session.public_id} ({session.name}) did not sample run "
            f"{run.pk}; choose a session that grades this run's outputs.",
            field="session",
        )
    if session.is_sequential:
        if not session.stop:
            raise ConflictError(
                f"Grading session {session.public_id} ({session.name}) is sequential and has "
                "not stopped: it stops by itself when every gated metric is settled, when one "
                "is settled Reject, or at its budget (SPEC §5.5). Have the graders and the "
                "adjudicator carry on, then record it.",
                field="session",
            )
        return
    detail = session_detail(session=session)
    unsubmitted = detail.progress.assignments - detail.progress.submitted
    pending = detail.disputes_pending
    if unsubmitted or pending:
        raise ConflictError(
            f"Grading session {session.public_id} ({session.name}) is still open: "
            f"{unsubmitted} of {detail.progress.assignments} assignments not submitted and "
            f"{pending} disagreement(s) awaiting adjudication. A decision is computed only on "
            "a closed session (SPEC §5.2): have the graders submit and the adjudicator "
            "resolve every disagreement, then record it.",
            field="session",
        )


def _refuse_judge(charter: Charter, run: Run, judge: Judge | None) -> None:
    if judge is None:
        return
    configuration = run.configuration
    model = configuration.document.get("model") or {}
    sigma_ref = "/".join(str(model[part]) for part in ("provider", "id") if model.get(part))
    sigma_ref = sigma_ref or configuration.model_ref
    gated = [
        entry["id"]
        for entry in _signed_document(charter)["metrics"]
        if entry["treatment"] == Treatment.GATED
    ]
    if gated and judge.kind == JudgeKind.LLM and same_model(judge.model_ref, sigma_ref):
        raise ConflictError(
            f"Judge {judge.name} {judge.version} uses model {judge.model_ref}, which is σ "
            f"{configuration.name} v{configuration.version}'s own model ({sigma_ref}), and "
            f"charter v{charter.version} gates {', '.join(gated)}: a system never grades "
            "itself for a gated metric (SPEC §2). Choose a judge with another model, or the "
            "built-in judge.",
            field="judge",
        )
    if not JudgeScore.objects.filter(judge=judge, unit__output__run=run).exists():
        raise ServiceError(
            f"Judge {judge.name} {judge.version} has not scored run {run.pk}; judge the run "
            "first, or choose a judge that scored it.",
            field="judge",
        )


def _refuse_study(use_case: UseCase, run: Run, study: OversightStudy | None) -> None:
    if study is None:
        return
    if study.use_case_id != use_case.pk:
        raise ServiceError(
            f"Oversight study {study.public_id} belongs to another use case; choose a study "
            f"of {use_case.key}.",
            field="oversight_study",
        )
    if not study.runs.filter(pk=run.pk).exists():
        raise ServiceError(
            f"Oversight study {study.public_id} ({study.name}) did not use run {run.pk}'s "
            "outputs; choose a study of this run.",
            field="oversight_study",
        )


def _refuse_missing(
    use_case: UseCase,
    *,
    session: GradingSession | None,
    judge: Judge | None,
    oversight_study: OversightStudy | None,
) -> None:
    """Refuse where the intensity needs evidence the user can attach but did not (SPEC §6.4)."""
    intensity = use_case.intensity
    if intensity >= 2 and session is None:
        raise ServiceError(
            f"{use_case.key} is at E{intensity}, which needs human grading with ≥ 2 graders: "
            "choose a closed grading session of this run.",
            field="session",
        )
    if intensity >= 3 and judge is None:
        raise ServiceError(
            f"{use_case.key} is at E{intensity}, which needs a calibrated judge with PPI: "
            "choose a judge that scored this run (judge the run first if none did).",
            field="judge",
        )
    if intensity >= 4 and oversight_study is None:
        raise ServiceError(
            f"{use_case.key} is at E{intensity}, which needs an oversight study: choose one "
            "of this run.",
            field="oversight_study",
        )
