"""Two-tier gate, normalised scores and Efficacy Index (SPEC §6.1–6.2; seed 003 Eq. 9).

Pure computation: numpy only, no Django import. The entry point is :func:`gate_evaluate`,
which validates a :class:`GateInput` and returns a :class:`GateResult` that the CLI, the
scorecard and the PDF render as they are.

Conventions
-----------
- ``direction`` is ``"higher"`` (d = +1) or ``"lower"`` (d = −1); every threshold
  comparison is strict, so a value equal to a threshold does not pass it.
- Charter weights are normalised to sum to 1 before use.
- An alternative weighting may name only some metrics: the metrics it does not name share
  the remaining mass ``1 − Σ named`` equally; when it names every metric its weights are
  normalised to sum to 1. Alternative weights are on the normalised scale, so the named
  weights may not sum to more than 1 (see :func:`resolve_alternative_weights`).
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from charters.catalogue import threshold_pair_fault
from enterpriseval.stats import outputs_to_clear
from enterpriseval.values import finite_number, number_text, type_name
from grading.agreement import below_text, threshold_text
from metrics.estimate import MIN_OUTPUTS_FOR_PPI_GATE

Status = Literal["Scale", "Conditional", "Reject", "Undetermined"]
Mode = Literal["conservative", "point"]

DIRECTIONS: tuple[str, ...] = ("higher", "lower")
GRADINGS: tuple[str, ...] = ("H", "J", "PPI", "A")
#: Gradings whose estimate rests on human labels: the agreement rule applies (SPEC §5.1).
HUMAN_LABELLED: tuple[str, ...] = ("H", "PPI")
MODES: tuple[str, ...] = ("conservative", "point")

# Gate statuses in order of severity; the decision is the most severe one (SPEC §6.1).
_SEVERITY: tuple[Status, ...] = ("Scale", "Conditional", "Reject")
# Tolerance for "alternative weights sum to more than 1", so that 0.1 + 0.2 + 0.7 passes.
_SUM_TOLERANCE = 1e-9

_METRIC_FIELDS: tuple[str, ...] = (
    "id",
    "direction",
    "theta_out",
    "theta_in",
    "weight",
    "estimate",
    "ci",
    "grading",
    "kappa",
    "n",
    "n_outputs",
    "label",
)
_REQUIRED_METRIC_FIELDS: tuple[str, ...] = ("id", "direction", "theta_out", "theta_in", "weight")
_TOP_FIELDS: tuple[str, ...] = (
    "metrics",
    "nu_max",
    "kappa_min",
    "alternative_weights",
    "confidence",
)
#: The chance that the bound clears a threshold after "grade about N more outputs", if the
#: estimate holds (SPEC §5.3).
PLANNING_POWER = 0.8


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class MetricInput:
    """One gated metric: its charter thresholds and weight, and its measured value."""

    id: str
    direction: Literal["higher", "lower"]
    theta_out: float
    theta_in: float
    weight: float
    estimate: float | None = None
    ci: tuple[float, float] | None = None
    grading: str | None = None  # H | J | PPI | A
    kappa: float | None = None
    n: int | None = None
    label: str | None = None
    n_outputs: int | None = None  # the graded outputs the n units sit in (n / n_outputs per output)
    # The charter's agreement rule evaluated on the session (``Eligibility.to_dict()``):
    # eligible, reason, rule, threshold and the figures per criterion. When absent, a metric
    # with human labels (H or PPI) is checked as κ against ``kappa_min``.
    agreement: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class GateInput:
    """The gated metrics of a charter with the gate's parameters."""

    metrics: tuple[MetricInput, ...]
    nu_max: float = 3.0
    kappa_min: float = 0.6
    alternative_weights: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    confidence: float = 0.95  # two-sided level of the metrics' intervals (the charter's)


class GateInputError(ValueError):
    """A gate input that cannot be evaluated, with the field at fault and what was expected."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


# --------------------------------------------------------------------------- outputs


@dataclass(frozen=True)
class MetricResult:
    """The gate's reading of one metric; ``weight`` is the normalised charter weight."""

    id: str
    status: Status
    value_used: float | None
    nu: float | None
    weight: float
    direction: str
    theta_out: float
    theta_in: float
    estimate: float | None
    ci: tuple[float, float] | None
    grading: str | None
    kappa: float | None
    n: int | None
    label: str | None
    eligible: bool = True
    agreement: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the result as a JSON-ready dict."""
        return {
            "eligible": self.eligible,
            "agreement": None if self.agreement is None else dict(self.agreement),
            "id": self.id,
            "status": self.status,
            "value_used": self.value_used,
            "nu": self.nu,
            "weight": self.weight,
            "direction": self.direction,
            "theta_out": self.theta_out,
            "theta_in": self.theta_in,
            "estimate": self.estimate,
            "ci": None if self.ci is None else [self.ci[0], self.ci[1]],
            "grading": self.grading,
            "kappa": self.kappa,
            "n": self.n,
            "label": self.label,
        }


@dataclass(frozen=True)
class Recommendation:
    """How many more outputs to grade so a metric's conservative bound can clear a threshold.

    ``additional_n`` counts the metric's units (as ``n`` does), ``additional_outputs`` the
    outputs that hold them, when the number of graded outputs is known.
    """

    metric_id: str
    threshold: Literal["theta_in", "theta_out"]
    additional_n: int | None
    message: str
    additional_outputs: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the recommendation as a JSON-ready dict."""
        return {
            "metric_id": self.metric_id,
            "threshold": self.threshold,
            "additional_n": self.additional_n,
            "additional_outputs": self.additional_outputs,
            "message": self.message,
        }


