"""The pure sampler: one sample per arm (the planned n per σ), π within the arm (SPEC §5.3)."""

from __future__ import annotations

from collections import Counter

import pytest

from grading.sampling import Candidate, draw_arms, draw_sample


def population() -> list[Candidate]:
    # σ A: runs 1 (6 outputs) and 2 (4 outputs); σ B: run 3 (5 outputs).
    return (
        [Candidate(("a", i), "run:1", "sigma:A") for i in range(6)]
        + [Candidate(("a", 6 + i), "run:2", "sigma:A") for i in range(4)]
        + [Candidate(("b", i), "run:3", "sigma:B") for i in range(5)]
    )


def test_each_arm_draws_its_own_size_with_its_own_inclusion_probability():
    sample = draw_arms(population(), {"sigma:A": 5, "sigma:B": 2}, seed=3)
    by_arm = Counter(item.id[0] for item in sample)
    assert by_arm == {"a": 5, "b": 2}
    for item in sample:
        assert item.inclusion_probability == pytest.approx(0.5 if item.id[0] == "a" else 0.4)


def test_stratified_arms_allocate_within_the_arm_only():
    sample = draw_arms(population(), {"sigma:A": 5, "sigma:B": 2}, seed=3, design="stratified")
    # σ A: 5 over strata of 6 and 4 → 3 and 2 (π = 3/6 = 2/4 = 0.5); σ B: 2 of 5 (π = 0.4).
    assert Counter(item.stratum for item in sample) == {"run:1": 3, "run:2": 2, "run:3": 2}
    assert {item.stratum: item.inclusion_probability for item in sample} == {
        "run:1": pytest.approx(0.5),
        "run:2": pytest.approx(0.5),
        "run:3": pytest.approx(0.4),
    }


def test_one_arm_draws_what_draw_sample_draws():
    candidates = [c for c in population() if c.arm == "sigma:A"]
    for design in ("uniform", "stratified"):
        assert draw_arms(candidates, {"sigma:A": 4}, seed=11, design=design) == draw_sample(
            candidates, 4, seed=11, design=design
        )


def test_the_sample_is_in_population_order_and_reproducible():
    first = draw_arms(population(), {"sigma:A": 5, "sigma:B": 2}, seed=8)
    assert first == draw_arms(population(), {"sigma:A": 5, "sigma:B": 2}, seed=8)
    order = [c.id for c in population()]
    assert [order.index(item.id) for item in first] == sorted(order.index(i.id) for i in first)


@pytest.mark.parametrize(
    ("sizes", "fragment"),
    [
        ({"sigma:A": 5}, "expected a size for each arm"),
        ({"sigma:A": 11, "sigma:B": 2}, "arm 'sigma:A' must draw between 1 and its 10"),
        ({"sigma:A": 5, "sigma:B": 0}, "arm 'sigma:B' must draw between 1 and its 5"),
    ],
)
def test_it_refuses_sizes_that_do_not_fit_the_arms(sizes, fragment):
    with pytest.raises(ValueError, match=fragment):
        draw_arms(population(), sizes, seed=1)
