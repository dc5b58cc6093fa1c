"""The bench harness interleaves ours with the reference and reports medians and ranges."""

from __future__ import annotations

from dataclasses import astuple

import numpy as np
import pytest

from bench.harness import Case, batch_calls, interleaved_order, measure


class FakeClock:
    """A clock that advances only when a timed side runs, by the cost scripted for the call."""

    def __init__(self) -> None:
        self.now = 0.0
        self.calls: list[str] = []

    def __call__(self) -> float:
        return self.now

    def side(self, name: str, costs: list[float], value: object):
        def run() -> object:
            self.calls.append(name)
            self.now += costs[min(len(self.calls) - 1, len(costs) - 1)]
            return value

        return run


def test_the_sides_alternate_which_runs_first_in_each_repetition():
    assert interleaved_order(4) == [
        ("ours", "reference"),
        ("reference", "ours"),
        ("ours", "reference"),
        ("reference", "ours"),
    ]


def test_measure_runs_the_sides_in_the_interleaved_order_after_one_warm_up_each():
    clock = FakeClock()
    case = Case("c", clock.side("A", [1.0], 1.0), clock.side("B", [2.0], 1.0))
    timing = measure(case, 3, min_batch_s=0.0, clock=clock)
    assert clock.calls == ["A", "B", "A", "B", "B", "A", "A", "B"]
    assert timing.order == (("ours", "reference"), ("reference", "ours"), ("ours", "reference"))


def test_medians_ranges_and_the_paired_ratio_match_numpy():
    # The k-th call costs costs[k] whichever side makes it: a machine whose load changes
    # between repetitions, so each side's times vary while the ratio within a repetition holds.
    costs = [0.1, 0.1]  # warm-ups
    per_repetition = [(1.0, 2.0), (8.0, 4.0), (3.0, 6.0), (5.0, 10.0), (9.0, 4.5)]
    for first, second in per_repetition:
        costs += [first, second]
    clock = FakeClock()
    calls: list[str] = []

    def side(name: str):
        def run() -> float:
            calls.append(name)
            clock.now += costs[len(calls) - 1]
            return 0.5

        return run

    timing = measure(Case("c", side("A"), side("B")), 5, min_batch_s=0.0, clock=clock)
    # ours ran first in repetitions 1, 3, 5 and second in 2, 4
    ours = np.array([1.0, 4.0, 3.0, 10.0, 9.0])
    reference = np.array([2.0, 8.0, 6.0, 5.0, 4.5])
    assert timing.ours_times == pytest.approx(tuple(ours))
    assert timing.reference_times == pytest.approx(tuple(reference))
    assert astuple(timing.ours) == pytest.approx((float(np.median(ours)), 1.0, 10.0))
    assert astuple(timing.reference) == pytest.approx((float(np.median(reference)), 2.0, 8.0))
    ratios = ours / reference
    assert timing.ratios == pytest.approx(tuple(ratios))
    assert timing.ratio == pytest.approx(float(np.median(ratios)))  # 0.5, not 4.0 / 5.0
    assert timing.ratio != pytest.approx(timing.ours_s / timing.reference_s)
    assert (timing.ratio_spread.low, timing.ratio_spread.high) == pytest.approx((0.5, 2.0))
    assert timing.identical


def test_a_fast_case_is_timed_per_call_over_a_batch():
    clock = FakeClock()
    case = Case("c", clock.side("A", [0.001], 0.0), clock.side("B", [0.004], 0.0))
    timing = measure(case, 3, min_batch_s=0.01, clock=clock)
    assert timing.calls == (10, 3)  # ⌈0.01 / 0.001⌉, ⌈0.01 / 0.004⌉
    assert clock.calls.count("A") == 1 + 3 * 10 and clock.calls.count("B") == 1 + 3 * 3
    assert timing.ours_times == pytest.approx((0.001,) * 3)
    assert timing.reference_times == pytest.approx((0.004,) * 3)
    assert batch_calls(0.2, 0.05) == 1


def test_results_that_differ_are_reported_and_nan_equals_nan():
    clock = FakeClock()
    differ = Case("c", clock.side("A", [1.0], [1.0, 2.0]), clock.side("B", [1.0], [1.0, 2.1]))
    assert not measure(differ, 3, min_batch_s=0.0, clock=clock).identical
    nan = Case("n", clock.side("A", [1.0], [np.nan, 1.0]), clock.side("B", [1.0], [np.nan, 1.0]))
    assert measure(nan, 3, min_batch_s=0.0, clock=clock).identical


def test_fewer_than_three_repetitions_are_refused():
    clock = FakeClock()
    case = Case("c", clock.side("A", [1.0], 0), clock.side("B", [1.0], 0))
    with pytest.raises(ValueError, match="repetitions: at least 3"):
        measure(case, 2, clock=clock)


def test_the_pages_bench_rotates_its_modes_and_reads_percentiles_as_numpy():
    from bench.cases_pages import MODES, modes_of, percentile

    orders = [modes_of(r) for r in range(4)]
    assert orders[0] == MODES and orders[3] == MODES
    assert [order[0] for order in orders[:3]] == list(MODES)  # each mode first once
    rng = np.random.default_rng(18)
    values = list(rng.lognormal(-3.0, 0.5, size=97))
    for q in (0.5, 0.95, 0.99):
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, 100 * q)))
