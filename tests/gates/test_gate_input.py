"""Tests of reading and validating gate inputs: every bad field is named (SPEC §6.1)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gates.algorithm import (
    GateInput,
    GateInputError,
    MetricInput,
    parse_gate_input,
    validate_gate_input,
)


def valid() -> dict[str, Any]:
    """Return a valid decision input as loaded from YAML."""
    return {
        "metrics": [
            {
                "id": "hallucination_rate",
                "direction": "lower",
                "theta_out": 10,
                "theta_in": 5,
                "weight": 1,
                "estimate": 1.6,
                "ci": [0.9, 2.8],
                "grading": "H",
                "kappa": 0.72,
                "n": 640,
                "label": "Hallucination rate",
            },
            {
                "id": "guidance_recall",
                "direction": "higher",
                "theta_out": 75,
                "theta_in": 80,
                "weight": 1,
                "estimate": 80,
                "ci": [71.5, 87.0],
            },
        ],
        "nu_max": 3,
        "kappa_min": 0.6,
        "alternative_weights": {"fidelity_heavy": {"hallucination_rate": 0.7}},
    }


def changed(path: str, value: Any) -> dict[str, Any]:
    """Return the valid input with the value at a dotted path replaced (``...`` deletes it)."""
    data = valid()
    *parents, last = path.split(".")
    target: Any = data
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    key: Any = int(last) if last.isdigit() else last
    if value is ...:
        del target[key]
    else:
        target[key] = value
    return data


def test_it_parses_a_valid_input() -> None:
    gate_input = parse_gate_input(valid())

    assert gate_input == GateInput(
        metrics=(
            MetricInput(
                id="hallucination_rate",
                direction="lower",
                theta_out=10.0,
                theta_in=5.0,
                weight=1.0,
                estimate=1.6,
                ci=(0.9, 2.8),
                grading="H",
                kappa=0.72,
                n=640,
                label="Hallucination rate",
            ),
            MetricInput(
                id="guidance_recall",
                direction="higher",
                theta_out=75.0,
                theta_in=80.0,
                weight=1.0,
                estimate=80.0,
                ci=(71.5, 87.0),
            ),
        ),
        nu_max=3.0,
        kappa_min=0.6,
        alternative_weights={"fidelity_heavy": {"hallucination_rate": 0.7}},
    )
    validate_gate_input(gate_input, mode="conservative")


def test_it_applies_the_defaults() -> None:
    data = valid()
    for key in ("nu_max", "kappa_min", "alternative_weights"):
        del data[key]

    gate_input = parse_gate_input(data)

    assert (gate_input.nu_max, gate_input.kappa_min, dict(gate_input.alternative_weights)) == (
        3.0,
        0.6,
        {},
    )


def test_the_error_message_is_the_field_then_what_was_expected() -> None:
    with pytest.raises(GateInputError) as caught:
        parse_gate_input(changed("metrics.1.theta_in", "80%"))

    assert caught.value.field == "metrics[1].theta_in"
    assert caught.value.message == "expected a number, got '80%'"
    assert str(caught.value) == "metrics[1].theta_in: expected a number, got '80%'"
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("data", "field", "expected"),
    [
        (["metrics"], "input", "expected a mapping"),
        (None, "input", "expected a mapping"),
        (changed("metrics", ...), "metrics", "is required"),
        (changed("metrics", {"a": 1}), "metrics", "expected a list"),
        (changed("metrics", []), "metrics", "at least one"),
        (changed("metrics.0", "hallucination_rate"), "metrics[0]", "expected a mapping"),
        (changed("metrics.1.theta_in", ...), "metrics[1].theta_in", "is required"),
        (changed("metrics.1.theta_in", "80%"), "metrics[1].theta_in", "expected a number"),
        (changed("metrics.1.theta_out", float("nan")), "metrics[1].theta_out", "finite"),
        (changed("metrics.0.id", ...), "metrics[0].id", "is required"),
        (changed("metrics.0.id", ""), "metrics[0].id", "non-empty text"),
        (changed("metrics.0.direction", "down"), "metrics[0].direction", "'higher' or 'lower'"),
        (changed("metrics.0.weight", True), "metrics[0].weight", "expected a number"),
        (changed("metrics.0.estimate", "1.6"), "metrics[0].estimate", "expected a number"),
        (changed("metrics.0.ci", [1.0]), "metrics[0].ci", "[lower, upper]"),
        (changed("metrics.0.ci", 2.8), "metrics[0].ci", "[lower, upper]"),
        (changed("metrics.0.ci", [0.9, "x"]), "metrics[0].ci[1]", "expected a number"),
        (changed("metrics.0.grading", "human"), "metrics[0].grading", "H, J, PPI, A"),
        (changed("metrics.0.kappa", "high"), "metrics[0].kappa", "expected a number"),
        (changed("metrics.0.n", -4), "metrics[0].n", "whole number"),
        (changed("metrics.0.n", 12.5), "metrics[0].n", "whole number"),
        (changed("metrics.0.label", 7), "metrics[0].label", "text"),
        (changed("metrics.0.theta_inn", 5), "metrics[0].theta_inn", "did you mean 'theta_in'"),
        (changed("nu_maxx", 3), "nu_maxx", "did you mean 'nu_max'"),
        (changed("nu_max", "three"), "nu_max", "expected a number"),
        (changed("kappa_min", [0.6]), "kappa_min", "expected a number"),
        (changed("alternative_weights", [0.5]), "alternative_weights", "expected a mapping"),
        (
            changed("alternative_weights.fidelity_heavy", 0.7),
            "alternative_weights.fidelity_heavy",
            "expected a mapping",
        ),
        (
            changed("alternative_weights.fidelity_heavy.hallucination_rate", "0.7"),
            "alternative_weights.fidelity_heavy.hallucination_rate",
            "expected a number",
        ),
    ],
)
def test_it_names_each_malformed_field(data: Any, field: str, expected: str) -> None:
    with pytest.raises(GateInputError) as caught:
        parse_gate_input(data)

    assert caught.value.field == field
    assert expected in caught.value.message


def test_it_accepts_a_whole_float_as_a_count() -> None:
    assert parse_gate_input(changed("metrics.0.n", 640.0)).metrics[0].n == 640


def test_it_does_not_modify_its_input() -> None:
    data = valid()
    before = copy.deepcopy(data)

    parse_gate_input(data)

    assert data == before


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("data", "mode", "field", "expected"),
    [
        (
            changed("metrics.1.theta_in", 70),
            "point",
            "metrics[guidance_recall]",
            "inverted pair for guidance_recall",
        ),
        (
            changed("metrics.1.theta_in", 75),
            "point",
            "metrics[guidance_recall]",
            "θout = 75 and θin = 75",
        ),
        (
            changed("metrics.0.theta_in", 12),
            "point",
            "metrics[hallucination_rate]",
            "θin must be strictly below θout",
        ),
        (
            changed("metrics.1.ci", ...),
            "conservative",
            "metrics[guidance_recall].ci",
            "required in conservative mode",
        ),
        (
            changed("metrics.1.ci", [81, 87]),
            "point",
            "metrics[guidance_recall].ci",
            "does not contain the estimate 80",
        ),
        (
            changed("metrics.1.ci", [87, 71.5]),
            "point",
            "metrics[guidance_recall].ci",
            "lower bound 87 is above upper bound 71.5",
        ),
        (
            changed("metrics.1.estimate", ...),
            "point",
            "metrics[guidance_recall].ci",
            "without an estimate",
        ),
        (
            changed("metrics.1.weight", -1),
            "point",
            "metrics[guidance_recall].weight",
            "non-negative",
        ),
        (changed("metrics.0.kappa", 1.2), "point", "metrics[hallucination_rate].kappa", "[-1, 1]"),
        (changed("nu_max", 0), "point", "nu_max", "positive"),
        (changed("kappa_min", 1.5), "point", "kappa_min", "[-1, 1]"),
        (
            changed("alternative_weights.fidelity_heavy.hallucination_rates", 0.1),
            "point",
            "alternative_weights.fidelity_heavy.hallucination_rates",
            "names no gated metric",
        ),
        (
            changed("alternative_weights.fidelity_heavy.guidance_recall", 0.5),
            "point",
            "alternative_weights.fidelity_heavy",
            "sum to 1.2, more than 1",
        ),
        (
            changed("alternative_weights.fidelity_heavy.hallucination_rate", -0.1),
            "point",
            "alternative_weights.fidelity_heavy.hallucination_rate",
            "non-negative",
        ),
    ],
)
def test_it_names_each_invalid_value(data: Any, mode: Any, field: str, expected: str) -> None:
    gate_input = parse_gate_input(data)

    with pytest.raises(GateInputError) as caught:
        validate_gate_input(gate_input, mode=mode)

    assert caught.value.field == field
    assert expected in caught.value.message


def test_it_refuses_zero_total_weight() -> None:
    data = changed("metrics.0.weight", 0)
    data["metrics"][1]["weight"] = 0

    with pytest.raises(GateInputError) as caught:
        validate_gate_input(parse_gate_input(data), mode="point")

    assert caught.value.field == "metrics[*].weight"
    assert "sum to 0" in caught.value.message


def test_it_refuses_duplicate_metric_ids() -> None:
    data = changed("metrics.1.id", "hallucination_rate")
    data["metrics"][1].update(direction="lower", theta_out=10, theta_in=5, estimate=2, ci=[1, 3])

    with pytest.raises(GateInputError) as caught:
        validate_gate_input(parse_gate_input(data), mode="point")

    assert caught.value.field == "metrics[hallucination_rate]"
    assert "duplicate metric id" in caught.value.message


def test_it_refuses_an_unknown_direction_given_directly() -> None:
    odd = MetricInput(id="a", direction="up", theta_out=1, theta_in=2, weight=1)  # type: ignore[arg-type]

    with pytest.raises(GateInputError) as caught:
        validate_gate_input(GateInput(metrics=(odd,)), mode="point")

    assert caught.value.field == "metrics[a].direction"


def test_it_refuses_an_unknown_mode() -> None:
    with pytest.raises(GateInputError) as caught:
        validate_gate_input(parse_gate_input(valid()), mode="optimistic")  # type: ignore[arg-type]

    assert caught.value.field == "mode"


def test_a_missing_interval_is_allowed_in_point_mode_and_for_unmeasured_metrics() -> None:
    validate_gate_input(parse_gate_input(changed("metrics.1.ci", ...)), mode="point")
    unmeasured = changed("metrics.1.ci", ...)
    del unmeasured["metrics"][1]["estimate"]
    validate_gate_input(parse_gate_input(unmeasured), mode="conservative")


def test_an_alternative_weighting_summing_to_exactly_one_is_allowed() -> None:
    data = changed(
        "alternative_weights.fidelity_heavy",
        {"hallucination_rate": 0.1 + 0.2, "guidance_recall": 0.7},
    )

    validate_gate_input(parse_gate_input(data), mode="point")
