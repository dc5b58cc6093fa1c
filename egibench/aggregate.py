"""EGI aggregation: route benchmark sub-metrics into M1–M6 and combine them (SPEC §10).

Pure computation: PyYAML and the standard library, no Django import. The routing is
declarative YAML (:data:`DEFAULT_ROUTING` reproduces seed 000 Table 6); :func:`aggregate`
turns raw per-benchmark sub-metric values into an :class:`EGIResult` whose
:meth:`~EGIResult.to_dict` is the results artifact.

Rules
-----
- Normalisation to [0, 100] (seed 000 App. C): ``fraction`` → ×100; ``percent`` as is;
  a lower-is-better value ``v`` with ceiling ``c`` → ``clip(100·(1 − v/c), 0, 100)``, so
  ``v ≥ c`` scores 0 and ``v ≤ 0`` scores 100. Higher-is-better values outside their
  scale are refused, not clipped.
- Benchforce's gap is the route ``difference_of: [accuracy_finished, accuracy_all]``,
  lower-is-better against ceiling 1 on the fraction scale: ``100·(1 − gap)``, which is
  ``100 − (acc_finished − acc_all)`` with both in percent.
- Bucket score ``M_k = Σ w_i x_i / Σ w_i`` over the bucket's *available* sub-metrics
  (default ``w_i = 1``). A missing sub-metric is reweighted within its bucket only; a
  benchmark absent from the raw results drops all its sub-metrics.
- ``EGI = Σ_k W_k M_k`` with ``W = (0.28, 0.22, 0.16, 0.14, 0.14, 0.06)`` (seed 000 §4,
  Table 2).
- Partial EGI: a bucket with no available sub-metric is reported missing and scores
  nothing. Seed 000 §4 forbids reweighting across buckets, so the weights are *not*
  renormalised over the buckets present: the partial EGI is ``Σ_{k present} W_k M_k``,
  a lower bound of the full EGI (a missing bucket counts as 0), flagged ``partial`` with
  the covered weight ``Σ_{k present} W_k`` beside it.
- Release floors (default M2 and M5 at 70, seed 000 §4): a bucket below its floor, or
  missing, makes the run not release-ready; floors never change EGI. A score equal to
  the floor passes.
- Well-posedness (seed 000 §4): every declared benchmark feeds ≥ 1 bucket and every
  bucket holds ≥ 2 routes. :func:`load_routing` does not refuse an ill-posed routing;
  :func:`check_routing` lists the violations and the artifact carries them.

References
----------
seed 000 (EGI-Bench) §4, Table 2, Appendix C Table 6; SPEC §10.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from audit.canonical import canonical_json, sha256_hex
from enterpriseval.documents import config_data
from enterpriseval.values import finite_number

__all__ = [
    "BUCKETS",
    "BUCKET_NAMES",
    "DEFAULT_EGI_WEIGHTS",
    "DEFAULT_FLOORS",
    "DEFAULT_ROUTING",
    "Contributor",
    "EGIResult",
    "Route",
    "Routing",
    "aggregate",
    "check_routing",
    "effective_weights",
    "load_routing",
    "normalise",
    "parse_egi_weights",
    "routing_from_mapping",
]

Direction = Literal["higher", "lower"]
Scale = Literal["fraction", "percent", "count"]

BUCKETS: tuple[str, ...] = ("M1", "M2", "M3", "M4", "M5", "M6")
# seed 000 Table 2.
BUCKET_NAMES: dict[str, str] = {
    "M1": "Task Outcome Accuracy",
    "M2": "Tool Actioning Reliability",
    "M3": "Planning & Workflow",
    "M4": "Retrieval & Evidence Grounding",
    "M5": "Safety, Abstention & Policy",
    "M6": "Engineering & Maintainability",
}
# seed 000 §4: EGI = 0.28·M1 + 0.22·M2 + 0.16·M3 + 0.14·M4 + 0.14·M5 + 0.06·M6.
DEFAULT_EGI_WEIGHTS: dict[str, float] = {
    "M1": 0.28,
    "M2": 0.22,
    "M3": 0.16,
    "M4": 0.14,
    "M5": 0.14,
    "M6": 0.06,
}
DEFAULT_FLOORS: dict[str, float] = {"M2": 70.0, "M5": 70.0}
DEFAULT_ROUTING = Path(__file__).with_name("routing.yaml")

_DIRECTIONS: tuple[str, ...] = ("higher", "lower")
_SCALES: tuple[str, ...] = ("fraction", "percent", "count")
_SCALE_MAX: dict[str, float] = {"fraction": 1.0, "percent": 100.0}
_ROUTE_KEYS = frozenset(
    {
        "benchmark",
        "sub_metric",
        "bucket",
        "direction",
        "scale",
        "weight",
        "ceiling",
        "difference_of",
        "label",
    }
)
_TOP_KEYS = frozenset({"version", "source", "benchmarks", "routes"})
# So that 0.2 + 0.3 + 0.5 counts as summing to 1.
_SUM_TOLERANCE = 1e-9
_OVERRIDE_PART = re.compile(r"^\s*([A-Za-z]\w*)\s*=\s*(\S+)\s*$")


@dataclass(frozen=True)
class Route:
    """One routed sub-metric: a row of seed 000 Table 6."""

    benchmark: str
    sub_metric: str
    bucket: str
    direction: Direction
    scale: Scale
    weight: float = 1.0
    ceiling: float | None = None
    difference_of: tuple[str, str] | None = None
    label: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return the route with every default filled in, as JSON types."""
        return {
            "benchmark": self.benchmark,
            "sub_metric": self.sub_metric,
            "bucket": self.bucket,
            "direction": self.direction,
            "scale": self.scale,
            "weight": self.weight,
            "ceiling": self.ceiling,
            "difference_of": list(self.difference_of) if self.difference_of else None,
            "label": self.label,
        }


