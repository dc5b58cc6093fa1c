"""A small timing harness: our function against a reference library, same inputs.

Each case module under ``bench/`` exposes ``cases() -> Iterable[Case]``. The runner
(``bench/run.py``) times both sides (best of ``repeat`` runs after one warm-up),
checks the results agree, and prints the ratio ours/reference.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Case:
    name: str
    ours: Callable[[], Any]
    reference: Callable[[], Any]
    rtol: float = 1e-9
    atol: float = 1e-12


@dataclass(frozen=True)
class Timing:
    name: str
    ours_s: float
    reference_s: float
    identical: bool
    ours_value: Any
    reference_value: Any

    @property
    def ratio(self) -> float:
        return self.ours_s / self.reference_s


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Return the best wall time of ``repeat`` calls after one warm-up, and the result."""
    result = fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def agree(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Return whether two results agree element-wise (NaN equal to NaN)."""
    left = np.asarray(a, dtype=np.float64)
    right = np.asarray(b, dtype=np.float64)
    return left.shape == right.shape and bool(
        np.allclose(left, right, rtol=rtol, atol=atol, equal_nan=True)
    )


def measure(case: Case, repeat: int = 5) -> Timing:
    ours_s, ours_value = best_time(case.ours, repeat)
    ref_s, ref_value = best_time(case.reference, repeat)
    return Timing(
        name=case.name,
        ours_s=ours_s,
        reference_s=ref_s,
        identical=agree(ours_value, ref_value, case.rtol, case.atol),
        ours_value=ours_value,
        reference_value=ref_value,
    )
