"""How ``make bench`` compares grading until decided with fixed n (bench/cases_sequential.py).

The comparison is only honest if both designs' P(correct) is read the same way: a status is
a decision when the SPEC §6.1 rule gives it from the lower bound and from the upper bound
alike, so that a fixed-n interval straddling θout is no more a Reject than a sequence
straddling it.
"""

import pytest

from bench.cases_sequential import FixedCurve, group_of, status_of
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
