"""The scorecard as a PDF: the same content as the page, rendered by WeasyPrint.

The PDF is tagged (headings, tables and figures are structure elements with real text; plots
carry their alternative text), and every page's footer carries the page number
and the scorecard's SHA-256.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.template.loader import render_to_string
from django.utils import timezone

from scorecards.selectors import ScorecardView


def scorecard_html(view: ScorecardView, *, base_url: str = "") -> str:
    """Return the scorecard as a standalone HTML document (every text escaped)."""
    return render_to_string(
        "scorecards/scorecard_document.html",
        {"view": view, "base_url": base_url, "rendered_at": timezone.now()},
    )


def scorecard_pdf(view: ScorecardView, *, base_url: str = "") -> bytes:
    """Return the scorecard's PDF bytes (a tagged PDF)."""
    from weasyprint import HTML  # imported here: loading Pango costs time at start-up

    pdf = HTML(string=scorecard_html(view, base_url=base_url)).write_pdf(pdf_variant="pdf/ua-1")
    assert pdf is not None
    return bytes(pdf)


def scorecard_pdf_write(view: ScorecardView, path: Path, *, base_url: str = "") -> Path:
    """Write the scorecard's PDF at ``path`` (atomically) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(scorecard_pdf(view, base_url=base_url))
    os.replace(partial, path)
    return path
