"""Cohen's κ, Fleiss' κ and Krippendorff's α against reference libraries and worked examples."""

from __future__ import annotations

import math
import warnings
from typing import Any

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from enterpriseval.stats import agreement, cohens_kappa, fleiss_kappa, krippendorff_alpha

WEIGHTS = [None, "linear", "quadratic"]
LEVELS = ["nominal", "ordinal", "interval", "ratio"]
PROPERTY_SETTINGS = settings(max_examples=60, deadline=None)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C:
# 4 observers (rows) × 12 units, None where an observer did not rate the unit.
KRIPPENDORFF_EXAMPLE_C = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]

# Fleiss (1971), Table 1: 30 patients, each diagnosed by 6 psychiatrists into 5 categories
# (depression, personality disorder, schizophrenia, neurosis, other); row = counts per category.
FLEISS_1971_COUNTS = [
    [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1],
    [0, 0, 5, 0, 1], [3, 0, 0, 1, 2], [5, 1, 0, 0, 0], [0, 2, 0, 4, 0], [1, 0, 2, 0, 3],
    [0, 0, 0, 0, 6], [0, 1, 0, 5, 0], [0, 2, 0, 1, 3], [2, 0, 0, 4, 0], [1, 0, 0, 4, 1],
    [0, 5, 0, 1, 0], [4, 0, 0, 0, 2], [0, 2, 0, 4, 0], [1, 0, 5, 0, 0], [0, 0, 0, 0, 6],
]  # fmt: skip

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects × 14 raters × 5 categories.
WIKIPEDIA_FLEISS_COUNTS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]  # fmt: skip


def ratings_from_counts(counts: list[list[int]]) -> np.ndarray:
    """Return units × raters labels 1..k from a units × categories table of counts."""
    return np.array([np.repeat(np.arange(1, len(row) + 1), row) for row in counts])


def correlated_labels(
    rng: np.random.Generator, n: int, n_labels: int, agreement_rate: float = 0.6
) -> tuple[np.ndarray, np.ndarray]:
    """Return two raters' labels 0..n_labels-1 who agree beyond chance."""
    first = rng.integers(0, n_labels, n)
    second = np.where(rng.random(n) < agreement_rate, first, rng.integers(0, n_labels, n))
    return first, second


def reliability_matrix(
    rng: np.random.Generator, n_raters: int, n_units: int, n_values: int, missing_rate: float
) -> np.ndarray:
    """Return raters × units values 0..n_values-1 around a true value, NaN where missing."""
    truth = rng.integers(0, n_values, n_units)
    noise = rng.integers(-1, 2, (n_raters, n_units)) * (rng.random((n_raters, n_units)) < 0.5)
    data = np.clip(truth + noise, 0, n_values - 1).astype(np.float64)
    data[rng.random(data.shape) < missing_rate] = np.nan
    return data


def same_or_both_nan(first: float, second: float, tol: float = 1e-12) -> bool:
    return (math.isnan(first) and math.isnan(second)) or math.isclose(
        first, second, rel_tol=tol, abs_tol=tol
    )


# --- Cohen's κ -------------------------------------------------------------------------------


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize(("n", "n_labels"), [(12, 2), (60, 3), (500, 5), (4000, 9)])
def test_cohens_kappa_equals_scikit_learn_on_random_labels(
    weights: str | None, n: int, n_labels: int
) -> None:
    rng = np.random.default_rng(1960 + n + n_labels)
    rater_a, rater_b = correlated_labels(rng, n, n_labels)
    expected = cohen_kappa_score(rater_a, rater_b, weights=weights)
    assert cohens_kappa(rater_a, rater_b, weights=weights) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohens_kappa_weights_follow_the_given_category_order_as_scikit_learn(
    weights: str | None,
) -> None:
    rng = np.random.default_rng(1968)
    rater_a, rater_b = correlated_labels(rng, 300, 6)
    categories = rng.permutation(8)  # two categories nobody used, in a shuffled order
    expected = cohen_kappa_score(rater_a, rater_b, weights=weights, labels=categories)
    actual = cohens_kappa(rater_a, rater_b, weights=weights, categories=categories)
    assert actual == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohens_kappa_on_string_labels_orders_them_as_scikit_learn(weights: str | None) -> None:
    rng = np.random.default_rng(37)
    codes_a, codes_b = correlated_labels(rng, 400, 12)
    names = np.array([f"grade-{code}" for code in range(12)])  # "grade-10" sorts before "grade-2"
    expected = cohen_kappa_score(names[codes_a], names[codes_b], weights=weights)
    actual = cohens_kappa(list(names[codes_a]), list(names[codes_b]), weights=weights)
    assert actual == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("scale", [10**12, 0.37])  # wide-range integers, non-integer floats
