"""Canonical JSON and SHA-256: one byte-exact text per value, for hashes a third party can redo.

Pure: no Django import. The audit chain, charter hashes and configuration hashes all hash
``canonical_json(value)`` with :func:`sha256_hex`, so a regulator can recompute any of them
with ``json`` and ``hashlib`` alone.

Canonical form
--------------
- ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``, encoded
  as UTF-8 for hashing; keys sort by code point.
- Objects must have ``str`` keys (``{1: ...}`` would silently become ``{"1": ...}``).
- Lists and tuples are arrays; ``bool``, ``None`` and ``str`` are as in JSON; integers are
  written exactly, however large.
- A float with an integral value is written as that integer (``1.0`` → ``1``, ``-0.0`` →
  ``0``); other floats use Python's shortest round-trip form (``0.1`` → ``0.1``). Stores
  disagree on integral floats: PostgreSQL ``jsonb`` keeps ``1.0`` but returns ``1e16`` as
  ``10000000000000000`` and ``-0.0`` as ``0.0``. Writing them as integers makes the hash of
  a value the same before and after a round trip through any JSON store.
- NaN and ±Infinity are refused (``ValueError``): JSON has no such numbers.
- ``Decimal`` → its ``str`` (``Decimal("1.10")`` → ``"1.10"``, so precision is kept);
  aware ``datetime`` → ISO 8601 in UTC with microseconds
  (``"2026-04-17T09:30:00.000000+00:00"``); naive ``datetime`` is refused; ``date`` → ISO
  8601 (``"2026-04-17"``). Any other type is refused with the path to the value.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

__all__ = ["canonical_json", "canonical_value", "sha256_hex"]


def canonical_json(obj: Any) -> str:
    """Return the canonical JSON text of ``obj`` (see the module docstring for the rules).

    Raises
    ------
    ValueError
        If ``obj`` holds NaN or ±Infinity, a naive datetime, a non-string object key or a
        value of a type JSON cannot represent; the message gives the path to it
        (``$.metrics[2].estimate``).
    """
    return json.dumps(
        canonical_value(obj),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def canonical_value(obj: Any, path: str = "$") -> Any:
    """Return ``obj`` as plain JSON types following the canonical rules.

    ``json.loads(canonical_json(obj)) == canonical_value(obj)``: store this form when the
    stored value must hash the same as the value given.
    """
    if obj is None or isinstance(obj, bool):
        return obj
    if isinstance(obj, str):
        return str(obj)
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise ValueError(f"{path}: {obj!r} is not a JSON number (NaN and Infinity are refused)")
        return int(obj) if obj.is_integer() else obj
    if isinstance(obj, Decimal):
        if not obj.is_finite():
            raise ValueError(f"{path}: Decimal {obj} is not a JSON number")
        return str(obj)
    if isinstance(obj, dt.datetime):
        if obj.utcoffset() is None:
            raise ValueError(f"{path}: naive datetime {obj.isoformat()}; give a timezone")
        return obj.astimezone(dt.UTC).isoformat(timespec="microseconds")
    if isinstance(obj, dt.date):
        return obj.isoformat()
    if isinstance(obj, Mapping):
        result: dict[str, Any] = {}
        for key, value in obj.items():
            if not isinstance(key, str):
                raise ValueError(f"{path}: object key {key!r} is not a string")
            result[str(key)] = canonical_value(value, f"{path}.{key}")
        return result
    if isinstance(obj, list | tuple):
        return [canonical_value(item, f"{path}[{index}]") for index, item in enumerate(obj)]
    raise ValueError(f"{path}: {type(obj).__name__} is not JSON-serialisable")


def sha256_hex(text: str) -> str:
    """Return the SHA-256 of ``text`` encoded as UTF-8, as 64 lowercase hex digits."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
