"""The planted population values of Use Case A's gated metrics, from the truth files.

What ``make demo`` prints beside each estimate, defined as docs/statistics.md defines the
estimates: accuracy is the share of the 40 graded tasks whose label at the first repeat equals
the gold label, macro-F1 the mean over the three labels of per-class F1 = 2TP / (2TP + FP + FN)
at the first repeat, and pass^k = mean over tasks of C(c, k) / C(K, k) with c the task's K = 4
repeats whose label equals the gold (SPEC §4: success by the rule ``label_equals_gold``).
The unit metrics are pooled as the estimators pool them: hallucination and irrelevance over
sentences, key-element capture as the mean over outputs of the share captured, guidance
precision over flagged items and recall over mandatory items truly missing (SPEC §4: advisory
items never enter its denominator).
"""

from __future__ import annotations

import json
from collections import defaultdict
from math import comb
from pathlib import Path
from typing import Any

from examples.use_case_a.make_outputs import REPEATS
from examples.use_case_a.make_tasks import HERE, LABELS

PASS_K = (1, 2, 4)


def truth(sigma: str, directory: Path = HERE) -> list[dict[str, Any]]:
    """Return the planted truth records of σ's graded outputs."""
    text = (directory / f"truth-{sigma}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def classification(records: list[dict[str, Any]]) -> dict[str, float]:
    """Return accuracy, macro-F1 and pass^1/2/4 (percent) of the planted labels."""
    first = [r for r in records if r["repeat"] == 0]
    f1 = []
    for label in LABELS:
        tp = sum(r["label"] == label == r["gold_label"] for r in first)
        fp = sum(r["label"] == label != r["gold_label"] for r in first)
        fn = sum(r["gold_label"] == label != r["label"] for r in first)
        f1.append(2 * tp / (2 * tp + fp + fn))
    successes: dict[str, int] = defaultdict(int)
    for record in records:
        successes[record["task_id"]] += record["label"] == record["gold_label"]
    values = {
        "classification_accuracy": 100
        * sum(r["label"] == r["gold_label"] for r in first)
        / len(first),
        "classification_macro_f1": 100 * sum(f1) / len(f1),
    }
    for k in PASS_K:
        share = sum(comb(c, k) / comb(REPEATS, k) for c in successes.values()) / len(successes)
        values[f"pass^{k}"] = 100 * share
    return values


def unit_rates(records: list[dict[str, Any]]) -> dict[str, float]:
    """Return the planted hallucination, irrelevance, key-element and guidance rates (percent)."""
    sentences = [s for r in records for s in r["sentences"]]
    items = [g for r in records for g in r["guidance"].values()]
    flagged = [g for g in items if g["flagged"]]
    missing = [g for g in items if g["mandatory"] and g["breached"]]
    captured = [
        sum(v == "present_correct" for v in r["key_elements"].values()) / len(r["key_elements"])
        for r in records
    ]
    return {
        "hallucination_rate": 100
        * sum(s["assertive"] and not s["supported"] for s in sentences)
        / len(sentences),
        "irrelevance_rate": 100 * sum(not s["relevant"] for s in sentences) / len(sentences),
        "key_element_capture": 100 * sum(captured) / len(captured),
        "guidance_precision": 100 * sum(g["breached"] for g in flagged) / len(flagged),
        "guidance_recall": 100 * sum(g["flagged"] for g in missing) / len(missing),
    }


def planted(sigma: str, directory: Path = HERE) -> dict[str, float]:
    """Return every planted figure of σ the demo prints, by metric id (and pass^k)."""
    records = truth(sigma, directory)
    return classification(records) | unit_rates(records)