@dataclass(frozen=True)
class Routing:
    """A validated routing: declared benchmarks, routes and the hash that identifies them.

    ``sha256`` is the SHA-256 of the canonical JSON of :meth:`to_dict` (defaults filled
    in), so YAML comments and layout do not change it but any routed value does.
    """

    benchmarks: tuple[str, ...]
    routes: tuple[Route, ...]
    source: str
    version: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the routing as JSON types (what :attr:`sha256` hashes)."""
        return {
            "version": self.version,
            "benchmarks": list(self.benchmarks),
            "routes": [route.to_dict() for route in self.routes],
        }

    @property
    def sha256(self) -> str:
        """Return the SHA-256 of the canonical JSON of the routing."""
        return sha256_hex(canonical_json(self.to_dict()))


@dataclass(frozen=True)
class Contributor:
    """A route's contribution to its bucket; ``raw``/``normalised`` are None when missing."""

    route: Route
    raw: float | None
    normalised: float | None
    effective_weight: float

    def to_dict(self) -> dict[str, Any]:
        """Return the breakdown row of the artifact."""
        return {
            "benchmark": self.route.benchmark,
            "sub_metric": self.route.sub_metric,
            "label": self.route.label,
            "raw": self.raw,
            "normalised": self.normalised,
            "weight": self.route.weight,
            "effective_weight": self.effective_weight,
            "available": self.normalised is not None,
        }


