"""Make the credit-memo example's decision inputs (seed 003, Use Case B, Table 4).

The pilot reported point estimates only. To show the gate on conservative bounds, this
generator lays out illustrative per-memo counts for a plausible pilot size (25 graded memo
sections) that reproduce every Table 4 estimate exactly, and computes each CI with
EnterpriseVal's own statistics: a cluster-robust ratio interval (CR1, t with G − 1 df)
over memo sections, because units (sentences, cited chunks, key elements, guidance items)
are clustered within outputs (SPEC §5.3). The counts and intervals are ILLUSTRATIVE, not
pilot data; the files say so.

Run ``python -m examples.credit_memo.generate`` to rewrite the YAML files beside it; a
test checks that the committed files equal what this script produces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml

from enterpriseval.stats import cluster_ratio_ci

HERE = Path(__file__).resolve().parent
MEMOS = 25
SEED = 20260417

# id, label, direction, θout, θin, units per memo, Table 4 estimate (%) per model.
# The printed irrelevance-rate pair (θout < 50, θin < 55) is inverted; SPEC §11 corrects
# θin to < 45. ``table4_as_printed.yaml`` keeps the printed pair to show the refusal.
METRICS: list[dict[str, Any]] = [
    {
        "id": "citation_precision_lenient",
        "label": "Citation precision (lenient)",
        "direction": "higher",
        "theta_out": 65,
        "theta_in": 70,
        "unit": "cited chunk",
        "per_memo": 10,
        "estimates": {"gemini-2.5": 88.0, "llama-4": 76.0},
    },
    {
        "id": "key_element_capture",
        "label": "Key-element capture",
        "direction": "higher",
        "theta_out": 50,
        "theta_in": 55,
        "unit": "key element",
        "per_memo": 8,
        "estimates": {"gemini-2.5": 99.0, "llama-4": 96.0},
    },
    {
        "id": "irrelevance_rate",
        "label": "Irrelevance rate",
        "direction": "lower",
        "theta_out": 50,
        "theta_in": 45,
        "unit": "sentence",
        "per_memo": 20,
        "estimates": {"gemini-2.5": 23.0, "llama-4": 28.0},
    },
    {
        "id": "hallucination_rate",
        "label": "Hallucination rate",
        "direction": "lower",
        "theta_out": 10,
        "theta_in": 5,
        "unit": "sentence",
        "per_memo": 20,
        "estimates": {"gemini-2.5": 1.6, "llama-4": 3.2},
    },
    {
        "id": "guidance_precision",
        "label": "Guidance precision",
        "direction": "higher",
        "theta_out": 75,
        "theta_in": 80,
        "unit": "flagged guidance item",
        "per_memo": 4,
        "estimates": {"gemini-2.5": 98.0, "llama-4": 93.0},
    },
    {
        "id": "guidance_recall",
        "label": "Guidance recall",
        "direction": "higher",
        "theta_out": 75,
        "theta_in": 80,
        "unit": "breached guidance item",
        "per_memo": None,
        "total": 60,
        "estimates": {"gemini-2.5": 80.0, "llama-4": 95.0},
    },
]
MODELS = {"gemini-2.5": "Gemini 2.5", "llama-4": "Llama 4"}
ALTERNATIVE_WEIGHTS = {
    # Seed 003 §7.2's fidelity-weighted scheme; the named weights are kept and the other
    # four metrics share the remaining 0.45 equally (the paper's "0.15 each" sums to 1.15).
    "fidelity_heavy": {"hallucination_rate": 0.30, "citation_precision_lenient": 0.25},
}


def memo_denominators(metric: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    """Return units per memo: fixed where the unit count is fixed, else spread at random."""
    if metric["per_memo"] is not None:
        return np.full(MEMOS, metric["per_memo"], dtype=np.int64)
    counts = rng.multinomial(metric["total"] - MEMOS, np.full(MEMOS, 1 / MEMOS)) + 1
    return counts.astype(np.int64)


def memo_numerators(total: int, denominators: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Spread ``total`` events over memos at random, never more than a memo's units."""
    numerators = np.zeros_like(denominators)
    slots = np.repeat(np.arange(len(denominators)), denominators)
    chosen = rng.choice(len(slots), size=total, replace=False)
    np.add.at(numerators, slots[chosen], 1)
    return numerators


def metric_entry(metric: dict[str, Any], model: str, rng: np.random.Generator) -> dict[str, Any]:
    denominators = memo_denominators(metric, rng)
    units = int(denominators.sum())
    estimate = metric["estimates"][model]
    events = round(estimate / 100 * units)
    if not np.isclose(100 * events / units, estimate):
        raise ValueError(f"{metric['id']}: {estimate}% is not a whole count of {units} units")
    numerators = memo_numerators(events, denominators, rng)
    interval = cluster_ratio_ci(numerators, denominators, alpha=0.05)
    return {
        "id": metric["id"],
        "label": metric["label"],
        "direction": metric["direction"],
        "theta_out": metric["theta_out"],
        "theta_in": metric["theta_in"],
        "weight": 1,
        "estimate": estimate,
        # A proportion's linearised interval can overshoot [0, 1] near the boundary: clip.
        "ci": [round(100 * max(interval.lo, 0.0), 2), round(100 * min(interval.hi, 1.0), 2)],
        "grading": "H",
        "n": units,
        "n_outputs": MEMOS,
    }


def decision_input(model: str, *, printed_pair: bool = False) -> dict[str, Any]:
    rng = np.random.default_rng([SEED, list(MODELS).index(model)])
    metrics = [metric_entry(metric, model, rng) for metric in METRICS]
    if printed_pair:
        for entry in metrics:
            if entry["id"] == "irrelevance_rate":
                entry["theta_in"] = 55
    return {
        "about": {
            "use_case": "B — credit-memo drafting (A1/C3, E2)",
            "model": MODELS[model],
            "source": "seed 003 Table 4 (human-graded point estimates)",
            "illustrative": (
                "Illustrative: the pilot published point estimates without sample sizes or "
                f"intervals. The CIs here come from synthetic per-memo counts ({MEMOS} graded "
                "memo sections) that reproduce each Table 4 estimate exactly, with "
                "cluster-robust 95% intervals over memo sections. They show how the gate "
                "reads real bounds; they are not pilot evidence."
            ),
            "notes": [
                "Overall accuracy (composite) is reported in Table 4 but not gated.",
                "Irrelevance-rate thresholds: the printed pair (θout < 50, θin < 55) is "
                "inverted and refused; the corrected pair θout < 50, θin < 45 is used.",
                "κ was not reported in the pilot (graders were not always blind); at E2 the "
                "charter requires ≥ 2 graders and κ per field before a final decision.",
                "Harness parity between the two models was not documented: differences are "
                "not attributable to the model alone.",
            ],
        },
        "nu_max": 3,
        "kappa_min": 0.6,
        "metrics": metrics,
        "alternative_weights": ALTERNATIVE_WEIGHTS,
    }


def dump(data: dict[str, Any]) -> str:
    header = "# Generated by examples/credit_memo/generate.py; do not edit by hand.\n"
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def expected_files() -> dict[str, str]:
    """Return the file name → content of every generated decision input."""
    files = {f"{model}.yaml": dump(decision_input(model)) for model in MODELS}
    files["table4_as_printed.yaml"] = dump(decision_input("gemini-2.5", printed_pair=True))
    return files


def main() -> None:
    for name, content in expected_files().items():
        (HERE / name).write_text(content, encoding="utf-8")
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
