"""Plot conventions shared by the decision, scorecard and EGI roster plots (no Django import).

Plots use matplotlib's object API (``Figure``), never pyplot, so rendering holds no global
state and is safe in web and worker processes. They are returned as SVG text whose labels
are real text, and embedded in pages and PDFs as ``data:`` URIs.
"""

from __future__ import annotations

import base64
import io

from matplotlib import rc_context
from matplotlib.figure import Figure

INK = "#202124"
ESTIMATE = "#1a73e8"
BOUND = "#c5221f"


def figure_svg(figure: Figure) -> str:
    """Return the figure as an SVG document whose labels are real text, not glyph outlines.

    Real text is selectable and searchable in the page and PDF, and smaller. The same figure
    gives the same bytes every time (no creation date in the metadata, element ids hashed
    with a fixed salt rather than a random one), so a plot read from the cache is
    byte-identical to one drawn now.
    """
    buffer = io.StringIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "enterpriseval"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue()


def svg_data_uri(svg: str) -> str:
    """Return the SVG text as a base64 ``data:`` URI for an ``<img src>``."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
