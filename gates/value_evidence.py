"""Value-model inputs from a charter's ``value_inputs`` and the evaluation's evidence (SPEC §6.3).

Pure: no Django import.

A charter states the value-model inputs in advance (``value_inputs``, keys in
:data:`VALUE_INPUT_KEYS`) and how its time baseline is measured (``measurement_mode``). The
evaluation adds what only it can know: the graded hallucination counts (HR), the seeded-defect
catch counts (ρ_catch) and observed times (review hours recorded by the grading workspace or an
oversight study, generation hours from the run outputs, a timed manual baseline). Observed
samples of a time replace the charter's number or range for that time.

A value claim is labelled "observed" only when the charter's measurement mode is "observed"
and the manual time comes from observed samples (SPEC §4 net_time_reduction, §6.3).

Every input's source is labelled with one of :data:`SOURCE_KINDS`: "observed" (this σ's own
evidence: graded counts, recorded times), "oversight study" (a time measured in another
activity, the seeded-defect review, SPEC §6.3), "charter range" (a triangular range),
"given" (a number or samples the charter states) or "not given".
"""

from __future__ import annotations

import difflib
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from enterpriseval.currencies import currency_problem
from enterpriseval.values import finite_number
from gates.value_model import ProportionInput, TimeInput, ValueInputs

MEASUREMENT_MODES: tuple[str, ...] = ("estimated", "observed")
#: How an input's source is labelled on the decision page and scorecard (SPEC §6.3).
SOURCE_KINDS: tuple[str, ...] = (
    "observed",
    "oversight study",
    "charter range",
    "given",
    "not given",
)


@dataclass(frozen=True)
class ValueInputKey:
    """One key a charter's ``value_inputs`` accepts: its unit, meaning and form.

    ``form`` is "time" (hours per task: a number, ``{low, mode, high}`` or
    ``{samples: [...]}``), "amount" (a non-negative number) or "signed amount" (any finite
    number; negative when the workflow loses that value).
    """

    unit: str
    meaning: str
    form: Literal["time", "amount", "signed amount"]
    required: bool = False


VALUE_INPUT_KEYS: dict[str, ValueInputKey] = {
    "tasks_per_year": ValueInputKey(
        "tasks per year", "N, tasks the workflow handles in a year", "amount", required=True
    ),
    "hourly_cost": ValueInputKey(
        "currency per hour",
        "c_h, loaded cost of an hour of the people doing the task",
        "amount",
        required=True,
    ),
    "t_manual": ValueInputKey(
        "hours per task",
        "t̄_manual, the task done without the system (the baseline)",
        "time",
        required=True,
    ),
    "t_gen": ValueInputKey(
        "hours per task",
        "t̄_gen, generating the output, waiting included",
        "time",
        required=True,
    ),
    "t_review": ValueInputKey(
        "hours per task",
        "t̄_review, human review and correction of the output",
        "time",
        required=True,
    ),
    "inference_cost_per_task": ValueInputKey(
        "currency per task", "c_infer, model, retrieval and tool calls", "amount", required=True
    ),
    "integration_cost": ValueInputKey(
        "currency per year", "C_integr, integration, running and maintenance", "amount"
    ),
    "rework_cost": ValueInputKey(
        "currency per year", "C_rework, redoing outputs that failed downstream", "amount"
    ),
    "quality_value": ValueInputKey(
        "currency per year",
        "V_quality, value of better outputs (negative if worse)",
        "signed amount",
    ),
    "avoided_value": ValueInputKey(
        "currency per year",
        "V_avoided, losses or costs avoided (negative if added)",
        "signed amount",
    ),
    "loss_per_error": ValueInputKey(
        "currency per error",
        "ℓ_err, loss of an error that reaches use; needs the graded hallucination counts",
        "amount",
    ),
}
#: The key of the ISO 4217 code every amount of ``value_inputs`` is in (SPEC §6.3).
CURRENCY_KEY = "currency"
TIME_KEYS: tuple[str, ...] = tuple(k for k, v in VALUE_INPUT_KEYS.items() if v.form == "time")
# Inputs of ValueInputs that the evaluation supplies, never the charter.
FROM_EVIDENCE: dict[str, str] = {
    "hallucination": "the graded hallucination counts (hallucinated sentences, sentences)",
    "catch": "the seeded-defect oversight study (caught, seeded)",
    "baseline_observed": "measurement_mode and whether t_manual was observed as samples",
    "sentences_per_output": "the graded sentences per graded output (s̄, π_err per task)",
}
_TIME_FORMS = "hours per task: a non-negative number, {low, mode, high} or {samples: [...]}"
_RANGE_KEYS = ("low", "mode", "high")


