"""The plot kernel (enterpriseval/plotting.py): SVG with real text, embedded as a data URI."""

from __future__ import annotations

import base64

from matplotlib.figure import Figure

from enterpriseval.plotting import INK, figure_svg, svg_data_uri


def test_a_figure_becomes_an_svg_whose_labels_are_text_not_glyph_outlines() -> None:
    figure = Figure(figsize=(2.0, 1.0))
    figure.subplots().set_title("θin reached", color=INK)
    svg = figure_svg(figure)
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    assert "θin reached" in svg


def test_the_data_uri_carries_the_svg_text_unchanged() -> None:
    svg = '<svg xmlns="http://www.w3.org/2000/svg"><text>ν ≥ 1</text></svg>'
    uri = svg_data_uri(svg)
    prefix = "data:image/svg+xml;base64,"
    assert uri.startswith(prefix)
    assert base64.b64decode(uri.removeprefix(prefix)).decode("utf-8") == svg


def test_the_same_figure_gives_the_same_svg_bytes_every_time() -> None:
    from gates.plots_decision import value_interval_svg
    from gates.value_model import ValueEstimate

    value = ValueEstimate(
        point=1200.0,
        lo=-300.0,
        hi=2500.0,
        level=0.9,
        draws=1000,
        seed=1,
        label="estimated",
        components={"time_saved": 1200.0},
    )
    first = value_interval_svg(value)
    assert "<dc:date>" not in first
    assert value_interval_svg(value) == first