@dataclass(frozen=True)
class GateResult:
    """The gate decision with the per-metric readings, EI, EI_G, band and reasons."""

    decision: Status
    binding_metric: str | None
    mode: Mode
    metrics: tuple[MetricResult, ...]
    ei: float | None
    ei_g: float | None
    ei_band: tuple[float, float] | None
    reasons: tuple[str, ...]
    recommendations: tuple[Recommendation, ...]
    nu_max: float

    def to_dict(self) -> dict[str, Any]:
        """Return the result as a JSON-ready dict (tuples become lists)."""
        return {
            "decision": self.decision,
            "binding_metric": self.binding_metric,
            "mode": self.mode,
            "metrics": [metric.to_dict() for metric in self.metrics],
            "ei": self.ei,
            "ei_g": self.ei_g,
            "ei_band": None if self.ei_band is None else [self.ei_band[0], self.ei_band[1]],
            "reasons": list(self.reasons),
            "recommendations": [rec.to_dict() for rec in self.recommendations],
            "nu_max": self.nu_max,
        }


# --------------------------------------------------------------------------- parsing


def parse_gate_input(data: Any) -> GateInput:
    """Return the :class:`GateInput` described by a dict loaded from YAML or JSON.

    Expected shape::

        metrics:                      # list, at least one gated metric
          - id: guidance_recall       # required
            direction: higher         # required: higher | lower
            theta_out: 75             # required
            theta_in: 80              # required
            weight: 1                 # required; weights are normalised to sum to 1
            estimate: 80              # optional; absent → the metric is Undetermined
            ci: [72.5, 86.1]          # optional [lower, upper]; required in conservative mode
            grading: H                # optional: H | J | PPI | A
            kappa: 0.71               # optional
            n: 120                    # optional: graded units
            label: Guidance recall    # optional display name
        nu_max: 3                     # optional, default 3
        kappa_min: 0.6                # optional, default 0.6
        confidence: 0.95              # optional, default 0.95: the intervals' level
        alternative_weights:          # optional: name → {metric id: weight}
          fidelity_heavy: {hallucination_rate: 0.30, citation_precision_lenient: 0.25}

    This checks structure and types only; :func:`validate_gate_input` checks the values.

    Raises
    ------
    GateInputError
        With ``field`` set to the path at fault (``metrics[2].theta_in``,
        ``alternative_weights.fidelity_heavy.hallucination_rate``) and a message saying
        what was expected.
    """
    if not isinstance(data, Mapping):
        raise GateInputError(
            "input", f"expected a mapping with a 'metrics' list, got {_type_name(data)}"
        )
    _reject_unknown_fields(data, _TOP_FIELDS, prefix="")
    if "metrics" not in data:
        raise GateInputError("metrics", "is required: a list of gated metrics")
    raw_metrics = data["metrics"]
    if not isinstance(raw_metrics, list | tuple):
        raise GateInputError(
            "metrics", f"expected a list of gated metrics, got {_type_name(raw_metrics)}"
        )
    if not raw_metrics:
        raise GateInputError("metrics", "expected at least one gated metric, got an empty list")
    metrics = tuple(
        _parse_metric(raw, f"metrics[{index}]") for index, raw in enumerate(raw_metrics)
    )

    kwargs: dict[str, Any] = {}
    if data.get("nu_max") is not None:
        kwargs["nu_max"] = _number(data["nu_max"], "nu_max")
    if data.get("kappa_min") is not None:
        kwargs["kappa_min"] = _number(data["kappa_min"], "kappa_min")
    if data.get("alternative_weights") is not None:
        kwargs["alternative_weights"] = _parse_alternatives(data["alternative_weights"])
    if data.get("confidence") is not None:
        confidence = _number(data["confidence"], "confidence")
        if not 0.0 < confidence < 1.0:
            raise GateInputError("confidence", f"expected a level in (0, 1), got {confidence!r}")
        kwargs["confidence"] = confidence
    return GateInput(metrics=metrics, **kwargs)


def _parse_metric(raw: Any, path: str) -> MetricInput:
    if not isinstance(raw, Mapping):
        raise GateInputError(
            path,
            f"expected a mapping with {', '.join(_REQUIRED_METRIC_FIELDS)}, got {_type_name(raw)}",
        )
    _reject_unknown_fields(raw, _METRIC_FIELDS, prefix=f"{path}.")
    for name in _REQUIRED_METRIC_FIELDS:
        if raw.get(name) is None:
            raise GateInputError(f"{path}.{name}", "is required")
    metric_id = _string(raw["id"], f"{path}.id")
    direction = _string(raw["direction"], f"{path}.direction")
    if direction not in DIRECTIONS:
        raise GateInputError(
            f"{path}.direction", f"expected 'higher' or 'lower', got {direction!r}"
        )
    grading = None
    if raw.get("grading") is not None:
        grading = _string(raw["grading"], f"{path}.grading")
        if grading not in GRADINGS:
            raise GateInputError(
                f"{path}.grading", f"expected one of {', '.join(GRADINGS)}, got {grading!r}"
            )
    return MetricInput(
        id=metric_id,
        direction="higher" if direction == "higher" else "lower",
        theta_out=_number(raw["theta_out"], f"{path}.theta_out"),
        theta_in=_number(raw["theta_in"], f"{path}.theta_in"),
        weight=_number(raw["weight"], f"{path}.weight"),
        estimate=_optional(raw, "estimate", path, _number),
        ci=_optional(raw, "ci", path, _interval),
        grading=grading,
        kappa=_optional(raw, "kappa", path, _number),
        n=_optional(raw, "n", path, _count),
        label=_optional(raw, "label", path, _string),
        n_outputs=_optional(raw, "n_outputs", path, _count),
    )