@dataclass(frozen=True)
class ValueProvenance:
    """Where each value-model input came from, for the decision page.

    ``sources`` maps every key of :data:`VALUE_INPUT_KEYS` and "hallucination" and "catch"
    to a phrase such as "charter range 2–5 h, mode 3", "observed: 38 samples" or "graded
    counts 13/860"; ``overridden`` lists the times whose charter value observed samples
    replaced; ``baseline`` says why the value is labelled observed or estimated.
    """

    sources: dict[str, str]
    overridden: tuple[str, ...]
    baseline_observed: bool
    baseline: str
    #: The label of each source, one of :data:`SOURCE_KINDS`, keyed like ``sources``.
    kinds: dict[str, str] = field(default_factory=dict)
    #: How π_err per task is computed, in words, or "" without hallucination counts.
    pi_err: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return the provenance as a JSON-ready dict."""
        return {
            "kinds": dict(self.kinds),
            "pi_err": self.pi_err,
            "sources": dict(self.sources),
            "overridden": list(self.overridden),
            "baseline_observed": self.baseline_observed,
            "baseline": self.baseline,
        }


def value_inputs_from_charter(
    value_inputs: Mapping[str, Any],
    *,
    measurement_mode: str,
    hallucination: tuple[int, int] | None = None,
    catch: tuple[int, int] | None = None,
    observed_times: Mapping[str, Sequence[float]] | None = None,
    graded_outputs: int | None = None,
    time_sources: Mapping[str, str] | None = None,
) -> ValueInputs:
    """Return the value model's inputs from a charter's ``value_inputs`` and the evidence.

    Parameters
    ----------
    value_inputs : mapping
        The charter's ``value_inputs``; keys and units in :data:`VALUE_INPUT_KEYS`. A time
        is a number (fixed), ``{low, mode, high}`` (triangular) or ``{samples: [...]}``
        (observed), in hours per task.
    measurement_mode : {"estimated", "observed"}
        The charter's ``measurement_mode``: how the time baseline is measured.
    hallucination : (int, int), optional
        Graded counts (hallucinated sentences, sentences); HR enters as their Beta
        posterior. Required when ``loss_per_error > 0``.
    catch : (int, int), optional
        Seeded-defect counts (caught, seeded); ρ_catch enters as their Beta posterior.
        Without them ρ_catch = 0: no credit for reviewers catching errors.
    observed_times : mapping of str to sequence of float, optional
        Observed hours per task for "t_manual", "t_gen" or "t_review"; they replace the
        charter's number or range for that time.
    graded_outputs : int, optional
        The outputs the hallucination counts were graded on; s̄ = sentences / outputs makes
        π_err per task (SPEC §6.3). Required with ``hallucination``.
    time_sources : mapping of str to str, optional
        Where an observed time was measured when not on σ's own outputs in production:
        ``{"t_review": "oversight study <name>: …"}`` labels it "oversight study" (a time
        from another activity, SPEC §6.3) with that phrase.

    Returns
    -------
    ValueInputs
        With ``baseline_observed`` True only when ``measurement_mode`` is "observed" and
        t_manual comes from observed samples (SPEC §4, §6.3).

    Raises
    ------
    ValueError
        Naming ``value_inputs.<key>`` (or ``measurement_mode``, ``hallucination``,
        ``catch``, ``observed_times.<key>``) and what was expected: a missing required
        input, an unknown key, a negative or non-numeric amount, a range with
        low > mode or mode > high, counts that do not fit.
    """
    inputs, _ = _assemble(
        value_inputs,
        measurement_mode=measurement_mode,
        hallucination=hallucination,
        catch=catch,
        observed_times=observed_times,
        graded_outputs=graded_outputs,
        time_sources=time_sources,
    )
    return inputs


def value_provenance(
    value_inputs: Mapping[str, Any],
    *,
    measurement_mode: str,
    hallucination: tuple[int, int] | None = None,
    catch: tuple[int, int] | None = None,
    observed_times: Mapping[str, Sequence[float]] | None = None,
    graded_outputs: int | None = None,
    time_sources: Mapping[str, str] | None = None,
) -> ValueProvenance:
    """Return where each input of :func:`value_inputs_from_charter` comes from.

    Takes the same arguments and raises the same errors as :func:`value_inputs_from_charter`.
    """
    _, provenance = _assemble(
        value_inputs,
        measurement_mode=measurement_mode,
        hallucination=hallucination,
        catch=catch,
        observed_times=observed_times,
        graded_outputs=graded_outputs,
        time_sources=time_sources,
    )
    return provenance


def _assemble(
    value_inputs: Mapping[str, Any],
    *,
    measurement_mode: str,
    hallucination: tuple[int, int] | None,
    catch: tuple[int, int] | None,
    observed_times: Mapping[str, Sequence[float]] | None,
    graded_outputs: int | None,
    time_sources: Mapping[str, str] | None,
) -> tuple[ValueInputs, ValueProvenance]:
    if measurement_mode not in MEASUREMENT_MODES:
        raise ValueError(
            f"measurement_mode: expected 'estimated' or 'observed', got {measurement_mode!r}"
        )
    if not isinstance(value_inputs, Mapping):
        raise ValueError(
            f"value_inputs: expected a mapping of value-model inputs, got {type(value_inputs)}"
        )
    _check_keys(value_inputs)
    observed = _observed_times(observed_times)
    _check_required(value_inputs, observed)
    labels = dict(time_sources or {})
    for name in labels:
        if name not in observed:
            raise ValueError(f"time_sources.{name}: labels a time that has no observed samples")
    sources: dict[str, str] = {}
    kinds: dict[str, str] = {}
    times: dict[str, TimeInput] = {}
    overridden: list[str] = []
    for name in TIME_KEYS:
        given = None if name not in value_inputs else _charter_time(name, value_inputs[name])
        if name in observed:
            times[name] = observed[name]
            kinds[name] = "oversight study" if name in labels else "observed"
            where = labels.get(name, "observed")
            sources[name] = (
                f"{where}: {_count_samples(observed[name])}, mean {_hours(observed[name])}"
            )
            if given is not None:
                overridden.append(name)
                sources[name] += f" (overrides the {_describe_time(given)})"
        else:
            assert given is not None  # _check_required
            times[name] = given
            kinds[name] = "charter range" if given.kind == "triangular" else "given"
            sources[name] = _describe_time(given)
    amounts: dict[str, float] = {}
    code = value_inputs.get(CURRENCY_KEY)
    money = str(code) if currency_problem(code) is None else "currency"
    for name, key in VALUE_INPUT_KEYS.items():
        if key.form == "time":
            continue
        if name in value_inputs:
            amounts[name] = _amount(name, value_inputs[name], key)
            sources[name] = f"charter: {amounts[name]:,g} {key.unit.replace('currency', money)}"
            kinds[name] = "given"
        else:
            amounts[name] = 0.0
            sources[name] = "not given: 0"
            kinds[name] = "not given"
    hr = _counts("hallucination", hallucination, ("hallucinated sentences", "sentences"))
    rho = _counts("catch", catch, ("caught defects", "seeded defects"))
    if amounts["loss_per_error"] > 0 and hr is None:
        raise ValueError(
            f"value_inputs.loss_per_error: {amounts['loss_per_error']:g} needs the graded "
            "hallucination counts (hallucination=(hallucinated sentences, sentences)); "
            "without them the error-loss term would silently be zero"
        )
    s_bar = _sentences_per_output(hr, graded_outputs)
    sources["hallucination"] = (
        "not given: HR = 0"
        if hr is None
        else f"graded counts {hr.successes}/{hr.n} sentences of σ's outputs"
    )
    kinds["hallucination"] = "not given" if hr is None else "observed"
    sources["catch"] = (
        "not given: ρ_catch = 0, no credit for reviewers catching errors"
        if rho is None
        else f"seeded defects caught {rho.successes}/{rho.n}"
    )
    kinds["catch"] = "not given" if rho is None else "oversight study"
    pi_err_text = ""
    if hr is not None and s_bar is not None:
        sources["sentences_per_output"] = (
            f"observed: {hr.n} sentences over {graded_outputs} graded outputs, s̄ = {s_bar:.4g}"
        )
        kinds["sentences_per_output"] = "observed"
        pi_err_text = (
            "π_err per task = 1 − (1 − HR·(1 − ρ_catch))^s̄, HR per sentence and s̄ = "
            f"{s_bar:.4g} sentences per graded output (SPEC §6.3)"
        )
    manual_observed = times["t_manual"].kind == "observed"
    baseline_observed = measurement_mode == "observed" and manual_observed
    inputs = ValueInputs(
        tasks_per_year=amounts["tasks_per_year"],
        hourly_cost=amounts["hourly_cost"],
        t_manual=times["t_manual"],
        t_gen=times["t_gen"],
        t_review=times["t_review"],
        inference_cost_per_task=amounts["inference_cost_per_task"],
        integration_cost=amounts["integration_cost"],
        rework_cost=amounts["rework_cost"],
        quality_value=amounts["quality_value"],
        avoided_value=amounts["avoided_value"],
        loss_per_error=amounts["loss_per_error"],
        hallucination=hr,
        catch=rho,
        baseline_observed=baseline_observed,
        sentences_per_output=s_bar,
    )
    provenance = ValueProvenance(
        sources=sources,
        overridden=tuple(overridden),
        baseline_observed=baseline_observed,
        baseline=_describe_baseline(measurement_mode, manual_observed),
        kinds=kinds,
        pi_err=pi_err_text,
    )
    return inputs, provenance


def value_currency(value_inputs: Mapping[str, Any]) -> str:
    """Return the ISO 4217 code the charter's amounts are in; ``ValueError`` naming it if not."""
    if CURRENCY_KEY not in value_inputs:
        raise ValueError(
            f"value_inputs.{CURRENCY_KEY}: missing; expected the ISO 4217 code the amounts are "
            "in (for example GBP)"
        )
    problem = currency_problem(value_inputs[CURRENCY_KEY])
    if problem is not None:
        raise ValueError(f"value_inputs.{CURRENCY_KEY}: {problem}")
    return str(value_inputs[CURRENCY_KEY])


