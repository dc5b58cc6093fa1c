"""The hand calculation of Use Case A's classification figures (seed 003 §7.1 example).

Counted by hand from ``examples/use_case_a/truth-<σ>.jsonl`` and written out as fractions, so
tests can pin the product's estimates and the demo's planted figures to it without calling any
estimator of the product.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

#: The hand calculation, from the counts of the truth files (see the test below):
#: correct outputs of 160; tasks by number of correct repeats (c = 0..4); (TP, FP, FN) per label.
HAND = {
    "gemini-2-5-flash": {
        "correct": 124,
        "tasks_by_c": {0: 2, 1: 2, 2: 6, 3: 10, 4: 20},
        "counts": {
            "compliant": (50, 13, 10),
            "partially compliant": (46, 11, 10),
            "non-compliant": (28, 12, 16),
        },
    },
    "gemini-2-5-pro": {
        "correct": 146,
        "tasks_by_c": {2: 4, 3: 6, 4: 30},
        "counts": {
            "compliant": (53, 6, 7),
            "partially compliant": (52, 5, 4),
            "non-compliant": (41, 3, 3),
        },
    },
}
#: What the hand calculation gives, in percent, written out:
#: Flash: accuracy 124/160; pass^2 = (6·1 + 10·3 + 20·6) / (40·6) = 156/240; pass^4 = 20/40;
#: macro-F1 = (100/123 + 92/113 + 56/84) / 3.
#: Pro: accuracy 146/160; pass^2 = (4·1 + 6·3 + 30·6) / 240 = 202/240; pass^4 = 30/40;
#: macro-F1 = (106/119 + 104/113 + 82/88) / 3.
EXPECTED = {
    "gemini-2-5-flash": {
        "classification_accuracy": 77.5,
        "pass^1": 77.5,
        "pass^2": 65.0,
        "pass^4": 50.0,
        "classification_macro_f1": 100 * (100 / 123 + 92 / 113 + 56 / 84) / 3,
    },
    "gemini-2-5-pro": {
        "classification_accuracy": 91.25,
        "pass^1": 91.25,
        "pass^2": 100 * 202 / 240,
        "pass^4": 75.0,
        "classification_macro_f1": 100 * (106 / 119 + 104 / 113 + 82 / 88) / 3,
    },
}


def hand_figures(sigma: str) -> dict[str, float]:
    """Return the figures from the pinned counts, with exact fractions."""
    hand = HAND[sigma]
    tasks = sum(hand["tasks_by_c"].values())
    figures = {"classification_accuracy": 100 * Fraction(hand["correct"], tasks * 4)}
    for k in (1, 2, 4):
        per_task = {
            c: Fraction(
                len(list(itertools.combinations(range(c), k))),
                len(list(itertools.combinations(range(4), k))),
            )
            for c in range(5)
        }
        figures[f"pass^{k}"] = (
            100 * sum(n * per_task[c] for c, n in hand["tasks_by_c"].items()) / tasks
        )
    f1 = [Fraction(2 * tp, 2 * tp + fp + fn) for tp, fp, fn in hand["counts"].values()]
    figures["classification_macro_f1"] = 100 * sum(f1) / len(f1)
    return {key: float(value) for key, value in figures.items()}
