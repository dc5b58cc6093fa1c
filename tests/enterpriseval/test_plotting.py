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
