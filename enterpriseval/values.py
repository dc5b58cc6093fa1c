"""How messages name and show the values read from files and requests.

Pure: no Django import. One helper per job: what kind of value a message says it got
(:func:`json_kind` for JSON files, :func:`type_name` for YAML documents and Python values), how it
quotes a value (:func:`json_shown`), which values count as numbers (:func:`finite_number`,
:func:`is_whole`), how a number is written in a message (:func:`number_text`) and how a
duration is shown (:func:`seconds_text`).
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from typing import Any, Literal

#: Integral floats below this are written as integers; larger ones keep their float form.
_LARGEST_WRITTEN_WHOLE = 1e15


def json_kind(value: Any, *, show_text: bool = True) -> str:
    """Return how a message names a JSON value it did not expect: ``got {json_kind(v)}``.

    ``null``, ``boolean true``, ``number 3``, ``a list``, ``an object``; a string is quoted
    (``string "abc"``, see :func:`json_shown`), or with ``show_text=False`` only described
    (``a string``, ``an empty string``), for values that may be long or private.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, str):
        if show_text:
            return f"string {json_shown(value)}"
        return "an empty string" if not value.strip() else "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def json_shown(value: Any, limit: int = 40) -> str:
    """Return ``value`` as JSON for a message, cut to ``limit`` characters with an ellipsis."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + '…"'


def type_name(value: Any, *, style: Literal["plain", "python", "shown"] = "plain") -> str:
    """Return how a message names the type of a value read from a YAML or JSON document.

    ``plain``: ``nothing`` for None, ``a mapping``, ``a list``, ``text``, else the Python
    type name (``int``, ``bool``). ``python``: ``nothing``, else the Python type name
    throughout (``dict``, ``list``, ``str``). ``shown``: with the value where it is short
    (``a number (3)``, ``a boolean (True)``, ``a text ('x')``, ``an empty text``, ``an
    empty list``, ``a list``, ``a mapping``).
    """
    if value is None:
        return "nothing"
    if style == "shown":
        if isinstance(value, bool):
            return f"a boolean ({value})"
        if isinstance(value, int | float):
            return f"a number ({value!r})"
        if isinstance(value, str):
            return "an empty text" if not value.strip() else f"a text ({value!r})"
        if isinstance(value, list):
            return "an empty list" if not value else "a list"
        if isinstance(value, dict):
            return "a mapping"
    elif style == "plain":
        if isinstance(value, Mapping):
            return "a mapping"
        if isinstance(value, list):
            return "a list"
        if isinstance(value, str):
            return "text"
    return type(value).__name__


def finite_number(value: Any) -> float | None:
    """Return ``value`` as a float if it is a finite real number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def is_whole(value: Any) -> bool:
    """Return whether ``value`` is a whole number (an int, or an integral float; not a bool)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, float) and value.is_integer()


def number_text(value: float, digits: int = 6, *, significant: bool = False) -> str:
    """Return ``value`` compactly for a message.

    A whole number is written without a fraction (50 for 50.0). Otherwise ``digits``
    decimals without trailing zeros (6.89 for 6.8948 with ``digits=2``), or with
    ``significant=True`` ``digits`` significant digits (72.3457 for 72.34567891, 1e-07).
    """
    if float(value).is_integer() and abs(value) < _LARGEST_WRITTEN_WHOLE:
        return str(int(value))
    if significant:
        return f"{value:.{digits}g}"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".")


def seconds_text(seconds: float | None) -> str:
    """Return a duration in seconds rounded for display, in a unit that suits its size.

    ``—`` for None; under a second two significant digits (0.012 s); under a minute one
    decimal (41.2 s); under an hour whole minutes and seconds (2 min 5 s); else hours and
    minutes (1 h 4 min).
    """
    if seconds is None:
        return "—"
    if seconds < 1:
        return f"{number_text(seconds, 2, significant=True)} s"
    if round(seconds, 1) < 60:
        return f"{number_text(round(seconds, 1), 1)} s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60} min"
