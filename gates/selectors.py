"""Reads of recorded decisions: who may see them, the list, one decision, two side by side, and
what a new one can be recorded on."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

import gates.plots
import gates.plots_decision
from charters.catalogue import catalogue
from charters.configurations import ATTRIBUTABLE, IDENTICAL, NOT_ATTRIBUTABLE, ParityReport
from charters.models import Charter, CharterMetric, UseCase
from charters.models.charters import Treatment
from charters.permissions import require_role, use_case_for_unblinded
from charters.selectors.configurations import configuration_parity
from enterpriseval.errors import ServiceError
from enterpriseval.plot_cache import plots_cached
from enterpriseval.plotting import svg_data_uri
from gates.algorithm import GateResult, MetricResult, Recommendation
from gates.models import Decision
from gates.plots import nu_profile_svg, threshold_bands_svg
from gates.plots_decision import confusion_matrix_svg, ei_band_svg, value_interval_svg
from gates.services import DECISION_ROLES
from gates.value_model import ValueEstimate
from grading.models import GradingSession, OversightStudy
from runs.models import Judge, JudgeScore, Run, RunStatus

LIST_FIELDS = (
    "pk",
    "status",
    "binding_metric",
    "ei",
    "ei_g",
    "ei_band_lo",
    "ei_band_hi",
    "sha256",
    "created_at",
    "run_id",
    "charter__version",
    "configuration__name",
    "configuration__version",
    "configuration__sha256",
    "created_by__username",
)


def decision_use_case_for(user: AbstractBaseUser | AnonymousUser, key: str) -> UseCase:
    """Return the use case whose decisions ``user`` may read (else 404 or 403).

    A decision shows results, so every member who does not grade on the use case may read
    it (charter owner, model owner, reviewer, adjudicator); anyone holding the grader role
    gets 403 even with another role, and outsiders get 404.
    """
    return use_case_for_unblinded(user, key, what="decisions")


def decision_recorder_use_case_for(user: AbstractBaseUser | AnonymousUser, key: str) -> UseCase:
    """Return the use case on which ``user`` may record a decision (else 404 or 403).

    Charter owners and reviewers record; graders get 403 even holding one of those roles.
    """
    use_case = decision_use_case_for(user, key)
    require_role(user, use_case, DECISION_ROLES)
    return use_case


def decision_list(*, use_case: UseCase) -> QuerySet[Decision]:
    """Return the decisions of ``use_case``, newest first, without their records."""
    return (
        Decision.objects.filter(use_case=use_case)
        .select_related("charter", "configuration", "created_by")
        .only(*LIST_FIELDS)
        .order_by("-created_at", "-pk")
    )


def decision_get(*, use_case: UseCase, pk: int) -> Decision | None:
    """Return decision ``pk`` of ``use_case`` with its charter, σ and run, or ``None``."""
    return _with_relations(Decision.objects.filter(use_case=use_case, pk=pk)).first()


def _with_relations(decisions: QuerySet[Decision]) -> QuerySet[Decision]:
    return decisions.select_related(
        "charter", "configuration", "run__task_set", "created_by", "scorecard"
    ).defer("canonical_json", "charter__canonical_json", "configuration__canonical_json")


# --------------------------------------------------------------------------- one decision


def gate_result_from_dict(data: Mapping[str, Any]) -> GateResult:
    """Return the :class:`GateResult` that ``GateResult.to_dict()`` stored in a record.

    Numbers come back as floats: the canonical JSON of a record writes 65.0 as 65.
    """
    return GateResult(
        decision=data["decision"],
        binding_metric=data["binding_metric"],
        mode=data["mode"],
        metrics=tuple(_metric_result(metric) for metric in data["metrics"]),
        ei=_float(data["ei"]),
        ei_g=_float(data["ei_g"]),
        ei_band=_pair(data["ei_band"]),
        reasons=tuple(data["reasons"]),
        recommendations=tuple(Recommendation(**rec) for rec in data["recommendations"]),
        nu_max=float(data["nu_max"]),
    )


def _metric_result(data: Mapping[str, Any]) -> MetricResult:
    return MetricResult(
        **{
            **data,
            **{
                name: _float(data[name])
                for name in ("value_used", "nu", "estimate", "kappa", "weight")
            },
            "theta_out": float(data["theta_out"]),
            "theta_in": float(data["theta_in"]),
            "ci": _pair(data["ci"]),
        }
    )


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _pair(value: Sequence[float] | None) -> tuple[float, float] | None:
    return None if value is None else (float(value[0]), float(value[1]))


def value_estimate_from_dict(data: Mapping[str, Any] | None) -> ValueEstimate | None:
    """Return the :class:`ValueEstimate` a record stored, or ``None`` when it holds none.

    A record's value is ``ValueEstimate.to_dict()`` (with a ``provenance`` beside it), or
    ``{"unavailable": why}``, or null.
    """
    if not data or "point" not in data:
        return None
    return ValueEstimate(
        point=float(data["point"]),
        lo=float(data["lo"]),
        hi=float(data["hi"]),
        level=float(data["level"]),
        draws=int(data["draws"]),
        seed=int(data["seed"]),
        label=data["label"],
        components={name: float(x) for name, x in data["components"].items()},
        currency=data.get("currency", ""),
    )


@dataclass(frozen=True)
class GatedRow:
    """A gated metric's gate reading with the metric estimate the decision recorded for it."""

    metric: MetricResult
    estimate: Mapping[str, Any] | None