def _check_keys(value_inputs: Mapping[str, Any]) -> None:
    for name in value_inputs:
        if not isinstance(name, str):
            raise ValueError(f"value_inputs: input names must be text, got {name!r}")
        if name == CURRENCY_KEY:
            continue
        if name in FROM_EVIDENCE:
            raise ValueError(
                f"value_inputs.{name}: not a charter input; it comes from {FROM_EVIDENCE[name]}"
            )
        if name not in VALUE_INPUT_KEYS:
            close = difflib.get_close_matches(name, VALUE_INPUT_KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"value_inputs.{name}: unknown input; expected one of "
                f"{', '.join((CURRENCY_KEY, *VALUE_INPUT_KEYS))}{hint}"
            )


def _check_required(value_inputs: Mapping[str, Any], observed: Mapping[str, TimeInput]) -> None:
    missing = [
        name
        for name, key in VALUE_INPUT_KEYS.items()
        if key.required and name not in value_inputs and name not in observed
    ]
    if missing:
        first = VALUE_INPUT_KEYS[missing[0]]
        expected = _TIME_FORMS if first.form == "time" else f"a non-negative number, {first.unit}"
        also = f"; also missing: {', '.join(missing[1:])}" if missing[1:] else ""
        raise ValueError(
            f"value_inputs.{missing[0]}: missing; expected {expected} ({first.meaning}){also}"
        )