def test_cohens_kappa_on_labels_that_need_sorting_equals_scikit_learn_on_their_ranks(
    weights: str | None, scale: float
) -> None:
    rng = np.random.default_rng(60)
    codes_a, codes_b = correlated_labels(rng, 200, 6)
    expected = cohen_kappa_score(codes_a, codes_b, weights=weights)  # sklearn: no float labels
    actual = cohens_kappa(codes_a * scale - 3, codes_b * scale - 3, weights=weights)
    assert actual == pytest.approx(expected, abs=1e-9)


def test_cohens_kappa_is_zero_when_one_rater_is_constant_and_the_other_is_not() -> None:
    assert cohens_kappa(["yes"] * 4, ["yes", "no", "yes", "no"]) == pytest.approx(0.0)


@settings(max_examples=60, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=40),
    weights=st.sampled_from(WEIGHTS),
)
def test_cohens_kappa_is_symmetric_in_the_two_raters_and_at_most_one(
    pairs: list[tuple[int, int]], weights: Any
) -> None:
    rater_a, rater_b = (list(column) for column in zip(*pairs, strict=True))
    forward = cohens_kappa(rater_a, rater_b, weights=weights)
    backward = cohens_kappa(rater_b, rater_a, weights=weights)
    assert same_or_both_nan(forward, backward)
    assert math.isnan(forward) or forward <= 1.0 + 1e-12


@settings(max_examples=60, deadline=None)
@given(
    labels=st.lists(st.sampled_from(["low", "mid", "high", "n/a"]), min_size=2, max_size=40),
    weights=st.sampled_from(WEIGHTS),
)
def test_cohens_kappa_is_one_for_identical_non_constant_ratings(
    labels: list[str], weights: Any
) -> None:
    if len(set(labels)) < 2:
        labels = [*labels, "other"]
    assert cohens_kappa(labels, labels, weights=weights) == pytest.approx(1.0, abs=1e-12)


# --- Fleiss' κ -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_units", "n_raters", "n_labels"), [(8, 2, 2), (40, 3, 4), (300, 7, 6), (3000, 5, 3)]
)
def test_fleiss_kappa_equals_statsmodels_on_random_ratings(
    n_units: int, n_raters: int, n_labels: int
) -> None:
    rng = np.random.default_rng(1971 + n_units)
    truth = rng.integers(0, n_labels, (n_units, 1))
    ratings = np.where(
        rng.random((n_units, n_raters)) < 0.5, truth, rng.integers(0, n_labels, (n_units, n_raters))
    )
    expected = statsmodels_fleiss_kappa(aggregate_raters(ratings)[0])
    assert fleiss_kappa(ratings) == pytest.approx(expected, abs=1e-9)
    labels = np.array(["absent", "mild", "moderate", "severe", "critical", "fatal"])[ratings]
    assert fleiss_kappa(labels.tolist()) == pytest.approx(expected, abs=1e-9)


def test_fleiss_kappa_is_the_same_when_cells_are_counted_by_sorting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ratings = ratings_from_counts(FLEISS_1971_COUNTS)
    dense = fleiss_kappa(ratings)
    monkeypatch.setattr(agreement, "_MAX_DENSE_CELLS", 0)
    assert fleiss_kappa(ratings) == pytest.approx(dense, abs=1e-12)


def test_fleiss_kappa_reproduces_fleiss_1971_table_1() -> None:
    kappa = fleiss_kappa(ratings_from_counts(FLEISS_1971_COUNTS))
    assert round(kappa, 3) == 0.430  # as printed in Fleiss (1971)
    assert kappa == pytest.approx(0.4302445, abs=1e-7)  # R irr::kappam.fleiss(diagnoses)


def test_fleiss_kappa_reproduces_the_wikipedia_worked_example() -> None:
    assert round(fleiss_kappa(ratings_from_counts(WIKIPEDIA_FLEISS_COUNTS)), 3) == 0.210