@dataclass(frozen=True)
class InformationalRow:
    """A metric reported beside the gate, why it is not gated, and its estimate if recorded."""

    metric_id: str
    label: str
    reason: str
    estimate: Mapping[str, Any] | None


@dataclass(frozen=True)
class Plot:
    title: str
    uri: str
    alt: str


@dataclass(frozen=True)
class DecisionDetail:
    decision: Decision
    gate: GateResult
    gated: list[GatedRow]
    informational: list[InformationalRow]
    undetermined: list[GatedRow]
    low_kappa: list[GatedRow]
    value: ValueEstimate | None
    value_provenance: Mapping[str, Any] | None
    value_unavailable: str
    evidence: list[tuple[str, Any]]
    plots: list[Plot]
    classification: Mapping[str, Any] | None = None
    success: Mapping[str, Any] | None = None

    @property
    def confusion_rows(self) -> list[tuple[str, list[int]]]:
        """Return (gold label, counts by given label) rows of the confusion matrix."""
        if self.classification is None:
            return []
        return list(
            zip(self.classification["labels"], self.classification["confusion"], strict=True)
        )

    @property
    def confusion_plot(self) -> Plot | None:
        return next((p for p in self.plots if p.title == CONFUSION_TITLE), None)


CONFUSION_TITLE = "Confusion matrix of the structured judgement"


def decision_detail(*, decision: Decision) -> DecisionDetail:
    """Return everything the decision page shows, read from the decision's stored record.

    One query beyond ``decision`` (the charter's informational metrics with their reasons);
    the plots are drawn from the record on the decision's first view and cached after
    (:func:`decision_plots_of`).
    """
    record = decision.record
    gate = gate_result_from_dict(record["gate"])
    estimates = {estimate["metric_id"]: estimate for estimate in record["estimates"]}
    gated = [GatedRow(metric, estimates.get(metric.id)) for metric in gate.metrics]
    stored_value = record.get("value") or {}
    value = value_estimate_from_dict(stored_value)
    return DecisionDetail(
        decision=decision,
        gate=gate,
        gated=gated,
        informational=_informational(decision, gate, estimates),
        undetermined=[
            row for row in gated if row.metric.status == "Undetermined" and row.metric.eligible
        ],
        low_kappa=[row for row in gated if not row.metric.eligible],
        value=value,
        value_provenance=stored_value.get("provenance"),
        value_unavailable=stored_value.get("unavailable", ""),
        evidence=sorted(decision.evidence.items()),
        plots=decision_plots_of(decision=decision, gate=gate, value=value),
        classification=record.get("classification"),
        success=record.get("success"),
    )


