"""The metric catalogue (pure): its metrics and the threshold pair rule of SPEC §6.1."""

from __future__ import annotations

import pytest

from charters import catalogue as catalogue_module
from charters.catalogue import (
    catalogue,
    catalogue_metric,
    metrics_required_at,
    threshold_pair_fault,
)


def test_every_metric_has_a_direction_and_a_level():
    metrics = catalogue()
    assert "hallucination_rate" in metrics
    assert all(m.direction in ("higher", "lower") for m in metrics.values())
    assert all(0 <= m.level <= 4 for m in metrics.values())


def test_an_unknown_metric_is_named_in_the_error():
    with pytest.raises(KeyError, match="'no_such_metric' is not in the metric catalogue"):
        catalogue_metric("no_such_metric")


def test_a_catalogue_key_given_twice_is_refused_naming_the_file_key_and_lines(
    tmp_path, monkeypatch
):
    path = tmp_path / "catalogue.yaml"
    path.write_text("metrics: []\nmetrics: []\n", encoding="utf-8")
    monkeypatch.setattr(catalogue_module, "CATALOGUE_PATH", path)
    catalogue.cache_clear()
    try:
        with pytest.raises(ValueError) as raised:
            catalogue()
    finally:
        catalogue.cache_clear()
    assert str(raised.value) == (
        f"{path}: not valid YAML (line 2: key 'metrics' appears twice, first on line 1; "
        "give each key once)"
    )


def test_the_metrics_required_grow_with_autonomy():
    assert {m.id for m in metrics_required_at(1)} <= {m.id for m in metrics_required_at(4)}
    assert all(m.level <= 1 for m in metrics_required_at(1))


@pytest.mark.parametrize(
    ("direction", "theta_out", "theta_in"),
    [("higher", 75.0, 80.0), ("lower", 10.0, 5.0), (1, 75.0, 80.0), (-1.0, 10.0, 5.0)],
)
def test_a_pair_whose_inner_threshold_is_better_is_valid(direction, theta_out, theta_in):
    assert threshold_pair_fault(direction=direction, theta_out=theta_out, theta_in=theta_in) is None


@pytest.mark.parametrize("direction", ["higher", "lower", 1, -1])
def test_an_equal_pair_is_refused(direction):
    assert threshold_pair_fault(direction=direction, theta_out=50.0, theta_in=50.0) == "equal"


@pytest.mark.parametrize(
    ("direction", "theta_out", "theta_in"),
    [("higher", 80.0, 75.0), ("lower", 50.0, 55.0), (1, 80.0, 75.0), (-1, 50.0, 55.0)],
)
def test_an_inverted_pair_is_refused(direction, theta_out, theta_in):
    assert (
        threshold_pair_fault(direction=direction, theta_out=theta_out, theta_in=theta_in)
        == "inverted"
    )


@pytest.mark.parametrize("direction", ["up", "", 0, 2])
def test_an_unknown_direction_is_an_error_naming_it(direction):
    with pytest.raises(ValueError, match="direction must be"):
        threshold_pair_fault(direction=direction, theta_out=1.0, theta_in=2.0)
