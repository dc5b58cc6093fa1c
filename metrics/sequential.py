"""Each gated metric's confidence sequence in a sequential session, and the stopping rule (§5.5).

After every final value the session's draws are read in draw order; the prefix whose values
are all final (both graders agree, or adjudicated) feeds, per gated unit-level metric, the
inverse-probability-weighted PPI increments and their betting confidence sequence
(:mod:`enterpriseval.stats.sequential` through :mod:`grading.sequential`). A metric is settled
when :func:`~grading.sequential.settle` decides its status; the session stops when every gated
metric is settled, when any is settled Reject, at the budget ("undecided at budget", with the
outputs still expected to be needed), or when every output has been drawn.

Error split: the side of a metric that would wrongly Scale it gets α/2 (the conjunctive gate
is an intersection–union test, SPEC §5.3), the side that would wrongly Reject it α/(2J) over
the J gated metrics, so no Reject of the whole system is wrong more than α/2 of the time.

Per-output values are the estimators' own (``metrics.evidence``): a pooled share with a known
denominator is the mean of num_i/d̄ (d̄ the mean denominator over all N outputs, known without
grading), bounded by max d_i/d̄; a mean of shares is the mean of num_i/d_i over outputs with a
unit; a pooled share with a graded denominator is a ratio, handled by the core's
``ratio_sequence``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from django.contrib.auth.models import AbstractBaseUser

from charters.catalogue import catalogue_metric
from charters.models import Charter
from grading.models import GradingSession, SessionStatus, StopReason, TauRule
from grading.selectors.sequential import DrawState, draw_states, final_prefix, sequential_metrics
from grading.sequential import (
    SequencePath,
    expected_more,
    mean_sequence,
    ratio_sequence,
    settle,
)
from grading.services.sequential import DEFAULT_TAU, session_sequence_record, session_stop
from metrics.estimate import MetricEstimate
from metrics.evidence import unit_metrics_evidence
from metrics.unit_estimators import OutputUnits, unit_metric

#: Status words settle() returns, as the gate spells them.
STATUS_WORDS = {"scale": "Scale", "conditional": "Conditional", "reject": "Reject"}
PERCENT = 100.0


@dataclass(frozen=True)
class SequentialState:
    """The session's sequences over the final prefix and whether (and why) it stops."""

    payload: dict[str, Any]
    reason: StopReason | None


def _direction(metric_id: str) -> int:
    return 1 if catalogue_metric(metric_id).direction == "higher" else -1


def _path(
    units: OutputUnits,
    metric_id: str,
    order: np.ndarray,
    q: np.ndarray,
    *,
    alpha_lower: float,
    alpha_upper: float,
    tau: np.ndarray,
    tau_floor: float | None,
    thresholds: tuple[float, float],
) -> tuple[SequencePath, float]:
    """Return the metric's sequence on the core's scale and the factor to the metric's share.

    Without judge scores for the metric the judge's value is taken as 0: the increments are
    then plain Horvitz–Thompson ones, as valid (only the draw is random), less efficient.
    ``tau`` holds each draw's τ_t. With ``tau_floor`` (an adaptive share) the path carries
    the share the next draw asks for, over the cells of the ``thresholds`` (as shares of 1,
    taken to the core's scale here).
    """
    shares = np.asarray(thresholds, dtype=np.float64)
    spec = unit_metric(metric_id)
    size = units.output_id.size
    f_num = np.zeros(size) if units.f_num is None else np.asarray(units.f_num, dtype=np.float64)
    h_num = np.asarray(units.h_num, dtype=np.float64)[order]
    if spec.denominator == "graded":
        assert units.h_den is not None
        f_den = np.zeros(size) if units.f_den is None else np.asarray(units.f_den, dtype=float)
        h_den = np.asarray(units.h_den, dtype=np.float64)[order]
        largest = max(float(np.max(f_num, initial=0)), float(np.max(f_den, initial=0)))
        largest = max(largest, float(np.max(h_num, initial=0)), float(np.max(h_den, initial=0)))
        path = ratio_sequence(
            f_num,
            f_den,
            order,
            q,
            h_num,
            h_den,
            alpha_lower=alpha_lower,
            alpha_upper=alpha_upper,
            scale=max(largest, 1.0),
            tau=tau,
            tau_floor=tau_floor,
            tau_at=shares,
        )
        return path, 1.0
    d = np.asarray(units.d, dtype=np.float64)
    if spec.mean_of_shares:
        # Mean over the outputs holding a unit of num_i/d_i = (N/N₊)·mean over all N outputs
        # of share_i (0 where d_i = 0).
        has = d > 0
        lift = size / max(int(has.sum()), 1)
        share_f = np.divide(f_num, d, out=np.zeros_like(d), where=has)
        share_y = np.divide(h_num, d[order], out=np.zeros(order.size), where=has[order])
        path = mean_sequence(
            share_f,
            order,
            q,
            share_y,
            alpha_lower=alpha_lower,
            alpha_upper=alpha_upper,
            tau=tau,
            tau_floor=tau_floor,
            tau_at=shares / lift,
        )
        return path, lift
    # SPEC §5.2: Σ num_i / Σ d_i = mean(num_i / max d) · max d / d̄, d known for every output
    # (the core's advice for a known denominator).
    largest = float(d.max())
    factor = largest / float(d.mean())
    path = mean_sequence(
        f_num / largest,
        order,
        q,
        h_num / largest,
        alpha_lower=alpha_lower,
        alpha_upper=alpha_upper,
        tau=tau,
        tau_floor=tau_floor,
        tau_at=shares / factor,
    )
    return path, factor


