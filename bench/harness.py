"""A small timing harness: our function against a reference library, same inputs, interleaved.

Each case module under ``bench/`` exposes ``cases() -> Iterable[Case]``. The runner
(``bench/run.py``) measures each case with :func:`measure`:

1. one warm-up call of each side (imports, caches, first allocations), whose results are
   compared (rtol/atol, NaN equal to NaN) and whose time sizes the batches;
2. ``repetitions`` (≥ 3) repetitions, each timing one batch of our side and one batch of the
   reference's, back to back, in alternating order (ours first in the first repetition,
   the reference first in the second, …: ABBAAB…), so a load spike or a frequency change
   on a shared machine falls on both sides alike and neither side always runs second;
3. a batch repeats its function until it has run ``min_batch_s`` (timeit's autorange: a
   millisecond case is timed over many calls, not one) and gives the time per call.

Each repetition gives one time per side and their ratio ours/reference (paired: both taken
within the same few hundred milliseconds). A :class:`Timing` reports the median and the
range (min–max) of each side and of the ratio over the repetitions.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MIN_REPETITIONS = 3
OURS, REFERENCE = "ours", "reference"


@dataclass(frozen=True)
class Case:
    name: str
    ours: Callable[[], Any]
    reference: Callable[[], Any]
    rtol: float = 1e-9
    atol: float = 1e-12


@dataclass(frozen=True)
class Spread:
    """The median and range (min–max) of one figure over the repetitions."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        if not values:
            raise ValueError("values: at least one repetition is needed for a median")
        return cls(statistics.median(values), min(values), max(values))


@dataclass(frozen=True)
class Timing:
    """One case measured: seconds per call of each side in each repetition, in run order."""

    name: str
    ours_times: tuple[float, ...]
    reference_times: tuple[float, ...]
    identical: bool
    ours_value: Any
    reference_value: Any
    order: tuple[tuple[str, str], ...] = ()  # which side ran first in each repetition
    calls: tuple[int, int] = (1, 1)  # calls per batch: ours, reference

    @property
    def ratios(self) -> tuple[float, ...]:
        """Ours/reference in each repetition (the two batches of a repetition ran together)."""
        return tuple(o / r for o, r in zip(self.ours_times, self.reference_times, strict=True))

    @property
    def ours(self) -> Spread:
        return Spread.of(self.ours_times)

    @property
    def reference(self) -> Spread:
        return Spread.of(self.reference_times)

    @property
    def ratio_spread(self) -> Spread:
        return Spread.of(self.ratios)

    @property
    def ours_s(self) -> float:
        return self.ours.median

    @property
    def reference_s(self) -> float:
        return self.reference.median

    @property
    def ratio(self) -> float:
        """The median of the per-repetition ratios (not the ratio of the medians)."""
        return self.ratio_spread.median


def agree(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Return whether two results agree element-wise (NaN equal to NaN)."""
    left = np.asarray(a, dtype=np.float64)
    right = np.asarray(b, dtype=np.float64)
    return left.shape == right.shape and bool(
        np.allclose(left, right, rtol=rtol, atol=atol, equal_nan=True)
    )


def interleaved_order(repetitions: int) -> list[tuple[str, str]]:
    """Return which side runs first and second in each repetition: AB, BA, AB, …"""
    return [(OURS, REFERENCE) if i % 2 == 0 else (REFERENCE, OURS) for i in range(repetitions)]


def batch_calls(warm_up_s: float, min_batch_s: float) -> int:
    """Return how many calls make a batch of at least ``min_batch_s`` (at least one)."""
    return max(1, math.ceil(min_batch_s / max(warm_up_s, 1e-6)))


def measure(
    case: Case,
    repetitions: int = 5,
    *,
    min_batch_s: float = 0.05,
    clock: Callable[[], float] = time.perf_counter,
) -> Timing:
    """Time ``case``'s two sides interleaved over ``repetitions`` and check they agree.

    Raises
    ------
    ValueError
        If ``repetitions`` is below 3 (no median or range worth printing).
    """
    if repetitions < MIN_REPETITIONS:
        raise ValueError(f"repetitions: at least {MIN_REPETITIONS}, got {repetitions}")
    functions = {OURS: case.ours, REFERENCE: case.reference}
    values: dict[str, Any] = {}
    calls: dict[str, int] = {}
    for side, fn in functions.items():
        started = clock()
        values[side] = fn()
        calls[side] = batch_calls(clock() - started, min_batch_s)
    times: dict[str, list[float]] = {OURS: [], REFERENCE: []}
    order = interleaved_order(repetitions)
    for pair in order:
        for side in pair:
            fn, count = functions[side], calls[side]
            started = clock()
            for _ in range(count):
                fn()
            times[side].append((clock() - started) / count)
    return Timing(
        name=case.name,
        ours_times=tuple(times[OURS]),
        reference_times=tuple(times[REFERENCE]),
        identical=agree(values[OURS], values[REFERENCE], case.rtol, case.atol),
        ours_value=values[OURS],
        reference_value=values[REFERENCE],
        order=tuple(order),
        calls=(calls[OURS], calls[REFERENCE]),
    )


def spread_text(spread: Spread, scale: float = 1e3, unit: str = "ms") -> str:
    """Return ``median (low–high) unit``, seconds scaled to ``unit``."""
    return (
        f"{spread.median * scale:8.2f} {unit} ({spread.low * scale:.2f}–{spread.high * scale:.2f})"
    )