# --- Krippendorff's α ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "expected"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_alpha_reproduces_krippendorff_2011_example_c(
    level: Any, expected: float
) -> None:
    alpha = krippendorff_alpha(KRIPPENDORFF_EXAMPLE_C, level=level)
    assert round(alpha, 3) == expected
    as_float = np.array(KRIPPENDORFF_EXAMPLE_C, dtype=np.float64)
    reference = krippendorff.alpha(reliability_data=as_float, level_of_measurement=level)
    assert alpha == pytest.approx(reference, abs=1e-12)


def test_krippendorff_alpha_ranks_ordinal_text_labels_by_the_value_domain() -> None:
    names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high", None: None}
    labelled = [[names[value] for value in row] for row in KRIPPENDORFF_EXAMPLE_C]
    domain = ["very low", "low", "mid", "high", "very high"]
    ordinal = krippendorff_alpha(labelled, level="ordinal", value_domain=domain)
    assert ordinal == pytest.approx(krippendorff_alpha(KRIPPENDORFF_EXAMPLE_C, "ordinal"))
    assert round(krippendorff_alpha(labelled), 3) == 0.743


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("n_raters", "n_units", "n_values", "missing_rate"),
    [(2, 25, 3, 0.0), (3, 200, 5, 0.2), (6, 1500, 7, 0.5), (4, 60, 12, 0.35)],
)
def test_krippendorff_alpha_equals_the_krippendorff_package_on_random_data(
    level: Any, n_raters: int, n_units: int, n_values: int, missing_rate: float
) -> None:
    rng = np.random.default_rng(2011 + n_units)
    data = reliability_matrix(rng, n_raters, n_units, n_values, missing_rate)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level=level) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_krippendorff_alpha_equals_the_package_on_non_integer_values(level: Any) -> None:
    rng = np.random.default_rng(43)
    data = np.round(rng.gamma(2.0, 1.5, (3, 150))[[0, 0, 1]] + rng.normal(0, 0.4, (3, 150)), 1)
    data = np.abs(data)
    data[rng.random(data.shape) < 0.25] = np.nan
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level=level) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_alpha_counts_unused_domain_values_as_the_package_does(level: Any) -> None:
    rng = np.random.default_rng(5)
    data = reliability_matrix(rng, 3, 120, 5, 0.2) + 2.0  # values 2..6 of the domain 0..9
    domain = np.arange(10.0)
    expected = krippendorff.alpha(
        reliability_data=data, value_domain=domain, level_of_measurement=level
    )
    actual = krippendorff_alpha(data, level=level, value_domain=domain)
    assert actual == pytest.approx(expected, abs=1e-9)


def test_ordinal_alpha_ranks_follow_the_value_domain_order_as_the_package() -> None:
    data = reliability_matrix(np.random.default_rng(6), 3, 80, 5, 0.2)
    domain = [0.0, 2.0, 1.0, 3.0, 4.0]  # the scale's order, not numeric order
    expected = krippendorff.alpha(
        reliability_data=data, value_domain=domain, level_of_measurement="ordinal"
    )
    actual = krippendorff_alpha(data, level="ordinal", value_domain=domain)
    assert actual == pytest.approx(expected, abs=1e-9)
    assert actual != pytest.approx(krippendorff_alpha(data, level="ordinal"), abs=1e-6)


