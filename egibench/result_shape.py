"""Check an EGI results artifact before it is stored (SPEC §10).

Pure: the standard library and :mod:`audit.canonical`, no Django import. The artifact is
what ``egi-bench`` writes to ``results_aggregated/<model>_<mode>_<timestamp>.json``
(:meth:`egibench.aggregate.EGIResult.to_dict` plus ``model``, ``mode`` and
``timestamp``), or a published roster entry in the same shape with ``mode: published``.

Rules checked, each refused with a message naming the key at fault:

- ``model`` a non-empty string; ``mode`` one of ``quick``, ``deep``, ``published``;
  ``timestamp`` ISO 8601 with a time zone.
- ``buckets`` holds exactly M1–M6, each with a ``score`` on [0, 100] or null.
- ``egi`` on [0, 100]; null only for a published entry whose source does not state it.
- A measured run (quick/deep) must be internally consistent: ``partial`` is true exactly
  when a bucket is missing, ``egi`` equals ``Σ W_k M_k`` over the present buckets with the
  artifact's ``egi_weights`` (seed 000 §4), and ``routing.sha256`` is present.
- ``rank``: absent or null, or for a published entry the rank its source states (a
  whole number ≥ 1; a measured run states none).
- ``floors``: each floored bucket's ``score`` is that bucket's score and its ``status``
  follows the rule of :mod:`egibench.aggregate` (missing, below when score < floor,
  else pass); ``release_ready`` is true exactly when every floor passes.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from audit.canonical import canonical_json, canonical_value, sha256_hex
from egibench.aggregate import BUCKETS
from enterpriseval.values import finite_number

__all__ = ["MODES", "ResultRecord", "ResultShapeError", "floor_status", "result_record"]

MODES: tuple[str, ...] = ("quick", "deep", "published")
MEASURED_MODES: tuple[str, ...] = ("quick", "deep")
FLOOR_STATUSES: tuple[str, ...] = ("pass", "below", "missing")
MODEL_MAX_LENGTH = 200
# An artifact's EGI is written from floats: allow rounding, not a different number.
_EGI_TOLERANCE = 1e-6
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class ResultShapeError(ValueError):
    """The artifact does not have the SPEC §10 shape; the message names the key."""


@dataclass(frozen=True)
class ResultRecord:
    """The checked fields of one artifact, with its canonical JSON and SHA-256."""

    model: str
    display_name: str
    mode: str
    timestamp: dt.datetime
    egi: float | None
    partial: bool
    buckets: dict[str, float | None]
    floors: dict[str, dict[str, Any]]
    release_ready: bool
    missing: list[Any]
    rank: int | None
    routing_sha256: str
    data: dict[str, Any]
    canonical_json: str
    sha256: str


def floor_status(score: float | None, floor: float) -> str:
    """Return ``missing``, ``below`` (score < floor) or ``pass`` (a score equal to it passes)."""
    if score is None:
        return "missing"
    return "below" if score < floor else "pass"


def result_record(result: Any, *, where: str = "result") -> ResultRecord:
    """Check ``result`` against the artifact shape and return its fields.

    Parameters
    ----------
    result : Mapping
        The parsed results JSON.
    where : str
        Names the source in error messages (a file name).

    Raises
    ------
    ResultShapeError
        Naming ``where`` and the key at fault (``buckets.M3.score``).
    """
    if not isinstance(result, Mapping):
        raise ResultShapeError(f"{where}: expected a JSON object (the results artifact)")
    model = result.get("model")
    if not isinstance(model, str) or not model.strip():
        raise _error(where, "model", "a non-empty string", model)
    if len(model.strip()) > MODEL_MAX_LENGTH:
        raise ResultShapeError(f"{where}: key 'model': longer than {MODEL_MAX_LENGTH} characters")
    display_name = result.get("display_name", "")
    if not isinstance(display_name, str):
        raise _error(where, "display_name", "a string", display_name)
    mode = result.get("mode")
    if mode not in MODES:
        raise _error(where, "mode", f"one of {list(MODES)}", mode)
    timestamp = _timestamp(result.get("timestamp"), where)

    raw_buckets = result.get("buckets")
    if not isinstance(raw_buckets, Mapping):
        raise _error(where, "buckets", "an object with M1–M6", raw_buckets)
    unknown = sorted(set(map(str, raw_buckets)) - set(BUCKETS))
    if unknown:
        raise ResultShapeError(f"{where}: key 'buckets': unknown bucket(s) {unknown}")
    buckets: dict[str, float | None] = {}
    for bucket in BUCKETS:
        entry = raw_buckets.get(bucket)
        if not isinstance(entry, Mapping):
            raise _error(where, f"buckets.{bucket}", "an object with 'score'", entry)
        if "score" not in entry:
            raise ResultShapeError(f"{where}: key 'buckets.{bucket}.score': missing")
        buckets[bucket] = _score(entry["score"], where, f"buckets.{bucket}.score")
        contributors = entry.get("contributors", [])
        if not isinstance(contributors, list) or not all(
            isinstance(row, Mapping) for row in contributors
        ):
            raise _error(where, f"buckets.{bucket}.contributors", "a list of objects", contributors)

    egi = _score(result.get("egi"), where, "egi")
    partial = result.get("partial")
    if not isinstance(partial, bool):
        raise _error(where, "partial", "true or false", partial)
    routing = result.get("routing", {})
    if not isinstance(routing, Mapping):
        raise _error(where, "routing", "an object", routing)
    routing_sha256 = routing.get("sha256")
    if routing_sha256 is not None and (
        not isinstance(routing_sha256, str) or not _HEX64.match(routing_sha256)
    ):
        raise _error(where, "routing.sha256", "64 lower-case hex digits or null", routing_sha256)
    if mode in MEASURED_MODES:
        _check_measured(result, where, egi=egi, partial=partial, buckets=buckets)
        if routing_sha256 is None:
            raise ResultShapeError(
                f"{where}: key 'routing.sha256': missing; a {mode} run records its routing hash"
            )

    floors = _floors(result.get("floors"), where, buckets)
    release_ready = result.get("release_ready")
    if not isinstance(release_ready, bool):
        raise _error(where, "release_ready", "true or false", release_ready)
    expected_ready = all(row["status"] == "pass" for row in floors.values())
    if release_ready != expected_ready:
        raise ResultShapeError(
            f"{where}: key 'release_ready': is {str(release_ready).lower()} but the floors "
            f"say {str(expected_ready).lower()} (every floor must pass)"
        )
    missing = result.get("missing", [])
    if not isinstance(missing, list):
        raise _error(where, "missing", "a list", missing)
    rank = _rank(result.get("rank"), where, mode)

    try:
        data = canonical_value(dict(result))
        text = canonical_json(data)
    except ValueError as error:
        raise ResultShapeError(f"{where}: {error}") from None
    return ResultRecord(
        model=model.strip(),
        display_name=display_name.strip(),
        mode=mode,
        timestamp=timestamp,
        egi=egi,
        partial=partial,
        buckets=buckets,
        floors=floors,
        release_ready=release_ready,
        missing=list(missing),
        rank=rank,
        routing_sha256=routing_sha256 or "",
        data=data,
        canonical_json=text,
        sha256=sha256_hex(text),
    )


def _check_measured(
    result: Mapping[str, Any],
    where: str,
    *,
    egi: float | None,
    partial: bool,
    buckets: Mapping[str, float | None],
) -> None:
    mode = result.get("mode")
    if egi is None:
        raise ResultShapeError(f"{where}: key 'egi': missing; a {mode} run always has an EGI")
    missing_buckets = [b for b, score in buckets.items() if score is None]
    if partial != bool(missing_buckets):
        raise ResultShapeError(
            f"{where}: key 'partial': is {str(partial).lower()} but missing buckets are "
            f"{missing_buckets or 'none'}"
        )
    weights = result.get("egi_weights")
    if not isinstance(weights, Mapping) or set(map(str, weights)) != set(BUCKETS):
        raise _error(where, "egi_weights", "an object with a weight for each of M1–M6", weights)
    for bucket in BUCKETS:
        weight = weights[bucket]
        if (number := finite_number(weight)) is None or number < 0:
            raise _error(where, f"egi_weights.{bucket}", "a non-negative number", weight)
    # seed 000 §4: EGI = Σ W_k M_k over the present buckets (no reweighting across buckets).
    expected = math.fsum(
        float(weights[b]) * score for b, score in buckets.items() if score is not None
    )
    if abs(expected - egi) > _EGI_TOLERANCE:
        raise ResultShapeError(
            f"{where}: key 'egi': {egi} disagrees with Σ W_k·M_k = {expected:.6f} from "
            "'egi_weights' and the bucket scores"
        )


def _floors(raw: Any, where: str, buckets: Mapping[str, float | None]) -> dict[str, dict[str, Any]]:
    if not isinstance(raw, Mapping):
        raise _error(where, "floors", "an object {bucket: {floor, score, status}}", raw)
    floors: dict[str, dict[str, Any]] = {}
    for bucket, row in raw.items():
        key = f"floors.{bucket}"
        if bucket not in BUCKETS:
            raise ResultShapeError(f"{where}: key '{key}': unknown bucket")
        if not isinstance(row, Mapping):
            raise _error(where, key, "an object with floor, score and status", row)
        floor = finite_number(row.get("floor"))
        if floor is None or not 0 <= floor <= 100:
            raise _error(where, f"{key}.floor", "a number in [0, 100]", row.get("floor"))
        score = _score(row.get("score"), where, f"{key}.score")
        if score != buckets[bucket] and not (
            score is not None
            and buckets[bucket] is not None
            and math.isclose(score, buckets[bucket] or 0.0, abs_tol=1e-9)
        ):
            raise ResultShapeError(
                f"{where}: key '{key}.score': {score} is not the bucket's score {buckets[bucket]}"
            )
        status = row.get("status")
        expected = floor_status(score, floor)
        if status != expected:
            raise ResultShapeError(
                f"{where}: key '{key}.status': {status!r}, but score {score} against floor "
                f"{floor:g} is {expected!r}"
            )
        floors[str(bucket)] = {"floor": floor, "score": score, "status": status}
    return floors


RANK_MAX = 10_000


def _rank(value: Any, where: str, mode: Any) -> int | None:
    """Return the stated rank: None, or a whole number ≥ 1 on a published entry."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= RANK_MAX:
        raise _error(where, "rank", f"a whole number from 1 to {RANK_MAX} or null", value)
    if mode != "published":
        raise ResultShapeError(
            f"{where}: key 'rank': only a published entry states a rank (this is a {mode} run)"
        )
    return value


def _timestamp(value: Any, where: str) -> dt.datetime:
    if not isinstance(value, str):
        raise _error(where, "timestamp", "an ISO 8601 date-time with a time zone", value)
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise _error(where, "timestamp", "an ISO 8601 date-time with a time zone", value) from None
    if when.utcoffset() is None:
        raise ResultShapeError(f"{where}: key 'timestamp': {value!r} has no time zone")
    return when


def _score(value: Any, where: str, key: str) -> float | None:
    if value is None:
        return None
    if (number := finite_number(value)) is None or not 0 <= number <= 100:
        raise _error(where, key, "a number in [0, 100] or null", value)
    return number


def _error(where: str, key: str, expected: str, got: Any) -> ResultShapeError:
    shown = repr(got)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return ResultShapeError(f"{where}: key '{key}': expected {expected}, got {shown}")