def _observed_times(
    observed_times: Mapping[str, Sequence[float]] | None,
) -> dict[str, TimeInput]:
    if observed_times is None:
        return {}
    if not isinstance(observed_times, Mapping):
        raise ValueError(
            "observed_times: expected a mapping of time input to observed hours per task, "
            f"got {type(observed_times)}"
        )
    result: dict[str, TimeInput] = {}
    for name, samples in observed_times.items():
        if name not in TIME_KEYS:
            raise ValueError(
                f"observed_times.{name}: unknown time input; expected one of {', '.join(TIME_KEYS)}"
            )
        result[name] = TimeInput.observed(_samples(f"observed_times.{name}", samples))
    return result


def _charter_time(name: str, raw: Any) -> TimeInput:
    path = f"value_inputs.{name}"
    if not isinstance(raw, Mapping):
        return TimeInput.fixed(_number(path, raw, "hours per task", expected=_TIME_FORMS))
    unknown = [str(key) for key in raw if key not in (*_RANGE_KEYS, "samples")]
    if unknown:
        raise ValueError(
            f"{path}.{unknown[0]}: unknown key; expected {{low, mode, high}} or {{samples}} "
            "(hours per task)"
        )
    if "samples" in raw:
        if len(raw) > 1:
            raise ValueError(
                f"{path}: give either {{low, mode, high}} or {{samples: [...]}}, not both"
            )
        return TimeInput.observed(_samples(f"{path}.samples", raw["samples"]))
    for part in _RANGE_KEYS:
        if part not in raw:
            raise ValueError(f"{path}.{part}: missing; a range needs low, mode and high (hours)")
    low, mode, high = (
        _number(f"{path}.{part}", raw[part], "hours per task") for part in _RANGE_KEYS
    )
    if not low <= mode <= high:
        raise ValueError(
            f"{path}: expected low ≤ mode ≤ high (hours per task), got low = {low:g}, "
            f"mode = {mode:g}, high = {high:g}"
        )
    return TimeInput.triangular(low, mode, high)


