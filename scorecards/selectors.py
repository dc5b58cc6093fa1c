"""Reads of scorecards: the content of Table 11 assembled from a decision, and its views.

:func:`scorecard_content` is the one place a scorecard's content is built: the decision's
stored record (estimates, gate, EI, value, stress), the charter, σ, task set, grading session
and oversight study it names, the use case's members and deviations, and the committee's
fields. A final scorecard's content was frozen at sign-off and is read back as stored; a
draft's is assembled on every read, so it always shows what is missing now.
"""

from __future__ import annotations

import datetime as dt
import functools
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.urls import reverse

import scorecards.plots
from audit.canonical import canonical_json, canonical_value, sha256_hex
from audit.models import AuditEntry
from charters.catalogue import catalogue
from charters.configurations import COMPONENTS
from charters.models import Deviation, Membership, Role, UseCase
from charters.models.charters import Treatment
from charters.permissions import use_case_for_unblinded
from egibench.selectors import egi_evidence_for
from enterpriseval.plot_cache import plots_cached
from enterpriseval.plotting import svg_data_uri
from enterpriseval.values import number_text
from gates.amounts import metric_currency
from gates.models import Decision
from gates.selectors import Plot, decision_plots_of, interval_note, value_estimate_from_dict
from gates.value_model import POINT_RULE
from grading.rubric import RUBRIC_VERSION
from metrics.estimate import MetricEstimate
from metrics.evidence import graded_outputs
from metrics.selectors import reliability_estimates
from scorecards.artefacts import ARTEFACT_KINDS, ArtefactRef
from scorecards.fields import TABLE_11, MissingField, missing_fields
from scorecards.models import ReevaluationFlag, Scorecard, ScorecardStatus
from scorecards.plots import pass_k_svg
from scorecards.regulatory import (
    DEFAULT_PACK_DIR,
    AppendixRow,
    MatrixRow,
    RegulatoryPack,
    appendix_rows,
    load_packs,
    mapping_matrix,
    packs_used,
)

SCHEMA = "enterpriseval.scorecard/1"
OVERSIGHT_METRICS = (
    "catch_rate",
    "false_acceptance_rate",
    "unplanned_intervention_rate",
    "review_burden",
)
REEVALUATION_REQUIRED = "re-evaluation required"
#: The value model's inputs in the scorecard's order (seed 003 Table 11 names the first four).
VALUE_INPUTS = (
    ("N", "tasks_per_year", "tasks per year"),
    ("c_h", "hourly_cost", "hourly cost"),
    ("ℓ_err", "loss_per_error", "loss per error that reaches production"),
    ("ρ_catch", "catch", "reviewer catch rate"),
    ("HR", "hallucination", "hallucination rate"),
    ("s̄", "sentences_per_output", "sentences per output (π_err per task)"),
    ("t̄_manual", "t_manual", "manual hours per task"),
    ("t̄_gen", "t_gen", "generation hours per task"),
    ("t̄_review", "t_review", "review hours per task"),
    ("c_infer", "inference_cost_per_task", "inference cost per task"),
    ("C_integr", "integration_cost", "integration cost per year"),
    ("C_rework", "rework_cost", "rework cost per year"),
    ("V_quality", "quality_value", "quality value per year"),
    ("V_avoided", "avoided_value", "avoided cost per year"),
)


def scorecard_use_case_for(user: AbstractBaseUser | AnonymousUser, key: str) -> UseCase:
    """Return the use case whose scorecards ``user`` may read (graders 403, outsiders 404)."""
    return use_case_for_unblinded(user, key, what="scorecards")


def scorecard_get(*, use_case: UseCase, pk: int) -> Scorecard | None:
    """Return scorecard ``pk`` of ``use_case`` with its decision and relations, or ``None``."""
    return (
        Scorecard.objects.filter(use_case=use_case, pk=pk)
        .select_related(
            "use_case",
            "decision__charter",
            "decision__configuration",
            "decision__run__task_set",
            "decision__session",
            "decision__judge",
            "decision__oversight_study",
            "decision__created_by",
            "signed_off_by",
        )
        .defer("pdf")
        .first()
    )


def scorecard_list(*, use_case: UseCase) -> list[Scorecard]:
    """Return the use case's scorecards, newest first, with their decisions and flags."""
    return list(
        Scorecard.objects.filter(use_case=use_case)
        .select_related("decision__configuration", "signed_off_by")
        .defer("pdf", "content", "canonical_json")
        .prefetch_related("reevaluation_flags")
        .order_by("-created_at", "-pk")
    )


