"""Canonical JSON: one byte-exact text per value, so any party can recompute a hash."""

import datetime as dt
import hashlib
import json
import math
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from audit.canonical import canonical_json, canonical_value, sha256_hex

ROOT = Path(__file__).resolve().parents[2]


def test_it_sorts_keys_drops_whitespace_and_keeps_non_ascii_text():
    value = {"b": [1, True, None], "a": {"z": "Zürich €", "y": "日本"}}
    assert canonical_json(value) == '{"a":{"y":"日本","z":"Zürich €"},"b":[1,true,null]}'


def test_it_matches_a_hand_written_json_dumps():
    value = {"threshold": 0.8, "metrics": ["recall", "precision"], "signed": False, "n": 120}
    by_hand = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == by_hand


def test_sha256_hex_hashes_the_utf8_bytes():
    assert sha256_hex("abc") == ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    assert sha256_hex("€") == hashlib.sha256("€".encode()).hexdigest()


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0, "1"), (-0.0, "0"), (1e16, "10000000000000000"), (0.1, "0.1"), (1e-7, "1e-07")],
)
def test_it_writes_integral_floats_as_integers_and_others_in_shortest_form(value, text):
    assert canonical_json(value) == text


def test_an_integral_float_hashes_like_the_integer_a_json_store_returns():
    assert sha256_hex(canonical_json({"x": 1e16})) == sha256_hex(
        canonical_json({"x": 10_000_000_000_000_000})
    )


def test_it_writes_big_integers_exactly():
    assert canonical_json(2**70) == "1180591620717411303424"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, Decimal("NaN")])
def test_it_refuses_nan_and_infinity_with_the_path(value):
    with pytest.raises(ValueError, match=r"\$\.metrics\[1\]"):
        canonical_json({"metrics": [0.5, value]})


def test_it_writes_decimals_as_strings_keeping_their_precision():
    assert canonical_json({"theta": Decimal("0.80")}) == '{"theta":"0.80"}'


def test_it_writes_aware_datetimes_in_utc_with_microseconds():
    paris = dt.datetime(2026, 4, 17, 11, 30, tzinfo=ZoneInfo("Europe/Paris"))
    assert canonical_json(paris) == '"2026-04-17T09:30:00.000000+00:00"'


def test_it_refuses_a_naive_datetime():
    with pytest.raises(ValueError, match=r"\$\.at: naive datetime"):
        canonical_json({"at": dt.datetime(2026, 4, 17, 9, 30)})


def test_it_writes_dates_in_iso_format():
    assert canonical_json([dt.date(2026, 4, 17)]) == '["2026-04-17"]'


def test_it_refuses_non_string_keys():
    with pytest.raises(ValueError, match="object key 1 is not a string"):
        canonical_json({1: "a"})


@pytest.mark.parametrize("value", [b"bytes", {1, 2}, object()])
def test_it_refuses_types_json_cannot_represent(value):
    with pytest.raises(ValueError, match=r"\$\.x: .* is not JSON-serialisable"):
        canonical_json({"x": value})


def test_canonical_value_is_what_canonical_json_parses_back_to():
    value = {"d": Decimal("1.10"), "f": 2.0, "t": (1, 2), "at": dt.date(2026, 1, 2)}
    assert canonical_value(value) == json.loads(canonical_json(value))


def test_the_module_imports_without_django():
    code = "import sys, audit.canonical; print('django' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