def _samples(path: str, raw: Any) -> list[float]:
    if isinstance(raw, str | bytes | Mapping) or not isinstance(raw, Iterable):
        raise ValueError(f"{path}: expected a list of observed hours per task, got {raw!r}")
    samples = [_number(f"{path}[{i}]", value, "hours") for i, value in enumerate(raw)]
    if not samples:
        raise ValueError(f"{path}: expected at least one observed time, got none")
    return samples


def _amount(name: str, raw: Any, key: ValueInputKey) -> float:
    path = f"value_inputs.{name}"
    if key.form == "signed amount":
        return _number(path, raw, key.unit, signed=True)
    return _number(path, raw, key.unit)


def _number(
    path: str, raw: Any, unit: str, *, signed: bool = False, expected: str | None = None
) -> float:
    kind = "a finite number" if signed else "a non-negative number"
    wanted = expected or f"{kind}, {unit}"
    number = finite_number(raw)
    if number is None or (number < 0 and not signed):
        raise ValueError(f"{path}: expected {wanted}, got {raw!r}")
    return number


def _counts(name: str, raw: Any, units: tuple[str, str]) -> ProportionInput | None:
    if raw is None:
        return None
    shape = f"({units[0]}, {units[1]}) as two non-negative whole numbers"
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence) or len(raw) != 2:
        raise ValueError(f"{name}: expected {shape}, got {raw!r}")
    k, n = raw
    for count in (k, n):
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 0:
            raise ValueError(f"{name}: expected {shape}, got {raw!r}")
    if n == 0:
        raise ValueError(f"{name}: expected at least one of the {units[1]}, got 0")
    if k > n:
        raise ValueError(f"{name}: {k} {units[0]} exceed the {n} {units[1]}")
    return ProportionInput(successes=int(k), n=int(n))


def _sentences_per_output(hr: ProportionInput | None, graded_outputs: Any) -> float | None:
    if hr is None:
        if graded_outputs is not None:
            raise ValueError("graded_outputs: given without the hallucination counts it divides")
        return None
    if graded_outputs is None:
        raise ValueError(
            "graded_outputs: required with the hallucination counts; π_err is per task, so "
            "the sentences per graded output s̄ are needed (SPEC §6.3)"
        )
    if (
        isinstance(graded_outputs, bool)
        or not isinstance(graded_outputs, numbers.Integral)
        or graded_outputs < 1
    ):
        raise ValueError(
            f"graded_outputs: expected a positive whole number of outputs, got {graded_outputs!r}"
        )
    return hr.n / int(graded_outputs)


def _hours(time: TimeInput) -> str:
    return f"{time.point():.3g} h"


def _describe_time(time: TimeInput) -> str:
    if time.kind == "observed":
        assert time.samples is not None
        return f"charter samples: {_count_samples(time)}"
    if time.kind == "triangular":
        return f"charter range {time.low:g}–{time.high:g} h, mode {time.mode:g}"
    return f"charter value {time.point():g} h"


def _count_samples(time: TimeInput) -> str:
    size = len(time.samples or ())
    return f"{size} sample" if size == 1 else f"{size} samples"


def _describe_baseline(measurement_mode: str, manual_observed: bool) -> str:
    if measurement_mode == "observed" and manual_observed:
        return "observed: the measurement mode is observed and t_manual comes from observed samples"
    if measurement_mode == "observed":
        return (
            "estimated: the measurement mode is observed but t_manual is not observed samples, "
            "so the value is not an observed claim (SPEC §4)"
        )
    return "estimated: the charter's measurement mode is estimated (SPEC §4)"