def _parse_alternatives(raw: Any) -> dict[str, dict[str, float]]:
    if not isinstance(raw, Mapping):
        raise GateInputError(
            "alternative_weights",
            f"expected a mapping of weighting name → {{metric id: weight}}, got {_type_name(raw)}",
        )
    alternatives: dict[str, dict[str, float]] = {}
    for name, weights in raw.items():
        path = f"alternative_weights.{name}"
        if not isinstance(name, str) or not name:
            raise GateInputError(path, "expected a non-empty text name for the weighting")
        if not isinstance(weights, Mapping):
            raise GateInputError(
                path, f"expected a mapping of metric id → weight, got {_type_name(weights)}"
            )
        parsed: dict[str, float] = {}
        for metric_id, weight in weights.items():
            if not isinstance(metric_id, str) or not metric_id:
                raise GateInputError(f"{path}.{metric_id}", "expected a metric id (text)")
            parsed[metric_id] = _number(weight, f"{path}.{metric_id}")
        alternatives[name] = parsed
    return alternatives


def _reject_unknown_fields(raw: Mapping[Any, Any], known: Sequence[str], *, prefix: str) -> None:
    for key in raw:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise GateInputError(
                f"{prefix}{key}", f"unknown field; expected one of {', '.join(known)}{hint}"
            )


def _optional(raw: Mapping[str, Any], name: str, path: str, parse: Any) -> Any:
    value = raw.get(name)
    return None if value is None else parse(value, f"{path}.{name}")


def _number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GateInputError(path, f"expected a number, got {value!r}")
    number = finite_number(value)
    if number is None:
        raise GateInputError(path, f"expected a finite number, got {value!r}")
    return number


