"""Template tags of the benchmarks app."""

from __future__ import annotations

from typing import Any

from django import template

from benchmarks.selectors import egi_evidence_context
from charters.models import Configuration

register = template.Library()


@register.simple_tag
def egi_evidence_of(configuration: Configuration) -> dict[str, Any]:
    """Return σ's model's linked EGI result for ``benchmarks/egi_evidence.html``."""
    return egi_evidence_context(configuration)