def _scaled(path: SequencePath, factor: float, percent: float) -> SequencePath:
    """Return the path on the metric's scale: a share, clipped to [0, 1] (it is one), × 100."""

    def share(values: Any) -> np.ndarray:
        return np.clip(np.asarray(values, dtype=np.float64) * factor, 0.0, 1.0) * percent

    return SequencePath(
        estimate=share(path.estimate),
        lower=share(path.lower),
        upper=share(path.upper),
        n_total=path.n_total,
        alpha_lower=path.alpha_lower,
        alpha_upper=path.alpha_upper,
        tau_next=path.tau_next,
    )


def sequential_state(*, session: GradingSession, closing: bool = False) -> SequentialState:
    """Return each gated metric's sequence over the session's final prefix, and the stop.

    ``closing``: the owner closes the session now; it stops whatever the sequences read.
    """
    charter: Charter = session.charter
    run = session.runs.get()
    metrics = sequential_metrics(charter=charter)
    thresholds = {
        m.metric_id: m for m in charter.metrics.filter(metric_id__in=metrics).order_by("position")
    }
    states: list[DrawState] = draw_states(session=session)
    used = final_prefix(states)
    alpha = 1.0 - charter.confidence
    count = max(len(metrics), 1)
    floor = DEFAULT_TAU if session.tau is None else float(session.tau)
    adaptive = session.tau_rule == TauRule.ADAPTIVE
    # Each draw's own τ_t (draws recorded before τ_t was are the session's fixed τ).
    taus = [floor if s.tau is None else float(s.tau) for s in states[:used]]
    payload: dict[str, Any] = {
        "mode": "sequential",
        "grades_used": used,
        "drawn": len(states),
        "budget": session.budget,
        "population": session.population_size,
        "alpha": alpha,
        "tau_rule": session.tau_rule,
        "taus": taus,
        "metrics": {},
        "settled": {},
        "statuses": {},
    }
    asked: list[float] = []
    reasons: list[StopReason] = []
    evidence = (
        unit_metrics_evidence(metric_ids=metrics, run=run, session=session, judge=session.judge)
        if used
        else {}
    )
    for metric_id in metrics:
        metric = thresholds[metric_id]
        direction = _direction(metric_id)
        # The unsafe (Scale) side gets α/2; the Reject side α/(2J) (module docstring).
        scale_side, reject_side = alpha / 2.0, alpha / (2.0 * count)
        alpha_lower, alpha_upper = (
            (scale_side, reject_side) if direction > 0 else (reject_side, scale_side)
        )
        entry: dict[str, Any] = {
            "theta_out": metric.theta_out,
            "theta_in": metric.theta_in,
            "direction": direction,
            "alpha_lower": alpha_lower,
            "alpha_upper": alpha_upper,
            "estimate": [],
            "lower": [],
            "upper": [],
            "status": None,
            "expected_more": None,
        }
        payload["metrics"][metric_id] = entry
        if used == 0:
            continue
        units = evidence[metric_id].units
        position = {int(pk): i for i, pk in enumerate(units.output_id)}
        order = np.array([position[s.output_id] for s in states[:used]], dtype=np.intp)
        q = np.array([s.q for s in states[:used]], dtype=np.float64)
        percent = PERCENT if catalogue_metric(metric_id).scale == "percent" else 1.0
        raw, factor = _path(
            units,
            metric_id,
            order,
            q,
            alpha_lower=alpha_lower,
            alpha_upper=alpha_upper,
            tau=np.array(taus, dtype=np.float64),
            tau_floor=floor if adaptive else None,
            thresholds=(metric.theta_out / percent, metric.theta_in / percent),
        )
        path = _scaled(raw, factor, percent)
        lower, upper, estimate = path.lower, path.upper, path.estimate
        status = settle(
            float(lower[-1]),
            float(upper[-1]),
            float(metric.theta_out),
            float(metric.theta_in),
            direction,
        )
        entry.update(
            estimate=[round(float(v), 6) for v in estimate],
            lower=[round(float(v), 6) for v in lower],
            upper=[round(float(v), 6) for v in upper],
            status=status,
        )
        if status is None and raw.tau_next is not None:
            entry["tau_asked"] = raw.tau_next
            asked.append(raw.tau_next)
        if status is None:
            entry["expected_more"] = int(
                expected_more(
                    path,
                    float(metric.theta_out),
                    float(metric.theta_in),
                    direction,
                    session.population_size,
                )
            )
        else:
            payload["settled"][metric_id] = status
            payload["statuses"][metric_id] = STATUS_WORDS[status]
    if adaptive and used:
        # The share the next draw asks for: the largest over the metrics still undecided
        # (the floor when none is betting), from the final prefix only (predictable).
        payload["tau_next"] = max(asked, default=floor)
    settled = payload["settled"]
    if "reject" in settled.values():
        reasons.append(StopReason.REJECT)
    elif metrics and len(settled) == len(metrics):
        reasons.append(StopReason.DECIDED)
    elif session.budget is not None and used >= session.budget:
        reasons.append(StopReason.BUDGET)
    elif used >= session.population_size:
        reasons.append(StopReason.EXHAUSTED)
    if closing:
        reasons.append(StopReason.CLOSED)
    reason = reasons[0] if reasons else None
    payload["undecided_at_budget"] = reason in (
        StopReason.BUDGET,
        StopReason.EXHAUSTED,
        StopReason.CLOSED,
    ) and (len(settled) < len(metrics))
    return SequentialState(payload, reason)