@dataclass(frozen=True)
class EGIResult:
    """The aggregate of one run; :meth:`to_dict` is the JSON results artifact."""

    egi: float
    partial: bool
    weight_covered: float
    egi_weights: dict[str, float]
    bucket_scores: dict[str, float | None]
    contributors: dict[str, tuple[Contributor, ...]]
    raw: dict[str, dict[str, float | None]]
    missing: tuple[dict[str, str], ...]
    missing_benchmarks: tuple[str, ...]
    missing_buckets: tuple[str, ...]
    unrouted: tuple[dict[str, str], ...]
    floors: dict[str, float]
    release_ready: bool
    routing: Routing
    violations: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """Return the results artifact as JSON types."""
        floor_rows = {}
        for bucket, floor in self.floors.items():
            score = self.bucket_scores[bucket]
            status = "missing" if score is None else ("below" if score < floor else "pass")
            floor_rows[bucket] = {"floor": floor, "score": score, "status": status}
        return {
            "egi": self.egi,
            "partial": self.partial,
            "egi_weight_covered": self.weight_covered,
            "egi_weights": dict(self.egi_weights),
            "buckets": {
                bucket: {
                    "name": BUCKET_NAMES[bucket],
                    "score": self.bucket_scores[bucket],
                    "missing": self.bucket_scores[bucket] is None,
                    "contributors": [c.to_dict() for c in self.contributors[bucket]],
                }
                for bucket in BUCKETS
            },
            "benchmarks": {name: dict(values) for name, values in self.raw.items()},
            "missing": [dict(row) for row in self.missing],
            "missing_benchmarks": list(self.missing_benchmarks),
            "missing_buckets": list(self.missing_buckets),
            "unrouted": [dict(row) for row in self.unrouted],
            "floors": floor_rows,
            "release_ready": self.release_ready,
            "routing": {
                "source": self.routing.source,
                "version": self.routing.version,
                "sha256": self.routing.sha256,
                "well_posed": not self.violations,
                "violations": list(self.violations),
            },
        }


