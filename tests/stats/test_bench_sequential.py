"""How ``make bench`` compares grading until decided with fixed n (bench/cases_sequential.py).

The comparison is only honest if both designs' P(correct) is read the same way: a status is
a decision when the SPEC §6.1 rule gives it from the lower bound and from the upper bound
alike, so that a fixed-n interval straddling θout is no more a Reject than a sequence
straddling it.
"""

import numpy as np
import pytest

from bench.cases_sequential import FixedCurve, Row, group_design_n, group_of, status_of
from enterpriseval.stats.sequential_sim import CONDITIONAL, REJECT, SCALE


@pytest.mark.parametrize(
    ("bound", "status"),
    [(0.86, SCALE), (0.85, CONDITIONAL), (0.76, CONDITIONAL), (0.75, REJECT), (0.1, REJECT)],
)
def test_status_of_a_bound_follows_the_gate_with_strict_inequalities(bound, status):
    assert status_of(bound) == status


def test_an_interval_straddling_theta_out_is_not_a_settled_reject():
    lower, upper = 0.70, 0.78  # the gate reads Reject from the lower bound alone
    assert status_of(lower) == REJECT
    assert status_of(upper) != status_of(lower)  # not settled: "grade about N more"


def test_the_smallest_fixed_n_is_interpolated_between_grid_points():
    curve = FixedCurve(n=(10, 20, 40), settled=(0.1, 0.5, 0.9), gate_read=(1.0, 1.0, 1.0))
    # 0.7 lies half-way from 0.5 (n = 20) to 0.9 (n = 40): n = 30
    assert curve.smallest_n(0.7) == pytest.approx(30.0)
    assert curve.smallest_n(0.5) == pytest.approx(20.0)
    assert curve.smallest_n(0.05) == pytest.approx(10.0)
    assert curve.smallest_n(0.95) is None  # no n below N reaches it: the caller counts N
    # the gate-read curve makes any n "correct" for a true Reject: the first n
    assert curve.smallest_n(1.0, "gate_read") == pytest.approx(10.0)


def test_a_dip_in_the_fixed_curve_does_not_make_the_fixed_design_look_cheaper():
    """Larger n never hurts a fixed design: a noisy dip is read as the running maximum."""
    curve = FixedCurve(n=(10, 20, 30), settled=(0.6, 0.4, 0.8), gate_read=(0, 0, 0))
    assert curve.smallest_n(0.5) == pytest.approx(10.0)
    assert curve.smallest_n(0.7) == pytest.approx(25.0)  # 0.6 → 0.8 between 20 and 30


@pytest.mark.parametrize(
    ("truth", "group"),
    [
        (0.65, "clear reject"),
        (0.70, "near reject"),
        (0.80, "near conditional"),
        (0.90, "near scale"),
        (0.95, "clear scale"),
    ],
)
def test_cells_are_grouped_by_distance_to_the_nearest_threshold(truth, group):
    assert group_of(truth) == group


def test_the_fixed_curve_reaches_certainty_at_a_census():
    """At n = N a fixed design knows the population value: P(correct) = 1, joined linearly."""
    curve = FixedCurve(n=(10, 20, 40), settled=(0.1, 0.5, 0.9), gate_read=(0, 0, 0))
    sizes = np.array([10.0, 15.0, 40.0, 70.0, 100.0])
    # 15: half-way 0.1 → 0.5; 70: half-way from (40, 0.9) to the census (100, 1.0)
    assert curve.correct_at(sizes, 100) == pytest.approx([0.1, 0.3, 0.9, 0.95, 1.0])


def _row(seq_correct, n_fixed, curve, seq_grades=50.0):
    return Row(
        design="τ=0.5 fixed",
        budget=0.4,
        group="clear scale",
        distance=0.1,
        seq_grades=seq_grades,
        seq_correct=seq_correct,
        n_fixed=n_fixed,
        curve=curve,
        n_total=100,
        floor=0.0,
    )


def test_one_fixed_design_for_a_group_is_sized_for_its_hardest_cell_or_its_mean():
    easy = FixedCurve(n=(10, 20, 40), settled=(0.9, 1.0, 1.0), gate_read=(0, 0, 0))
    hard = FixedCurve(n=(10, 20, 40), settled=(0.1, 0.5, 0.9), gate_read=(0, 0, 0))
    rows = [
        _row(0.95, easy.smallest_n(0.95), easy),  # 15 (half-way 0.9 → 1.0)
        _row(0.9, hard.smallest_n(0.9), hard),  # 40
    ]
    assert [row.n_fixed for row in rows] == pytest.approx([15.0, 40.0])
    # every cell: the hardest cell's n
    assert group_design_n(rows, every_cell=True) == pytest.approx(40.0)
    # on average: the mean P at n must reach (0.95 + 0.9)/2 = 0.925. Between 20 and 40 the
    # easy curve is 1.0 and the hard one 0.5 + 0.02·(n − 20), so the mean is
    # 0.75 + 0.01·(n − 20) ≥ 0.925 ⇔ n ≥ 37.5: the first whole n is 38.
    assert group_design_n(rows, every_cell=False) == pytest.approx(38.0)
