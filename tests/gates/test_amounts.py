"""Money amounts of metrics: written with their currency and significant digits, never "0.00"."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from gates.amounts import amount_number, amount_text, interval_text, metric_currency


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.000864, "0.000864"),
        (0.00102, "0.00102"),
        (0.0007123, "0.000712"),
        (0.5, "0.500"),
        (0.9996, "1.00"),
        (1.0, "1.00"),
        (1234.5, "1,234.50"),
        (0.0, "0.00"),
        (-0.0123456, "-0.0123"),
    ],
)
def test_an_amount_keeps_three_significant_digits_below_one_and_cents_above(value, text):
    assert amount_number(value) == text


def test_an_amount_is_never_written_in_scientific_notation():
    assert amount_number(1.234e-7) == "0.000000123"


def test_a_non_finite_amount_is_refused():
    with pytest.raises(ValueError, match="finite"):
        amount_number(float("nan"))


def test_an_amount_and_an_interval_carry_the_currency_code():
    assert amount_text(0.000864, "USD") == "USD 0.000864"
    assert amount_text(None, "USD") == "—"
    assert interval_text([0.000712, 0.00102], "USD") == "[USD 0.000712, USD 0.00102]"
    assert interval_text(None, "USD") == "—"


def test_only_a_metric_on_the_currency_scale_is_an_amount_and_it_is_in_us_dollars():
    # The runs record inference costs in US dollars (Output.cost_usd), whatever the charter's
    # value-input currency: the amount is labelled with the currency it is in.
    assert metric_currency("cost_per_successful_task") == "USD"
    assert metric_currency("hallucination_rate") == ""
    assert metric_currency("no_such_metric") == ""


def render(source: str, **context) -> str:
    return Template("{% load amounts %}" + source).render(Context(context))


def test_the_template_tags_print_an_amount_with_its_currency_and_a_rate_as_before():
    cost = "cost_per_successful_task"
    assert render("{% metric_value v m %}", v=0.000864, m=cost) == "USD 0.000864"
    assert render("{% metric_interval a b m %}", a=0.000712, b=0.00102, m=cost) == (
        "[USD 0.000712, USD 0.00102]"
    )
    assert render('{% metric_value v m "-2" %}', v=0.05, m=cost) == "USD 0.0500"
    rate = "hallucination_rate"
    assert render("{% metric_value v m %}", v=1.6, m=rate) == "1.60"
    assert render('{% metric_value v m "-2" %}', v=2.0, m=rate) == "2"
    assert render("{% metric_interval a b m %}", a=0.4, b=3.4, m=rate) == "[0.40, 3.40]"
    assert render("{% metric_value v m %}", v=None, m=rate) == "—"
    assert render("{% metric_interval a b m %}", a=None, b=3.4, m=cost) == "—"