def _informational(
    decision: Decision, gate: GateResult, estimates: Mapping[str, Mapping[str, Any]]
) -> list[InformationalRow]:
    names = catalogue()
    rows = [
        InformationalRow(
            metric.metric_id,
            _label(names, metric.metric_id),
            metric.reason,
            estimates.get(metric.metric_id),
        )
        for metric in CharterMetric.objects.filter(
            charter_id=decision.charter_id, treatment=Treatment.INFORMATIONAL
        ).only("metric_id", "reason")
    ]
    listed = {row.metric_id for row in rows} | {metric.id for metric in gate.metrics}
    rows += [
        InformationalRow(
            metric_id,
            _label(names, metric_id),
            f"not in charter v{decision.charter.version}; reported only",
            estimate,
        )
        for metric_id, estimate in estimates.items()
        if metric_id not in listed
    ]
    return rows


def _label(names: Mapping[str, Any], metric_id: str) -> str:
    return names[metric_id].name if metric_id in names else metric_id


def decision_plots_of(
    *,
    decision: Decision,
    gate: GateResult | None = None,
    value: ValueEstimate | None = None,
) -> list[Plot]:
    """Return the decision's plots, drawn once and then read from the cache by its SHA-256.

    A recorded decision never changes, and its SHA-256 covers the gate result and value
    estimate the plots are drawn from, so its plots never need drawing again
    (:mod:`enterpriseval.plot_cache`). ``gate`` and ``value``, when the caller has read
    them from the record already, save reading them again on a miss.
    """

    def draw() -> list[Plot]:
        record = decision.record
        return decision_plots(
            gate or gate_result_from_dict(record["gate"]),
            value if gate is not None else value_estimate_from_dict(record.get("value")),
            record.get("classification"),
        )

    return list(
        plots_cached(
            kind="decision",
            content_sha256=decision.sha256,
            code=DECISION_PLOT_CODE,
            draw=draw,
        )
    )


def decision_plots(
    gate: GateResult,
    value: ValueEstimate | None,
    classification: Mapping[str, Any] | None = None,
) -> list[Plot]:
    """Return a decision's plots: estimates against θout/θin, ν, EI band, value interval,
    and the confusion matrix of a structured judgement (SPEC §4.1)."""
    plots = [
        Plot(
            "Metric estimates against their thresholds",
            svg_data_uri(threshold_bands_svg(gate)),
            "Each gated metric's estimate and CI against its θout/θin zones",
        ),
        Plot(
            "ν profile",
            svg_data_uri(nu_profile_svg([gate])),
            "Normalised score ν of each gated metric",
        ),
    ]
    if gate.ei is not None:
        plots.append(
            Plot(
                "Efficacy Index and its weight-sensitivity band",
                svg_data_uri(ei_band_svg(gate)),
                "EI and EI_G on the ν scale over the weight-sensitivity band",
            )
        )
    if value is not None:
        plots.append(
            Plot(
                f"Value interval ({value.label})",
                svg_data_uri(value_interval_svg(value)),
                f"V_annual point value and {value.level:.0%} interval, {value.label}",
            )
        )
    if classification is not None:
        plots.append(
            Plot(
                CONFUSION_TITLE,
                svg_data_uri(
                    confusion_matrix_svg(
                        classification["labels"],
                        classification["columns"],
                        classification["confusion"],
                    )
                ),
                "Tasks by gold label (rows) and the label given (columns), unknown last",
            )
        )
    return plots


# The modules that decide how a decision's plots look (this one holds their titles).
DECISION_PLOT_CODE = (gates.plots, gates.plots_decision, sys.modules[__name__])


# --------------------------------------------------------------------------- two decisions


@dataclass(frozen=True)
class MetricPair:
    """One gated metric of the shared charter version, as each decision read it."""

    id: str
    label: str
    direction: str
    theta_out: float
    theta_in: float
    a: MetricResult | None
    b: MetricResult | None


