"""Coverage as a tested property (SPEC §5.3): the gated bound's unsafe-side error by cell.

Each cell of ``bench.coverage_table`` simulates evaluations with the truth exactly at the
threshold and calls the product's estimators on each; a cell fails when the share of
evaluations whose gated bound passes the truth exceeds α/2 by more than three Monte Carlo
standard errors. The fast grid runs in ``make test``; the larger grid, whose table is in
docs/statistics.md, in ``make test-slow``.
"""

from __future__ import annotations

import pytest

from bench.coverage_table import (
    KNOWN_LIMITS,
    Cell,
    fast_grid,
    mc_limit,
    slow_grid,
    unsafe_error,
    wald_estimate,
)


def _id(cell: Cell) -> str:
    return cell.label.replace(" | ", "/").replace(" ", "").replace("ρ", "rho")


@pytest.mark.parametrize("cell", fast_grid(), ids=_id)
def test_the_gated_bound_errs_on_the_unsafe_side_at_most_alpha_over_2(cell):
    result = unsafe_error(cell)
    assert result.unsafe <= result.limit, (
        f"{cell.label}: unsafe-side error {result.unsafe:.2%} > {result.limit:.2%}"
    )


def _with_known_limits(cells: list[Cell]) -> list:
    """Mark the cells where the bound is known to break its promise as strict xfails.

    Strict: if a change makes such a cell pass, the suite says so and the limit comes off
    the list (and out of docs/statistics.md).
    """
    return [
        pytest.param(cell, marks=pytest.mark.xfail(strict=True, reason=KNOWN_LIMITS[cell.label]))
        if cell.label in KNOWN_LIMITS
        else cell
        for cell in cells
    ]


@pytest.mark.slow
@pytest.mark.parametrize("cell", _with_known_limits(slow_grid()), ids=_id)
def test_the_gated_bound_keeps_its_promise_over_the_larger_grid(cell):
    result = unsafe_error(cell)
    assert result.unsafe <= result.limit, (
        f"{cell.label}: unsafe-side error {result.unsafe:.2%} > {result.limit:.2%}"
    )


def test_the_harness_fails_the_old_wald_bound_where_it_errs():
    # The old gated bound, the linearised cluster ratio with a t quantile, clipped at 0:
    # at 2 % with 18 graded outputs its upper limit falls below the truth far more often
    # than α/2 = 2.5 % (measured 11.7 %), and the product's bound passes the same cell.
    cell = Cell("hallucination_rate", 0.02, 18)
    old = unsafe_error(cell, wald_estimate)
    assert old.unsafe > old.limit
    assert unsafe_error(cell).unsafe <= old.limit


def test_the_monte_carlo_limit_is_alpha_over_2_plus_three_standard_errors():
    # 0.025 + 3·√(0.025·0.975/1000) = 0.025 + 3·0.004937 = 0.03981.
    assert mc_limit(0.025, 1_000) == pytest.approx(0.039811, abs=1e-6)


def test_a_cell_is_reproducible_from_its_seed():
    cell = Cell("key_element_capture", 0.9, 18, replicates=50)
    assert unsafe_error(cell).unsafe == unsafe_error(cell).unsafe