def _count(value: Any, path: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GateInputError(path, f"expected a whole number of units ≥ 0, got {value!r}")
    return value


def _string(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GateInputError(path, f"expected non-empty text, got {value!r}")
    return value


def _interval(value: Any, path: str) -> tuple[float, float]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise GateInputError(path, f"expected [lower, upper], two numbers, got {value!r}")
    return (_number(value[0], f"{path}[0]"), _number(value[1], f"{path}[1]"))


def _type_name(value: Any) -> str:
    return type_name(value, style="python")


# --------------------------------------------------------------------------- validation


def validate_gate_input(gate_input: GateInput, *, mode: Mode) -> None:
    """Check that ``gate_input`` can be evaluated in ``mode``; raise :class:`GateInputError`.

    Checks: mode; ``nu_max > 0``; ``kappa_min`` in [−1, 1]; at least one metric; unique ids;
    known direction and grading; finite thresholds with d(θin − θout) > 0 (SPEC §6.1: an equal
    or inverted pair is an error naming the metric); non-negative weights with a positive sum;
    an interval with lower ≤ upper that contains the estimate, and an interval for every
    estimated metric in conservative mode; κ in [−1, 1]; alternative weights that name known
    metrics, are non-negative and sum to at most 1.
    """
    if mode not in MODES:
        raise GateInputError("mode", f"expected 'conservative' or 'point', got {mode!r}")
    if not _finite(gate_input.nu_max) or gate_input.nu_max <= 0:
        raise GateInputError(
            "nu_max", f"expected a positive number (default 3), got {gate_input.nu_max!r}"
        )
    if not _finite(gate_input.kappa_min) or not -1.0 <= gate_input.kappa_min <= 1.0:
        raise GateInputError(
            "kappa_min",
            f"expected a κ target in [-1, 1] (default 0.6), got {gate_input.kappa_min!r}",
        )
    if not gate_input.metrics:
        raise GateInputError("metrics", "expected at least one gated metric")
    seen: set[str] = set()
    for metric in gate_input.metrics:
        if metric.id in seen:
            raise GateInputError(
                f"metrics[{metric.id}]", f"duplicate metric id {metric.id!r}; ids must be unique"
            )
        seen.add(metric.id)
        _validate_metric(metric, mode=mode)
    total = math.fsum(metric.weight for metric in gate_input.metrics)
    if total <= 0:
        raise GateInputError(
            "metrics[*].weight",
            "weights sum to 0; at least one gated metric needs a positive weight",
        )
    _validate_alternatives(gate_input)


def _validate_metric(metric: MetricInput, *, mode: Mode) -> None:
    if not isinstance(metric.id, str) or not metric.id.strip():
        raise GateInputError("metrics[]", f"expected a non-empty metric id, got {metric.id!r}")
    path = f"metrics[{metric.id}]"
    if metric.direction not in DIRECTIONS:
        raise GateInputError(
            f"{path}.direction", f"expected 'higher' or 'lower', got {metric.direction!r}"
        )
    for name in ("theta_out", "theta_in", "weight"):
        if not _finite(getattr(metric, name)):
            raise GateInputError(
                f"{path}.{name}", f"expected a finite number, got {getattr(metric, name)!r}"
            )
    fault = threshold_pair_fault(
        direction=metric.direction, theta_out=metric.theta_out, theta_in=metric.theta_in
    )
    if fault is not None:  # an equal pair is reported as inverted too
        relation = "above" if metric.direction == "higher" else "below"
        raise GateInputError(
            path,
            f"inverted pair for {metric.id}: {metric.direction} is better, so θin must be "
            f"strictly {relation} θout, but θout = {_fmt(metric.theta_out)} and "
            f"θin = {_fmt(metric.theta_in)}",
        )
    if metric.weight < 0:
        raise GateInputError(
            f"{path}.weight", f"expected a non-negative weight, got {_fmt(metric.weight)}"
        )
    if metric.estimate is not None and not _finite(metric.estimate):
        raise GateInputError(
            f"{path}.estimate", f"expected a finite number, got {metric.estimate!r}"
        )
    if metric.ci is not None:
        _validate_interval(metric, path)
    elif mode == "conservative" and metric.estimate is not None:
        raise GateInputError(
            f"{path}.ci",
            "a confidence interval is required in conservative mode (the gate uses its "
            "conservative bound); give ci: [lower, upper] or evaluate in point mode",
        )
    if metric.grading is not None and metric.grading not in GRADINGS:
        raise GateInputError(
            f"{path}.grading", f"expected one of {', '.join(GRADINGS)}, got {metric.grading!r}"
        )
    if metric.kappa is not None and (not _finite(metric.kappa) or not -1 <= metric.kappa <= 1):
        raise GateInputError(f"{path}.kappa", f"expected κ in [-1, 1], got {metric.kappa!r}")
    if metric.n is not None and (
        isinstance(metric.n, bool) or not isinstance(metric.n, numbers.Integral) or metric.n < 0
    ):
        raise GateInputError(f"{path}.n", f"expected a whole number of units ≥ 0, got {metric.n!r}")


def _validate_interval(metric: MetricInput, path: str) -> None:
    ci = metric.ci
    if ci is None or len(ci) != 2 or not (_finite(ci[0]) and _finite(ci[1])):
        raise GateInputError(
            f"{path}.ci", f"expected [lower, upper], two finite numbers, got {ci!r}"
        )
    lo, hi = ci
    if lo > hi:
        raise GateInputError(
            f"{path}.ci", f"lower bound {_fmt(lo)} is above upper bound {_fmt(hi)}"
        )
    if metric.estimate is None:
        raise GateInputError(
            f"{path}.ci", "an interval is given without an estimate; give the point estimate too"
        )
    if not lo <= metric.estimate <= hi:
        raise GateInputError(
            f"{path}.ci",
            f"the interval [{_fmt(lo)}, {_fmt(hi)}] does not contain the estimate "
            f"{_fmt(metric.estimate)}",
        )


def _validate_alternatives(gate_input: GateInput) -> None:
    ids = [metric.id for metric in gate_input.metrics]
    for name, weights in gate_input.alternative_weights.items():
        path = f"alternative_weights.{name}"
        for metric_id, weight in weights.items():
            if metric_id not in ids:
                raise GateInputError(
                    f"{path}.{metric_id}",
                    f"names no gated metric; expected one of {', '.join(ids)}",
                )
            if not _finite(weight) or weight < 0:
                raise GateInputError(
                    f"{path}.{metric_id}", f"expected a non-negative weight, got {weight!r}"
                )
        total = math.fsum(weights.values())
        if total > 1 + _SUM_TOLERANCE:
            raise GateInputError(
                path,
                f"weights sum to {_fmt(total)}, more than 1; alternative weights are on the "
                "normalised scale and unnamed metrics share 1 minus their sum",
            )
        if set(weights) >= set(ids) and total <= 0:
            raise GateInputError(path, "names every metric with weight 0; weights must sum to > 0")


# --------------------------------------------------------------------------- scores


def normalised_scores(
    value: ArrayLike,
    direction_sign: ArrayLike,
    theta_out: ArrayLike,
    theta_in: ArrayLike,
    nu_max: float,
) -> NDArray[np.float64]:
    """Return the normalised scores ν of values against their thresholds (vectorised).

    Parameters
    ----------
    value : array_like
        Values used by the gate, m_j (conservative bound or point estimate). NaN stays NaN.
    direction_sign : array_like
        d_j = +1 (higher is better) or −1 (lower is better).
    theta_out, theta_in : array_like
        Outer and inner thresholds, with d_j(θin_j − θout_j) > 0.
    nu_max : float
        Upper clip, > 0 (SPEC default 3).

    Returns
    -------
    numpy.ndarray
        ν_j, broadcast over the inputs.

    Notes
    -----
    ν_j = clip(d_j(m_j − θout_j) / d_j(θin_j − θout_j), −1, ν_max): 0 at θout, 1 at θin.
    """
    m = np.asarray(value, dtype=np.float64)
    d = np.asarray(direction_sign, dtype=np.float64)
    t_out = np.asarray(theta_out, dtype=np.float64)
    t_in = np.asarray(theta_in, dtype=np.float64)
    if not np.all(np.abs(d) == 1):
        raise ValueError("direction_sign must be +1 (higher is better) or -1 (lower is better)")
    if not (math.isfinite(nu_max) and nu_max > 0):
        raise ValueError(f"nu_max must be a positive number, got {nu_max!r}")
    for sign, low, high in np.broadcast(d, t_out, t_in):
        if threshold_pair_fault(direction=sign, theta_out=low, theta_in=high) is not None:
            raise ValueError("theta_in and theta_out form an inverted pair: need d(θin − θout) > 0")
    gap = d * (t_in - t_out)
    # SPEC §6.2; seed 003 Eq. 9 (normalised score)
    return np.asarray(np.clip(d * (m - t_out) / gap, -1.0, nu_max), dtype=np.float64)


def efficacy_index(nu: ArrayLike, weights: ArrayLike) -> float:
    """Return the Efficacy Index EI = Σ_j w_j ν_j with weights normalised to sum to 1.

    Notes
    -----
    SPEC §6.2. EI = 0 when every metric sits at θout and 1 when every metric sits at θin.
    """
    scores, w = _scores_and_weights(nu, weights)
    return float(w @ scores)  # SPEC §6.2: EI = Σ w ν


def efficacy_index_geometric(nu: ArrayLike, weights: ArrayLike) -> float:
    """Return the geometric Efficacy Index EI_G with weights normalised to sum to 1.

    Notes
    -----
    SPEC §6.2: EI_G = exp(Σ_j w_j ln(1 + ν_j)) − 1 when every ν_j > −1, and −1 otherwise.
    It is pulled toward the weakest metric, so a large EI − EI_G gap flags an unbalanced
    profile. Equal ν everywhere gives EI_G = EI.
    """
    scores, w = _scores_and_weights(nu, weights)
    if np.any(scores <= -1.0):
        return -1.0
    return float(np.expm1(w @ np.log1p(scores)))  # SPEC §6.2: exp(Σ w ln(1+ν)) − 1


def weight_sensitivity_band(
    nu: ArrayLike,
    weights: ArrayLike,
    alternatives: Sequence[ArrayLike],
    *,
    draws: int = 1000,
    concentration: float = 100.0,
    seed: int = 0,
) -> tuple[float, float]:
    """Return the min and max of EI over the charter weights, alternatives and Dirichlet draws.

    Parameters
    ----------
    nu : array_like
        Normalised scores ν_j.
    weights : array_like
        Charter weights w (normalised to sum to 1 here).
    alternatives : sequence of array_like
        Full alternative weight vectors, each normalised to sum to 1 here.
    draws : int
        Number of Dirichlet draws (SPEC: 1,000).
    concentration : float
        Dirichlet concentration c; the draws have mean w and α = c·w (SPEC: 100).
    seed : int
        Seed of the numpy generator, so the band is reproducible.

    Notes
    -----
    SPEC §6.2. Metrics with charter weight 0 stay at 0 in every draw (a Dirichlet component
    with α = 0 is degenerate at 0). Every weighting is a convex combination, so the band
    always lies within [min ν, max ν] and equals [EI, EI] when all ν are equal.
    """
    scores, w = _scores_and_weights(nu, weights)
    if isinstance(draws, bool) or not isinstance(draws, int | np.integer) or draws < 0:
        raise ValueError(f"draws must be a non-negative integer, got {draws!r}")
    if not (math.isfinite(concentration) and concentration > 0):
        raise ValueError(f"concentration must be a positive number, got {concentration!r}")
    rows = [w]
    for index, alternative in enumerate(alternatives):
        alt = np.asarray(alternative, dtype=np.float64)
        if alt.shape != w.shape or not np.all(np.isfinite(alt)) or np.any(alt < 0):
            raise ValueError(
                f"alternatives[{index}] must be {w.size} non-negative weights, got {alt!r}"
            )
        if alt.sum() <= 0:
            raise ValueError(f"alternatives[{index}] sums to 0")
        rows.append(alt / alt.sum())
    matrix = np.vstack(rows)
    positive = w > 0
    if draws > 0 and positive.sum() > 1:
        rng = np.random.default_rng(seed)
        dirichlet = np.zeros((int(draws), w.size))
        # SPEC §6.2: Dirichlet(c·w) draws centred on w
        dirichlet[:, positive] = rng.dirichlet(concentration * w[positive], size=int(draws))
        matrix = np.vstack([matrix, dirichlet])
    indices = matrix @ scores  # EI under every weighting at once
    return float(indices.min()), float(indices.max())


def resolve_alternative_weights(
    named: Mapping[str, float], ids: Sequence[str]
) -> NDArray[np.float64]:
    """Return the full weight vector of an alternative weighting over the metrics ``ids``.

    A weighting may name only some metrics: the unnamed metrics share the remaining mass
    1 − Σ named equally. When it names every metric, its weights are normalised to sum to 1.
    Example: {hallucination_rate: 0.30, citation_precision_lenient: 0.25} over six metrics
    gives the other four 0.1125 each.
    """
    unknown = [key for key in named if key not in ids]
    if unknown:
        raise ValueError(f"named weights refer to unknown metrics: {', '.join(unknown)}")
    values = np.array([float(named.get(metric_id, 0.0)) for metric_id in ids])
    if np.any(values < 0) or not np.all(np.isfinite(values)):
        raise ValueError("named weights must be non-negative numbers")
    total = float(values.sum())
    unnamed = np.array([metric_id not in named for metric_id in ids])
    if not unnamed.any():
        if total <= 0:
            raise ValueError("named weights sum to 0")
        return values / total
    if total > 1 + _SUM_TOLERANCE:
        raise ValueError(f"named weights sum to {total:g}, more than 1")
    values[unnamed] = max(0.0, 1.0 - total) / unnamed.sum()
    return values


def _scores_and_weights(
    nu: ArrayLike, weights: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    scores = np.asarray(nu, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if scores.ndim != 1 or w.shape != scores.shape or scores.size == 0:
        raise ValueError(
            f"nu and weights must be non-empty 1-D arrays of one length, got shapes "
            f"{scores.shape} and {w.shape}"
        )
    if np.isnan(scores).any():
        raise ValueError("nu contains NaN; every metric needs a value before EI is computed")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be non-negative finite numbers with a positive sum")
    return scores, w / w.sum()


# --------------------------------------------------------------------------- gate


def gate_evaluate(
    gate_input: GateInput, *, mode: Mode = "conservative", seed: int = 0
) -> GateResult:
    """Return the two-tier gate decision with ν, EI, EI_G, its band, reasons and advice.

    Parameters
    ----------
    gate_input : GateInput
        The gated metrics; validated first with :func:`validate_gate_input`.
    mode : {"conservative", "point"}
        ``conservative`` (the decision basis) uses the CI bound on the unfavourable side
        (lower if higher is better, upper if lower is better); ``point`` uses the point
        estimates, for illustration only.
    seed : int
        Seed of the Dirichlet draws of the weight-sensitivity band.

    Notes
    -----
    SPEC §6.1: Status_j = Scale if d_j(m_j − θin_j) > 0, else Conditional if
    d_j(m_j − θout_j) > 0, else Reject (strict). Decision = the worst status; binding metric
    = smallest ν (ties: input order). The decision is Undetermined when a gated metric has
    no estimate, or its human labels (grading H or PPI) do not meet the agreement rule
    (SPEC §5.1, §6.1): the metric's ``agreement`` verdict when given, else κ ≥ ``kappa_min``,
    and no figure at all fails. Such a metric is "not eligible": its status is Undetermined
    (never Scale or Conditional) and EI, EI_G, the band and the binding metric are not
    computed.
    """
    validate_gate_input(gate_input, mode=mode)
    metrics = gate_input.metrics
    ids = [metric.id for metric in metrics]
    d = np.array([_sign(metric.direction) for metric in metrics])
    theta_out = np.array([metric.theta_out for metric in metrics], dtype=np.float64)
    theta_in = np.array([metric.theta_in for metric in metrics], dtype=np.float64)
    raw_weights = np.array([metric.weight for metric in metrics], dtype=np.float64)
    weights = raw_weights / raw_weights.sum()
    estimate = _column(metric.estimate for metric in metrics)
    lower = _column(None if metric.ci is None else metric.ci[0] for metric in metrics)
    upper = _column(None if metric.ci is None else metric.ci[1] for metric in metrics)
    # SPEC §6.1: the conservative bound is the lower bound if d = +1, the upper if d = −1
    bound = np.where(d > 0, lower, upper)
    used = bound if mode == "conservative" else estimate
    measured = ~np.isnan(used)

    statuses = _statuses(used, d, theta_out, theta_in, measured)
    nu = normalised_scores(used, d, theta_out, theta_in, gate_input.nu_max)
    ineligible = [_ineligibility(metric, gate_input.kappa_min, mode) for metric in metrics]
    low_kappa = [why is not None for why in ineligible]
    gated = [status for status in statuses if status != "Undetermined"]
    worst = max(gated, key=_SEVERITY.index) if gated else None
    missing = not measured.all()
    decision: Status = "Undetermined" if missing or any(low_kappa) else (worst or "Undetermined")
    computed = list(statuses)
    statuses = [
        "Undetermined" if low else status for status, low in zip(statuses, low_kappa, strict=True)
    ]

    ei = ei_g = None
    band = None
    binding = None
    if not missing and not any(low_kappa):
        ei = efficacy_index(nu, weights)
        ei_g = efficacy_index_geometric(nu, weights)
        alternatives = [
            resolve_alternative_weights(named, ids)
            for named in gate_input.alternative_weights.values()
        ]
        band = weight_sensitivity_band(nu, weights, alternatives, seed=seed)
        binding = ids[int(np.argmin(nu))]  # argmin returns the first minimum: input order

    results = tuple(
        MetricResult(
            id=metric.id,
            status=statuses[j],
            value_used=float(used[j]) if measured[j] else None,
            nu=float(nu[j]) if measured[j] else None,
            weight=float(weights[j]),
            direction=metric.direction,
            theta_out=float(metric.theta_out),
            theta_in=float(metric.theta_in),
            estimate=None if metric.estimate is None else float(metric.estimate),
            ci=None if metric.ci is None else (float(metric.ci[0]), float(metric.ci[1])),
            grading=metric.grading,
            kappa=None if metric.kappa is None else float(metric.kappa),
            n=metric.n,
            label=metric.label,
            eligible=not low_kappa[j],
            agreement=metric.agreement,
        )
        for j, metric in enumerate(metrics)
    )
    reasons = _reasons(
        gate_input,
        results,
        mode=mode,
        decision=decision,
        worst=worst,
        ineligible=ineligible,
        computed=computed,
        binding=binding,
    )
    recommendations = tuple(
        rec for metric in metrics for rec in _recommendations(metric, gate_input.confidence)
    )
    return GateResult(
        decision=decision,
        binding_metric=binding,
        mode=mode,
        metrics=results,
        ei=ei,
        ei_g=ei_g,
        ei_band=band,
        reasons=tuple(reasons),
        recommendations=recommendations,
        nu_max=float(gate_input.nu_max),
    )


def _statuses(
    used: NDArray[np.float64],
    d: NDArray[np.float64],
    theta_out: NDArray[np.float64],
    theta_in: NDArray[np.float64],
    measured: NDArray[np.bool_],
) -> list[Status]:
    with np.errstate(invalid="ignore"):
        clears_in = d * (used - theta_in) > 0  # SPEC §6.1; seed 003 Eq. 9: strict inequalities
        clears_out = d * (used - theta_out) > 0
    codes = np.select([~measured, clears_in, clears_out], [3, 0, 1], default=2)
    names: tuple[Status, ...] = (*_SEVERITY, "Undetermined")
    return [names[code] for code in codes]


def _recommendations(metric: MetricInput, confidence: float = 0.95) -> list[Recommendation]:
    """Return advice for each threshold the estimate passes but its conservative bound does not.

    SPEC §5.3: stated in outputs (the grading unit), for an 80 % chance that the bound clears
    the threshold if the estimate holds: n′ = n·(h/δ)²·((z₁₋α/₂ + z₀.₈)/z₁₋α/₂)² with h =
    |estimate − bound| the one-sided half-width, δ = |estimate − θ| and n the graded outputs
    (:func:`enterpriseval.stats.outputs_to_clear`; its notes derive it). Where the outputs
    are not reported the same formula is stated in units. A human-only estimate (mode H)
    whose n′ reaches :data:`~metrics.estimate.MIN_OUTPUTS_FOR_PPI_GATE` graded outputs would
    be gated on PPI there (SPEC §5.2) when a judge scored the outputs: the advice says so.
    """
    if metric.estimate is None or metric.ci is None:
        return []
    d = _sign(metric.direction)
    bound = metric.ci[0] if d > 0 else metric.ci[1]
    side = "lower" if d > 0 else "upper"
    advice = []
    thresholds: tuple[tuple[Literal["theta_in", "theta_out"], float], ...] = (
        ("theta_out", metric.theta_out),
        ("theta_in", metric.theta_in),
    )
    alpha = 1.0 - confidence
    chance = f"{PLANNING_POWER:.0%}"
    for name, theta in thresholds:
        if not (d * (metric.estimate - theta) > 0 and not d * (bound - theta) > 0):
            continue
        symbol = "θout" if name == "theta_out" else "θin"
        delta = abs(metric.estimate - theta)
        half_width = abs(metric.estimate - bound)
        target = (
            f"so the interval's {side} bound clears {symbol} = {_fmt(theta)} with an {chance} "
            "chance if the estimate holds"
        )
        formula = f"n′ = n·(h/δ)²·((z + z₀.₈)/z)² with h = {_fmt(half_width)}, δ = {_fmt(delta)}"
        if not metric.n or half_width <= 0:  # None or 0 units: no basis for a number
            advice.append(
                Recommendation(
                    metric.id,
                    name,
                    None,
                    f"{metric.id}: grade more outputs {target} (n was not reported, so how "
                    "many cannot be estimated)",
                )
            )
            continue
        if metric.n_outputs:
            total = outputs_to_clear(
                metric.n_outputs, half_width, delta, alpha=alpha, power=PLANNING_POWER
            )
            more = total - metric.n_outputs
            outputs: int | None = more
            additional: int | None = math.ceil(more * metric.n / metric.n_outputs)
            message = (
                f"{metric.id}: grade about {outputs} more outputs {target} "
                f"({formula}: {metric.n_outputs} → {total} graded outputs, SPEC §5.3)"
            )
            crossing = metric.n_outputs < MIN_OUTPUTS_FOR_PPI_GATE <= total
            if metric.grading == "H" and crossing:
                message += (
                    f"; from {MIN_OUTPUTS_FOR_PPI_GATE} graded outputs a metric whose outputs a "
                    "judge scored is gated on PPI (SPEC §5.2), whose interval is usually "
                    "narrower, so fewer may suffice: re-plan from the PPI interval shown "
                    "beside the estimate"
                )
        else:
            total = outputs_to_clear(metric.n, half_width, delta, alpha=alpha, power=PLANNING_POWER)
            additional, outputs = total - metric.n, None
            message = (
                f"{metric.id}: grade about {additional} more units {target} ({formula}: "
                f"{metric.n} → {total} units; the graded outputs were not reported, so how "
                "many outputs hold them cannot be said)"
            )
        advice.append(Recommendation(metric.id, name, additional, message, outputs))
    return advice


def _reasons(
    gate_input: GateInput,
    results: Sequence[MetricResult],
    *,
    mode: Mode,
    decision: Status,
    worst: Status | None,
    ineligible: Sequence[str | None],
    computed: Sequence[Status],
    binding: str | None,
) -> list[str]:
    reasons: list[str] = []
    if mode == "point":
        reasons.append(
            "Point mode: values are point estimates, for illustration only and not a decision "
            "basis; the decision gates on conservative CI bounds"
        )
        unchecked = _unchecked_note(gate_input.metrics, mode)
        if unchecked is not None:
            reasons.append(unchecked)
    by_status = {
        status: [r.id for r in results if r.status == status]
        for status in (*_SEVERITY, "Undetermined")
    }
    kappa_ids = [r.id for r, why in zip(results, ineligible, strict=True) if why is not None]
    missing = [r.id for r in results if r.value_used is None]
    rejected = [r.id for r, status in zip(results, computed, strict=True) if status == "Reject"]
    if decision == "Undetermined":
        causes = []
        if missing:
            causes.append(f"no estimate for {', '.join(missing)}")
        if kappa_ids:
            causes.append(
                f"human labels not eligible under the charter's agreement rule for "
                f"{', '.join(kappa_ids)}"
            )
        reasons.append(f"Decision Undetermined: {'; '.join(causes)}")
        if rejected:
            reasons.append(
                f"{', '.join(rejected)} already Reject, so the decision cannot be "
                "better than Reject once every metric is determined"
            )
        elif worst is not None and not missing:
            reasons.append(f"On the computed statuses alone the gate would read {worst}")
    elif decision == "Reject":
        reasons.append(
            f"Decision Reject: {', '.join(by_status['Reject'])} does not clear θout; "
            "any Reject metric rejects"
        )
    elif decision == "Conditional":
        reasons.append(
            f"Decision Conditional: {', '.join(by_status['Conditional'])} clears θout but "
            "not θin, and no metric is Reject"
        )
    else:
        reasons.append("Decision Scale: every gated metric clears θin")
    if binding is not None:
        nu = next(r.nu for r in results if r.id == binding)
        reasons.append(f"Binding metric: {binding} (smallest ν = {nu:.2f})")
    for result, status, why in zip(results, computed, ineligible, strict=True):
        text = _status_reason(replace(result, status=status), mode)
        if why is not None and result.value_used is not None:
            text = text.replace(f"→ {status}", f"→ would be {status}, but not eligible")
        reasons.append(text)
        if why is not None:
            reasons.append(
                f"{result.id}: not eligible — {why}; the rubric, not the system, needs "
                "revision before this metric can enter the gate → Undetermined"
            )
    return reasons


def _ineligibility(metric: MetricInput, kappa_min: float, mode: Mode) -> str | None:
    """Return why the metric's human labels may not enter the gate, or ``None`` if they may.

    SPEC §5.1/§6.1: the rule applies whenever human labels enter the estimate (H or PPI);
    no agreement figure is not eligible. Point mode is an illustration of published point
    estimates (SPEC §6.1, §11: seed 003 Table 4 reports no κ), so there a missing figure is
    stated in the reasons (:func:`_unchecked_note`) instead; a reported figure that fails the
    rule makes the metric not eligible in either mode.
    """
    if metric.agreement is not None:
        if metric.agreement.get("eligible"):
            return None
        return str(metric.agreement.get("reason") or "the agreement rule is not met")
    if metric.grading not in HUMAN_LABELLED:
        return None
    if metric.kappa is None:
        if mode == "point":
            return None
        return (
            f"its estimate rests on human labels (mode {metric.grading}) but no agreement "
            f"figure was reported, so the κ target {_target_text(kappa_min)} cannot be checked"
        )
    if metric.kappa < kappa_min:
        return f"human agreement κ = {below_text(metric.kappa, kappa_min)}"
    return None


def _unchecked_note(metrics: Sequence[MetricInput], mode: Mode) -> str | None:
    """Return the point-mode note naming human-labelled metrics with no agreement figure."""
    if mode != "point":
        return None
    unchecked = [
        metric.id
        for metric in metrics
        if metric.agreement is None and metric.grading in HUMAN_LABELLED and metric.kappa is None
    ]
    if not unchecked:
        return None
    return (
        f"No agreement figure for {', '.join(unchecked)}: eligibility is not checked in this "
        "illustration; a decision on conservative bounds would be Undetermined until the "
        "graders' agreement meets the charter's rule (SPEC §5.1)"
    )


def _target_text(value: float) -> str:
    return threshold_text(value)


def _status_reason(result: MetricResult, mode: Mode) -> str:
    if result.value_used is None:
        return f"{result.id}: no estimate → Undetermined"
    higher = result.direction == "higher"
    value = _fmt(result.value_used)
    if mode == "conservative":
        value = f"{'lower' if higher else 'upper'} bound {value}"
    passes, fails = ("exceeds", "does not exceed") if higher else ("is below", "is not below")
    if result.status == "Scale":
        return f"{result.id}: {value} {passes} θin {_fmt(result.theta_in)} → Scale"
    if result.status == "Conditional":
        return f"{result.id}: {value} {fails} θin {_fmt(result.theta_in)} → Conditional"
    return f"{result.id}: {value} {fails} θout {_fmt(result.theta_out)} → Reject"


# --------------------------------------------------------------------------- helpers


def _sign(direction: str) -> float:
    return 1.0 if direction == "higher" else -1.0


def _finite(value: Any) -> bool:
    return finite_number(value) is not None


def _column(values: Any) -> NDArray[np.float64]:
    return np.array([np.nan if value is None else value for value in values], dtype=np.float64)


def _fmt(value: float) -> str:
    """Format a number for a message: 80.0 → '80', 1.6 → '1.6', 72.34567891 → '72.3457'."""
    return number_text(value, significant=True)