def sequential_evaluate(
    actor: AbstractBaseUser, session: GradingSession, closing: bool = False
) -> None:
    """Evaluate the session's sequences, keep them for its page, and stop it when decided.

    Registered with ``grading.services.sequential`` (``metrics.apps``): called after every
    final value of a sequential session, and with ``closing`` when its owner closes it.
    """
    fresh = GradingSession.objects.select_related("charter", "judge").get(pk=session.pk)
    if not fresh.is_sequential or fresh.status != SessionStatus.OPEN:
        return
    evaluated = (fresh.sequence or {}).get("grades_used")
    known = evaluated or 0
    if not closing and evaluated == final_prefix(draw_states(session=fresh, known_final=known)):
        return  # no new final value in the prefix: the sequences have not moved
    state = sequential_state(session=fresh, closing=closing)
    session_sequence_record(session=fresh, sequence=state.payload)
    if state.reason is not None:
        session_stop(actor=actor, session=fresh, reason=state.reason, record=state.payload)


def sequential_estimates(
    *, session: GradingSession, estimates: dict[str, MetricEstimate]
) -> dict[str, MetricEstimate]:
    """Return ``estimates`` with each gated metric's value replaced by its sequence at the stop.

    The interval is the confidence sequence's at the stopping time (valid at any stopping
    time, SPEC §5.5), the point its running estimate; κ and the agreement note stay as the
    uniform sub-sample gave them.
    """
    stop = session.stop or {}
    used = int(stop.get("grades_used") or 0)
    result = dict(estimates)
    for metric_id, entry in (stop.get("metrics") or {}).items():
        if metric_id not in result:
            continue
        if not entry.get("lower"):
            # The sample is the draws: outputs graded outside them (the agreement
            # sub-sample) never stand in for a sequence.
            result[metric_id] = replace(
                result[metric_id],
                point=None,
                lo=None,
                hi=None,
                reason="the sequential session stopped before any draw had a final value",
            )
            continue
        share = f"τ = {session.tau}"
        if session.tau_rule == TauRule.ADAPTIVE:
            taus = stop.get("taus") or [session.tau]
            share = f"adaptive τ_t from the floor {session.tau} to {taus[-1]:.3g}"
        note = (
            f"sequential session: {used} graded output(s) drawn by the judge's uncertainty "
            f"({share}); stopped: {StopReason(stop['reason']).label}"
        )
        if entry.get("status") is None and entry.get("expected_more") is not None:
            note += f"; undecided at budget: grade about {entry['expected_more']} more outputs"
        result[metric_id] = replace(
            result[metric_id],
            point=entry["estimate"][-1],
            lo=entry["lower"][-1],
            hi=entry["upper"][-1],
            n_clusters=used,
            mode="PPI",
            estimator=(
                f"betting confidence sequence on IPW PPI increments, {used} sequential draws "
                "(Waudby-Smith & Ramdas 2024; SPEC §5.5)"
            ),
            human_only=None,
            reason="",
            notes=(*result[metric_id].notes, note),
        )
    return result
