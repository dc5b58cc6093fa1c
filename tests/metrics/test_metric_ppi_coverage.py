"""Coverage of the PPI++ interval of the unit-level estimators on the credit-memo example.

Population: the 130 outputs of ``examples/credit_memo/truth-*.jsonl`` (both systems), whose
sentence labels (assertive, supported) and key-element labels are the truth. The target is
their value: Σ hallucinated / Σ sentences over the 130 (1.51 %), and the mean over the 130 of
the per-output key-element capture share (95.0 %). In each simulated evaluation a judge scores
every output, each unit label flipped independently with a known asymmetric error rate
(:data:`JUDGE_ERRORS`, drawn afresh each time), and humans (= truth) grade a uniform random
sample of n outputs. Two designs:

- *superpopulation* (the model PPI's interval is built for: labeled and unlabeled outputs
  i.i.d. from one distribution): N = 1,000 outputs drawn with replacement from the 130, so the
  130 are the population the outputs come from;
- *finite population*: N = the 130 outputs themselves, n of them labeled. The interval has no
  finite-population correction (and counts the judge's mean over the unlabeled outputs as
  random), so it is conservative here: only a lower bound on coverage is checked.

Measured (4,000 evaluations each, Monte Carlo standard error ≈ 0.5 points; the test prints
them): with n = 50 the 90 % PPI++ interval under-covers in the superpopulation design (≈ 83 %
for the hallucination rate, ≈ 85 % for key-element capture; human-only ≈ 86–87 % and ≈ 88 %):
both rates sit near 0 or 1 and a dozen of the 130 outputs carry all the errors, so the normal
approximation is poor. This is SPEC §5.2's small-sample caveat and why the gate uses the
human-only interval below ``MIN_OUTPUTS_FOR_PPI_GATE``; the test pins it. Coverage rises
with n (hallucination rate ≈ 86 % at n = 100, ≈ 88 % at n = 200) and is within 90 ± 2.5 % at
n = 400, which the test checks. At every n the PPI++ interval is narrower than the
human-only one (about 0.8 times). In the finite-population design at n = 50 the missing
finite-population correction offsets the skew (≈ 90 % and ≈ 93 %).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from metrics.unit_estimators import (
    OutputCounts,
    OutputUnits,
    hallucination_counts,
    human_only_ratio,
    key_element_counts,
    ppi_ratio,
)

# About 12 s on one core: small enough to run in CI with the rest of the suite (not slow-marked).

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"
EVALUATIONS = 4_000
CONFIDENCE = 0.90
TOLERANCE = 2.5  # percentage points around 90 %
METRICS = ("hallucination_rate", "key_element_capture")

#: P(judge says 1 | truth 0) and P(judge says 0 | truth 1) per criterion: the judge
#: over-asserts, misses 30 % of unsupported sentences and over-credits key elements.
JUDGE_ERRORS = {
    "assertive": (0.10, 0.03),
    "supported": (0.30, 0.02),
    "captured": (0.40, 0.03),
}


@dataclass(frozen=True)
class Coverage:
    ppi: float
    human: float
    ppi_width: float
    human_width: float


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


def simulate(*, n_labeled: int, n_outputs: int | None, seed: int) -> dict[str, Coverage]:
    """Return PPI++ and human-only coverage and mean widths (in points) per metric.

    ``n_outputs=None`` is the finite-population design (the 130 outputs themselves),
    otherwise ``n_outputs`` are drawn with replacement from them.
    """
    rng = np.random.default_rng(seed)
    targets = population_values()
    size = POOL if n_outputs is None else n_outputs
    alpha = 1.0 - CONFIDENCE
    hits = {metric: np.zeros((EVALUATIONS, 4)) for metric in METRICS}
    for evaluation in range(EVALUATIONS):
        chosen = np.arange(POOL) if n_outputs is None else rng.integers(0, POOL, size=size)
        labeled = np.zeros(size, dtype=bool)
        labeled[rng.choice(size, size=n_labeled, replace=False)] = True
        for metric, (truth, judge) in counts(chosen, rng).items():
            data = OutputUnits(
                output_id=np.arange(size),
                labeled=labeled,
                d=truth.denominator,
                f_num=judge.numerator,
                h_num=np.where(labeled, truth.numerator, np.nan),
            )
            shares = metric == "key_element_capture"
            ppi = ppi_ratio(data, alpha=alpha, mean_of_shares=shares)
            human = human_only_ratio(data, alpha=alpha, mean_of_shares=shares)
            target = targets[metric]
            hits[metric][evaluation] = (
                ppi.lo <= target <= ppi.hi,
                human.lo <= target <= human.hi,
                ppi.hi - ppi.lo,
                human.hi - human.lo,
            )
    result = {metric: Coverage(*(100.0 * rows.mean(axis=0))) for metric, rows in hits.items()}
    design = "finite population N = 130" if n_outputs is None else f"N = {n_outputs} drawn"
    for metric, found in result.items():
        print(
            f"\n{metric} ({design}, n = {n_labeled}, {EVALUATIONS} evaluations): 90 % coverage "
            f"PPI++ {found.ppi:.1f} %, human-only {found.human:.1f} %; mean width PPI++ "
            f"{found.ppi_width:.2f}, human-only {found.human_width:.2f} points"
        )
    return result


@pytest.fixture(scope="module")
def at_n_50() -> dict[str, Coverage]:
    return simulate(n_labeled=50, n_outputs=1_000, seed=20_240_611)


@pytest.fixture(scope="module")
def at_n_400() -> dict[str, Coverage]:
    return simulate(n_labeled=400, n_outputs=1_200, seed=20_240_612)


def test_the_population_values_are_those_of_the_example_truth():
    # 13 hallucinated of 860 sentences; 19 of 130 outputs miss a key element (mean share).
    values = population_values()
    assert values["hallucination_rate"] == pytest.approx(13 / 860)
    assert values["key_element_capture"] == pytest.approx(0.95, abs=0.005)


@pytest.mark.parametrize("metric", METRICS)
def test_with_400_labeled_outputs_ppi_covers_the_population_value_at_90_percent(at_n_400, metric):
    assert abs(at_n_400[metric].ppi - 100.0 * CONFIDENCE) <= TOLERANCE


@pytest.mark.parametrize("metric", METRICS)
def test_with_50_labeled_outputs_ppi_under_covers_so_the_gate_uses_human_only(at_n_50, metric):
    # SPEC §5.2 small samples: the normal PPI interval under-covers a rate near 0 or 1 at
    # n = 50, by more than the human-only t interval does.
    found = at_n_50[metric]
    assert found.ppi < 100.0 * CONFIDENCE - TOLERANCE
    assert found.human > found.ppi


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("fixture", ["at_n_50", "at_n_400"])
def test_the_ppi_interval_is_narrower_than_the_human_only_one_at_the_same_n(
    request, fixture, metric
):
    found = request.getfixturevalue(fixture)[metric]
    assert found.ppi_width < found.human_width


def test_the_130_outputs_as_a_finite_population_are_covered_at_least_nominally():
    found = simulate(n_labeled=50, n_outputs=None, seed=20_240_613)
    for metric in METRICS:
        assert found[metric].ppi >= 100.0 * CONFIDENCE - TOLERANCE
        assert found[metric].ppi_width < found[metric].human_width