def scorecard_state(scorecard: Scorecard, flags: Sequence[ReevaluationFlag] | None = None) -> str:
    """Return "draft", "final" or "re-evaluation required" (a final scorecard gone stale)."""
    if scorecard.status != ScorecardStatus.FINAL:
        return "draft"
    if flags is None:
        flags = list(scorecard.reevaluation_flags.all())
    return REEVALUATION_REQUIRED if flags else "final"


# --------------------------------------------------------------------------- content


def pack_dir() -> str | None:
    """Return the folder of regulatory packs the site uses (``SCORECARD_PACK_DIR``)."""
    return getattr(settings, "SCORECARD_PACK_DIR", None) or None


def site_packs() -> tuple[RegulatoryPack, ...]:
    """Return the regulatory packs of the site's pack folder, validated on load.

    Loaded again whenever a pack file is added, removed or changed (the folder's file names,
    sizes and modification times are the cache key), so a compliance team's edit is picked
    up without a restart or a release.
    """
    directory = Path(pack_dir() or DEFAULT_PACK_DIR)
    signature = (
        tuple(
            sorted(
                (child.name, child.stat().st_size, child.stat().st_mtime_ns)
                for child in directory.iterdir()
                if child.is_file()
            )
        )
        if directory.is_dir()
        else ()
    )
    return _packs_cached(str(directory), signature)


@functools.lru_cache(maxsize=8)
def _packs_cached(
    directory: str, signature: tuple[tuple[str, int, int], ...]
) -> tuple[RegulatoryPack, ...]:
    return load_packs(directory)


def scorecard_content(*, scorecard: Scorecard) -> dict[str, Any]:
    """Return the scorecard's content: frozen at sign-off, else assembled now."""
    if scorecard.status == ScorecardStatus.FINAL and scorecard.content is not None:
        return dict(scorecard.content)
    return assemble_content(scorecard=scorecard)