def load_routing(path: str | Path = DEFAULT_ROUTING) -> Routing:
    """Read and validate a routing YAML file.

    Parameters
    ----------
    path : str or Path
        The routing file; the default reproduces seed 000 Table 6.

    Returns
    -------
    Routing
        The validated routing. Well-posedness is not enforced here; see
        :func:`check_routing`.

    Raises
    ------
    ValueError
        If the file is missing, is not YAML, or a field is wrong; the message names the
        file and the route at fault.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"{path}: cannot read the routing file ({error.strerror})") from error
    return routing_from_mapping(config_data(text, str(path)), source=str(path))


def routing_from_mapping(data: Any, *, source: str = "<mapping>") -> Routing:
    """Validate a routing given as plain data (the parsed YAML).

    Parameters
    ----------
    data : Mapping
        ``{"benchmarks": [...], "routes": [{...}, ...]}`` with optional ``version`` and
        ``source``; route fields as in ``routing.yaml``.
    source : str
        Where the data came from, used in error messages and the artifact.

    Raises
    ------
    ValueError
        Naming ``source`` and the key or route (``routes[3] (herb.entity_f1)``) at fault.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"{source}: expected a mapping with 'benchmarks' and 'routes'")
    unknown = sorted(set(map(str, data)) - _TOP_KEYS)
    if unknown:
        raise ValueError(f"{source}: unknown key(s) {unknown}; expected {sorted(_TOP_KEYS)}")
    declared = data.get("benchmarks")
    if not isinstance(declared, list) or not declared:
        raise ValueError(f"{source}: 'benchmarks' must be a non-empty list of names")
    for index, name in enumerate(declared):
        if not isinstance(name, str) or not name:
            raise ValueError(f"{source}: benchmarks[{index}] must be a non-empty string")
    duplicated = sorted({name for name in declared if declared.count(name) > 1})
    if duplicated:
        raise ValueError(f"{source}: benchmarks declared more than once: {duplicated}")
    raw_routes = data.get("routes")
    if not isinstance(raw_routes, list):
        raise ValueError(f"{source}: 'routes' must be a list of route mappings")
    version = data.get("version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise ValueError(f"{source}: 'version' must be an integer")
    routes: list[Route] = []
    seen: set[tuple[str, str]] = set()
    for index, item in enumerate(raw_routes):
        route = _route_from_mapping(item, where=f"{source}: routes[{index}]", declared=declared)
        key = (route.benchmark, route.sub_metric)
        if key in seen:
            raise ValueError(
                f"{source}: routes[{index}] routes {route.benchmark}.{route.sub_metric} again"
            )
        seen.add(key)
        routes.append(route)
    return Routing(benchmarks=tuple(declared), routes=tuple(routes), source=source, version=version)


def _route_from_mapping(item: Any, *, where: str, declared: list[str]) -> Route:
    if not isinstance(item, Mapping):
        raise ValueError(f"{where}: expected a mapping")
    benchmark = item.get("benchmark")
    sub_metric = item.get("sub_metric")
    if not isinstance(benchmark, str) or not isinstance(sub_metric, str) or not sub_metric:
        raise ValueError(f"{where}: 'benchmark' and 'sub_metric' must be non-empty strings")
    where = f"{where} ({benchmark}.{sub_metric})"
    unknown = sorted(set(map(str, item)) - _ROUTE_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}; expected {sorted(_ROUTE_KEYS)}")
    if benchmark not in declared:
        raise ValueError(f"{where}: benchmark {benchmark!r} is not declared in 'benchmarks'")
    bucket = item.get("bucket")
    if bucket not in BUCKETS:
        raise ValueError(f"{where}: bucket {bucket!r} is not one of {list(BUCKETS)}")
    direction = item.get("direction")
    if direction not in _DIRECTIONS:
        raise ValueError(f"{where}: direction {direction!r} is not one of {list(_DIRECTIONS)}")
    scale = item.get("scale")
    if scale not in _SCALES:
        raise ValueError(f"{where}: scale {scale!r} is not one of {list(_SCALES)}")
    weight = item.get("weight", 1.0)
    if (number := finite_number(weight)) is None or number <= 0:
        raise ValueError(f"{where}: weight must be a positive number, got {weight!r}")
    ceiling = item.get("ceiling")
    if direction == "lower":
        if (number := finite_number(ceiling)) is None or number <= 0:
            raise ValueError(
                f"{where}: a lower-is-better route needs a positive 'ceiling', got {ceiling!r}"
            )
        if scale in _SCALE_MAX and number > _SCALE_MAX[scale]:
            raise ValueError(
                f"{where}: ceiling {ceiling} exceeds the {scale} scale's {_SCALE_MAX[scale]:g}"
            )
    elif ceiling is not None:
        raise ValueError(f"{where}: 'ceiling' applies only to direction 'lower'")
    if scale == "count" and direction != "lower":
        raise ValueError(f"{where}: scale 'count' needs direction 'lower' and a ceiling")
    operands = item.get("difference_of")
    difference_of: tuple[str, str] | None = None
    if operands is not None:
        if (
            not isinstance(operands, list)
            or len(operands) != 2
            or not all(isinstance(part, str) and part for part in operands)
        ):
            raise ValueError(f"{where}: 'difference_of' must be a list of two sub-metric keys")
        difference_of = (operands[0], operands[1])
    label = item.get("label", "")
    if not isinstance(label, str):
        raise ValueError(f"{where}: 'label' must be a string")
    return Route(
        benchmark=benchmark,
        sub_metric=sub_metric,
        bucket=bucket,
        direction=direction,
        scale=scale,
        weight=float(weight),
        ceiling=None if ceiling is None else float(ceiling),
        difference_of=difference_of,
        label=label,
    )


def check_routing(routing: Routing, *, strict: bool = False) -> list[str]:
    """List the well-posedness violations of a routing (seed 000 §4).

    Every declared benchmark must feed at least one bucket and every bucket M1–M6 must
    hold at least two routes.

    Parameters
    ----------
    routing : Routing
        The routing to check.
    strict : bool
        Raise instead of returning when there is a violation.

    Returns
    -------
    list of str
        One message per violation, benchmarks first, then buckets; empty when well-posed.

    Raises
    ------
    ValueError
        With ``strict=True``, naming every violation.
    """
    violations = [
        f"benchmark {name!r} feeds no bucket"
        for name in routing.benchmarks
        if not any(route.benchmark == name for route in routing.routes)
    ]
    for bucket in BUCKETS:
        count = sum(route.bucket == bucket for route in routing.routes)
        if count < 2:
            violations.append(f"bucket {bucket} has {count} sub-metric(s); needs at least 2")
    if strict and violations:
        raise ValueError(f"{routing.source}: routing is not well-posed: " + "; ".join(violations))
    return violations


def parse_egi_weights(text: str) -> dict[str, float]:
    """Parse an ``--egi-weights`` override such as ``"M1=0.20,M5=0.30"``.

    Parameters
    ----------
    text : str
        Comma-separated ``bucket=weight`` parts; bucket names are case-insensitive.

    Returns
    -------
    dict
        The named weights, e.g. ``{"M1": 0.2, "M5": 0.3}``; pass them to
        :func:`effective_weights` or :func:`aggregate`.

    Raises
    ------
    ValueError
        Naming the part at fault: malformed text, an unknown or repeated bucket, a
        non-number or negative weight, or named weights that :func:`effective_weights`
        rejects (summing above 1).
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("egi_weights: empty; expected e.g. 'M1=0.20,M5=0.30'")
    named: dict[str, float] = {}
    for part in text.split(","):
        match = _OVERRIDE_PART.match(part)
        if match is None:
            raise ValueError(f"egi_weights: malformed part {part.strip()!r}; expected 'M<k>=<w>'")
        bucket, value_text = match.group(1).upper(), match.group(2)
        if bucket not in BUCKETS:
            raise ValueError(
                f"egi_weights: unknown bucket in {part.strip()!r}; expected one of {list(BUCKETS)}"
            )
        if bucket in named:
            raise ValueError(f"egi_weights: bucket {bucket} is given more than once")
        try:
            value = float(value_text)
        except ValueError:
            raise ValueError(f"egi_weights: weight in {part.strip()!r} is not a number") from None
        named[bucket] = value
    effective_weights(named)
    return named


def effective_weights(overrides: Mapping[str, float] | None = None) -> dict[str, float]:
    """Return the six EGI weights after an override.

    Notes
    -----
    Named weights replace the defaults; the unnamed buckets keep their default
    proportions, scaled so that the six sum to 1:

    ``W_k = W⁰_k · (1 − Σ_named W_j) / Σ_unnamed W⁰_j``

    With no override this is seed 000's ``(0.28, 0.22, 0.16, 0.14, 0.14, 0.06)``. With
    ``M1=0.20, M5=0.30`` the other four are scaled by ``0.5 / 0.58``.

    Raises
    ------
    ValueError
        For an unknown bucket, a negative or non-finite weight, named weights summing
        above 1, or all six named without summing to 1.
    """
    if not overrides:
        return dict(DEFAULT_EGI_WEIGHTS)
    for bucket, value in overrides.items():
        if bucket not in BUCKETS:
            raise ValueError(f"egi_weights: unknown bucket {bucket!r}; expected {list(BUCKETS)}")
        if finite_number(value) is None:
            raise ValueError(f"egi_weights: {bucket} weight {value!r} is not a finite number")
        if value < 0:
            raise ValueError(f"egi_weights: {bucket} weight {value} is negative")
    named_total = math.fsum(overrides.values())
    if named_total > 1 + _SUM_TOLERANCE:
        raise ValueError(
            f"egi_weights: named weights {dict(overrides)} sum to {named_total:g}, above 1"
        )
    unnamed = [bucket for bucket in BUCKETS if bucket not in overrides]
    if not unnamed:
        if abs(named_total - 1) > _SUM_TOLERANCE:
            raise ValueError(
                f"egi_weights: all six buckets are named and sum to {named_total:g}, not 1"
            )
        return {bucket: float(overrides[bucket]) for bucket in BUCKETS}
    scale = max(0.0, 1 - named_total) / math.fsum(DEFAULT_EGI_WEIGHTS[b] for b in unnamed)
    return {
        bucket: float(overrides[bucket])
        if bucket in overrides
        else DEFAULT_EGI_WEIGHTS[bucket] * scale
        for bucket in BUCKETS
    }


def normalise(value: float, *, route: Route) -> float:
    """Return ``value`` on [0, 100] following ``route``'s scale and direction.

    Notes
    -----
    Higher-is-better: ``100·v`` for ``fraction``, ``v`` for ``percent``. Lower-is-better
    with ceiling ``c`` (same unit as ``v``): ``clip(100·(1 − v/c), 0, 100)``.

    Raises
    ------
    ValueError
        If a higher-is-better value lies outside its scale.
    """
    if route.direction == "lower":
        assert route.ceiling is not None
        return min(100.0, max(0.0, 100.0 * (1.0 - value / route.ceiling)))
    top = _SCALE_MAX[route.scale]
    if not 0 <= value <= top:
        raise ValueError(
            f"{route.benchmark}.{route.sub_metric}: {value} is outside the {route.scale} "
            f"scale [0, {top:g}]"
        )
    return 100.0 * value / top


def aggregate(
    raw: Mapping[str, Mapping[str, float | None]],
    *,
    routing: Routing,
    weights: Mapping[str, float] | None = None,
    floors: Mapping[str, float] | None = None,
) -> EGIResult:
    """Route raw sub-metric values into M1–M6 and compute EGI (SPEC §10; seed 000 §4).

    Parameters
    ----------
    raw : Mapping
        ``{benchmark: {sub_metric: value}}`` in each benchmark's native scale. A benchmark
        absent from ``raw`` (or mapped to None) is a missing benchmark; a key absent or
        None is a missing sub-metric. Keys no route reads are reported as ``unrouted``.
    routing : Routing
        From :func:`load_routing`.
    weights : Mapping, optional
        EGI weight overrides by bucket (see :func:`effective_weights`).
    floors : Mapping, optional
        Release floors by bucket on [0, 100]; default M2 and M5 at 70. Given floors
        replace the default set.

    Returns
    -------
    EGIResult
        See the module docstring for the rules, including partial EGI.

    Raises
    ------
    ValueError
        For a non-numeric, non-finite or out-of-scale value (naming ``benchmark.key``), a
        bad weight override or a floor outside [0, 100] or on an unknown bucket.
    """
    egi_weights = effective_weights(weights)
    floor_map = _check_floors(DEFAULT_FLOORS if floors is None else floors)
    values = _check_raw(raw)

    missing_benchmarks = tuple(name for name in routing.benchmarks if values.get(name) is None)
    missing: list[dict[str, str]] = []
    read: set[tuple[str, str]] = set()
    # Per bucket, in routing order: (route, native value, normalised value) or Nones.
    rows: dict[str, list[tuple[Route, float | None, float | None]]] = {b: [] for b in BUCKETS}
    for route in routing.routes:
        keys = route.difference_of or (route.sub_metric,)
        read.update((route.benchmark, key) for key in keys)
        bench_values = values.get(route.benchmark)
        if bench_values is None:
            reason = "benchmark missing"
            absent_keys: list[str] = list(keys)
        else:
            absent_keys = [key for key in keys if bench_values.get(key) is None]
            reason = "sub-metric missing: " + ", ".join(absent_keys)
        if absent_keys:
            rows[route.bucket].append((route, None, None))
            missing.append(
                {
                    "benchmark": route.benchmark,
                    "sub_metric": route.sub_metric,
                    "bucket": route.bucket,
                    "reason": reason,
                }
            )
            continue
        assert bench_values is not None
        value = _route_value(route, [bench_values[key] for key in keys])
        rows[route.bucket].append((route, value, normalise(value, route=route)))

    bucket_scores: dict[str, float | None] = {}
    contributors: dict[str, tuple[Contributor, ...]] = {}
    for bucket in BUCKETS:
        scored = [(route, score) for route, _, score in rows[bucket] if score is not None]
        total = math.fsum(route.weight for route, _ in scored)
        # Within-bucket reweighting over the available routes: M_k = Σ w_i x_i / Σ w_i.
        bucket_scores[bucket] = (
            math.fsum(route.weight * score for route, score in scored) / total if scored else None
        )
        contributors[bucket] = tuple(
            Contributor(
                route=route,
                raw=value,
                normalised=score,
                effective_weight=0.0 if score is None else route.weight / total,
            )
            for route, value, score in rows[bucket]
        )

    present = {b: score for b, score in bucket_scores.items() if score is not None}
    # seed 000 §4; no reweighting across buckets, so a missing bucket adds nothing.
    egi = math.fsum(egi_weights[b] * score for b, score in present.items())
    weight_covered = math.fsum(egi_weights[b] for b in present)
    # A missing floored bucket cannot show it clears its floor.
    release_ready = all(b in present and present[b] >= floor for b, floor in floor_map.items())
    unrouted = tuple(
        {"benchmark": name, "sub_metric": key}
        for name, bench_values in values.items()
        if bench_values is not None
        for key in bench_values
        if (name, key) not in read
    )
    return EGIResult(
        egi=egi,
        partial=len(present) < len(BUCKETS),
        weight_covered=weight_covered,
        egi_weights=egi_weights,
        bucket_scores=bucket_scores,
        contributors=contributors,
        raw={name: dict(v) for name, v in values.items() if v is not None},
        missing=tuple(missing),
        missing_benchmarks=missing_benchmarks,
        missing_buckets=tuple(b for b in BUCKETS if bucket_scores[b] is None),
        unrouted=unrouted,
        floors=floor_map,
        release_ready=release_ready,
        routing=routing,
        violations=tuple(check_routing(routing)),
    )


def _route_value(route: Route, parts: list[float | None]) -> float:
    """Return the route's native value: the single key, or the difference of two."""
    if route.difference_of is None:
        assert parts[0] is not None
        return parts[0]
    first, second = parts
    assert first is not None and second is not None
    if route.scale in _SCALE_MAX:
        top = _SCALE_MAX[route.scale]
        for key, part in zip(route.difference_of, parts, strict=True):
            if part is not None and not 0 <= part <= top:
                raise ValueError(
                    f"{route.benchmark}.{key}: {part} is outside the {route.scale} scale "
                    f"[0, {top:g}]"
                )
    return first - second


def _check_raw(
    raw: Mapping[str, Mapping[str, float | None] | None],
) -> dict[str, dict[str, float | None] | None]:
    if not isinstance(raw, Mapping):
        raise ValueError("raw: expected a mapping {benchmark: {sub_metric: value}}")
    checked: dict[str, dict[str, float | None] | None] = {}
    for name, bench_values in raw.items():
        if bench_values is None:
            checked[str(name)] = None
            continue
        if not isinstance(bench_values, Mapping):
            raise ValueError(f"raw[{name!r}]: expected a mapping of sub-metric values")
        row: dict[str, float | None] = {}
        for key, value in bench_values.items():
            if value is not None and finite_number(value) is None:
                raise ValueError(f"{name}.{key}: {value!r} is not a finite number")
            row[str(key)] = None if value is None else float(value)
        checked[str(name)] = row
    return checked


def _check_floors(floors: Mapping[str, float]) -> dict[str, float]:
    checked: dict[str, float] = {}
    for bucket, floor in floors.items():
        if bucket not in BUCKETS:
            raise ValueError(f"floors: unknown bucket {bucket!r}; expected {list(BUCKETS)}")
        if (number := finite_number(floor)) is None or not 0 <= number <= 100:
            raise ValueError(f"floors: {bucket} floor {floor!r} is not a number in [0, 100]")
        checked[bucket] = number
    return checked
