"""Annual value-and-risk model with a Monte Carlo interval (SPEC §6.3; seed 003 Eq. 10).

Pure computation: numpy only, no Django import.

V_annual = N·c_h·Δt̄ + V_quality + V_avoided − N·c_infer − C_integr − N·c_h·t̄_review
           − C_rework − N·π_err·ℓ_err,   Δt̄ = t̄_manual − t̄_gen

with N tasks per year, c_h the hourly cost and times in hours per task. π_err is the chance
that a task's output carries at least one error past review, per task like N (SPEC §6.3):
π_err = 1 − (1 − HR·(1 − ρ_catch))^s̄ with HR per sentence and s̄ the sentences per output
(HR's denominator per graded output, so HR·s̄ is the unsupported assertive sentences per
output). Multiplying the per-sentence HR·(1 − ρ_catch) by tasks instead understates the loss
about s̄-fold.

Uncertain inputs and how the Monte Carlo draws them:

- a time observed as samples: bootstrap of the sample mean (point: the sample mean);
- a time given as a range (low, mode, high): triangular distribution (point: the mode, the
  central value the charter owner gave; the triangular mean (low + mode + high)/3 differs
  from it when the range is skewed);
- HR and ρ_catch from graded counts k of n: Beta(1 + k, 1 + n − k), the posterior under a
  uniform prior (point: k/n);
- every other input as given.

Without a hallucination count the error-loss term needs ``loss_per_error == 0``; without a
catch count ρ_catch = 0, i.e. no credit for reviewers catching errors.

The point value is the median of the Monte Carlo draws (SPEC §6.3), so it sits at the 50th
percentile of its own distribution; the value at the inputs' central values (sample means,
modes, k/n) is reported beside it as ``central``, with the terms at those values.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

#: SPEC §6.3: the point value is the Monte Carlo median.
POINT_RULE = "median of the Monte Carlo draws"
#: What the point of a record made before the median was.
CENTRAL_POINT_RULE = "value at the inputs' central values"

# Cap on the bootstrap index matrix (rows × samples) held in memory at once.
_BOOTSTRAP_CELLS = 4_000_000


@dataclass(frozen=True)
class TimeInput:
    """A time in hours per task: a fixed value, observed samples or a (low, mode, high) range.

    Give exactly one form; prefer the constructors :meth:`fixed`, :meth:`observed` and
    :meth:`triangular`.
    """

    value: float | None = None
    samples: tuple[float, ...] | None = None
    low: float | None = None
    mode: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        ranged = (self.low, self.mode, self.high)
        forms = [
            self.value is not None,
            self.samples is not None,
            any(part is not None for part in ranged),
        ]
        if sum(forms) != 1:
            raise ValueError("TimeInput: give exactly one of value, samples or (low, mode, high)")
        if self.value is not None:
            _check_non_negative(self.value, "TimeInput.value")
        elif self.samples is not None:
            if isinstance(self.samples, str | bytes) or not isinstance(self.samples, Iterable):
                raise ValueError("TimeInput.samples: expected a sequence of hours")
            samples = tuple(self.samples)
            if not samples:
                raise ValueError("TimeInput.samples: must hold at least one observed time")
            for index, sample in enumerate(samples):
                _check_non_negative(sample, f"TimeInput.samples[{index}]")
            object.__setattr__(self, "samples", tuple(float(sample) for sample in samples))
        else:
            for name, part in zip(("low", "mode", "high"), ranged, strict=True):
                if part is None:
                    raise ValueError(f"TimeInput.{name}: a range needs low, mode and high")
                _check_non_negative(part, f"TimeInput.{name}")
            assert self.low is not None and self.mode is not None and self.high is not None
            if not self.low <= self.mode <= self.high:
                raise ValueError(
                    f"TimeInput.mode: expected low ≤ mode ≤ high, got low = {self.low}, "
                    f"mode = {self.mode}, high = {self.high}"
                )

    @classmethod
    def fixed(cls, value: float) -> TimeInput:
        """Return a time known without uncertainty."""
        return cls(value=value)

    @classmethod
    def observed(cls, samples: Iterable[float]) -> TimeInput:
        """Return a time observed as per-task samples (hours)."""
        return cls(samples=tuple(samples))

    @classmethod
    def triangular(cls, low: float, mode: float, high: float) -> TimeInput:
        """Return a time given as a (low, most likely, high) range."""
        return cls(low=low, mode=mode, high=high)

    @property
    def kind(self) -> Literal["fixed", "observed", "triangular"]:
        """Return which form the time was given in."""
        if self.value is not None:
            return "fixed"
        return "observed" if self.samples is not None else "triangular"

    def point(self) -> float:
        """Return the point value: the value, the sample mean or the mode."""
        if self.value is not None:
            return float(self.value)
        if self.samples is not None:
            return float(np.mean(self.samples))
        assert self.mode is not None
        return float(self.mode)


@dataclass(frozen=True)
class ProportionInput:
    """A proportion from graded counts: ``successes`` of ``n`` units."""

    successes: int
    n: int

    def __post_init__(self) -> None:
        for name in ("successes", "n"):
            count = getattr(self, name)
            if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 0:
                raise ValueError(
                    f"ProportionInput.{name}: expected a non-negative whole number, got {count!r}"
                )
        if self.n == 0:
            raise ValueError("ProportionInput.n: expected at least one graded unit, got 0")
        if self.successes > self.n:
            raise ValueError(f"ProportionInput.successes: {self.successes} exceeds n = {self.n}")

    def point(self) -> float:
        """Return the observed proportion k/n."""
        return self.successes / self.n


@dataclass(frozen=True)
class ValueInputs:
    """Inputs of the annual value model; money in one currency, times in hours per task."""

    tasks_per_year: float
    hourly_cost: float
    t_manual: TimeInput
    t_gen: TimeInput
    t_review: TimeInput
    inference_cost_per_task: float
    integration_cost: float = 0
    rework_cost: float = 0
    quality_value: float = 0
    avoided_value: float = 0
    loss_per_error: float = 0
    hallucination: ProportionInput | None = None
    catch: ProportionInput | None = None
    baseline_observed: bool = False
    #: s̄, sentences per output (HR's denominator per graded output): π_err per task.
    sentences_per_output: float | None = None

    def __post_init__(self) -> None:
        for name in (
            "tasks_per_year",
            "hourly_cost",
            "inference_cost_per_task",
            "integration_cost",
            "rework_cost",
            "loss_per_error",
        ):
            _check_non_negative(getattr(self, name), name)
        for name in ("quality_value", "avoided_value"):
            _check_finite(getattr(self, name), name)
        for name in ("t_manual", "t_gen", "t_review"):
            if not isinstance(getattr(self, name), TimeInput):
                raise ValueError(f"{name}: expected a TimeInput, got {getattr(self, name)!r}")
        for name in ("hallucination", "catch"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, ProportionInput):
                raise ValueError(f"{name}: expected a ProportionInput or None, got {value!r}")
        if self.loss_per_error > 0 and self.hallucination is None:
            raise ValueError(
                "hallucination: graded counts are required when loss_per_error > 0, "
                "otherwise the error-loss term would silently be zero"
            )
        if self.sentences_per_output is not None:
            _check_non_negative(self.sentences_per_output, "sentences_per_output")
        elif self.loss_per_error > 0:
            raise ValueError(
                "sentences_per_output: required when loss_per_error > 0; π_err is per task "
                "(1 − (1 − HR·(1 − ρ_catch))^s̄ with s̄ sentences per output), HR per sentence"
            )


@dataclass(frozen=True)
class ValueEstimate:
    """The point value (Monte Carlo median), its percentile interval and the central terms.

    ``central`` is V_annual at the inputs' central values and ``components`` its signed
    terms; the point is the median of the draws, which differs from ``central`` when an
    input's distribution is skewed (a triangular range, a Beta posterior).
    """

    point: float
    lo: float
    hi: float
    level: float
    draws: int
    seed: int
    label: Literal["observed", "estimated"]
    components: dict[str, float]
    #: ISO 4217 code of every amount (the charter's ``value_inputs.currency``); "" if unnamed.
    currency: str = ""
    central: float | None = None
    #: π_err per task at the central inputs (None without hallucination counts).
    pi_err: float | None = None

    #: How the point was taken; records made before SPEC §6.3's median say otherwise.
    point_rule: str = POINT_RULE

    def amount(self, value: float) -> str:
        """Return ``value`` as a whole amount with its currency code: ``GBP 1,234,567``."""
        text = f"{value:,.0f}"
        return f"{self.currency} {text}" if self.currency else text

    def to_dict(self) -> dict[str, Any]:
        """Return the estimate as a JSON-ready dict."""
        return {
            "currency": self.currency,
            "point": self.point,
            "lo": self.lo,
            "hi": self.hi,
            "level": self.level,
            "draws": self.draws,
            "seed": self.seed,
            "label": self.label,
            "components": dict(self.components),
            "central": self.central,
            "pi_err": self.pi_err,
            "point_rule": self.point_rule,
        }


def value_components(inputs: ValueInputs) -> dict[str, float]:
    """Return each signed term of V_annual at the inputs' central values (SPEC §6.3; Eq. 10).

    Keys, in order: time_saved, quality_value, avoided_value, inference_cost,
    integration_cost, review_cost, rework_cost, error_loss; costs are negative.
    """
    terms = _terms(inputs, **{name: np.array([x]) for name, x in _point_inputs(inputs).items()})
    return {name: float(np.broadcast_to(term, (1,))[0]) for name, term in terms.items()}


def value_point(inputs: ValueInputs) -> float:
    """Return V_annual at the inputs' central values: sample means, modes and k/n.

    Not the reported point, which is the Monte Carlo median (:func:`value_estimate`).
    """
    terms = _terms(inputs, **{name: np.array([x]) for name, x in _point_inputs(inputs).items()})
    return float(_total(terms)[0])


def value_draws(inputs: ValueInputs, *, draws: int = 10_000, seed: int = 0) -> NDArray[np.float64]:
    """Return Monte Carlo draws of V_annual (SPEC §6.3), reproducible from ``seed``.

    Each uncertain input has its own generator spawned from ``seed`` (in the order t_manual,
    t_gen, t_review, hallucination, catch), so changing how one input is given does not
    change the draws of the others.
    """
    _check_draws(draws)
    _check_seed(seed)
    rngs = [np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(5)]
    sampled = {
        "t_manual": _draw_time(inputs.t_manual, rngs[0], draws),
        "t_gen": _draw_time(inputs.t_gen, rngs[1], draws),
        "t_review": _draw_time(inputs.t_review, rngs[2], draws),
        "hr": _draw_proportion(inputs.hallucination, rngs[3], draws),
        "rho": _draw_proportion(inputs.catch, rngs[4], draws),
    }
    return np.broadcast_to(_total(_terms(inputs, **sampled)), (draws,)).astype(np.float64)


def pi_err(inputs: ValueInputs) -> float | None:
    """Return π_err per task at the central inputs, or ``None`` without hallucination counts."""
    if inputs.hallucination is None:
        return None
    point = _point_inputs(inputs)
    return float(_pi_err(inputs, np.array([point["hr"]]), np.array([point["rho"]]))[0])


def value_estimate(
    inputs: ValueInputs, *, draws: int = 10_000, level: float = 0.90, seed: int = 0
) -> ValueEstimate:
    """Return V_annual: the Monte Carlo median and percentile interval (SPEC §6.3; Eq. 10).

    Parameters
    ----------
    inputs : ValueInputs
        The model's inputs.
    draws : int
        Number of Monte Carlo draws (SPEC: 10,000).
    level : float
        Coverage of the central percentile interval, in (0, 1) (SPEC: 0.90).
    seed : int
        Seed of the draws; the same seed gives the same interval.

    Returns
    -------
    ValueEstimate
        Labelled "observed" only when ``baseline_observed`` is set and the manual time was
        observed as samples; otherwise "estimated" (SPEC §6.3).

    Notes
    -----
    The point is the median of the draws and the interval their ((1 − level)/2,
    (1 + level)/2) percentiles (SPEC §6.3), so the point always lies inside the interval.
    With every input fixed all three equal the central value.
    """
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < level < 1:
        raise ValueError(f"level: expected a number in the open interval (0, 1), got {level!r}")
    values = value_draws(inputs, draws=draws, seed=seed)
    tail = (1.0 - float(level)) / 2.0
    # SPEC §6.3: the point is the Monte Carlo median, the interval the percentile interval
    lo, point, hi = np.quantile(values, [tail, 0.5, 1.0 - tail])
    observed = inputs.baseline_observed and inputs.t_manual.kind == "observed"
    central = value_point(inputs)
    if np.ptp(values) == 0:
        # every input fixed: report the central value exactly, free of quantile rounding
        lo = point = hi = central
    return ValueEstimate(
        point=float(point),
        lo=float(lo),
        hi=float(hi),
        level=float(level),
        draws=int(draws),
        seed=int(seed),
        label="observed" if observed else "estimated",
        components=value_components(inputs),
        central=central,
        pi_err=pi_err(inputs),
    )


def _point_inputs(inputs: ValueInputs) -> dict[str, float]:
    return {
        "t_manual": inputs.t_manual.point(),
        "t_gen": inputs.t_gen.point(),
        "t_review": inputs.t_review.point(),
        "hr": 0.0 if inputs.hallucination is None else inputs.hallucination.point(),
        "rho": 0.0 if inputs.catch is None else inputs.catch.point(),
    }


def _terms(
    inputs: ValueInputs,
    *,
    t_manual: NDArray[np.float64],
    t_gen: NDArray[np.float64],
    t_review: NDArray[np.float64],
    hr: NDArray[np.float64],
    rho: NDArray[np.float64],
) -> dict[str, NDArray[np.float64]]:
    n_tasks = float(inputs.tasks_per_year)
    c_h = float(inputs.hourly_cost)
    pi_err = _pi_err(inputs, hr, rho)
    # SPEC §6.3; seed 003 Eq. 10, term by term with its sign
    return {
        "time_saved": n_tasks * c_h * (t_manual - t_gen),  # N·c_h·Δt̄
        "quality_value": np.asarray(float(inputs.quality_value)),  # V_quality
        "avoided_value": np.asarray(float(inputs.avoided_value)),  # V_avoided
        "inference_cost": np.asarray(-n_tasks * float(inputs.inference_cost_per_task)),
        "integration_cost": np.asarray(-float(inputs.integration_cost)),  # −C_integr
        "review_cost": -n_tasks * c_h * t_review,  # −N·c_h·t̄_review
        "rework_cost": np.asarray(-float(inputs.rework_cost)),  # −C_rework
        "error_loss": -n_tasks * pi_err * float(inputs.loss_per_error),  # −N·π_err·ℓ_err
    }


def _pi_err(
    inputs: ValueInputs, hr: NDArray[np.float64], rho: NDArray[np.float64]
) -> NDArray[np.float64]:
    per_sentence = hr * (1.0 - rho)  # seed 003 Eq. 10: HR·(1 − ρ_catch), per sentence
    if inputs.sentences_per_output is None:
        return np.zeros_like(per_sentence)  # no error loss to weigh (loss_per_error = 0)
    s_bar = float(inputs.sentences_per_output)
    # SPEC §6.3: π_err per task = 1 − (1 − HR·(1 − ρ_catch))^s̄, as −expm1(s̄·log1p(−p))
    return -np.expm1(s_bar * np.log1p(-per_sentence))


def _total(terms: dict[str, NDArray[np.float64]]) -> NDArray[np.float64]:
    # One summation order for the point and every draw, so fixed inputs reproduce the point.
    total = np.asarray(0.0)
    for term in terms.values():
        total = total + term
    return np.atleast_1d(total)


def _draw_time(time: TimeInput, rng: np.random.Generator, draws: int) -> NDArray[np.float64]:
    if time.samples is not None:
        samples = np.asarray(time.samples, dtype=np.float64)
        size = samples.size
        means = np.empty(draws)
        rows = max(1, _BOOTSTRAP_CELLS // size)
        for start in range(0, draws, rows):
            stop = min(draws, start + rows)
            # bootstrap of the mean: a (draws × samples) matrix of resampled indices
            index = rng.integers(0, size, size=(stop - start, size))
            means[start:stop] = samples[index].mean(axis=1)
        return means
    if time.value is None:
        assert time.low is not None and time.mode is not None and time.high is not None
        if time.low < time.high:
            return rng.triangular(time.low, time.mode, time.high, size=draws)
    return np.full(draws, time.point())


def _draw_proportion(
    proportion: ProportionInput | None, rng: np.random.Generator, draws: int
) -> NDArray[np.float64]:
    if proportion is None:
        return np.zeros(draws)
    k, n = proportion.successes, proportion.n
    return rng.beta(1 + k, 1 + n - k, size=draws)  # uniform prior: Beta(1 + k, 1 + n − k)


def _check_finite(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"{name}: expected a finite number, got {value!r}")


def _check_non_negative(value: Any, name: str) -> None:
    _check_finite(value, name)
    if value < 0:
        raise ValueError(f"{name}: expected a non-negative number, got {value!r}")


def _check_draws(draws: Any) -> None:
    if isinstance(draws, bool) or not isinstance(draws, numbers.Integral) or draws < 1:
        raise ValueError(f"draws: expected a positive whole number, got {draws!r}")


def _check_seed(seed: Any) -> None:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed: expected a non-negative whole number, got {seed!r}")
