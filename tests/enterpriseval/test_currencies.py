"""The vendored ISO 4217 table and the check every charter's currency goes through."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from enterpriseval.currencies import ISO_4217, currency_problem

#: Codes ISO 4217 lists that are not money an amount is stated in, and HRK (withdrawn 2023).
NOT_MONEY = {"XAU", "XAG", "XPD", "XPT", "XBA", "XBB", "XBC", "XBD", "XSU", "XUA", "XTS", "XXX"}
SYSTEM_LIST = Path("/usr/share/iso-codes/json/iso_4217.json")


@pytest.mark.parametrize("code", ["GBP", "EUR", "USD", "JPY", "CHF", "XOF"])
def test_it_accepts_active_currency_codes(code):
    assert currency_problem(code) is None


@pytest.mark.parametrize(
    ("code", "fragment"),
    [
        ("gbp", "write 'GBP'"),
        (" GBP", "write 'GBP'"),
        ("HRK", "not an active ISO 4217 currency code"),
        ("XAU", "not an active ISO 4217 currency code"),
        ("XXX", "not an active ISO 4217 currency code"),
        ("£", "not an active ISO 4217 currency code"),
        ("", "three-letter ISO 4217 currency code"),
        (None, "three-letter ISO 4217 currency code"),
        (826, "three-letter ISO 4217 currency code"),
    ],
)
def test_it_refuses_what_is_not_an_active_code_and_says_what_to_write(code, fragment):
    assert fragment in (currency_problem(code) or "")


def test_every_code_is_three_capital_letters_with_a_name():
    assert len(ISO_4217) > 150
    assert all(re.fullmatch(r"[A-Z]{3}", code) and name for code, name in ISO_4217.items())
    assert ISO_4217["GBP"] == "Pound Sterling" and ISO_4217["EUR"] == "Euro"
    assert not NOT_MONEY & set(ISO_4217) and "HRK" not in ISO_4217


def test_the_table_is_the_iso_codes_list_less_the_codes_that_are_not_money():
    assert SYSTEM_LIST.exists(), f"{SYSTEM_LIST} is missing: `make setup` installs iso-codes"
    listed = {row["alpha_3"] for row in json.loads(SYSTEM_LIST.read_text())["4217"]}
    assert set(ISO_4217) <= listed
    assert listed - set(ISO_4217) <= NOT_MONEY | {"HRK"}
