"""Tests of the value model's inputs from a charter and the evidence (SPEC §4, §6.3)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from scipy import stats

from gates.value_evidence import (
    FROM_EVIDENCE,
    VALUE_INPUT_KEYS,
    value_currency,
    value_inputs_from_charter,
    value_provenance,
)
from gates.value_model import (
    ProportionInput,
    TimeInput,
    ValueInputs,
    value_components,
    value_draws,
    value_estimate,
    value_point,
)

CHARTER = Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "charter.yaml"
REVIEW_HOURS = [0.8, 1.2, 0.9, 1.1, 1.0, 0.7, 1.3, 1.0]
MANUAL_HOURS = [2.5, 3.5, 3.0, 4.0, 2.8, 3.2]


@pytest.fixture(scope="module")
def charter() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(CHARTER.read_text())
    return document


@pytest.fixture
def credit_memo(charter: dict[str, Any]) -> dict[str, Any]:
    return dict(charter["value_inputs"])


def test_the_keys_are_the_charter_inputs_of_the_value_model() -> None:
    fields = {f.name: f for f in dataclasses.fields(ValueInputs) if f.name not in FROM_EVIDENCE}

    assert set(VALUE_INPUT_KEYS) == set(fields)
    for name, key in VALUE_INPUT_KEYS.items():
        assert key.required == (fields[name].default is dataclasses.MISSING), name
        assert (key.form == "time") == name.startswith("t_"), name
        assert key.unit, name


def test_the_credit_memo_charter_gives_the_hand_computed_point(
    charter: dict[str, Any], credit_memo: dict[str, Any]
) -> None:
    # SPEC §6.3 at the modes: 2600·95·(3 − 0.05) = 728,650 time saved; 2600·0.40 = 1,040
    # inference; 150,000 integration; 2600·95·1 = 247,000 review; no error loss.
    expected = 728_650 - 1_040 - 150_000 - 247_000

    inputs = value_inputs_from_charter(credit_memo, measurement_mode=charter["measurement_mode"])

    assert value_point(inputs) == pytest.approx(expected, abs=1e-6)
    assert value_point(inputs) == pytest.approx(330_610, abs=1e-6)
    assert inputs == ValueInputs(
        tasks_per_year=2600,
        hourly_cost=95,
        t_manual=TimeInput.triangular(2.0, 3.0, 5.0),
        t_gen=TimeInput.fixed(0.05),
        t_review=TimeInput.triangular(0.5, 1.0, 1.5),
        inference_cost_per_task=0.40,
        integration_cost=150_000,
    )
    assert inputs.baseline_observed is False


def test_the_provenance_says_where_each_credit_memo_input_came_from(
    credit_memo: dict[str, Any],
) -> None:
    provenance = value_provenance(
        credit_memo, measurement_mode="estimated", hallucination=(13, 860), graded_outputs=40
    )

    assert provenance.sources == {
        "t_manual": "charter range 2–5 h, mode 3",
        "t_gen": "charter value 0.05 h",
        "t_review": "charter range 0.5–1.5 h, mode 1",
        "tasks_per_year": "charter: 2,600 tasks per year",
        "hourly_cost": "charter: 95 GBP per hour",
        "inference_cost_per_task": "charter: 0.4 GBP per task",
        "integration_cost": "charter: 150,000 GBP per year",
        "rework_cost": "not given: 0",
        "quality_value": "not given: 0",
        "avoided_value": "not given: 0",
        "loss_per_error": "not given: 0",
        "hallucination": "graded counts 13/860 sentences of σ's outputs",
        "sentences_per_output": "observed: 860 sentences over 40 graded outputs, s̄ = 21.5",
        "catch": "not given: ρ_catch = 0, no credit for reviewers catching errors",
    }
    # SPEC §6.3: every input's source is labelled
    assert provenance.kinds == {
        "t_manual": "charter range",
        "t_gen": "given",
        "t_review": "charter range",
        "tasks_per_year": "given",
        "hourly_cost": "given",
        "inference_cost_per_task": "given",
        "integration_cost": "given",
        "rework_cost": "not given",
        "quality_value": "not given",
        "avoided_value": "not given",
        "loss_per_error": "not given",
        "hallucination": "observed",
        "sentences_per_output": "observed",
        "catch": "not given",
    }
    assert provenance.pi_err.startswith("π_err per task = 1 − (1 − HR·(1 − ρ_catch))^s̄")
    assert provenance.overridden == ()
    assert provenance.baseline_observed is False
    assert provenance.baseline.startswith("estimated: the charter's measurement mode")
    assert provenance.to_dict()["sources"] == provenance.sources


def test_graded_counts_enter_as_proportions_whose_point_is_k_over_n(
    credit_memo: dict[str, Any],
) -> None:
    inputs = value_inputs_from_charter(
        {**credit_memo, "loss_per_error": 5_000},
        measurement_mode="estimated",
        hallucination=(13, 860),
        catch=(30, 40),
        graded_outputs=40,
    )
    # π_err per task at k/n: 1 − (1 − (13/860)·(1 − 30/40))^(860/40); loss N·π_err·ℓ_err.
    error_loss = 2600 * (1 - (1 - (13 / 860) * (1 - 30 / 40)) ** (860 / 40)) * 5_000

    assert inputs.hallucination == ProportionInput(successes=13, n=860)
    assert inputs.catch == ProportionInput(successes=30, n=40)
    assert value_components(inputs)["error_loss"] == pytest.approx(-error_loss)
    assert value_point(inputs) == pytest.approx(330_610 - error_loss)


def test_graded_counts_are_drawn_from_their_beta_posteriors() -> None:
    # Isolate the error-loss term, V = −N·ℓ·HR·(1 − ρ): its draws' mean is the product of the
    # uniform-prior posterior means, Beta(1 + k, 1 + n − k).
    inputs = value_inputs_from_charter(
        {
            "tasks_per_year": 1,
            "hourly_cost": 0,
            "t_manual": 0,
            "t_gen": 0,
            "t_review": 0,
            "inference_cost_per_task": 0,
            "loss_per_error": 1,
        },
        measurement_mode="estimated",
        hallucination=(13, 860),
        catch=(30, 40),
        graded_outputs=860,  # s̄ = 1: π_err per task is HR·(1 − ρ_catch)
    )
    hr = stats.beta(1 + 13, 1 + 860 - 13)
    rho = stats.beta(1 + 30, 1 + 40 - 30)

    pi_err = -value_draws(inputs, draws=20_000, seed=11)

    assert pi_err.mean() == pytest.approx(hr.mean() * (1 - rho.mean()), rel=0.02)
    assert value_point(inputs) == pytest.approx(-(13 / 860) * (1 - 30 / 40))


def test_observed_samples_override_the_charter_range_and_say_so(
    credit_memo: dict[str, Any],
) -> None:
    observed = {"t_review": REVIEW_HOURS}

    inputs = value_inputs_from_charter(
        credit_memo, measurement_mode="estimated", observed_times=observed
    )
    provenance = value_provenance(
        credit_memo, measurement_mode="estimated", observed_times=observed
    )

    assert inputs.t_review == TimeInput.observed(REVIEW_HOURS)
    assert inputs.t_manual == TimeInput.triangular(2.0, 3.0, 5.0)
    assert provenance.overridden == ("t_review",)
    assert provenance.sources["t_review"] == (
        "observed: 8 samples, mean 1 h (overrides the charter range 0.5–1.5 h, mode 1)"
    )


def test_observed_samples_may_supply_a_time_the_charter_leaves_out(
    credit_memo: dict[str, Any],
) -> None:
    del credit_memo["t_gen"]

    provenance = value_provenance(
        credit_memo, measurement_mode="estimated", observed_times={"t_gen": [0.05]}
    )

    assert provenance.sources["t_gen"] == "observed: 1 sample, mean 0.05 h"
    assert provenance.kinds["t_gen"] == "observed"
    assert provenance.overridden == ()


@pytest.mark.parametrize(
    ("mode", "observed", "label"),
    [
        ("estimated", {"t_manual": MANUAL_HOURS}, "estimated"),
        ("observed", {"t_review": REVIEW_HOURS}, "estimated"),
        ("observed", {"t_manual": MANUAL_HOURS}, "observed"),
    ],
)
def test_only_an_observed_mode_with_observed_manual_times_labels_the_value_observed(
    credit_memo: dict[str, Any], mode: str, observed: dict[str, list[float]], label: str
) -> None:
    inputs = value_inputs_from_charter(credit_memo, measurement_mode=mode, observed_times=observed)
    provenance = value_provenance(credit_memo, measurement_mode=mode, observed_times=observed)

    assert inputs.baseline_observed is (label == "observed")
    assert provenance.baseline_observed is inputs.baseline_observed
    assert provenance.baseline.startswith(label)
    assert value_estimate(inputs, draws=200, seed=1).label == label


def test_charter_samples_count_as_an_observed_baseline(credit_memo: dict[str, Any]) -> None:
    credit_memo["t_manual"] = {"samples": MANUAL_HOURS}

    inputs = value_inputs_from_charter(credit_memo, measurement_mode="observed")
    provenance = value_provenance(credit_memo, measurement_mode="observed")

    assert inputs.t_manual == TimeInput.observed(MANUAL_HOURS)
    assert inputs.baseline_observed is True
    assert provenance.sources["t_manual"] == "charter samples: 6 samples"


def test_a_seeded_estimate_reproduces(credit_memo: dict[str, Any]) -> None:
    def estimate() -> dict[str, Any]:
        inputs = value_inputs_from_charter(
            {**credit_memo, "loss_per_error": 5_000},
            measurement_mode="observed",
            hallucination=(13, 860),
            catch=(30, 40),
            graded_outputs=40,
            observed_times={"t_manual": MANUAL_HOURS, "t_review": REVIEW_HOURS},
        )
        return value_estimate(inputs, seed=2026).to_dict()

    first, again = estimate(), estimate()

    assert first == again
    assert first["draws"] == 10_000
    assert first["level"] == 0.90
    assert first["lo"] < first["point"] < first["hi"]
    assert first["label"] == "observed"


DROP = object()  # a change that removes the input


@pytest.mark.parametrize(
    ("changes", "field", "expected"),
    [
        (
            {"hourly_cost": DROP},
            "value_inputs.hourly_cost",
            "missing; expected a non-negative number",
        ),
        ({"t_manual": DROP}, "value_inputs.t_manual", "missing; expected hours per task"),
        ({"tasks_per_year": -1}, "value_inputs.tasks_per_year", "non-negative number"),
        ({"hourly_cost": "95"}, "value_inputs.hourly_cost", "non-negative number"),
        ({"integration_cost": True}, "value_inputs.integration_cost", "non-negative number"),
        ({"rework_cost": float("nan")}, "value_inputs.rework_cost", "non-negative number"),
        ({"quality_value": float("inf")}, "value_inputs.quality_value", "finite number"),
        (
            {"t_gen": -0.05},
            "value_inputs.t_gen",
            "a non-negative number, {low, mode, high} or {samples",
        ),
        ({"t_gen": "3 minutes"}, "value_inputs.t_gen", "hours per task"),
        ({"hourly_rate": 95}, "value_inputs.hourly_rate", "did you mean 'hourly_cost'"),
        ({"t_manaul": 3}, "value_inputs.t_manaul", "expected one of currency, tasks_per_year"),
        ({"hallucination": 0.02}, "value_inputs.hallucination", "not a charter input"),
        ({"baseline_observed": True}, "value_inputs.baseline_observed", "not a charter input"),
        (
            {"t_manual": {"low": 3, "mode": 2, "high": 5}},
            "value_inputs.t_manual",
            "expected low ≤ mode ≤ high",
        ),
        (
            {"t_review": {"low": 0.5, "mode": 2, "high": 1.5}},
            "value_inputs.t_review",
            "mode = 2, high = 1.5",
        ),
        ({"t_manual": {"low": 2, "mode": 3}}, "value_inputs.t_manual.high", "missing"),
        ({"t_manual": {"low": -1, "mode": 3, "high": 5}}, "value_inputs.t_manual.low", "non-neg"),
        (
            {"t_manual": {"low": 2, "mode": 3, "high": 5, "mean": 3.3}},
            "value_inputs.t_manual.mean",
            "unknown key; expected {low, mode, high} or {samples}",
        ),
        (
            {"t_manual": {"samples": [3.0], "mode": 3}},
            "value_inputs.t_manual",
            "either {low, mode, high} or {samples",
        ),
        ({"t_manual": {"samples": []}}, "value_inputs.t_manual.samples", "at least one"),
        ({"t_manual": {"samples": "3, 4"}}, "value_inputs.t_manual.samples", "a list"),
        ({"t_manual": {"samples": [3, -4]}}, "value_inputs.t_manual.samples[1]", "non-negative"),
        ({"loss_per_error": 5_000}, "value_inputs.loss_per_error", "graded hallucination"),
    ],
)
def test_every_charter_error_names_the_field(
    credit_memo: dict[str, Any], changes: dict[str, Any], field: str, expected: str
) -> None:
    for name, value in changes.items():
        if value is DROP:
            del credit_memo[name]
        else:
            credit_memo[name] = value

    with pytest.raises(ValueError, match="^" + re.escape(field) + ":") as error:
        value_inputs_from_charter(credit_memo, measurement_mode="estimated")
    assert expected in str(error.value)


def test_a_missing_input_lists_the_others_missing() -> None:
    with pytest.raises(ValueError, match=r"^value_inputs\.tasks_per_year: missing") as error:
        value_inputs_from_charter({"hourly_cost": 95}, measurement_mode="estimated")
    assert str(error.value).endswith(
        "also missing: t_manual, t_gen, t_review, inference_cost_per_task"
    )


@pytest.mark.parametrize(
    ("arguments", "field", "expected"),
    [
        ({"measurement_mode": "timed"}, "measurement_mode", "'estimated' or 'observed'"),
        ({"hallucination": (900, 860)}, "hallucination", "900 hallucinated sentences exceed"),
        ({"hallucination": (0, 0)}, "hallucination", "at least one of the sentences"),
        ({"hallucination": (1.5, 860)}, "hallucination", "two non-negative whole numbers"),
        ({"hallucination": (13,)}, "hallucination", "(hallucinated sentences, sentences)"),
        ({"catch": (-1, 40)}, "catch", "(caught defects, seeded defects)"),
        ({"catch": (41, 40)}, "catch", "41 caught defects exceed the 40 seeded defects"),
        ({"observed_times": {"t_total": [1.0]}}, "observed_times.t_total", "t_manual, t_gen"),
        ({"observed_times": {"t_review": []}}, "observed_times.t_review", "at least one"),
        ({"observed_times": {"t_review": [1.0, -2]}}, "observed_times.t_review[1]", "non-neg"),
        ({"observed_times": [1.0]}, "observed_times", "expected a mapping"),
        ({"hallucination": (13, 860)}, "graded_outputs", "π_err is per task"),
        ({"hallucination": (13, 860), "graded_outputs": 0}, "graded_outputs", "positive whole"),
        ({"graded_outputs": 40}, "graded_outputs", "without the hallucination counts"),
        ({"time_sources": {"t_review": "a study"}}, "time_sources.t_review", "no observed"),
    ],
)
def test_every_evidence_error_names_the_argument(
    credit_memo: dict[str, Any], arguments: dict[str, Any], field: str, expected: str
) -> None:
    arguments = {"measurement_mode": "estimated", **arguments}

    with pytest.raises(ValueError, match="^" + re.escape(field) + ":") as error:
        value_inputs_from_charter(credit_memo, **arguments)
    assert expected in str(error.value)


def test_it_refuses_value_inputs_that_are_not_a_mapping() -> None:
    with pytest.raises(ValueError, match=r"^value_inputs: expected a mapping"):
        value_inputs_from_charter([("tasks_per_year", 1)], measurement_mode="estimated")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("currency", "fragment"),
    [
        (DROP, "value_inputs.currency: missing; expected the ISO 4217 code"),
        ("pounds", "value_inputs.currency: 'pounds' is not an active ISO 4217 currency code"),
        ("eur", "value_inputs.currency: 'eur' is not written as ISO 4217 writes it; write 'EUR'"),
    ],
)
def test_the_currency_must_be_an_iso_4217_code(credit_memo: dict[str, Any], currency, fragment):
    assert value_currency(credit_memo) == "GBP"
    changed = {k: v for k, v in credit_memo.items() if k != "currency"}
    if currency is not DROP:
        changed["currency"] = currency
    with pytest.raises(ValueError, match=re.escape(fragment)):
        value_currency(changed)


def test_a_review_time_from_the_oversight_study_is_labelled_so(
    credit_memo: dict[str, Any],
) -> None:
    # SPEC §6.3: a review time from another activity is used only when labelled so.
    where = "oversight study S (seeded-defect review): unaltered copies of this σ's outputs"

    provenance = value_provenance(
        credit_memo,
        measurement_mode="estimated",
        observed_times={"t_review": REVIEW_HOURS},
        time_sources={"t_review": where},
    )

    assert provenance.kinds["t_review"] == "oversight study"
    assert provenance.sources["t_review"] == (
        f"{where}: 8 samples, mean 1 h (overrides the charter range 0.5–1.5 h, mode 1)"
    )
