"""The hand calculation of Use Case A's classification figures (seed 003 §7.1 example).

Counted by hand from ``examples/use_case_a/truth-<σ>.jsonl`` and written out as fractions, so
tests can pin the product's estimates and the demo's planted figures to it without calling any
estimator of the product. As docs/statistics.md defines them, accuracy and macro-F1 read each
task's label at its first repeat (40 tasks); pass^k reads the K = 4 repeats of every task.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

#: The counts of the truth files: correct labels at repeat 0 (of 40 tasks); (TP, FP, FN) per
#: label at repeat 0; tasks by number c of correct repeats (of 4).
HAND = {
    "gemini-2-5-flash": {
        "correct_first": 33,
        "counts_first": {
            "compliant": (14, 2, 1),
            "partially compliant": (12, 2, 2),
            "non-compliant": (7, 3, 4),
        },
        "tasks_by_c": {0: 2, 1: 2, 2: 6, 3: 10, 4: 20},
    },
    "gemini-2-5-pro": {
        "correct_first": 36,
        "counts_first": {
            "compliant": (14, 2, 1),
            "partially compliant": (13, 1, 1),
            "non-compliant": (9, 1, 2),
        },
        "tasks_by_c": {2: 4, 3: 6, 4: 30},
    },
}
#: What the hand calculation gives, in percent, written out (per class F1 = 2TP/(2TP+FP+FN)):
#: Flash: accuracy 33/40; macro-F1 = (28/31 + 24/28 + 14/21) / 3; pass^1 = (1 + 2·2 + 6·2 +
#: 10·3 + 20·4) / 160 = 124/160; pass^2 = (6·1 + 10·3 + 20·6) / (40·6) = 156/240; pass^4 = 20/40.
#: Pro: accuracy 36/40; macro-F1 = (28/31 + 26/28 + 18/21) / 3; pass^1 = (4·2 + 6·3 + 30·4) / 160
#: = 146/160; pass^2 = (4·1 + 6·3 + 30·6) / 240 = 202/240; pass^4 = 30/40.
EXPECTED = {
    "gemini-2-5-flash": {
        "classification_accuracy": 82.5,
        "classification_macro_f1": 100 * (28 / 31 + 24 / 28 + 14 / 21) / 3,
        "pass^1": 77.5,
        "pass^2": 65.0,
        "pass^4": 50.0,
    },
    "gemini-2-5-pro": {
        "classification_accuracy": 90.0,
        "classification_macro_f1": 100 * (28 / 31 + 26 / 28 + 18 / 21) / 3,
        "pass^1": 91.25,
        "pass^2": 100 * 202 / 240,
        "pass^4": 75.0,
    },
}


def hand_figures(sigma: str) -> dict[str, float]:
    """Return the figures from the pinned counts, with exact fractions."""
    hand = HAND[sigma]
    tasks = sum(hand["tasks_by_c"].values())
    figures = {"classification_accuracy": 100 * Fraction(hand["correct_first"], tasks)}
    f1 = [Fraction(2 * tp, 2 * tp + fp + fn) for tp, fp, fn in hand["counts_first"].values()]
    figures["classification_macro_f1"] = 100 * sum(f1) / len(f1)
    for k in (1, 2, 4):
        subsets = len(list(itertools.combinations(range(4), k)))
        per_task = {
            c: Fraction(len(list(itertools.combinations(range(c), k))), subsets) for c in range(5)
        }
        figures[f"pass^{k}"] = (
            100 * sum(n * per_task[c] for c, n in hand["tasks_by_c"].items()) / tasks
        )
    return {key: float(value) for key, value in figures.items()}