@dataclass(frozen=True)
class DecisionComparison:
    """Two decisions under one charter version, with the harness parity of their σ (SPEC §9).

    ``run_differences`` lists what differs in the evaluation beside σ (task set, split,
    repeats); any of them, like any σ component other than the model, makes the comparison
    not attributable to the model alone.
    """

    a: Decision
    b: Decision
    gate_a: GateResult
    gate_b: GateResult
    metrics: list[MetricPair]
    parity: ParityReport
    run_differences: list[str]
    value_a: ValueEstimate | None
    value_b: ValueEstimate | None

    @property
    def attributable_to_model_alone(self) -> bool:
        return self.parity.attributable_to_model_alone and not self.run_differences

    @property
    def verdict(self) -> str:
        if self.parity.identical and not self.run_differences:
            return IDENTICAL
        return ATTRIBUTABLE if self.attributable_to_model_alone else NOT_ATTRIBUTABLE


def decision_comparison(*, use_case: UseCase, a: int, b: int) -> DecisionComparison:
    """Return decisions ``a`` and ``b`` of ``use_case`` side by side (one query).

    Raises
    ------
    ServiceError
        If either is not a decision of ``use_case``, both are the same decision, or they
        were gated under different charter versions (their thresholds would differ).
    """
    if a == b:
        raise ServiceError("Choose two different decisions to compare.", field="b")
    found = {
        decision.pk: decision
        for decision in _with_relations(Decision.objects.filter(use_case=use_case, pk__in=[a, b]))
    }
    for side, pk in (("a", a), ("b", b)):
        if pk not in found:
            raise ServiceError(
                f"{side.upper()}: there is no decision {pk} in {use_case.key}; a comparison "
                "needs two decisions of the same use case.",
                field=side,
            )
    first, second = found[a], found[b]
    if first.charter_id != second.charter_id:
        raise ServiceError(
            f"Decision {first.pk} was gated under charter v{first.charter.version} and "
            f"decision {second.pk} under charter v{second.charter.version}: decisions compare "
            "only under the same charter version, whose thresholds and weights both met.",
            field="b",
        )
    gate_a = gate_result_from_dict(first.record["gate"])
    gate_b = gate_result_from_dict(second.record["gate"])
    return DecisionComparison(
        a=first,
        b=second,
        gate_a=gate_a,
        gate_b=gate_b,
        metrics=_metric_pairs(gate_a, gate_b),
        parity=configuration_parity(a=first.configuration, b=second.configuration),
        run_differences=_run_differences(first, second),
        value_a=value_estimate_from_dict(first.record.get("value")),
        value_b=value_estimate_from_dict(second.record.get("value")),
    )


def _metric_pairs(gate_a: GateResult, gate_b: GateResult) -> list[MetricPair]:
    by_a = {metric.id: metric for metric in gate_a.metrics}
    by_b = {metric.id: metric for metric in gate_b.metrics}
    ordered = [*by_a, *(metric_id for metric_id in by_b if metric_id not in by_a)]
    pairs = []
    for metric_id in ordered:
        metric = by_a.get(metric_id) or by_b[metric_id]
        pairs.append(
            MetricPair(
                id=metric_id,
                label=metric.label or metric_id,
                direction=metric.direction,
                theta_out=metric.theta_out,
                theta_in=metric.theta_in,
                a=by_a.get(metric_id),
                b=by_b.get(metric_id),
            )
        )
    return pairs


def _run_differences(a: Decision, b: Decision) -> list[str]:
    run_a, run_b = a.run, b.run
    differences = []
    if run_a.task_set_id != run_b.task_set_id:
        differences.append(
            f"task set: {run_a.task_set.name} v{run_a.task_set.version} against "
            f"{run_b.task_set.name} v{run_b.task_set.version}"
        )
    if run_a.split != run_b.split:
        differences.append(f"split: {run_a.split} against {run_b.split}")
    if run_a.repeats != run_b.repeats:
        differences.append(f"repeats K: {run_a.repeats} against {run_b.repeats}")
    success = _success_difference(a.record.get("success"), b.record.get("success"))
    if success:
        differences.append(success)
    return differences