def test_krippendorff_alpha_reads_none_nan_and_the_string_nan_as_missing() -> None:
    with_none = [["a", "b", None, "a"], ["a", "b", "b", None], [None, "a", "b", "a"]]
    with_nan = [[np.nan if value is None else value for value in row] for row in with_none]
    assert np.asarray(with_nan).dtype.kind == "U"  # numpy turned NaN into "nan"
    assert krippendorff_alpha(with_nan) == pytest.approx(krippendorff_alpha(with_none))


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_alpha_is_the_same_when_the_count_matrix_is_built_sparse(
    level: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = reliability_matrix(np.random.default_rng(8), 4, 300, 6, 0.3)
    dense = krippendorff_alpha(data, level=level)
    monkeypatch.setattr(agreement, "_MAX_DENSE_CELLS", 0)
    assert krippendorff_alpha(data, level=level) == pytest.approx(dense, abs=1e-12)


def small_reliability_data() -> st.SearchStrategy[list[list[int | None]]]:
    """Raters × units of values 0..4 or None, with at least two pairable units."""

    def has_two_pairable_units(rows: list[list[int | None]]) -> bool:
        ratings_per_unit = [
            sum(value is not None for value in unit) for unit in zip(*rows, strict=True)
        ]
        return sum(count >= 2 for count in ratings_per_unit) >= 2

    cell = st.one_of(st.none(), st.integers(0, 4))
    return (
        st.integers(2, 12)
        .flatmap(
            lambda n_units: st.lists(
                st.lists(cell, min_size=n_units, max_size=n_units), min_size=2, max_size=5
            )
        )
        .filter(has_two_pairable_units)
    )


@PROPERTY_SETTINGS
@given(rows=small_reliability_data(), level=st.sampled_from(LEVELS), data=st.data())
def test_krippendorff_alpha_is_invariant_under_permuting_units_and_raters(
    rows: list[list[int | None]], level: Any, data: st.DataObject
) -> None:
    unit_order = data.draw(st.permutations(range(len(rows[0]))))
    rater_order = data.draw(st.permutations(range(len(rows))))
    shuffled = [[rows[rater][unit] for unit in unit_order] for rater in rater_order]
    assert same_or_both_nan(
        krippendorff_alpha(rows, level=level), krippendorff_alpha(shuffled, level=level), 1e-9
    )


@PROPERTY_SETTINGS
@given(rows=small_reliability_data(), data=st.data())
def test_nominal_alpha_is_invariant_under_relabelling_categories(
    rows: list[list[int | None]], data: st.DataObject
) -> None:
    label = st.text(alphabet="abcxyz", min_size=1, max_size=3)
    names = data.draw(st.lists(label, min_size=5, max_size=5, unique=True))
    relabelled = [[None if value is None else names[value] for value in row] for row in rows]
    assert same_or_both_nan(krippendorff_alpha(rows), krippendorff_alpha(relabelled), 1e-9)


@PROPERTY_SETTINGS
@given(
    rows=small_reliability_data(),
    new_values=st.lists(st.integers(-1000, 1000), min_size=5, max_size=5, unique=True),
)
def test_ordinal_alpha_is_invariant_under_monotone_relabelling(
    rows: list[list[int | None]], new_values: list[int]
) -> None:
    increasing = sorted(new_values)
    relabelled = [[None if value is None else increasing[value] for value in row] for row in rows]
    assert same_or_both_nan(
        krippendorff_alpha(rows, level="ordinal"),
        krippendorff_alpha(relabelled, level="ordinal"),
        1e-9,
    )


# --- Degenerate input: NaN, never an error or an accidental 1.0 ------------------------------


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize(
    ("rater_a", "rater_b", "categories"),
    [
        ([], [], None),
        (["pass"], ["pass"], None),
        (["pass"], ["fail"], None),  # scikit-learn: 0.0
        (["pass"] * 5, ["pass"] * 5, None),  # scikit-learn: NaN with a warning
        (["pass"] * 5, ["pass"] * 5, ["fail", "pass", "review"]),
    ],
)
def test_cohens_kappa_is_nan_when_undefined(
    rater_a: list[str], rater_b: list[str], categories: list[str] | None, weights: Any
) -> None:
    assert math.isnan(cohens_kappa(rater_a, rater_b, weights=weights, categories=categories))


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize(
    "ratings",
    [
        [],
        np.empty((0, 3)),
        [["pass", "pass", "pass"]] * 4,  # one category; statsmodels: NaN with a warning
        [["pass", "fail", "pass"]],  # one unit: κ ≤ 0 by construction
        [["pass"], ["fail"], ["pass"]],  # one rater per unit: nothing to pair
    ],
)
def test_fleiss_kappa_is_nan_when_undefined(ratings: Any) -> None:
    assert math.isnan(fleiss_kappa(ratings))


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    "reliability_data",
    [
        [],
        [[None, None, None], [None, None, None]],
        [[1, 2, 3], [None, None, None]],  # no unit has two ratings; the package raises
        [[1, 2, None], [1, None, 3]],  # one pairable unit: α = 0 by construction
        [[3, 3, 1, None], [3, 3, None, 2]],  # all pairable values equal (3)
        [[4, 4, 4], [4, 4, 4]],  # one value in the domain; the package raises
    ],
)
def test_krippendorff_alpha_is_nan_when_undefined(reliability_data: Any, level: Any) -> None:
    assert math.isnan(krippendorff_alpha(reliability_data, level=level))


