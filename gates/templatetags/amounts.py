"""Template tags that print a metric's values, with the currency of a money amount.

``{% metric_value value metric_id %}`` and ``{% metric_interval lo hi metric_id %}`` print a
metric on the ``currency`` scale as ``USD 0.000864`` / ``[USD 0.000712, USD 0.00102]``
(:mod:`gates.amounts`) and any other metric with two decimals, as the pages always did.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.template.defaultfilters import floatformat

from gates.amounts import amount_text, interval_text, metric_currency

register = template.Library()


@register.simple_tag
def metric_value(value: Any, metric_id: str, decimals: str = "2") -> str:
    """Return one value of ``metric_id``: an amount with its currency, else ``decimals``."""
    if value is None or value == "":
        return "—"
    currency = metric_currency(metric_id)
    if currency:
        return amount_text(float(value), currency)
    return str(floatformat(value, decimals))


@register.simple_tag
def metric_interval(low: Any, high: Any, metric_id: str) -> str:
    """Return ``[low, high]`` of ``metric_id``, or an em dash without both bounds."""
    if low is None or high is None or low == "" or high == "":
        return "—"
    currency = metric_currency(metric_id)
    if currency:
        return interval_text([float(low), float(high)], currency)
    return f"[{floatformat(low, 2)}, {floatformat(high, 2)}]"
