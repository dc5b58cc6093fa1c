"""Template tags of the egibench app."""

from __future__ import annotations

from typing import Any

from django import template

from charters.models import Configuration
from egibench.selectors import egi_evidence_context

register = template.Library()


@register.simple_tag
def egi_evidence_of(configuration: Configuration) -> dict[str, Any]:
    """Return σ's model's linked EGI result for ``egibench/egi_evidence.html``."""
    return egi_evidence_context(configuration)
