"""Unsafe-side error of the gated bound on the credit-memo example's own design.

Population: the 130 outputs of ``examples/credit_memo/truth-*.jsonl`` (both systems), whose
sentence labels (assertive, supported) and key-element labels are the truth. The target is
their value: Σ hallucinated / Σ sentences over the 130 (1.51 %), and the mean over the 130 of
the per-output key-element capture share (95.0 %). In each simulated evaluation a judge scores
every output, each unit label flipped independently with a known asymmetric error rate
(:data:`JUDGE_ERRORS`: it over-asserts, misses 30 % of unsupported sentences and over-credits
key elements), and humans (= truth) grade a uniform random sample of n outputs; N = 1,000
outputs are drawn with replacement from the 130 (the superpopulation the estimand refers to).

The product's gated record (``estimate_unit_metric`` at 90 %) is checked, as a risk committee
uses it: the bound on the gate's side must pass the true value at most α/2 = 5 % of the time
(plus three Monte Carlo standard errors). At n = 50 the gate uses the human-only Korn–Graubard
interval, at n = 150 the PPI++ one (n_eff capped at the graded units). Measured (1,000
evaluations): unsafe-side error 3.2 % and 2.4 % at n = 50; 2.3 % and 3.5 % at n = 150 with PPI
(the human-only interval beside it 3.3 % and 3.7 %), and the PPI interval is about 5 % narrower
than the human-only one. The normal PPI interval this replaced under-covered here (about 83 %
two-sided at n = 50). The grid over prevalence, sample size, overdispersion and judges is
``tests/metrics/test_metric_bound_coverage.py``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from metrics.unit_estimators import (
    OutputCounts,
    OutputUnits,
    estimate_unit_metric,
    hallucination_counts,
    key_element_counts,
)

# About 30 s on one core: run in CI with the rest of the suite (not slow-marked).

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"
EVALUATIONS = 500
N_OUTPUTS = 1_000
CONFIDENCE = 0.90
ALPHA_HALF = (1.0 - CONFIDENCE) / 2.0
#: α/2 plus three Monte Carlo standard errors (SPEC §5.3).
LIMIT = ALPHA_HALF + 3.0 * math.sqrt(ALPHA_HALF * (1.0 - ALPHA_HALF) / EVALUATIONS)
METRICS = ("hallucination_rate", "key_element_capture")

#: P(judge says 1 | truth 0) and P(judge says 0 | truth 1) per criterion: the judge
#: over-asserts, misses 30 % of unsupported sentences and over-credits key elements.
JUDGE_ERRORS = {
    "assertive": (0.10, 0.03),
    "supported": (0.30, 0.02),
    "captured": (0.40, 0.03),
}


def load_population() -> dict[str, np.ndarray]:
    """Return the truth's unit labels with the output (0..129) of each unit."""
    rows = [
        json.loads(line)
        for name in ("truth-llama-4.jsonl", "truth-gemini-2-5.jsonl")
        for line in (EXAMPLE / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    sentences = [(i, s) for i, row in enumerate(rows) for s in row["sentences"]]
    elements = [(i, v) for i, row in enumerate(rows) for v in row["key_elements"].values()]
    return {
        "sentence_output": np.array([i for i, _ in sentences]),
        "assertive": np.array([float(s["assertive"]) for _, s in sentences]),
        "supported": np.array([float(s["supported"]) for _, s in sentences]),
        "element_output": np.array([i for i, _ in elements]),
        "captured": np.array([float(v == "present_correct") for _, v in elements]),
    }


POPULATION = load_population()
POOL = int(POPULATION["sentence_output"].max()) + 1


def units_of(chosen: np.ndarray, unit_output: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the pool units of the chosen outputs (repeats allowed) and the draw of each."""
    order = np.argsort(unit_output, kind="stable")
    starts = np.searchsorted(unit_output[order], np.arange(POOL))
    per_draw = np.bincount(unit_output, minlength=POOL)[chosen]
    draw = np.repeat(np.arange(chosen.size), per_draw)
    offset = np.arange(per_draw.sum()) - np.repeat(np.cumsum(per_draw) - per_draw, per_draw)
    return order[np.repeat(starts[chosen], per_draw) + offset], draw


def judged(truth: np.ndarray, criterion: str, rng: np.random.Generator) -> np.ndarray:
    false_positive, false_negative = JUDGE_ERRORS[criterion]
    flip = rng.random(truth.size) < np.where(truth > 0, false_negative, false_positive)
    return np.where(flip, 1.0 - truth, truth)


def counts(chosen: np.ndarray, rng: np.random.Generator) -> dict[str, tuple[OutputCounts, ...]]:
    """Return (truth, judge) per-output counts of each metric for the chosen outputs."""
    sentence, draw = units_of(chosen, POPULATION["sentence_output"])
    assertive, supported = POPULATION["assertive"][sentence], POPULATION["supported"][sentence]
    element, element_draw = units_of(chosen, POPULATION["element_output"])
    captured = POPULATION["captured"][element]
    size = chosen.size
    return {
        "hallucination_rate": (
            hallucination_counts(
                output_index=draw, assertive=assertive, supported=supported, n_outputs=size
            ),
            hallucination_counts(
                output_index=draw,
                assertive=judged(assertive, "assertive", rng),
                supported=judged(supported, "supported", rng),
                n_outputs=size,
            ),
        ),
        "key_element_capture": (
            key_element_counts(output_index=element_draw, captured=captured, n_outputs=size),
            key_element_counts(
                output_index=element_draw,
                captured=judged(captured, "captured", rng),
                n_outputs=size,
            ),
        ),
    }


def population_values() -> dict[str, float]:
    truth = {
        metric: pair[0]
        for metric, pair in counts(np.arange(POOL), np.random.default_rng(0)).items()
    }
    hall, kec = truth["hallucination_rate"], truth["key_element_capture"]
    return {
        "hallucination_rate": float(hall.numerator.sum() / hall.denominator.sum()),
        "key_element_capture": float(np.mean(kec.numerator / kec.denominator)),
    }


@dataclass(frozen=True)
class GatedErrors:
    unsafe: float
    human_unsafe: float
    ppi_share: float
    width: float
    human_width: float


def simulate(*, n_labeled: int, seed: int) -> dict[str, GatedErrors]:
    """Return per metric the gated record's unsafe-side error, in 0..1, and mean widths."""
    rng = np.random.default_rng(seed)
    targets = {metric: 100.0 * value for metric, value in population_values().items()}
    rows = {metric: np.zeros((EVALUATIONS, 5)) for metric in METRICS}
    for evaluation in range(EVALUATIONS):
        chosen = rng.integers(0, POOL, size=N_OUTPUTS)
        labeled = np.zeros(N_OUTPUTS, dtype=bool)
        labeled[rng.choice(N_OUTPUTS, size=n_labeled, replace=False)] = True
        for metric, (truth, judge) in counts(chosen, rng).items():
            data = OutputUnits(
                output_id=np.arange(N_OUTPUTS),
                labeled=labeled,
                d=truth.denominator,
                f_num=judge.numerator,
                h_num=np.where(labeled, truth.numerator, np.nan),
            )
            record = estimate_unit_metric(metric, data, confidence=CONFIDENCE)
            human = record.human_only
            assert record.lo is not None and record.hi is not None and human is not None
            target = targets[metric]
            if metric == "hallucination_rate":  # lower is better: the gate uses the upper bound
                unsafe, human_unsafe = record.hi < target, human.hi < target
            else:
                unsafe, human_unsafe = record.lo > target, human.lo > target
            rows[metric][evaluation] = (
                unsafe,
                human_unsafe,
                record.mode == "PPI",
                record.hi - record.lo,
                human.hi - human.lo,
            )
    result = {metric: GatedErrors(*values.mean(axis=0)) for metric, values in rows.items()}
    for metric, found in result.items():
        print(
            f"\n{metric} (N = {N_OUTPUTS}, n = {n_labeled}, {EVALUATIONS} evaluations): "
            f"unsafe-side error gated {100 * found.unsafe:.1f} %, human-only "
            f"{100 * found.human_unsafe:.1f} %; PPI gated in {100 * found.ppi_share:.0f} %; "
            f"mean width {found.width:.2f} (human-only {found.human_width:.2f}) points"
        )
    return result


@pytest.fixture(scope="module")
def at_n_50() -> dict[str, GatedErrors]:
    return simulate(n_labeled=50, seed=20_240_611)


@pytest.fixture(scope="module")
def at_n_150() -> dict[str, GatedErrors]:
    return simulate(n_labeled=150, seed=20_240_612)


def test_the_population_values_are_those_of_the_example_truth():
    # 13 hallucinated of 860 sentences; 19 of 130 outputs miss a key element (mean share).
    values = population_values()
    assert values["hallucination_rate"] == pytest.approx(13 / 860)
    assert values["key_element_capture"] == pytest.approx(0.95, abs=0.005)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("fixture", ["at_n_50", "at_n_150"])
def test_the_gated_bound_errs_on_the_unsafe_side_at_most_alpha_over_2(request, fixture, metric):
    found = request.getfixturevalue(fixture)[metric]
    assert found.unsafe <= LIMIT
    assert found.human_unsafe <= LIMIT


@pytest.mark.parametrize("metric", METRICS)
def test_below_100_graded_outputs_the_gate_uses_the_human_only_interval(at_n_50, metric):
    assert at_n_50[metric].ppi_share == 0.0
    assert at_n_50[metric].width == pytest.approx(at_n_50[metric].human_width)


@pytest.mark.parametrize("metric", METRICS)
def test_with_150_graded_outputs_the_gated_ppi_interval_is_narrower_than_human_only(
    at_n_150, metric
):
    found = at_n_150[metric]
    assert found.ppi_share == 1.0
    assert found.width < found.human_width