@pytest.mark.filterwarnings("error")
def test_krippendorff_alpha_is_nan_not_one_when_a_domain_is_given_but_one_value_was_used() -> None:
    alpha = krippendorff_alpha([[2, 2, 2], [2, 2, 2]], level="ordinal", value_domain=[1, 2, 3])
    assert math.isnan(alpha)


# --- Malformed input: ValueError naming the argument -----------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rater_a": [1, 2, 3], "rater_b": [1, 2]}, "rater_a has 3, rater_b has 2"),
        ({"rater_a": [[1, 2]], "rater_b": [1, 2]}, "rater_a must be one-dimensional"),
        ({"rater_a": [1, 2], "rater_b": [1, 2], "weights": "cubic"}, "weights must be"),
        ({"rater_a": ["a", None], "rater_b": ["a", "b"]}, "rater_a has 1 missing"),
        ({"rater_a": [1.0, 2.0], "rater_b": [1.0, np.nan]}, "rater_b has 1 missing"),
        ({"rater_a": ["a", "b"], "rater_b": [1, 2]}, "rater_a holds text and rater_b holds"),
        (
            {"rater_a": ["a", "b"], "rater_b": ["a", "z"], "categories": ["a", "b"]},
            r"rater_b has labels not in categories: \['z'\]",
        ),
        (
            {"rater_a": ["q", "b"], "rater_b": ["a", "b"], "categories": ["a", "b"]},
            "rater_a has labels not in categories",
        ),
        (
            {"rater_a": [1, 2], "rater_b": [1, 2], "categories": ["1", "2"]},
            "rater_a holds numbers and categories holds text",
        ),
        (
            {"rater_a": [1, 2], "rater_b": [1, 2], "categories": [1, 2, 2]},
            "categories has duplicates",
        ),
    ],
)
def test_cohens_kappa_rejects_malformed_input_naming_the_argument(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        cohens_kappa(**kwargs)


@pytest.mark.parametrize(
    ("ratings", "message"),
    [
        ([[1, 2, 3], [1, 2]], "ratings must be rectangular"),
        ([1, 2, 3], "ratings must be two-dimensional"),
        ([["a", "b"], ["a", None]], r"ratings has 1 missing rating\(s\), first at index \(1, 1\)"),
    ],
)
def test_fleiss_kappa_rejects_malformed_input_naming_the_argument(
    ratings: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        fleiss_kappa(ratings)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"reliability_data": [[1, 2]], "level": "cardinal"}, "level must be"),
        ({"reliability_data": [1, 2, 3]}, "reliability_data must be two-dimensional"),
        ({"reliability_data": [[1, 2, 3], [1, 2]]}, "reliability_data must be rectangular"),
        (
            {"reliability_data": [["a", "b"], ["a", "a"]], "level": "interval"},
            "reliability_data must hold numbers for the interval level",
        ),
        (
            {"reliability_data": [["a", "b"], ["a", "a"]], "level": "ordinal"},
            "value_domain is required for ordinal text labels",
        ),
        (
            {"reliability_data": [[1, 2], [1, 7]], "value_domain": [1, 2, 3]},
            r"reliability_data has labels not in value_domain: \[7\]",
        ),
        (
            {"reliability_data": [[1, 2], [1, 2]], "value_domain": [1, 2, 1]},
            "value_domain has duplicates",
        ),
        (
            {"reliability_data": [[1, -2], [1, 2]], "level": "ratio"},
            "reliability_data must be non-negative for the ratio level",
        ),
    ],
)
def test_krippendorff_alpha_rejects_malformed_input_naming_the_argument(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        krippendorff_alpha(**kwargs)


def test_krippendorff_alpha_asks_to_bin_values_rather_than_build_a_huge_matrix() -> None:
    data = np.arange(2.0 * 5_001).reshape(2, 5_001)
    with pytest.raises(ValueError, match="reliability_data: 10002 distinct values"):
        krippendorff_alpha(data, level="interval")


def test_agreement_functions_emit_no_warning_on_ordinary_input() -> None:
    rng = np.random.default_rng(0)
    rater_a, rater_b = correlated_labels(rng, 50, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cohens_kappa(rater_a, rater_b, weights="quadratic")
        fleiss_kappa(np.stack([rater_a, rater_b], axis=1))
        krippendorff_alpha(reliability_matrix(rng, 3, 50, 4, 0.3), level="ratio")
