"""Money amounts of metrics, written with their currency and enough significant digits.

A metric on the catalogue's ``currency`` scale (``cost_per_successful_task``) is computed from
the runs' recorded inference costs, which are US dollars (``Output.cost_usd``: the provider's
price list), whatever currency the charter's value inputs are in. So it is printed as ``USD``;
no exchange rate is assumed. Such amounts are small (a memo section costs a fraction of a
cent), so they are written to three significant digits, never rounded to "0.00".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from charters.catalogue import catalogue

#: The currency of every recorded inference cost (``Output.cost_usd``, ``Run.cost_usd``).
RUN_COST_CURRENCY = "USD"
SIGNIFICANT_DIGITS = 3


def metric_currency(metric_id: str) -> str:
    """Return the ISO 4217 code a metric's values are in, or "" for a metric that is no amount."""
    metric = catalogue().get(metric_id)
    return RUN_COST_CURRENCY if metric is not None and metric.scale == "currency" else ""


def amount_number(value: float, digits: int = SIGNIFICANT_DIGITS) -> str:
    """Return an amount: two decimals from 1 up (``1,234.50``), else ``digits`` significant.

    ``0.000864`` stays ``0.000864`` and ``0.5`` is ``0.500``; zero is ``0.00``. Never in
    scientific notation.
    """
    if not math.isfinite(value):
        raise ValueError(f"an amount must be a finite number, got {value!r}")
    size = abs(value)
    if size >= 1 or size == 0:
        return f"{value:,.2f}"
    decimals = digits - 1 - math.floor(math.log10(size))
    text = f"{value:.{decimals}f}"
    if abs(float(text)) >= 1:  # 0.9996 rounds up to 1.00
        return f"{value:,.2f}"
    return text


def amount_text(value: float | None, currency: str) -> str:
    """Return ``value`` with its currency code (``USD 0.000864``), or an em dash for None."""
    if value is None:
        return "—"
    return f"{currency} {amount_number(float(value))}".strip()


def interval_text(bounds: Sequence[float | None] | None, currency: str) -> str:
    """Return ``[USD 0.000712, USD 0.00102]``, or an em dash without both bounds."""
    if not bounds or any(bound is None for bound in bounds):
        return "—"
    low, high = bounds
    return f"[{amount_text(low, currency)}, {amount_text(high, currency)}]"
