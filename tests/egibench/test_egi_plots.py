"""Roster plots: valid SVG, one row per model and six buckets, missing never drawn as 0."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from egibench.plots import RosterRow, grouped_bars_svg, heatmap_svg, radar_rows, radar_svg

ROWS = [
    RosterRow(
        "A", 70.0, False, {"M1": 80.0, "M2": 75.0, "M3": 30.0, "M4": 55.0, "M5": 72.0, "M6": 58.0}
    ),
    RosterRow(
        "B", 68.0, True, {"M1": 79.0, "M2": None, "M3": 25.0, "M4": 50.0, "M5": 71.0, "M6": 57.0}
    ),
    RosterRow("C", 60.0, False, {"M2": 90.0}),
    RosterRow("D", None, False, {"M3": 16.0}),
]


def ids(svg: str, prefix: str) -> list[str]:
    root = ET.fromstring(svg)  # a parse error fails the test: the SVG must be well-formed
    assert root.tag.endswith("svg")
    return sorted(e.get("id") for e in root.iter() if (e.get("id") or "").startswith(prefix))


def test_the_heatmap_draws_every_cell_and_hatches_the_missing_ones():
    svg = heatmap_svg(ROWS)
    assert len(ids(svg, "cell-")) == 6 + 5 + 1 + 1
    assert ids(svg, "missing-") == sorted(
        ["missing-1-M2"]
        + [f"missing-2-{b}" for b in ("M1", "M3", "M4", "M5", "M6")]
        + [f"missing-3-{b}" for b in ("M1", "M2", "M4", "M5", "M6")]
    )


def test_the_bars_draw_one_bar_per_present_score_and_mark_the_missing_ones():
    svg = grouped_bars_svg(ROWS)
    assert len(ids(svg, "bar-")) == 13
    assert len(ids(svg, "missing-bar-")) == 24 - 13


def test_the_radar_takes_the_top_five_full_egis():
    rows = [RosterRow(f"m{i}", 50.0 + i, False, {"M1": 50.0}) for i in range(7)]
    rows.append(RosterRow("partial", 99.0, True, {"M1": 99.0}))
    rows.append(RosterRow("unknown", None, False, {"M1": 99.0}))
    top = radar_rows(rows)
    assert [row.label for row in top] == ["m6", "m5", "m4", "m3", "m2"]
    assert ids(radar_svg(top), "radar-") == [f"radar-{i}" for i in range(5)]


def test_no_model_is_refused():
    for plot in (heatmap_svg, grouped_bars_svg, radar_svg):
        with pytest.raises(ValueError, match="rows: no model to plot"):
            plot([])
