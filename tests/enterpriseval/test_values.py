"""How values are written for people: durations."""

import pytest

from enterpriseval.values import seconds_text


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (None, "—"),
        (0.0123456, "0.012 s"),
        (3.456789, "3.5 s"),
        (41.23456789, "41.2 s"),
        (59.96, "1 min 0 s"),
        (125.4, "2 min 5 s"),
        (3845.2, "1 h 4 min"),
    ],
)
def test_a_duration_is_rounded_in_a_unit_that_suits_its_size(seconds, shown):
    assert seconds_text(seconds) == shown