def assemble_content(
    *, scorecard: Scorecard, signed_off: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Assemble every Table 11 field of ``scorecard`` from its decision and the evidence.

    ``signed_off`` (who, role, when) is written into the content when the scorecard is being
    signed off, so the frozen content names its second-line reviewer.
    """
    decision = scorecard.decision
    use_case = scorecard.use_case
    charter = decision.charter
    record = decision.record
    estimates = {row["metric_id"]: row for row in record["estimates"]}
    gate = record["gate"]
    members = _members(use_case)
    reviewer = [signed_off["by"]] if signed_off is not None else members.get(Role.REVIEWER, [])
    names = catalogue()
    content: dict[str, Any] = {
        "schema": SCHEMA,
        "scorecard": {
            "id": scorecard.pk,
            "decision": decision.pk,
            "decision_sha256": decision.sha256,
            "decision_recorded_at": decision.created_at.astimezone(dt.UTC).isoformat(),
        },
        "identity": {
            "use_case": use_case.key,
            "name": use_case.name,
            "business_owner": members.get(Role.CHARTER_OWNER, []),
            "model_owner": members.get(Role.MODEL_OWNER, []),
            "second_line_reviewer": reviewer,
        },
        "business": {
            "outcome": use_case.business_outcome,
            "value_hypothesis": use_case.value_hypothesis,
        },
        "task_specification": _task_specification(decision),
        "risk_tier": {
            "autonomy": use_case.autonomy_label,
            "autonomy_label": use_case.get_autonomy_display(),
            "consequence": use_case.consequence_label,
            "consequence_label": use_case.get_consequence_display(),
            "intensity": use_case.intensity,
        },
        "configuration": _configuration(decision),
        "baseline": {
            "workflow": charter.baseline,
            "measurement_mode": charter.measurement_mode,
        },
        "charter": {
            "version": charter.version,
            "sha256": charter.sha256,
            "confidence": charter.confidence,
            "kappa_target": charter.kappa_target,
            "nu_max": charter.nu_max,
        },
        "gated_metrics": _gated_metrics(gate, estimates, names),
        "informational_metrics": _informational(decision, gate, estimates, names),
        "reliability": _reliability(decision),
        "classification": record.get("classification"),
        "assurance": _assurance(record.get("stress"), use_case.intensity, names),
        "oversight": _oversight(decision, estimates),
        "sample_sizes": _sample_sizes(decision, estimates),
        "gate": {
            "decision": gate["decision"],
            "binding_metric": gate.get("binding_metric"),
            "mode": gate["mode"],
            "reasons": list(gate.get("reasons") or []),
            "recommendations": [rec["message"] for rec in gate.get("recommendations") or []],
            "family_wise": family_wise_statement(charter.confidence),
        },
        "efficacy": _efficacy(gate),
        "value": _value(record.get("value"), charter.value_inputs or {}),
        "failure_modes": {
            "failure_modes": scorecard.failure_modes,
            "conditions_of_use": scorecard.conditions_of_use,
            "compensating_controls": scorecard.compensating_controls,
        },
        "deviations": _deviations(decision),
        "monitoring": {
            "triggers": list(scorecard.reevaluation_triggers or []),
            "next_review_date": scorecard.next_review_date.isoformat()
            if scorecard.next_review_date
            else None,
        },
        "capability_evidence": _capability_evidence(decision),
    }
    content["artefacts"] = {
        kind: _artefact_dict(ref) for kind, ref in _artefacts(scorecard, content).items()
    }
    content["packs"] = packs_used(site_packs())
    content["sign_off"] = dict(signed_off) if signed_off is not None else None
    content["missing"] = [m.to_dict() for m in missing_fields(content)]
    return canonical_value(content)


def family_wise_statement(confidence: float) -> str:
    """Return the scorecard's family-wise reading of the gate (SPEC §5.3).

    The conjunctive gate reads Scale only when every gated metric's conservative bound
    clears θin, so it is an intersection–union test (Berger 1982): a wrong Scale needs the
    true value of at least one metric short of θin while its bound clears it, and the chance
    of that is at most the largest per-metric unsafe-side error, α/2 — no multiplicity
    correction is needed for the gate. The per-metric intervals are not simultaneous.
    """
    side = (1.0 - float(confidence)) / 2.0
    return (
        "Family-wise reading: the conjunctive gate is an intersection–union test — it reads "
        "Scale only when every gated metric's conservative bound clears θin, so the chance of "
        "a wrong Scale is at most the largest per-metric unsafe-side error, "
        f"{number_text(100 * side, 3)} % for the {number_text(100 * float(confidence), 3)} % "
        "intervals here, not their sum. The per-metric intervals displayed are not "
        "simultaneous: the chance that all of them cover their true values at once is lower "
        f"than {number_text(100 * float(confidence), 3)} %, so they must not be read jointly "
        "as a confidence region."
    )


def _efficacy(gate: Mapping[str, Any]) -> dict[str, Any]:
    """Return EI, EI_G and the band, or why they were not computed.

    SPEC §6.1: with a gated metric whose human labels are not eligible, EI is not computed at
    all; that is a statement the committee can sign ("not computed"), unlike a metric with no
    estimate, which leaves the field missing.
    """
    section: dict[str, Any] = {
        "ei": gate.get("ei"),
        "ei_g": gate.get("ei_g"),
        "band": gate.get("ei_band"),
        "nu_max": gate.get("nu_max"),
        "why": "",
        "not_computed": "",
    }
    if gate.get("ei") is not None:
        return section
    metrics = gate.get("metrics") or []
    unmeasured = [m["id"] for m in metrics if m.get("value_used") is None]
    ineligible = [m["id"] for m in metrics if m.get("eligible") is False]
    if ineligible and not unmeasured:
        section["not_computed"] = (
            "EI and EI_G are not computed: the decision is Undetermined because the human "
            f"labels of {', '.join(ineligible)} do not meet the charter's agreement rule "
            "(SPEC §6.1: EI is computed over eligible metrics only, or not at all)"
        )
    else:
        section["why"] = "EI needs an estimate of every gated metric"
    return section


def content_sha256(content: Mapping[str, Any]) -> str:
    """Return the SHA-256 of a scorecard content's canonical JSON."""
    return sha256_hex(canonical_json(content))


def _members(use_case: UseCase) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for membership in (
        Membership.objects.filter(use_case=use_case)
        .select_related("user")
        .order_by("role", "user__username")
    ):
        user = membership.user
        found.setdefault(membership.role, []).append(user.get_full_name() or user.get_username())
    return found


def _task_specification(decision: Decision) -> dict[str, Any]:
    run = decision.run
    task_set = run.task_set
    judge = decision.judge
    rubric: dict[str, Any] = {"grading_rubric_version": RUBRIC_VERSION}
    if judge is not None:
        rubric["judge"] = {
            "name": judge.name,
            "version": judge.version,
            "kind": judge.kind,
            "model": judge.model_ref,
            "rubric_sha256": judge.rubric_sha256,
        }
    return {
        "task_set": {
            "name": task_set.name,
            "version": task_set.version,
            "manifest_sha256": task_set.manifest_sha256,
            "split_counts": task_set.split_counts,
            "run_split": run.split,
        },
        "gold": (
            "Key elements, reference artefacts, mandatory guidance items and expected "
            f"abstentions of {task_set.name} v{task_set.version} (same manifest)"
        ),
        "rubric": rubric,
    }


def _configuration(decision: Decision) -> dict[str, Any]:
    configuration = decision.configuration
    document = configuration.document or {}
    components = []
    for component in COMPONENTS:
        part = document.get(component.key)
        version = part.get("version") if isinstance(part, dict) else None
        components.append(
            {
                "symbol": component.symbol,
                "label": component.label,
                "present": part is not None,
                "version": version,
                "sha256": sha256_hex(canonical_json(part)) if part is not None else None,
            }
        )
    return {
        "name": configuration.name,
        "version": configuration.version,
        "sha256": configuration.sha256,
        "model": configuration.model_ref,
        "components": components,
    }


def _gated_metrics(
    gate: Mapping[str, Any], estimates: Mapping[str, Mapping[str, Any]], names: Mapping[str, Any]
) -> list[dict[str, Any]]:
    rows = []
    for metric in gate["metrics"]:
        estimate = estimates.get(metric["id"]) or {}
        rows.append(
            {
                "id": metric["id"],
                "label": metric.get("label") or _label(names, metric["id"]),
                "direction": metric["direction"],
                "status": metric["status"],
                "estimate": metric.get("estimate"),
                "ci": metric.get("ci"),
                "theta_out": metric["theta_out"],
                "theta_in": metric["theta_in"],
                "value_used": metric.get("value_used"),
                "nu": metric.get("nu"),
                "weight": metric.get("weight"),
                "grading": metric.get("grading"),
                "kappa": metric.get("kappa"),
                "eligible": metric.get("eligible", True),
                "agreement": metric.get("agreement"),
                "n": estimate.get("n"),
                "n_clusters": estimate.get("n_clusters"),
                "planned_n": estimate.get("planned_n"),
                "under_sampled": bool(estimate.get("under_sampled")),
                "estimator": estimate.get("estimator", ""),
                "confidence": estimate.get("confidence"),
                "reason": estimate.get("reason", ""),
                "currency": metric_currency(metric["id"]) or None,
            }
        )
    return rows


def _informational(
    decision: Decision,
    gate: Mapping[str, Any],
    estimates: Mapping[str, Mapping[str, Any]],
    names: Mapping[str, Any],
) -> list[dict[str, Any]]:
    gated = {metric["id"] for metric in gate["metrics"]}
    reasons = dict(
        decision.charter.metrics.filter(treatment=Treatment.INFORMATIONAL).values_list(
            "metric_id", "reason"
        )
    )
    rows = []
    for metric_id, estimate in estimates.items():
        if metric_id in gated:
            continue
        rows.append(
            {
                "id": metric_id,
                "label": _label(names, metric_id),
                "why_not_gated": reasons.get(metric_id, "reported only"),
                **_estimate_summary(estimate),
                "interval_note": interval_note(estimate),
                "currency": metric_currency(metric_id) or None,
            }
        )
    return rows


def _estimate_summary(estimate: Mapping[str, Any] | MetricEstimate | None) -> dict[str, Any]:
    if estimate is None:
        return {"point": None, "ci": None, "mode": None, "n": None, "reason": "not estimated"}
    if isinstance(estimate, MetricEstimate):
        data: Mapping[str, Any] = {
            "point": estimate.point,
            "lo": estimate.lo,
            "hi": estimate.hi,
            "mode": estimate.mode,
            "n": estimate.n,
            "reason": estimate.reason,
            "under_sampled": estimate.under_sampled,
        }
    else:
        data = estimate
    has_ci = data.get("lo") is not None and data.get("hi") is not None
    return {
        "point": data.get("point"),
        "ci": [data["lo"], data["hi"]] if has_ci else None,
        "mode": data.get("mode"),
        "n": data.get("n"),
        "under_sampled": bool(data.get("under_sampled")),
        "reason": data.get("reason", ""),
    }


def _reliability(decision: Decision) -> dict[str, Any]:
    """Return pass^k by k and dispersion as the decision recorded them (read from the run's
    outputs now only for a decision recorded before its record kept them)."""
    charter = decision.charter
    stored = decision.record.get("run_summary")
    if stored is not None:
        records: Mapping[Any, Any] = stored["pass_k"]
        dispersion = stored["dispersion"]
        why, successes, k = stored["note"], stored["success"], stored["k"]
        determined, method, reason = (
            successes["determined"],
            successes["method"],
            successes["reason"],
        )
    else:
        run = decision.run
        records, dispersion, why, found = reliability_estimates(
            run=run,
            confidence=charter.confidence,
            rule=charter.success_rule,
            judge=decision.judge,
            session=decision.session,
        )
        determined, method, reason, k = found.determined, found.method, found.reason, run.repeats
    if determined:
        basis = f"Success per output ({charter.success_rule}): {method}."
    else:
        basis = f"No pass^k: {reason}."
    return {
        "k": k,
        "success_basis": basis,
        "pass_k": {
            str(key): _estimate_summary(record)
            for key, record in sorted(records.items(), key=lambda item: int(item[0]))
        },
        "dispersion": _estimate_summary(dispersion) if dispersion is not None else None,
        "note": why,
    }


def _assurance(
    stress: Mapping[str, Any] | None, intensity: int, names: Mapping[str, Any]
) -> dict[str, Any]:
    if not stress or "run" not in stress:
        why = (stress or {}).get("unavailable") or "no stress-split run was evaluated"
        required = "required from E3" if intensity < 3 else f"required at E{intensity}"
        return {"stress_run": None, "estimates": [], "note": f"{why} ({required})"}
    return {
        "stress_run": stress["run"],
        "estimates": [
            {
                "id": row["metric_id"],
                "label": _label(names, row["metric_id"]),
                **_estimate_summary(row),
            }
            for row in stress.get("estimates", [])
        ],
        "note": "Reported apart from the gate; gated only for assurance metrics (SPEC §9).",
    }


def _oversight(decision: Decision, estimates: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    study = decision.oversight_study
    section: dict[str, Any] = {
        "study": study.public_id if study is not None else None,
        "note": "" if study is not None else "no oversight study is attached to the decision",
    }
    for metric_id in OVERSIGHT_METRICS:
        estimate = estimates.get(metric_id)
        section[metric_id] = (
            _estimate_summary(estimate)
            if estimate is not None
            else {"point": None, "ci": None, "reason": "not in the charter"}
        )
    return section


def _sample_sizes(decision: Decision, estimates: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    stored = decision.record.get("run_summary")
    if stored is not None:
        tasks, outputs, graded = stored["tasks"], stored["outputs"], stored["graded"]
    else:  # a decision recorded before its record kept the run's counts
        run = decision.run
        in_split = run.outputs.filter(task__split=run.split)
        tasks, outputs = in_split.values("task_id").distinct().count(), in_split.count()
        session = decision.session
        # Outputs of this σ graded completely, never the session's sample across every σ
        found = graded_outputs(session=session, run=run) if session is not None else None
        graded = asdict(found) if found is not None else None
    return {
        "tasks": tasks,
        "outputs": outputs,
        "graded_documents": graded["complete"] if graded is not None else 0,
        "sampled_documents": graded["sampled"] if graded is not None else 0,
        "population": graded["population"] if graded is not None else None,
        "units": [
            {
                "id": metric_id,
                "n": row.get("n"),
                "clusters": row.get("n_clusters"),
                "planned_n": row.get("planned_n"),
                "under_sampled": bool(row.get("under_sampled")),
            }
            for metric_id, row in estimates.items()
        ],
        "under_sampled": sorted(
            metric_id for metric_id, row in estimates.items() if row.get("under_sampled")
        ),
    }


def _value(stored: Mapping[str, Any] | None, charter_inputs: Mapping[str, Any]) -> dict[str, Any]:
    estimate = value_estimate_from_dict(stored)
    provenance = (stored or {}).get("provenance") or {}
    inputs = {
        name: charter_inputs.get(name)
        for name in ("tasks_per_year", "hourly_cost", "error_loss", "t_manual", "t_gen", "t_review")
        if name in charter_inputs
    }
    currency = charter_inputs.get("currency") or None
    if estimate is None:
        return {
            "currency": currency,
            "inputs": inputs,
            "v_annual": None,
            "unavailable": (stored or {}).get("unavailable") or "no value estimate was recorded",
        }
    sources = provenance.get("sources", {})
    kinds = provenance.get("kinds") or {}
    return {
        "currency": estimate.currency or currency,  # ISO 4217 code of every amount
        "inputs": inputs,
        "table": [
            {
                "symbol": symbol,
                "name": name,
                "label": label,
                "source": sources[name],
                "kind": kinds.get(name, ""),
            }
            for symbol, name, label in VALUE_INPUTS
            if name in sources
        ],
        "sources": sources,
        "baseline_note": provenance.get("baseline", ""),
        "pi_err": provenance.get("pi_err", ""),
        "v_annual": {
            "point": estimate.point,
            "point_rule": estimate.point_rule,
            "central": estimate.central,
            "lo": estimate.lo,
            "hi": estimate.hi,
            "level": estimate.level,
            "label": estimate.label,
            "draws": estimate.draws,
            "seed": estimate.seed,
        },
        "components": estimate.components,
    }


def _deviations(decision: Decision) -> dict[str, Any]:
    rows = (
        Deviation.objects.filter(
            charter__use_case_id=decision.use_case_id,
            charter__version__lte=decision.charter.version,
        )
        .select_related("charter", "previous", "created_by")
        .order_by("created_at", "pk")
    )
    items = [
        {
            "from_version": row.previous.version,
            "to_version": row.charter.version,
            "reason": row.reason,
            "by": row.created_by.get_username(),
            "at": row.created_at.astimezone(dt.UTC).isoformat(),
        }
        for row in rows
    ]
    return {
        "items": items,
        "note": "" if items else "None: the charter was not changed after unblinding.",
    }


def _capability_evidence(decision: Decision) -> dict[str, Any] | None:
    evidence = egi_evidence_for(decision.configuration)
    return dict(evidence) if evidence is not None else None


def _label(names: Mapping[str, Any], metric_id: str) -> str:
    return names[metric_id].name if metric_id in names else metric_id


# --------------------------------------------------------------------------- artefacts


def _artefacts(scorecard: Scorecard, content: Mapping[str, Any]) -> dict[str, ArtefactRef]:
    decision = scorecard.decision
    key = scorecard.use_case.key
    charter = decision.charter
    configuration = decision.configuration
    run = decision.run
    task_set = run.task_set
    session = decision.session
    study = decision.oversight_study
    evidence = decision.evidence
    decision_url = reverse("decision-detail", args=[key, decision.pk])
    refs = {
        "charter": ArtefactRef(
            "charter",
            f"Charter v{charter.version}",
            reverse("charter-version", args=[key, charter.version]),
            charter.sha256,
        ),
        "deviations": ArtefactRef(
            "deviations",
            f"{len(content['deviations']['items'])} deviation(s)",
            reverse("charter-detail", args=[key]),
            _digest(content["deviations"]),
        ),
        "configuration": ArtefactRef(
            "configuration",
            f"σ {configuration.name} v{configuration.version}",
            reverse("configuration-detail", args=[key, configuration.name, configuration.version]),
            configuration.sha256,
        ),
        "task_set": ArtefactRef(
            "task_set",
            f"Task set {task_set.name} v{task_set.version}",
            reverse("task-set-detail", args=[key, task_set.name, task_set.version]),
            task_set.manifest_sha256,
        ),
        "run": ArtefactRef(
            "run",
            f"Run {run.pk} ({run.split}, K = {run.repeats})",
            reverse("run-detail", args=[key, run.pk]),
            evidence.get("run_source_sha256") or run.source_sha256 or "",
            "" if (evidence.get("run_source_sha256") or run.source_sha256) else "no source hash",
        ),
        "decision": ArtefactRef(
            "decision", f"Decision {decision.pk}", decision_url, decision.sha256
        ),
        "stress_results": ArtefactRef(
            "stress_results",
            "Stress-set results" if content["assurance"]["stress_run"] else "Stress set",
            decision_url,
            _digest(content["assurance"]),
        ),
        "value_model": ArtefactRef(
            "value_model", "Value-and-risk model", decision_url, _digest(content["value"])
        ),
        "monitoring": ArtefactRef(
            "monitoring",
            "Re-evaluation triggers and next review date",
            reverse("scorecard-detail", args=[key, scorecard.pk]),
            _digest(content["monitoring"]),
        ),
        "scorecard": ArtefactRef(
            "scorecard",
            f"Scorecard {scorecard.pk}",
            reverse("scorecard-detail", args=[key, scorecard.pk]),
            "",
            "this document: its SHA-256 is in every page footer",
        ),
        "audit_log": _audit_ref(decision, key),
    }
    if session is not None:
        session_url = reverse("grading-session-detail", args=[key, session.public_id])
        refs["sampling_frame"] = ArtefactRef(
            "sampling_frame",
            f"Sample of session {session.public_id}: {session.sample_size} of "
            f"{session.population_size} ({session.design}, seed {session.seed})",
            session_url,
            _sample_sha256(session),
        )
        refs["grading_records"] = ArtefactRef(
            "grading_records",
            f"Grades and adjudications of session {session.public_id}",
            session_url,
            evidence.get("grades_sha256", ""),
        )
        refs["agreement"] = ArtefactRef(
            "agreement",
            "κ/α per metric (lowest of its rubric fields)",
            reverse("grading-agreement", args=[key, session.public_id]),
            _digest([[row["id"], row["kappa"]] for row in content["gated_metrics"]]),
        )
    else:
        for kind in ("sampling_frame", "grading_records", "agreement"):
            refs[kind] = ArtefactRef(kind, ARTEFACT_KINDS[kind], "", "", "no grading session")
    judge = decision.judge
    if judge is not None:
        refs["judge_calibration"] = ArtefactRef(
            "judge_calibration",
            f"Judge {judge.name} {judge.version}",
            reverse("grading-calibration", args=[key, session.public_id])
            if session is not None
            else decision_url,
            judge.rubric_sha256,
        )
    else:
        refs["judge_calibration"] = ArtefactRef(
            "judge_calibration", ARTEFACT_KINDS["judge_calibration"], "", "", "no judge"
        )
    if study is not None:
        refs["oversight_study"] = ArtefactRef(
            "oversight_study",
            f"Oversight study {study.public_id}",
            reverse("grading-oversight-detail", args=[key, study.public_id]),
            _digest(content["oversight"]),
        )
    else:
        refs["oversight_study"] = ArtefactRef(
            "oversight_study", ARTEFACT_KINDS["oversight_study"], "", "", "no oversight study"
        )
    return {kind: refs[kind] for kind in ARTEFACT_KINDS}


def _audit_ref(decision: Decision, key: str) -> ArtefactRef:
    entry = (
        AuditEntry.objects.filter(
            action="decision.record", target_type="gates.decision", target_id=str(decision.pk)
        )
        .values("sequence", "entry_hash")
        .first()
    )
    if entry is None:
        return ArtefactRef("audit_log", "Audit log", "", "", "no decision.record entry")
    return ArtefactRef(
        "audit_log",
        f"Audit log up to entry {entry['sequence']} (hash of that entry, which chains all before)",
        reverse("use-case-audit", args=[key]),
        entry["entry_hash"],
    )


def _sample_sha256(session: Any) -> str:
    payload = (
        AuditEntry.objects.filter(
            action="grading_session.create",
            target_type="grading.gradingsession",
            target_id=str(session.pk),
        )
        .values_list("payload", flat=True)
        .first()
    )
    return str((payload or {}).get("sample_sha256", ""))


def _digest(value: Any) -> str:
    return sha256_hex(canonical_json(canonical_value(value)))


def _artefact_dict(ref: ArtefactRef) -> dict[str, str]:
    return {
        "title": ref.title,
        "url": ref.url,
        "sha256": ref.sha256,
        "missing": ref.missing,
    }


# --------------------------------------------------------------------------- the page


@dataclass(frozen=True)
class FieldRow:
    key: str
    label: str
    missing: list[str]


@dataclass(frozen=True)
class ScorecardView:
    """Everything the scorecard page and PDF show (the same content for both)."""

    scorecard: Scorecard
    content: dict[str, Any]
    sha256: str
    state: str
    flags: list[ReevaluationFlag]
    fields: list[FieldRow]
    missing: list[MissingField]
    must_know: list[str]
    appendix: list[AppendixRow]
    artefacts: list[ArtefactRef]

    matrix: list[MatrixRow]
    packs: tuple[RegulatoryPack, ...]

    @property
    def triggers_text(self) -> str:
        """The re-evaluation triggers one per line, as the committee form edits them."""
        return "\n".join(self.scorecard.reevaluation_triggers or [])

    @functools.cached_property
    def plots(self) -> list[Plot]:
        """The plots (SVG with real text), drawn on first use, then cached per content hash
        so the page and the PDF draw them once between them."""
        return plots_for(self.content, self.scorecard.decision)


def scorecard_view(*, scorecard: Scorecard) -> ScorecardView:
    """Return the scorecard's content with its hash, state, plots and regulatory appendix."""
    content = scorecard_content(scorecard=scorecard)
    flags = list(scorecard.reevaluation_flags.order_by("raised_at", "pk"))
    missing = [MissingField(**row) for row in content.get("missing", [])]
    by_field: dict[str, list[str]] = {}
    for item in missing:
        by_field.setdefault(item.field, []).append(item.why)
    artefacts = {
        kind: ArtefactRef(kind, data["title"], data["url"], data["sha256"], data["missing"])
        for kind, data in content["artefacts"].items()
    }
    digest = (
        scorecard.sha256 if scorecard.status == ScorecardStatus.FINAL else content_sha256(content)
    )
    artefacts["scorecard"] = ArtefactRef(
        "scorecard", artefacts["scorecard"].title, artefacts["scorecard"].url, digest
    )
    packs = _packs_for(content)
    return ScorecardView(
        scorecard=scorecard,
        content=content,
        sha256=digest,
        state=scorecard_state(scorecard, flags),
        flags=flags,
        fields=[FieldRow(key, label, by_field.get(key, [])) for key, label in TABLE_11],
        missing=missing,
        must_know=must_know(content),
        appendix=appendix_rows(packs, artefacts),
        artefacts=list(artefacts.values()),
        matrix=mapping_matrix(packs, artefacts),
        packs=packs,
    )


def _packs_for(content: Mapping[str, Any]) -> tuple[RegulatoryPack, ...]:
    """Return the packs the content names (by id and version) from the site's folder.

    A final scorecard prints the packs it was signed with; if the folder now holds another
    version of a pack, the appendix still prints the rows of the loaded pack but the recorded
    version stays in the content's ``packs`` list, which the page prints beside it.
    """
    wanted = {pack["id"] for pack in content.get("packs", [])}
    return tuple(pack for pack in site_packs() if pack.id in wanted)


def must_know(content: Mapping[str, Any]) -> list[str]:
    """Return the three things the committee must know, from the content alone."""
    gate = content["gate"]
    metrics = content["gated_metrics"]
    decision = gate["decision"]
    binding = next((row for row in metrics if row["id"] == gate.get("binding_metric")), None)
    first = f"The gate says {decision}"
    if binding is not None and decision != "Undetermined":
        first += (
            f"; the binding metric is {binding['label']} with a conservative value of "
            f"{_fmt(binding['value_used'])} against θout {_fmt(binding['theta_out'])} and "
            f"θin {_fmt(binding['theta_in'])}."
        )
    elif gate.get("reasons"):
        first += ": " + "; ".join(gate["reasons"][:2]) + "."
    else:
        first += "."
    weakest = [row for row in metrics if row["status"] in ("Reject", "Conditional")]
    low_kappa = [row for row in metrics if not row.get("eligible", True)]
    if low_kappa:
        second = (
            "Human agreement does not meet the charter's agreement rule for "
            + ", ".join(
                f"{row['label']} ({(row.get('agreement') or {}).get('reason') or 'no figure'})"
                for row in low_kappa
            )
            + ": those rubrics need revision before their estimates can gate."
        )
    elif weakest:
        second = (
            "Below the inner threshold: "
            + ", ".join(f"{row['label']} ({row['status']})" for row in weakest)
            + "."
        )
    else:
        second = "Every gated metric clears its inner threshold on its conservative bound."
    value = content["value"].get("v_annual")
    if value is not None:
        code = content["value"].get("currency") or ""
        money = f"{code} " if code else ""
        median = " (Monte Carlo median)" if value.get("point_rule") == POINT_RULE else ""
        third = (
            f"V_annual is {money}{value['point']:,.0f} per year{median} with a "
            f"{value['level']:.0%} "
            f"interval [{money}{value['lo']:,.0f}, {money}{value['hi']:,.0f}], {value['label']}"
            + (" (the time baseline was not observed)." if value["label"] == "estimated" else ".")
        )
    else:
        third = f"No value estimate: {content['value'].get('unavailable')}."
    under = content["sample_sizes"].get("under_sampled") or []
    if under:
        third += f" Under-sampled against the planned n: {', '.join(under)}."
    return [first, second, third]


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    return number_text(value, 2) if isinstance(value, int | float) else str(value)


def plots_for(content: Mapping[str, Any], decision: Decision) -> list[Plot]:
    """Return the scorecard's plots: the decision's (thresholds, ν, EI band, value interval),
    cached by the decision's SHA-256 and shared with the decision page, and pass^k by k,
    cached by the SHA-256 of the content's pass^k rows.

    Each is drawn from nothing else, so a signed scorecard's plots are drawn once and a
    draft's follow its content (:mod:`enterpriseval.plot_cache`).
    """
    plots = decision_plots_of(decision=decision)
    reliability = content["reliability"]
    pass_k = reliability.get("pass_k") or {}
    if any((row or {}).get("point") is not None for row in pass_k.values()):
        shown = {"pass_k": pass_k, "k": reliability["k"]}
        plots += plots_cached(
            kind="pass-k",
            content_sha256=content_sha256(shown),
            code=SCORECARD_PLOT_CODE,
            draw=lambda: [pass_k_plot(pass_k, k_max=int(reliability["k"]))],
        )
    return plots


def pass_k_plot(pass_k: Mapping[str, Mapping[str, Any]], *, k_max: int) -> Plot:
    """Return the plot of pass^k with its interval for each k the run's repeats allow."""
    return Plot(
        "pass^k by k",
        svg_data_uri(pass_k_svg(pass_k, k_max=k_max)),
        "pass^k with its interval for each k the run's repeats allow",
    )


# The modules that decide how the pass^k plot looks (this one holds its title).
SCORECARD_PLOT_CODE = (scorecards.plots, sys.modules[__name__])
