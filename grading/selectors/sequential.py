"""Reads of sequential sessions: the population, the judge's uncertainty, the draws (§5.5).

Management reads only: nothing here reaches a grader's page or API response (graders never
see q, the judge's score or why an output came next).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from audit.canonical import canonical_json, sha256_hex
from charters.models import Charter
from charters.models.charters import Treatment
from enterpriseval.plot_cache import plots_cached
from enterpriseval.plotting import svg_data_uri
from grading import sequence_plot
from grading.models import (
    Assignment,
    AssignmentStatus,
    GradingSession,
    SequentialDraw,
    SessionArtefact,
    StopReason,
    TauRule,
)
from grading.selectors.artefacts import submitted_field_values
from grading.sequential import METRIC_CRITERIA, metric_uncertainty
from runs.models import Judge, JudgeScore, Output, OutputStatus, Run


def population_outputs(*, run: Run) -> list[int]:
    """Return the pks of the run's outputs a sequential session draws from, in pk order.

    The order is the estimators' (``metrics.evidence``): succeeded outputs of the run's split.
    """
    return list(
        Output.objects.filter(run=run, status=OutputStatus.SUCCEEDED, task__split=run.split)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def judge_choices(*, runs: object) -> object:
    """Return the judges that scored any of ``runs`` (a queryset of runs), by name."""
    return Judge.objects.filter(scores__unit__output__run__in=runs).distinct().order_by("name")


def sequential_metrics(*, charter: Charter) -> list[str]:
    """Return the gated metrics a sequential session decides, in charter order."""
    return [
        metric_id
        for metric_id in charter.metrics.filter(treatment=Treatment.GATED)
        .order_by("position", "pk")
        .values_list("metric_id", flat=True)
        if metric_id in METRIC_CRITERIA
    ]


def judge_uncertainty(
    *, judge: Judge, outputs: list[int], metrics: list[str]
) -> dict[str, np.ndarray]:
    """Return u_ij (``grading.sequential.metric_uncertainty``) of each metric for each output.

    One query per metric.
    """
    position = {pk: i for i, pk in enumerate(outputs)}
    result: dict[str, np.ndarray] = {}
    for metric_id in metrics:
        rows = list(
            JudgeScore.objects.filter(
                judge=judge,
                unit__output_id__in=outputs,
                criterion__in=METRIC_CRITERIA[metric_id],
            ).values_list("unit__output_id", "unit_id", "score")
        )
        units = len({unit for _output, unit, _score in rows})
        if not rows or not units:
            result[metric_id] = np.zeros(len(outputs))
            continue
        result[metric_id] = metric_uncertainty(
            output_index=[position[output] for output, _unit, _score in rows],
            scores=[score for _output, _unit, score in rows],
            units_per_output=units / len(outputs),
            n_outputs=len(outputs),
        )
    return result


@dataclass(frozen=True, slots=True)
class DrawState:
    """One draw and whether its output's value is final (every grade in, nothing disputed)."""

    index: int
    artefact_id: int
    output_id: int
    q: float
    remaining: int
    final: bool
    tau: float | None = None  # τ_t of q_t; None on draws recorded before τ_t was


def draw_states(*, session: GradingSession, known_final: int = 0) -> list[DrawState]:
    """Return the session's draws in draw order with their finality (five queries).

    ``known_final``: the first draws known to be final (the prefix last evaluated) are taken
    as final without reading their grades again, so the check after each grade costs the
    draws still open, not all of them. The evaluation itself reads every draw.
    """
    draws = list(
        SequentialDraw.objects.filter(session=session).select_related("artefact").order_by("index")
    )
    artefacts = [draw.artefact for draw in draws if draw.index > known_final]
    pending: set[int] = set()
    for value in submitted_field_values(artefacts):
        if value.pending:
            pending.add(value.artefact_id)
    complete: dict[int, bool] = defaultdict(lambda: True)
    for artefact_id, status in Assignment.objects.filter(
        artefact_id__in=[a.pk for a in artefacts]
    ).values_list("artefact_id", "status"):
        complete[artefact_id] &= status == AssignmentStatus.SUBMITTED
    return [
        DrawState(
            index=draw.index,
            artefact_id=draw.artefact_id,
            output_id=draw.artefact.output_id or 0,
            q=draw.q,
            remaining=draw.remaining,
            final=draw.index <= known_final
            or (complete[draw.artefact_id] and draw.artefact_id not in pending),
            tau=draw.tau,
        )
        for draw in draws
    ]


def draw_is_final(*, artefact: SessionArtefact) -> bool:
    """Return whether ``artefact`` is a draw whose value is final (at most five queries)."""
    if not SequentialDraw.objects.filter(artefact=artefact).exists():
        return False
    statuses = set(Assignment.objects.filter(artefact=artefact).values_list("status", flat=True))
    if statuses != {AssignmentStatus.SUBMITTED}:
        return False
    return not any(value.pending for value in submitted_field_values([artefact]))


def final_prefix(states: list[DrawState]) -> int:
    """Return how many draws, from the first, have final values (the prefix §5.5 reads)."""
    for n, state in enumerate(states):
        if not state.final:
            return n
    return len(states)


@dataclass(frozen=True, slots=True)
class SequencePlot:
    """One gated metric's sequence on the session page: its plot and where it stands."""

    metric_id: str
    svg_uri: str
    status: str
    grades: int
    lower: float
    upper: float
    expected_more: int | None


@dataclass(frozen=True, slots=True)
class SequenceSummary:
    """What the session page says of a sequential session (owners and reviewers only)."""

    grades_used: int
    drawn: int
    tau_rule: str
    tau_latest: float | None
    stopped: bool
    reason: str
    undecided_at_budget: bool
    plots: list[SequencePlot]


def sequence_plots(*, session: GradingSession) -> SequenceSummary | None:
    """Return the sequences of a sequential session, plotted (cached by their content)."""
    if not session.is_sequential:
        return None
    state = session.stop or session.sequence or {}
    metrics = {m: e for m, e in (state.get("metrics") or {}).items() if e.get("lower")}

    def draw() -> dict[str, str]:
        return {m: sequence_plot.sequence_svg(m, e) for m, e in metrics.items()}

    svgs = (
        plots_cached(
            kind="sequence",
            content_sha256=sha256_hex(canonical_json(metrics)),
            code=[sequence_plot],
            draw=draw,
        )
        if metrics
        else {}
    )
    plots = [
        SequencePlot(
            metric_id=m,
            svg_uri=svg_data_uri(svgs[m]),
            status=(e.get("status") or "undecided").capitalize(),
            grades=len(e["lower"]),
            lower=e["lower"][-1],
            upper=e["upper"][-1],
            expected_more=e.get("expected_more"),
        )
        for m, e in metrics.items()
    ]
    reason = session.stop.get("reason", "") if session.stop else ""
    latest = session.draws.order_by("-index").values_list("tau", flat=True).first()
    return SequenceSummary(
        grades_used=int(state.get("grades_used") or 0),
        drawn=session.draws.count(),
        tau_rule=TauRule(session.tau_rule).label,
        tau_latest=session.tau if latest is None else latest,
        stopped=bool(session.stop),
        reason=StopReason(reason).label if reason else "",
        undecided_at_budget=bool(state.get("undecided_at_budget")),
        plots=plots,
    )
