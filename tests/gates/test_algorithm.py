"""Tests of the two-tier gate, ν, EI, EI_G and the weight-sensitivity band (SPEC §6.1–6.2, §11)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gates.algorithm import (
    GateInput,
    GateInputError,
    MetricInput,
    efficacy_index,
    efficacy_index_geometric,
    gate_evaluate,
    normalised_scores,
    parse_gate_input,
    resolve_alternative_weights,
    weight_sensitivity_band,
)

# Seed 003 Table 4 (Use Case B), as printed, with the irrelevance pair corrected as SPEC §11
# prescribes: id, direction, θout, θin, Gemini 2.5, Llama 4. Overall accuracy is not gated.
TABLE_4 = (
    ("citation_precision_lenient", "higher", 65.0, 70.0, 88.0, 76.0),
    ("key_element_capture", "higher", 50.0, 55.0, 99.0, 96.0),
    ("irrelevance_rate", "lower", 50.0, 45.0, 23.0, 28.0),
    ("hallucination_rate", "lower", 10.0, 5.0, 1.6, 3.2),
    ("guidance_precision", "higher", 75.0, 80.0, 98.0, 93.0),
    ("guidance_recall", "higher", 75.0, 80.0, 80.0, 95.0),
)
GEMINI, LLAMA = 4, 5


def table_4_input(column: int, **changes: float) -> GateInput:
    """Return the Table 4 gate input for one model column, equal weights, ν_max = 3."""
    metrics = tuple(
        MetricInput(
            id=row[0],
            direction=row[1],  # type: ignore[arg-type]
            theta_out=row[2],
            theta_in=row[3],
            weight=1.0,
            estimate=float(changes.get(row[0], row[column])),
            grading="H",
            kappa=0.8,
        )
        for row in TABLE_4
    )
    return GateInput(metrics=metrics, nu_max=3.0)


def metric(**fields: object) -> MetricInput:
    """Return a higher-is-better metric with thresholds 75/80, overridden by ``fields``."""
    base: dict[str, object] = {
        "id": "guidance_recall",
        "direction": "higher",
        "theta_out": 75.0,
        "theta_in": 80.0,
        "weight": 1.0,
    }
    base.update(fields)
    return MetricInput(**base)  # type: ignore[arg-type]


def statuses(result: object) -> dict[str, str]:
    return {m.id: m.status for m in result.metrics}  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- SPEC §11


def test_it_reproduces_table_4_for_gemini_as_conditional_bound_by_guidance_recall() -> None:
    result = gate_evaluate(table_4_input(GEMINI), mode="point")

    assert result.decision == "Conditional"
    assert result.binding_metric == "guidance_recall"
    assert statuses(result) == {
        "citation_precision_lenient": "Scale",
        "key_element_capture": "Scale",
        "irrelevance_rate": "Scale",
        "hallucination_rate": "Scale",
        "guidance_precision": "Scale",
        "guidance_recall": "Conditional",
    }
    # ν by hand: 23/5 → 3, 49/5 → 3, 27/5 → 3, 8.4/5 = 1.68, 23/5 → 3, 5/5 = 1
    assert [m.nu for m in result.metrics] == pytest.approx([3, 3, 3, 1.68, 3, 1], abs=1e-12)
    assert result.ei is not None
    assert result.ei == pytest.approx(14.68 / 6, abs=1e-12)
    assert round(result.ei, 2) == 2.45
    assert "guidance_recall: 80 does not exceed θin 80 → Conditional" in result.reasons


def test_it_reproduces_table_4_for_llama_as_scale() -> None:
    result = gate_evaluate(table_4_input(LLAMA), mode="point")

    assert result.decision == "Scale"
    assert set(statuses(result).values()) == {"Scale"}
    # ν by hand: 11/5 = 2.2, 3, 22/5 → 3, 6.8/5 = 1.36, 18/5 → 3, 20/5 → 3
    assert [m.nu for m in result.metrics] == pytest.approx([2.2, 3, 3, 1.36, 3, 3], abs=1e-12)
    assert result.binding_metric == "hallucination_rate"
    assert result.ei is not None
    assert result.ei == pytest.approx(15.56 / 6, abs=1e-12)
    assert round(result.ei, 2) == 2.59


def test_it_rejects_the_inverted_irrelevance_pair_printed_in_table_4() -> None:
    data = {
        "metrics": [
            {
                "id": row[0],
                "direction": row[1],
                "theta_out": row[2],
                "theta_in": row[3],
                "weight": 1,
                "estimate": row[GEMINI],
            }
            for row in TABLE_4
        ]
    }
    data["metrics"][2]["theta_in"] = 55  # as printed: "< 50" then "< 55"
    gate_input = parse_gate_input(data)

    with pytest.raises(GateInputError) as caught:
        gate_evaluate(gate_input, mode="point")

    message = str(caught.value)
    assert "inverted pair" in message
    assert "irrelevance_rate" in message
    assert "50" in message and "55" in message
    assert caught.value.field == "metrics[irrelevance_rate]"


def test_it_computes_ei_g_for_table_4_by_hand() -> None:
    result = gate_evaluate(table_4_input(GEMINI), mode="point")

    # exp(Σ w ln(1 + ν)) − 1 with w = 1/6: (4⁴ · 2.68 · 2)^(1/6) − 1
    assert result.ei_g == pytest.approx((4**4 * 2.68 * 2) ** (1 / 6) - 1, abs=1e-12)
    assert result.ei_g is not None and result.ei is not None
    assert result.ei_g < result.ei


def test_it_reports_point_mode_as_illustration_only() -> None:
    result = gate_evaluate(table_4_input(GEMINI), mode="point")

    assert result.mode == "point"
    assert any("illustration only" in reason for reason in result.reasons)


def test_it_serialises_the_result_to_json() -> None:
    result = gate_evaluate(table_4_input(GEMINI), mode="point")

    data = json.loads(json.dumps(result.to_dict()))

    assert data["decision"] == "Conditional"
    assert data["binding_metric"] == "guidance_recall"
    assert data["mode"] == "point"
    assert isinstance(data["ei_band"], list) and len(data["ei_band"]) == 2
    assert data["metrics"][5]["id"] == "guidance_recall"
    assert data["metrics"][5]["nu"] == pytest.approx(1.0)
    assert data["metrics"][5]["weight"] == pytest.approx(1 / 6)
    assert {"status", "value_used", "theta_out", "theta_in", "ci", "kappa"} <= set(
        data["metrics"][0]
    )
    assert isinstance(data["reasons"], list)


# --------------------------------------------------------------------------- status rules


@pytest.mark.parametrize(
    ("estimate", "expected"),
    [(80.0, "Conditional"), (80.0001, "Scale"), (75.0, "Reject"), (75.0001, "Conditional")],
)
def test_it_applies_strict_inequalities_at_the_thresholds(estimate: float, expected: str) -> None:
    result = gate_evaluate(GateInput(metrics=(metric(estimate=estimate),)), mode="point")

    assert result.metrics[0].status == expected
    assert result.decision == expected


@pytest.mark.parametrize(
    ("estimate", "expected"), [(5.0, "Conditional"), (4.99, "Scale"), (10.0, "Reject")]
)
def test_it_applies_strict_inequalities_for_lower_is_better(estimate: float, expected: str) -> None:
    hallucination = metric(
        id="hallucination_rate", direction="lower", theta_out=10.0, theta_in=5.0, estimate=estimate
    )

    result = gate_evaluate(GateInput(metrics=(hallucination,)), mode="point")

    assert result.metrics[0].status == expected


def test_it_gates_on_the_lower_bound_when_higher_is_better() -> None:
    recall = metric(estimate=85.0, ci=(78.0, 90.0))

    conservative = gate_evaluate(GateInput(metrics=(recall,)))
    point = gate_evaluate(GateInput(metrics=(recall,)), mode="point")

    assert conservative.mode == "conservative"
    assert conservative.metrics[0].value_used == 78.0
    assert conservative.metrics[0].nu == pytest.approx(0.6)
    assert conservative.decision == "Conditional"
    assert point.metrics[0].value_used == 85.0
    assert point.decision == "Scale"
    assert "guidance_recall: lower bound 78 does not exceed θin 80 → Conditional" in (
        conservative.reasons
    )


def test_it_gates_on_the_upper_bound_when_lower_is_better() -> None:
    hallucination = metric(
        id="hallucination_rate",
        direction="lower",
        theta_out=10.0,
        theta_in=5.0,
        estimate=3.0,
        ci=(2.0, 6.0),
    )

    result = gate_evaluate(GateInput(metrics=(hallucination,)))

    assert result.metrics[0].value_used == 6.0
    assert result.metrics[0].nu == pytest.approx(0.8)
    assert result.decision == "Conditional"


def test_it_rejects_when_any_metric_is_reject_and_names_it() -> None:
    recall = metric(estimate=90.0)
    precision = metric(id="guidance_precision", estimate=70.0)

    result = gate_evaluate(GateInput(metrics=(recall, precision)), mode="point")

    assert result.decision == "Reject"
    assert result.binding_metric == "guidance_precision"
    assert result.reasons[1].startswith("Decision Reject: guidance_precision")
    assert "guidance_precision: 70 does not exceed θout 75 → Reject" in result.reasons


def test_it_breaks_binding_ties_by_input_order() -> None:
    first = metric(id="a", estimate=78.0)
    second = metric(id="b", estimate=78.0)

    result = gate_evaluate(GateInput(metrics=(first, second)), mode="point")

    assert result.binding_metric == "a"


def test_it_normalises_the_charter_weights() -> None:
    first = metric(id="a", estimate=80.0, weight=3.0)  # ν = 1
    second = metric(id="b", estimate=90.0, weight=1.0)  # ν = 3

    result = gate_evaluate(GateInput(metrics=(first, second)), mode="point")

    assert [m.weight for m in result.metrics] == [0.75, 0.25]
    assert result.ei == pytest.approx(0.75 * 1 + 0.25 * 3, abs=1e-12)


# --------------------------------------------------------------------------- Undetermined


def test_it_is_undetermined_when_a_gated_metric_has_no_estimate() -> None:
    gate_input = table_4_input(LLAMA)
    missing = replace(gate_input.metrics[3], estimate=None)
    gate_input = replace(
        gate_input, metrics=(*gate_input.metrics[:3], missing, *gate_input.metrics[4:])
    )

    result = gate_evaluate(gate_input, mode="point")

    assert result.decision == "Undetermined"
    assert result.metrics[3].status == "Undetermined"
    assert result.metrics[3].nu is None and result.metrics[3].value_used is None
    assert result.ei is None and result.ei_g is None and result.ei_band is None
    assert result.binding_metric is None
    assert "hallucination_rate: no estimate → Undetermined" in result.reasons
    assert any(
        "Decision Undetermined: no estimate for hallucination_rate" in r for r in result.reasons
    )
    assert result.metrics[0].status == "Scale"


def test_it_notes_an_existing_reject_when_undetermined() -> None:
    rejected = metric(id="a", estimate=70.0)
    missing = metric(id="b")

    result = gate_evaluate(GateInput(metrics=(rejected, missing)), mode="point")

    assert result.decision == "Undetermined"
    assert any("a already Reject" in reason for reason in result.reasons)


def test_a_metric_below_the_kappa_target_is_not_eligible_and_the_decision_undetermined() -> None:
    gate_input = table_4_input(LLAMA)
    weak = replace(gate_input.metrics[5], kappa=0.41)
    gate_input = replace(gate_input, metrics=(*gate_input.metrics[:5], weak))

    result = gate_evaluate(gate_input, mode="point")

    assert result.decision == "Undetermined"
    assert result.metrics[5].status == "Undetermined"  # never Scale or Conditional
    assert not result.metrics[5].eligible
    assert all(m.eligible for m in result.metrics[:5])
    assert result.ei is None and result.ei_band is None and result.binding_metric is None
    assert result.metrics[5].nu is not None  # ν is still shown beside it
    assert any(
        r.startswith("guidance_recall: not eligible — human agreement κ = 0.41 < 0.60")
        for r in result.reasons
    )
    assert any(
        r.startswith("guidance_recall: ") and r.endswith("→ would be Scale, but not eligible")
        for r in result.reasons
    )
    assert "On the computed statuses alone the gate would read Scale" in result.reasons


@pytest.mark.parametrize("grading", ["H", "PPI"])
def test_the_kappa_gate_applies_in_every_mode_with_human_labels(grading: str) -> None:
    result = gate_evaluate(
        GateInput(metrics=(metric(estimate=90.0, grading=grading, kappa=0.3),)), mode="point"
    )

    assert result.decision == "Undetermined"
    assert result.metrics[0].status == "Undetermined" and not result.metrics[0].eligible


@pytest.mark.parametrize("grading", ["H", "PPI"])
def test_human_labels_without_an_agreement_figure_are_undetermined(grading: str) -> None:
    alone = metric(estimate=90.0, ci=(85.0, 95.0), grading=grading)
    result = gate_evaluate(GateInput(metrics=(alone,)), mode="conservative")

    assert result.decision == "Undetermined"
    assert result.metrics[0].status == "Undetermined"
    assert any("no agreement figure was reported" in reason for reason in result.reasons)


@pytest.mark.parametrize("grading", ["H", "PPI"])
def test_a_point_illustration_without_an_agreement_figure_says_it_is_unchecked(
    grading: str,
) -> None:
    # Seed 003 Table 4 reports no κ; SPEC §11 gates it in point mode as an illustration.
    alone = metric(estimate=90.0, grading=grading)
    result = gate_evaluate(GateInput(metrics=(alone,)), mode="point")

    assert result.decision == "Scale"
    assert any(
        "No agreement figure for guidance_recall: eligibility is not checked" in reason
        for reason in result.reasons
    )
    low_kappa = metric(estimate=90.0, grading=grading, kappa=0.3)
    low = gate_evaluate(GateInput(metrics=(low_kappa,)), mode="point")
    assert low.decision == "Undetermined"  # a reported figure that fails counts in any mode


def test_it_accepts_kappa_equal_to_the_target() -> None:
    result = gate_evaluate(
        GateInput(metrics=(metric(estimate=90.0, grading="H", kappa=0.6),)), mode="point"
    )

    assert result.decision == "Scale"


def test_it_ignores_kappa_for_judge_graded_and_automatic_metrics() -> None:
    for grading in ("J", "A", None):
        result = gate_evaluate(
            GateInput(metrics=(metric(estimate=90.0, grading=grading, kappa=0.2),)), mode="point"
        )
        assert result.decision == "Scale"


def test_the_charters_agreement_verdict_decides_over_kappa() -> None:
    verdict = {"eligible": False, "reason": "breached AC1 = 0.699 < 0.70", "rule": "ac1"}
    blocked = metric(estimate=90.0, grading="PPI", kappa=0.95, agreement=verdict)
    passed = metric(
        estimate=90.0, grading="PPI", kappa=0.1, agreement={"eligible": True, "rule": "ac1"}
    )

    assert gate_evaluate(GateInput(metrics=(blocked,)), mode="point").decision == "Undetermined"
    assert gate_evaluate(GateInput(metrics=(passed,)), mode="point").decision == "Scale"
    result = gate_evaluate(GateInput(metrics=(blocked,)), mode="point")
    assert result.metrics[0].to_dict()["agreement"] == verdict
    assert any("not eligible — breached AC1 = 0.699 < 0.70" in r for r in result.reasons)


def test_a_kappa_just_below_the_target_is_printed_below_it() -> None:
    result = gate_evaluate(
        GateInput(metrics=(metric(estimate=90.0, grading="H", kappa=0.5986),)), mode="point"
    )

    text = " ".join(result.reasons)
    assert "κ = 0.599 < 0.60" in text
    assert "0.60 < 0.60" not in text


# --------------------------------------------------------------------------- ν, EI, EI_G


def test_it_clips_nu_to_minus_one_and_nu_max() -> None:
    nu = normalised_scores([0.0, 75.0, 77.5, 80.0, 200.0], 1, 75.0, 80.0, 3.0)

    assert nu.tolist() == pytest.approx([-1.0, 0.0, 0.5, 1.0, 3.0])


def test_it_scores_lower_is_better_metrics_by_hand() -> None:
    nu = normalised_scores([10.0, 5.0, 1.6, 12.5], -1, 10.0, 5.0, 3.0)

    assert nu.tolist() == pytest.approx([0.0, 1.0, 1.68, -0.5])


def test_normalised_scores_refuse_an_inverted_pair() -> None:
    with pytest.raises(ValueError, match="inverted pair"):
        normalised_scores([1.0], -1, 50.0, 55.0, 3.0)


def test_ei_g_is_minus_one_when_a_metric_sits_at_minus_one() -> None:
    assert efficacy_index_geometric([-1.0, 3.0], [0.5, 0.5]) == -1.0


def test_ei_g_equals_ei_for_a_flat_profile() -> None:
    assert efficacy_index_geometric([1.5, 1.5, 1.5], [1, 2, 3]) == pytest.approx(1.5)
    assert efficacy_index([1.5, 1.5, 1.5], [1, 2, 3]) == pytest.approx(1.5)


def test_ei_g_by_hand_for_unequal_weights() -> None:
    value = efficacy_index_geometric([0.0, 3.0], [0.75, 0.25])

    assert value == pytest.approx(math.exp(0.25 * math.log(4.0)) - 1.0, abs=1e-12)


def test_ei_refuses_nan() -> None:
    with pytest.raises(ValueError, match="NaN"):
        efficacy_index([1.0, float("nan")], [0.5, 0.5])


# --------------------------------------------------------------------------- band


def test_the_band_contains_ei() -> None:
    result = gate_evaluate(table_4_input(GEMINI), mode="point")

    assert result.ei_band is not None
    assert result.ei is not None
    lo, hi = result.ei_band
    assert lo <= result.ei <= hi
    assert lo < hi
    assert lo >= 1.0 and hi <= 3.0  # every weighting averages ν within [min ν, max ν]


def test_the_band_collapses_when_every_nu_is_at_nu_max() -> None:
    # With ν_max = 1.5 every Table 4 metric clips once recall is 99 and HR is 0 (ν = 2).
    gate_input = replace(
        table_4_input(GEMINI, guidance_recall=99.0, hallucination_rate=0.0), nu_max=1.5
    )

    result = gate_evaluate(gate_input, mode="point")

    assert [m.nu for m in result.metrics] == [1.5] * 6
    assert result.ei == pytest.approx(1.5, abs=1e-12)
    assert result.ei_band == pytest.approx((result.ei, result.ei), abs=1e-12)


def test_the_band_is_reproducible_from_its_seed() -> None:
    nu = np.array([3, 3, 3, 1.68, 3, 1])
    w = np.full(6, 1 / 6)

    first = weight_sensitivity_band(nu, w, [], seed=7)
    again = weight_sensitivity_band(nu, w, [], seed=7)
    other = weight_sensitivity_band(nu, w, [], seed=8)

    assert first == again
    assert first != other


def test_the_band_includes_alternative_weightings() -> None:
    gate_input = replace(
        table_4_input(GEMINI), alternative_weights={"recall_only": {"guidance_recall": 1.0}}
    )

    result = gate_evaluate(gate_input, mode="point")

    assert result.ei_band is not None
    assert result.ei_band[0] == pytest.approx(1.0, abs=1e-12)


def test_the_band_keeps_zero_weights_at_zero() -> None:
    band = weight_sensitivity_band([-1.0, 2.0, 3.0], [0.0, 0.5, 0.5], [], seed=0)

    assert 2.0 <= band[0] <= 2.5 <= band[1] <= 3.0


def test_it_shares_the_unnamed_mass_equally_in_alternative_weightings() -> None:
    ids = [row[0] for row in TABLE_4]

    weights = resolve_alternative_weights(
        {"hallucination_rate": 0.30, "citation_precision_lenient": 0.25}, ids
    )

    assert weights.tolist() == pytest.approx([0.25, 0.1125, 0.1125, 0.30, 0.1125, 0.1125])


def test_it_normalises_an_alternative_weighting_that_names_every_metric() -> None:
    weights = resolve_alternative_weights({"a": 0.2, "b": 0.6}, ["a", "b"])

    assert weights.tolist() == pytest.approx([0.25, 0.75])


# --------------------------------------------------------------------------- recommendations


# SPEC §5.3: n′ = n·(h/δ)²·f with f = ((z₀.₉₇₅ + z₀.₈)/z₀.₉₇₅)² = (2.801585/1.959964)²
# = 2.043203 at the default 95 % intervals, for an 80 % chance of clearing.


def test_it_recommends_more_grading_when_only_the_point_passes_theta_in() -> None:
    # δ = 84 − 80 = 4, h = 84 − 78 = 6: 100 · 2.25 · 2.043203 = 459.72 → 460 units, 360 more
    # (no outputs reported, so in units).
    recall = metric(estimate=84.0, ci=(78.0, 90.0), n=100)

    result = gate_evaluate(GateInput(metrics=(recall,)))

    assert len(result.recommendations) == 1
    advice = result.recommendations[0]
    assert advice.metric_id == "guidance_recall"
    assert advice.threshold == "theta_in"
    assert advice.additional_n == 360
    assert advice.message.startswith(
        "guidance_recall: grade about 360 more units so the interval's lower bound clears "
        "θin = 80 with an 80% chance if the estimate holds"
    )


def test_it_recommends_by_hand_for_a_non_integral_ratio() -> None:
    # δ = 3, h = 5: 120 · 25/9 · 2.043203 = 681.07 → 682 units, 562 more.
    recall = metric(estimate=83.0, ci=(78.0, 88.0), n=120)

    result = gate_evaluate(GateInput(metrics=(recall,)), mode="point")

    assert [r.additional_n for r in result.recommendations] == [562]


def test_it_recommends_for_both_thresholds_on_the_upper_side() -> None:
    # lower is better: θout 10, θin 5, estimate 4, upper bound 11, n = 50.
    # θout: δ = 6, h = 7 → 50 · 49/36 · 2.043203 = 139.05 → 140, 90 more.
    # θin: δ = 1, h = 7 → 50 · 49 · 2.043203 = 5005.85 → 5006, 4956 more.
    hallucination = metric(
        id="hallucination_rate",
        direction="lower",
        theta_out=10.0,
        theta_in=5.0,
        estimate=4.0,
        ci=(2.0, 11.0),
        n=50,
    )

    result = gate_evaluate(GateInput(metrics=(hallucination,)))

    assert result.decision == "Reject"
    assert [(r.threshold, r.additional_n) for r in result.recommendations] == [
        ("theta_out", 90),
        ("theta_in", 4956),
    ]
    assert "upper bound clears θout = 10" in result.recommendations[0].message


def test_it_says_how_many_more_outputs_to_grade_by_hand() -> None:
    # In outputs, the grading unit: 40 · (6/4)² · 2.043203 = 183.89 → 184 outputs, 144 more;
    # at 2.5 units per output that is 360 more units.
    recall = metric(estimate=84.0, ci=(78.0, 90.0), n=100, n_outputs=40)

    advice = gate_evaluate(GateInput(metrics=(recall,))).recommendations[0]

    assert (advice.additional_n, advice.additional_outputs) == (360, 144)
    assert advice.message == (
        "guidance_recall: grade about 144 more outputs so the interval's lower bound clears "
        "θin = 80 with an 80% chance if the estimate holds (n′ = n·(h/δ)²·((z + z₀.₈)/z)² "
        "with h = 6, δ = 4: 40 → 184 graded outputs, SPEC §5.3)"
    )
    assert advice.to_dict()["additional_outputs"] == 144


def test_the_confidence_of_the_intervals_sets_z() -> None:
    # At 90 %: z = 1.644854, f = ((1.644854 + 0.841621)/1.644854)² = 2.284487;
    # 40 · 2.25 · 2.284487 = 205.60 → 206 outputs, 166 more.
    recall = metric(estimate=84.0, ci=(78.0, 90.0), n=100, n_outputs=40)

    advice = gate_evaluate(GateInput(metrics=(recall,), confidence=0.9)).recommendations[0]

    assert advice.additional_outputs == 166


def test_it_notes_the_switch_to_ppi_when_more_grading_crosses_its_threshold() -> None:
    # 60 graded outputs in mode H; 60 · 2.25 · 2.043203 = 275.83 → 276 ≥ 100: PPI from 100 on.
    recall = metric(estimate=84.0, ci=(78.0, 90.0), n=150, n_outputs=60, grading="H")
    below = metric(estimate=84.0, ci=(79.0, 89.0), n=15, n_outputs=6, grading="H")

    crossing = gate_evaluate(GateInput(metrics=(recall,)), mode="point").recommendations[0]
    staying = gate_evaluate(GateInput(metrics=(below,)), mode="point").recommendations[0]

    assert crossing.additional_outputs == 216
    assert "from 100 graded outputs a metric whose outputs a judge scored is gated on PPI" in (
        crossing.message
    )
    assert staying.additional_outputs == 14  # 6 · (5/4)² · 2.043203 = 19.16 → 20 outputs
    assert "PPI" not in staying.message


def test_it_rounds_the_outputs_up_and_reads_n_outputs_from_the_file() -> None:
    # θout: 7 · 49/36 · 2.043203 = 19.47 → 20 outputs, 13 more (13 · 50/7 = 92.9 → 93 units);
    # θin: 7 · 49 · 2.043203 = 700.82 → 701 outputs, 694 more (4957.1 → 4958 units).
    parsed = parse_gate_input(
        {
            "metrics": [
                {
                    "id": "hallucination_rate",
                    "direction": "lower",
                    "theta_out": 10,
                    "theta_in": 5,
                    "weight": 1,
                    "estimate": 4.0,
                    "ci": [2.0, 11.0],
                    "n": 50,
                    "n_outputs": 7,
                }
            ]
        }
    )

    result = gate_evaluate(parsed)

    assert [(r.additional_n, r.additional_outputs) for r in result.recommendations] == [
        (93, 13),
        (4958, 694),
    ]
    assert "grade about 694 more outputs" in result.recommendations[1].message


def test_it_recommends_without_a_number_when_n_is_unknown() -> None:
    recall = metric(estimate=84.0, ci=(78.0, 90.0))

    result = gate_evaluate(GateInput(metrics=(recall,)))

    advice = result.recommendations[0]
    assert advice.additional_n is None and advice.additional_outputs is None
    assert "grade more outputs" in advice.message
    assert "n was not reported" in advice.message


def test_it_recommends_nothing_when_the_bound_already_clears() -> None:
    result = gate_evaluate(GateInput(metrics=(metric(estimate=90.0, ci=(85.0, 95.0), n=50),)))

    assert result.recommendations == ()


def test_it_recommends_nothing_when_the_point_itself_fails() -> None:
    result = gate_evaluate(table_4_input(GEMINI), mode="point")

    assert result.recommendations == ()


# --------------------------------------------------------------------------- properties

_finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False)


@st.composite
def _metric_sets(draw: st.DrawFn) -> GateInput:
    size = draw(st.integers(min_value=1, max_value=6))
    metrics = []
    for index in range(size):
        direction = draw(st.sampled_from(["higher", "lower"]))
        theta_out = draw(_finite)
        gap = draw(st.floats(min_value=0.01, max_value=100))
        sign = 1 if direction == "higher" else -1
        metrics.append(
            MetricInput(
                id=f"m{index}",
                direction=direction,  # type: ignore[arg-type]
                theta_out=theta_out,
                theta_in=theta_out + sign * gap,
                weight=draw(st.floats(min_value=0.01, max_value=10)),
                estimate=draw(_finite),
            )
        )
    nu_max = draw(st.floats(min_value=0.5, max_value=10))
    return GateInput(metrics=tuple(metrics), nu_max=nu_max)


@settings(max_examples=60, deadline=None)
@given(_metric_sets())
def test_nu_lies_within_minus_one_and_nu_max(gate_input: GateInput) -> None:
    result = gate_evaluate(gate_input, mode="point")

    for m in result.metrics:
        assert m.nu is not None
        assert -1.0 <= m.nu <= gate_input.nu_max
    assert result.ei is not None and result.ei_band is not None
    assert -1.0 - 1e-9 <= result.ei <= gate_input.nu_max + 1e-9
    assert result.ei_band[0] - 1e-9 <= result.ei <= result.ei_band[1] + 1e-9


@settings(max_examples=60, deadline=None)
@given(_metric_sets())
def test_the_decision_is_the_worst_status(gate_input: GateInput) -> None:
    result = gate_evaluate(gate_input, mode="point")

    order = ["Scale", "Conditional", "Reject"]
    assert result.decision == max((m.status for m in result.metrics), key=order.index)
    nus = [m.nu for m in result.metrics if m.nu is not None]
    assert result.binding_metric == result.metrics[nus.index(min(nus))].id


@settings(max_examples=60, deadline=None)
@given(_metric_sets(), st.data())
def test_ei_is_monotone_in_a_metric_value(gate_input: GateInput, data: st.DataObject) -> None:
    index = data.draw(st.integers(min_value=0, max_value=len(gate_input.metrics) - 1))
    step = data.draw(st.floats(min_value=0, max_value=500))
    target = gate_input.metrics[index]
    sign = 1 if target.direction == "higher" else -1
    assert target.estimate is not None
    better = replace(target, estimate=target.estimate + sign * step)
    improved = replace(
        gate_input,
        metrics=(*gate_input.metrics[:index], better, *gate_input.metrics[index + 1 :]),
    )

    before = gate_evaluate(gate_input, mode="point")
    after = gate_evaluate(improved, mode="point")

    assert after.ei is not None and before.ei is not None
    assert after.ei >= before.ei - 1e-12
    order = ["Scale", "Conditional", "Reject"]
    assert order.index(after.decision) <= order.index(before.decision)