def _success_difference(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> str:
    """Say how task success was determined differently for the two runs (SPEC §4.1), or ""."""
    if a is None or b is None:
        return ""
    words = [
        side["method"] + (f" (undetermined: {side['reason']})" if side.get("reason") else "")
        for side in (a, b)
    ]
    if a["method"] == b["method"] and bool(a.get("reason")) == bool(b.get("reason")):
        return ""
    return (
        f"how task success was determined: A by {words[0]}; B by {words[1]} — pass^k and the "
        "other success metrics do not measure the same thing"
    )


# --------------------------------------------------------------------------- recording one


@dataclass(frozen=True)
class DecisionChoices:
    """What a decision can be recorded on: the use case's own charters, runs and evidence."""

    charters: list[Charter]
    runs: list[Run]
    sessions: list[GradingSession]
    judges: list[Judge]
    studies: list[OversightStudy]


def decision_choices(*, use_case: UseCase) -> DecisionChoices:
    """Return the use case's charter versions, completed runs, sessions, judges and studies.

    Judges are those that scored a run of the use case. Five queries.
    """
    return DecisionChoices(
        charters=list(Charter.objects.filter(use_case=use_case).order_by("-version")),
        runs=list(
            Run.objects.filter(use_case=use_case, status=RunStatus.COMPLETED)
            .select_related("configuration")
            .defer("configuration__canonical_json", "configuration__document")
            .order_by("-pk")
        ),
        sessions=list(GradingSession.objects.filter(use_case=use_case).order_by("-pk")),
        judges=list(
            Judge.objects.filter(
                pk__in=JudgeScore.objects.filter(unit__output__run__use_case=use_case).values(
                    "judge_id"
                )
            ).order_by("name", "version")
        ),
        studies=list(OversightStudy.objects.filter(use_case=use_case).order_by("-pk")),
    )


@dataclass(frozen=True)
class DecisionInputs:
    charter: Charter
    run: Run
    session: GradingSession | None
    judge: Judge | None
    oversight_study: OversightStudy | None
    stress_run: Run | None = None


def decision_inputs(
    *,
    use_case: UseCase,
    charter_version: int,
    run_id: int,
    session_id: str | None = None,
    judge_id: int | None = None,
    study_id: str | None = None,
    stress_run_id: int | None = None,
) -> DecisionInputs:
    """Return the objects a decision request names, or raise a ServiceError naming the field.

    Sessions and studies are named by their public id, charters by version, runs and judges
    by id (the stress-split run too). Runs, sessions, judges and studies are found whatever
    their use case, so that
    :func:`gates.services.decision_create` can say that one belongs to another.
    """
    charter = Charter.objects.filter(use_case=use_case, version=charter_version).first()
    if charter is None:
        raise ServiceError(f"{use_case.key} has no charter v{charter_version}.", field="charter")
    run = Run.objects.select_related("configuration").filter(pk=run_id).first()
    if run is None:
        raise ServiceError(f"No run {run_id}.", field="run")
    session = None
    if session_id:
        session = GradingSession.objects.filter(public_id=session_id).first()
        if session is None:
            raise ServiceError(f"No grading session {session_id!r}.", field="session")
    judge = None
    if judge_id is not None:
        judge = Judge.objects.filter(pk=judge_id).first()
        if judge is None:
            raise ServiceError(f"No judge {judge_id}.", field="judge")
    study = None
    if study_id:
        study = OversightStudy.objects.filter(public_id=study_id).first()
        if study is None:
            raise ServiceError(f"No oversight study {study_id!r}.", field="oversight_study")
    stress_run = None
    if stress_run_id is not None:
        stress_run = Run.objects.select_related("configuration").filter(pk=stress_run_id).first()
        if stress_run is None:
            raise ServiceError(f"No run {stress_run_id}.", field="stress_run")
    return DecisionInputs(charter, run, session, judge, study, stress_run)
