"""The charter's canonical document: one stable shape for hashing, files, the API and diffs.

Pure: no Django import. A charter version and its metrics become a plain ``dict``
(:func:`charter_document`) whose canonical JSON is what the three signatories sign and what
is frozen with its SHA-256. Charter files (YAML or JSON) and API bodies are read into the same
shape by :func:`document_from_text` and :func:`document_normalise`, which refuse anything that
cannot be stored and name the file, line and field at fault. :func:`document_diff` lists what
changed between two documents (the diff of a deviation). The editor's form is read by
:func:`document_from_form`.

Shape (keys in this order; ``metrics`` in charter order)::

    version, use_case, autonomy ("A1"), consequence ("C3"), intensity ("E2"),
    metrics: [{id, treatment, direction, theta_out, theta_in, weight, harm_statement,
               planned_n, reason, [agreement: {rule: kappa | ac1, threshold}], [k]}],

A metric's ``agreement`` rule is written only when the charter states one: a charter without
it reads the default (κ/α on the metric's criteria against ``kappa_target``), and its
canonical JSON, so its hash, is what it was before the field existed.
    nu_max, confidence, kappa_target, repeats_k, [success_rule], [rubric_fields],
    alternative_weights, baseline,
    measurement_mode, value_inputs, reevaluation_triggers, next_review_date ("YYYY-MM-DD")

Likewise ``success_rule`` (SPEC §4.1: label_equals_gold | key_elements_present | recorded |
human_acceptable) and a pass^k row's ``k`` (the k gated) are written only when stated, so a
charter signed before they existed keeps its hash. So is ``rubric_fields``: the optional
rubric fields graders are asked (``label_correct``: classification human-graded;
``acceptable``: the "Acceptable as is?" grade the ``human_acceptable`` rule reads), in rubric
order.
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from charters.catalogue import (
    AC1_RULE,
    AGREEMENT_RULES,
    BIAS_BOUND_RULE,
    KAPPA_RULE,
    OPTIONAL_RUBRIC_FIELDS,
    SUCCESS_RULES,
    catalogue,
)
from charters.validation import MEASUREMENT_MODES, TREATMENTS, Issue, evaluation_intensity
from enterpriseval.documents import (
    DocumentSyntaxError,
    DuplicateKeyError,
    document_lines,
    document_read,
)
from enterpriseval.values import finite_number, is_whole, type_name

METRIC_FIELDS: tuple[str, ...] = (
    "id",
    "treatment",
    "direction",
    "theta_out",
    "theta_in",
    "weight",
    "harm_statement",
    "planned_n",
    "reason",
    "agreement",
    "k",
)
# Accepted in files and checked against the catalogue, but not stored (the catalogue's
# grading modes are what the charter records; see charters.validation).
METRIC_CHECKED_ONLY: tuple[str, ...] = ("grading",)
DERIVED_FIELDS: tuple[str, ...] = ("version", "use_case", "autonomy", "consequence", "intensity")
CONTENT_FIELDS: tuple[str, ...] = (
    "metrics",
    "nu_max",
    "confidence",
    "kappa_target",
    "repeats_k",
    "success_rule",
    "rubric_fields",
    "alternative_weights",
    "baseline",
    "measurement_mode",
    "value_inputs",
    "reevaluation_triggers",
    "next_review_date",
)
DOCUMENT_FIELDS: tuple[str, ...] = DERIVED_FIELDS + CONTENT_FIELDS
DEFAULTS: dict[str, Any] = {
    "nu_max": 3.0,
    "confidence": 0.95,
    "kappa_target": 0.6,
    "repeats_k": 1,
    "alternative_weights": {},
    "baseline": "",
    "measurement_mode": "estimated",
    "value_inputs": {},
    "reevaluation_triggers": [],
    "next_review_date": None,
}
MAX_METRIC_ID = 60  # CharterMetric.metric_id
MAX_SMALL_INT = 32767  # Charter.repeats_k
MAX_INT = 2147483647  # CharterMetric.planned_n
MAX_FILE_BYTES = 1_000_000


class CharterLike(Protocol):
    version: int
    nu_max: float
    confidence: float
    kappa_target: float
    repeats_k: int
    alternative_weights: Any
    baseline: str
    measurement_mode: str
    value_inputs: Any
    reevaluation_triggers: Any
    next_review_date: dt.date | None


class MetricLike(Protocol):
    metric_id: str
    treatment: str
    theta_out: float | None
    theta_in: float | None
    weight: float | None
    harm_statement: str
    planned_n: int | None
    reason: str


class UseCaseLike(Protocol):
    key: str
    autonomy: int
    consequence: int


class CharterDocumentError(ValueError):
    """A charter file or body that cannot be read into the document shape; ``issues`` says
    where (file, line, field) and what was expected."""

    def __init__(self, issues: list[Issue], *, source: str | None = None) -> None:
        self.issues = issues
        self.source = source
        first = issues[0] if issues else Issue("error", "", "invalid charter")
        where = ", ".join(
            part
            for part in (source, f"line {first.line}" if first.line else None, first.field)
            if part
        )
        more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
        super().__init__(f"{where}: {first.message}{more}" if where else first.message + more)


# --------------------------------------------------------------------------- model → document


def charter_document(
    charter: CharterLike, metrics: Iterable[MetricLike], use_case: UseCaseLike
) -> dict[str, Any]:
    """Return the canonical document of a charter version from its fields and metrics.

    ``metrics`` must be in position order (the model's default ordering).
    """
    known = catalogue()
    review = charter.next_review_date
    return {
        "version": charter.version,
        "use_case": use_case.key,
        "autonomy": f"A{use_case.autonomy}",
        "consequence": f"C{use_case.consequence}",
        "intensity": f"E{evaluation_intensity(use_case.autonomy, use_case.consequence)}",
        "metrics": [
            _with_rule(
                {
                    "id": metric.metric_id,
                    "treatment": metric.treatment,
                    "direction": known[metric.metric_id].direction
                    if metric.metric_id in known
                    else None,
                    "theta_out": metric.theta_out,
                    "theta_in": metric.theta_in,
                    "weight": metric.weight,
                    "harm_statement": metric.harm_statement,
                    "planned_n": metric.planned_n,
                    "reason": metric.reason,
                },
                getattr(metric, "agreement", None),
                getattr(metric, "k", None),
            )
            for metric in metrics
        ],
        "nu_max": charter.nu_max,
        "confidence": charter.confidence,
        "kappa_target": charter.kappa_target,
        "repeats_k": charter.repeats_k,
        **_success_rule(charter),
        **_rubric_fields(charter),
        "alternative_weights": charter.alternative_weights or {},
        "baseline": charter.baseline,
        "measurement_mode": charter.measurement_mode,
        "value_inputs": charter.value_inputs or {},
        "reevaluation_triggers": list(charter.reevaluation_triggers or []),
        "next_review_date": review.isoformat() if review else None,
    }


def _success_rule(charter: CharterLike) -> dict[str, str]:
    """Return ``{success_rule: …}`` when the charter states one, else nothing."""
    rule = getattr(charter, "success_rule", "")
    return {"success_rule": rule} if rule else {}


def _rubric_fields(charter: CharterLike) -> dict[str, list[str]]:
    """Return ``{rubric_fields: […]}`` when the charter asks any optional field, else nothing."""
    asked = list(getattr(charter, "rubric_fields", None) or [])
    return {"rubric_fields": asked} if asked else {}


def _with_rule(
    entry: dict[str, Any], rule: Mapping[str, Any] | None, k: int | None = None
) -> dict[str, Any]:
    """Return the metric entry with its agreement rule and pass^k's k, where stated."""
    if rule is not None:
        entry["agreement"] = dict(rule)
    if k is not None:
        entry["k"] = k
    return entry


def document_content(document: Mapping[str, Any]) -> dict[str, Any]:
    """Return the fields a charter stores (the document without its derived fields)."""
    return {name: document[name] for name in CONTENT_FIELDS if name in document}


# --------------------------------------------------------------------------- files and bodies


@dataclass
class _Reader:
    issues: list[Issue] = field(default_factory=list)
    line_of: Callable[[str], int | None] = lambda path: None

    def error(self, path: str, message: str) -> None:
        self.issues.append(Issue("error", path, message, self.line_of(path)))


def document_from_text(
    text: str, *, fmt: str, source: str | None = None, max_bytes: int = MAX_FILE_BYTES
) -> dict[str, Any]:
    """Read a YAML or JSON charter file into the document shape.

    Parameters
    ----------
    text : str
        The file's content.
    fmt : {"yaml", "json"}
    source : str, optional
        File name used in messages.
    max_bytes : int
        The largest file accepted, in UTF-8 bytes (the web and API pass the charter cap of
        ``ENTERPRISEVAL_MAX_CHARTER_BYTES``).

    Raises
    ------
    CharterDocumentError
        With one issue per problem, each naming the line (where known) and the field path
        (``metrics[2].theta_in``). Duplicate keys are refused: YAML and JSON readers would
        otherwise keep the last one silently. YAML has the 1.2 booleans only (``yes`` is
        the text "yes"), as :mod:`enterpriseval.documents` reads it.
    """
    if fmt not in ("yaml", "json"):
        raise ValueError(f"fmt must be 'yaml' or 'json', got {fmt!r}")
    if len(text.encode("utf-8")) > max_bytes:
        raise CharterDocumentError(
            [Issue("error", "", f"the file is larger than {max_bytes:,} bytes")],
            source=source,
        )
    try:
        read = document_read(text, fmt="json" if fmt == "json" else "yaml")
    except (DocumentSyntaxError, DuplicateKeyError) as error:
        raise CharterDocumentError(_read_issues(error, text), source=source) from None
    return document_normalise(read.data, source=source, line_of=read.lines.line)


def document_line_finder(text: str) -> Callable[[str], int | None]:
    """Return a function giving the 1-based line of a field path in a YAML/JSON text."""
    return document_lines(text).line


def document_normalise(
    raw: Any,
    *,
    source: str | None = None,
    line_of: Callable[[str], int | None] | None = None,
) -> dict[str, Any]:
    """Return ``raw`` (a decoded file or API body) in the document shape, defaults filled in.

    Structural checks only: types, unknown fields, values the database cannot hold,
    duplicate metric ids. What a charter owner must fix before signing (thresholds, weights,
    reasons, coverage) is :func:`charters.validation.charter_validate`'s job, so a draft can
    be saved half-written.

    Raises
    ------
    CharterDocumentError
        Listing every structural problem with its field path (and line, with ``line_of``).
    """
    reader = _Reader(line_of=line_of or (lambda path: None))
    if not isinstance(raw, Mapping):
        reader.error("", f"a charter is a mapping of fields, got {type_name(raw)}")
        raise CharterDocumentError(reader.issues, source=source)
    _reject_unknown(raw, DOCUMENT_FIELDS, "", reader)
    document: dict[str, Any] = {}
    version = raw.get("version")
    if version is not None and not (is_whole(version) and version >= 1):
        reader.error("version", f"expected a version number ≥ 1, got {version!r}")
    document["version"] = int(version) if version is not None and is_whole(version) else None
    use_case = raw.get("use_case")
    if use_case is not None and not isinstance(use_case, str):
        reader.error("use_case", f"expected the use case key (text), got {type_name(use_case)}")
    document["use_case"] = use_case if isinstance(use_case, str) else None
    for name, prefix, low, high in (
        ("autonomy", "A", 0, 4),
        ("consequence", "C", 1, 4),
        ("intensity", "E", 1, 4),
    ):
        document[name] = _label(raw.get(name), name, prefix, low, high, reader)
    document["metrics"] = _metrics(raw.get("metrics"), reader)
    document["nu_max"] = _float(raw, "nu_max", reader)
    document["confidence"] = _float(raw, "confidence", reader)
    document["kappa_target"] = _float(raw, "kappa_target", reader)
    document["repeats_k"] = _count(raw, "repeats_k", MAX_SMALL_INT, reader)
    rule = raw.get("success_rule")
    if rule is not None and rule != "":
        if rule in SUCCESS_RULES:
            document["success_rule"] = rule
        else:
            reader.error(
                "success_rule",
                f"expected one of {', '.join(SUCCESS_RULES)} (how one output is judged a "
                f"success, SPEC §4.1), got {rule!r}",
            )
    asked = _optional_fields(raw.get("rubric_fields"), reader)
    if asked:
        document["rubric_fields"] = asked
    document["alternative_weights"] = _alternatives(raw.get("alternative_weights"), reader)
    document["baseline"] = _string(raw.get("baseline"), "baseline", reader)
    mode = raw.get("measurement_mode")
    if mode is None:
        mode = DEFAULTS["measurement_mode"]
    if mode not in MEASUREMENT_MODES:
        reader.error("measurement_mode", f"expected 'estimated' or 'observed', got {mode!r}")
    document["measurement_mode"] = mode
    document["value_inputs"] = _value_inputs(raw.get("value_inputs"), reader)
    document["reevaluation_triggers"] = _triggers(raw.get("reevaluation_triggers"), reader)
    document["next_review_date"] = _review_date(raw.get("next_review_date"), reader)
    if reader.issues:
        raise CharterDocumentError(reader.issues, source=source)
    return document


def _metrics(raw: Any, reader: _Reader) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        reader.error("metrics", f"expected a list of metrics, got {type_name(raw)}")
        return []
    metrics = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(raw):
        path = f"metrics[{index}]"
        if not isinstance(entry, Mapping):
            reader.error(path, f"expected a mapping with id and treatment, got {type_name(entry)}")
            continue
        _reject_unknown(entry, METRIC_FIELDS + METRIC_CHECKED_ONLY, f"{path}.", reader)
        metric_id = entry.get("id")
        if not isinstance(metric_id, str) or not metric_id.strip():
            reader.error(
                f"{path}.id", f"expected a metric id from the catalogue, got {metric_id!r}"
            )
            continue
        if len(metric_id) > MAX_METRIC_ID:
            reader.error(f"{path}.id", f"a metric id has at most {MAX_METRIC_ID} characters")
            continue
        if metric_id in seen:
            reader.error(
                f"{path}.id",
                f"{metric_id} appears twice (also metrics[{seen[metric_id]}]); each "
                "metric appears once",
            )
            continue
        seen[metric_id] = index
        treatment = entry.get("treatment")
        if treatment not in TREATMENTS:
            reader.error(
                f"{path}.treatment",
                f"{metric_id}: expected 'gated' or 'informational', got {treatment!r} "
                "(leave the metric out to not use it)",
            )
        metric: dict[str, Any] = {
            "id": metric_id,
            "treatment": treatment,
            "direction": _direction(entry, metric_id, path, reader),
        }
        for name in ("theta_out", "theta_in", "weight"):
            metric[name] = _optional_float(entry.get(name), f"{path}.{name}", metric_id, reader)
        metric["harm_statement"] = _string(
            entry.get("harm_statement"), f"{path}.harm_statement", reader
        )
        metric["planned_n"] = _optional_count(
            entry.get("planned_n"), f"{path}.planned_n", metric_id, reader
        )
        metric["reason"] = _string(entry.get("reason"), f"{path}.reason", reader)
        if entry.get("agreement") is not None:
            rule = _agreement_rule(entry["agreement"], f"{path}.agreement", metric_id, reader)
            if rule is not None:
                metric["agreement"] = rule
        if entry.get("k") is not None:
            k = _optional_count(entry["k"], f"{path}.k", metric_id, reader)
            if k is not None and k < 1:
                reader.error(f"{path}.k", f"{metric_id}: k must be a whole number ≥ 1, got {k}")
            elif k is not None:
                metric["k"] = k
        if "grading" in entry:
            metric["grading"] = entry["grading"]
        metrics.append(metric)
    return metrics


def _optional_fields(raw: Any, reader: _Reader) -> list[str]:
    """Read ``rubric_fields``: a list of optional rubric fields, returned in rubric order."""
    if raw is None or raw == "" or raw == []:
        return []
    if isinstance(raw, str):
        raw = [part.strip() for part in raw.split(",") if part.strip()]
    if not isinstance(raw, list):
        reader.error("rubric_fields", f"expected a list of field names, got {type_name(raw)}")
        return []
    asked: list[str] = []
    for n, name in enumerate(raw):
        if name not in OPTIONAL_RUBRIC_FIELDS:
            reader.error(
                f"rubric_fields[{n}]",
                f"expected one of {', '.join(OPTIONAL_RUBRIC_FIELDS)} (an optional rubric "
                f"field, SPEC §4.1), got {name!r}",
            )
        elif name in asked:
            reader.error(f"rubric_fields[{n}]", f"{name} is listed twice")
        else:
            asked.append(name)
    return [name for name in OPTIONAL_RUBRIC_FIELDS if name in asked]


def _agreement_rule(raw: Any, path: str, metric_id: str, reader: _Reader) -> dict[str, Any] | None:
    """Read a metric's pre-registered agreement rule: ``{rule: kappa}``, ``{rule: ac1,
    threshold: 0.7}`` or ``{rule: bias_bound, fraction: 0.5}`` (SPEC §5.1)."""
    if isinstance(raw, str):
        raw = {"rule": raw}
    if not isinstance(raw, Mapping):
        reader.error(
            path,
            f"{metric_id}: expected a mapping such as {{rule: ac1, threshold: 0.7}}, got "
            f"{type_name(raw)}",
        )
        return None
    _reject_unknown(raw, ("rule", "threshold", "fraction"), f"{path}.", reader)
    rule = raw.get("rule")
    if rule not in AGREEMENT_RULES:
        reader.error(
            f"{path}.rule",
            f"{metric_id}: expected one of {', '.join(AGREEMENT_RULES)} (κ/α on the metric's "
            f"criteria against kappa_target, Gwet's AC1 against a threshold, or a bias bound "
            f"below a fraction of |θin − θout|), got {rule!r}",
        )
        return None
    threshold = raw.get("threshold")
    fraction = raw.get("fraction")
    if rule != BIAS_BOUND_RULE and fraction is not None:
        reader.error(
            f"{path}.fraction",
            f"{metric_id}: a fraction belongs to rule {BIAS_BOUND_RULE}; rule {rule} takes none",
        )
        return None
    if rule == KAPPA_RULE:
        if threshold is not None:
            reader.error(
                f"{path}.threshold",
                f"{metric_id}: the κ/α rule reads the charter's kappa_target; state no threshold "
                "here (or choose rule: ac1 with its own threshold)",
            )
            return None
        return {"rule": KAPPA_RULE}
    if rule == BIAS_BOUND_RULE:
        if threshold is not None:
            reader.error(
                f"{path}.threshold",
                f"{metric_id}: rule {BIAS_BOUND_RULE} states a fraction of |θin − θout|, not a "
                "threshold",
            )
            return None
        share = finite_number(fraction)
        if share is None or not 0.0 < share <= 1.0:
            reader.error(
                f"{path}.fraction",
                f"{metric_id}: rule {BIAS_BOUND_RULE} needs a fraction of |θin − θout| in "
                f"(0, 1], e.g. 0.5, got {fraction!r}",
            )
            return None
        return {"rule": BIAS_BOUND_RULE, "fraction": share}
    number = finite_number(threshold)
    if number is None or not -1.0 < number <= 1.0:
        reader.error(
            f"{path}.threshold",
            f"{metric_id}: rule {AC1_RULE} needs a threshold in (-1, 1], got {threshold!r}",
        )
        return None
    return {"rule": AC1_RULE, "threshold": number}


def _direction(entry: Mapping[str, Any], metric_id: str, path: str, reader: _Reader) -> Any:
    known = catalogue().get(metric_id)
    given = entry.get("direction")
    if given is not None and given not in ("higher", "lower"):
        reader.error(f"{path}.direction", f"expected 'higher' or 'lower', got {given!r}")
    if known is None:
        return given
    # A file that states the direction is checked against the catalogue by validation.
    return given if given is not None else known.direction


def _alternatives(raw: Any, reader: _Reader) -> dict[str, dict[str, float]]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        reader.error(
            "alternative_weights",
            f"expected a mapping of weighting name → {{metric id: weight}}, got {type_name(raw)}",
        )
        return {}
    result: dict[str, dict[str, float]] = {}
    for name, weights in raw.items():
        path = f"alternative_weights.{name}"
        if not isinstance(name, str) or not name.strip():
            reader.error(path, "a weighting needs a name (text)")
            continue
        if not isinstance(weights, Mapping):
            reader.error(
                path, f"expected a mapping of metric id → weight, got {type_name(weights)}"
            )
            continue
        parsed: dict[str, float] = {}
        for metric_id, weight in weights.items():
            if not isinstance(metric_id, str):
                reader.error(f"{path}.{metric_id}", "expected a metric id (text)")
                continue
            number = finite_number(weight)
            if number is None:
                reader.error(f"{path}.{metric_id}", f"expected a number, got {weight!r}")
                continue
            parsed[metric_id] = number
        result[name] = parsed
    return result


def _value_inputs(raw: Any, reader: _Reader) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        reader.error("value_inputs", f"expected a mapping, got {type_name(raw)}")
        return {}
    result: dict[str, Any] = {}
    for name, value in raw.items():
        path = f"value_inputs.{name}"
        if not isinstance(name, str):
            reader.error(path, "expected an input name (text)")
            continue
        try:
            result[name] = _json_value(value, path)
        except ValueError as error:
            reader.error(path, str(error))
    return result


def _json_value(value: Any, path: str) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"expected a finite number, got {value!r}")
        return value if isinstance(value, int) else number
    if isinstance(value, Mapping):
        return {str(key): _json_value(item, f"{path}.{key}") for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(item, f"{path}[{index}]") for index, item in enumerate(value)]
    raise ValueError(f"expected numbers, text, lists or mappings, got {type_name(value)}")


def _triggers(raw: Any, reader: _Reader) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        reader.error(
            "reevaluation_triggers",
            f"expected a list of triggers (one text each), got {type_name(raw)}",
        )
        return []
    triggers = []
    for index, trigger in enumerate(raw):
        if not isinstance(trigger, str) or not trigger.strip():
            reader.error(
                f"reevaluation_triggers[{index}]",
                f"expected a trigger described in text, got {trigger!r}",
            )
            continue
        triggers.append(trigger.strip())
    return triggers


def _review_date(raw: Any, reader: _Reader) -> str | None:
    if raw is None or raw == "":
        return None
    if isinstance(raw, dt.datetime):
        reader.error("next_review_date", f"expected a date YYYY-MM-DD, got a date-time {raw}")
        return None
    if isinstance(raw, dt.date):
        return raw.isoformat()
    if isinstance(raw, str):
        try:
            return dt.date.fromisoformat(raw.strip()).isoformat()
        except ValueError:
            pass
    reader.error("next_review_date", f"expected a date YYYY-MM-DD, got {raw!r}")
    return None


def _label(raw: Any, name: str, prefix: str, low: int, high: int, reader: _Reader) -> str | None:
    if raw is None:
        return None
    value = None
    if is_whole(raw):
        value = int(raw)
    elif isinstance(raw, str) and raw.upper().startswith(prefix) and raw[1:].isdigit():
        value = int(raw[1:])
    if value is None or not low <= value <= high:
        reader.error(name, f"expected {prefix}{low}..{prefix}{high}, got {raw!r}")
        return None
    return f"{prefix}{value}"


def _float(raw: Mapping[str, Any], name: str, reader: _Reader) -> float:
    value = raw.get(name)
    if value is None:
        return float(DEFAULTS[name])
    number = finite_number(value)
    if number is None:
        reader.error(name, f"expected a number, got {value!r}")
        return float(DEFAULTS[name])
    return number


def _count(raw: Mapping[str, Any], name: str, maximum: int, reader: _Reader) -> int:
    value = raw.get(name)
    if value is None:
        return int(DEFAULTS[name])
    if not is_whole(value) or not 0 <= value <= maximum:
        reader.error(name, f"expected a whole number from 1 to {maximum}, got {value!r}")
        return int(DEFAULTS[name])
    return int(value)


def _optional_float(value: Any, path: str, metric_id: str, reader: _Reader) -> float | None:
    if value is None:
        return None
    number = finite_number(value)
    if number is None:
        reader.error(path, f"{metric_id}: expected a number, got {value!r}")
    return number


def _optional_count(value: Any, path: str, metric_id: str, reader: _Reader) -> int | None:
    if value is None:
        return None
    if not is_whole(value) or not 0 <= value <= MAX_INT:
        reader.error(path, f"{metric_id}: expected a whole number of units ≥ 1, got {value!r}")
        return None
    return int(value)


def _string(value: Any, path: str, reader: _Reader) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        reader.error(path, f"expected text, got {type_name(value)}")
        return ""
    if "\x00" in value:
        reader.error(path, "text must not contain NUL (\\x00)")
        return ""
    return value.strip()


def _reject_unknown(
    raw: Mapping[Any, Any], known: Sequence[str], prefix: str, reader: _Reader
) -> None:
    for key in raw:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            reader.error(
                f"{prefix}{key}", f"unknown field {key!r}; expected one of {', '.join(known)}{hint}"
            )


# --------------------------------------------------------------------------- editor form


def document_from_form(
    fields: Mapping[str, str], metric_ids: Sequence[str]
) -> tuple[dict[str, Any], list[Issue]]:
    """Return the document the charter editor's form describes, and what could not be read.

    ``metric_ids`` are the form's rows in order; row fields are ``<name>-<metric id>``
    (``treatment-hallucination_rate``, ``theta_in-hallucination_rate``, …); the agreement
    rule is ``agreement_rule-<id>`` (empty: the default κ/α) and ``agreement_threshold-<id>``.
    A row whose treatment is empty is not used. Each optional rubric field asked is a
    checkbox ``rubric_field_<name>``. Text areas ``alternative_weights`` and
    ``value_inputs`` hold YAML; ``reevaluation_triggers`` holds one trigger per line. Every
    value that cannot be read is reported (never dropped silently) and left out of the
    document.
    """
    issues: list[Issue] = []

    def number(name: str, path: str, *, whole: bool = False) -> float | int | None:
        text = (fields.get(name) or "").strip()
        if not text:
            return None
        try:
            value = float(text.replace(",", "."))
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or (whole and not value.is_integer()):
            kind = "a whole number" if whole else "a number"
            issues.append(Issue("error", path, f"{path}: expected {kind}, got {text!r}"))
            return None
        return int(value) if whole else value

    metrics = []
    for metric_id in metric_ids:
        treatment = (fields.get(f"treatment-{metric_id}") or "").strip()
        if not treatment:
            continue
        path = f"metrics[{metric_id}]"
        entry: dict[str, Any] = {}
        rule = (fields.get(f"agreement_rule-{metric_id}") or "").strip()
        # One number box per row: AC1's threshold, or the bias bound's fraction.
        figure = "fraction" if rule == BIAS_BOUND_RULE else "threshold"
        threshold = number(f"agreement_threshold-{metric_id}", f"{path}.agreement.{figure}")
        if rule:
            given = {"rule": rule, **({} if threshold is None else {figure: threshold})}
            row_reader = _Reader()
            read = _agreement_rule(given, f"{path}.agreement", metric_id, row_reader)
            issues.extend(row_reader.issues)
            if read is not None:
                entry["agreement"] = read
        elif threshold is not None:
            issues.append(
                Issue(
                    "error",
                    f"{path}.agreement.threshold",
                    f"{metric_id}: a threshold needs the rule it belongs to (ac1 or "
                    f"{BIAS_BOUND_RULE})",
                )
            )
        k = number(f"k-{metric_id}", f"{path}.k", whole=True)
        if k is not None:
            entry["k"] = k
        metrics.append(
            {
                **entry,
                "id": metric_id,
                "treatment": treatment,
                "theta_out": number(f"theta_out-{metric_id}", f"{path}.theta_out"),
                "theta_in": number(f"theta_in-{metric_id}", f"{path}.theta_in"),
                "weight": number(f"weight-{metric_id}", f"{path}.weight"),
                "harm_statement": fields.get(f"harm_statement-{metric_id}", ""),
                "planned_n": number(f"planned_n-{metric_id}", f"{path}.planned_n", whole=True),
                "reason": fields.get(f"reason-{metric_id}", ""),
            }
        )
    raw: dict[str, Any] = {"metrics": metrics}
    for name in ("nu_max", "confidence", "kappa_target"):
        raw[name] = number(name, name)
    raw["repeats_k"] = number("repeats_k", "repeats_k", whole=True)
    raw["success_rule"] = (fields.get("success_rule") or "").strip() or None
    raw["rubric_fields"] = [
        name for name in OPTIONAL_RUBRIC_FIELDS if fields.get(f"rubric_field_{name}")
    ]
    raw["baseline"] = fields.get("baseline", "")
    raw["measurement_mode"] = fields.get("measurement_mode") or None
    raw["next_review_date"] = (fields.get("next_review_date") or "").strip() or None
    raw["reevaluation_triggers"] = [
        line.strip()
        for line in (fields.get("reevaluation_triggers") or "").splitlines()
        if line.strip()
    ]
    for name in ("alternative_weights", "value_inputs"):
        text = fields.get(name) or ""
        if not text.strip():
            raw[name] = None
            continue
        try:
            raw[name] = document_read(text, fmt="yaml").data
        except (DocumentSyntaxError, DuplicateKeyError) as error:
            issues.extend(
                Issue("error", name, f"{name} (YAML): {issue.message}", issue.line)
                for issue in _read_issues(error, text)
            )
            raw[name] = None
    try:
        document = document_normalise(raw)
    except CharterDocumentError as error:
        issues.extend(error.issues)
        try:
            document = document_normalise(_without(raw, error.issues))
        except CharterDocumentError:
            document = document_normalise({})
    return document, issues


def _without(raw: dict[str, Any], issues: list[Issue]) -> dict[str, Any]:
    """Return ``raw`` with the top-level fields at fault reset, so the rest can be shown."""
    cleaned = dict(raw)
    for issue in issues:
        top = issue.field.split(".")[0].split("[")[0]
        if top == "metrics":
            index = _metric_index(issue.field)
            if index is not None and index < len(cleaned["metrics"]):
                cleaned["metrics"] = list(cleaned["metrics"])
                cleaned["metrics"][index] = None
            continue
        cleaned.pop(top, None)
    cleaned["metrics"] = [m for m in cleaned.get("metrics", []) if m is not None]
    return cleaned


def _metric_index(path: str) -> int | None:
    start = path.find("[")
    end = path.find("]")
    if start < 0 or end < start:
        return None
    inner = path[start + 1 : end]
    return int(inner) if inner.isdigit() else None


# --------------------------------------------------------------------------- diff


def document_diff(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    *,
    ignore: Iterable[str] = ("version",),
) -> list[dict[str, Any]]:
    """Return what changed from ``before`` to ``after`` as ``[{path, before, after}]``.

    Metrics are matched by id (``metrics[irrelevance_rate].theta_in``), so moving one does
    not show every metric as changed; a change of order is one entry ``metrics.order``.
    Mappings are compared key by key, lists and scalars as whole values. Paths are in
    document order, so the diff of the same two documents is always the same list.
    """
    skipped = set(ignore)
    changes: list[dict[str, Any]] = []
    keys = [k for k in DOCUMENT_FIELDS if k in before or k in after]
    keys += sorted((set(before) | set(after)) - set(DOCUMENT_FIELDS))
    for key in keys:
        if key in skipped:
            continue
        if key == "metrics":
            _diff_metrics(before.get("metrics") or [], after.get("metrics") or [], changes)
        else:
            _diff_value(key, before.get(key), after.get(key), changes)
    return changes


def _diff_metrics(
    before: list[Mapping[str, Any]], after: list[Mapping[str, Any]], changes: list[dict[str, Any]]
) -> None:
    old = {m["id"]: m for m in before}
    new = {m["id"]: m for m in after}
    for metric_id in [m["id"] for m in before] + [m["id"] for m in after if m["id"] not in old]:
        path = f"metrics[{metric_id}]"
        if metric_id not in new:
            changes.append({"path": path, "before": dict(old[metric_id]), "after": None})
        elif metric_id not in old:
            changes.append({"path": path, "before": None, "after": dict(new[metric_id])})
        else:
            fields = list(old[metric_id]) + [k for k in new[metric_id] if k not in old[metric_id]]
            for name in fields:
                _diff_value(
                    f"{path}.{name}", old[metric_id].get(name), new[metric_id].get(name), changes
                )
    common_before = [m["id"] for m in before if m["id"] in new]
    common_after = [m["id"] for m in after if m["id"] in old]
    if common_before != common_after:
        changes.append({"path": "metrics.order", "before": common_before, "after": common_after})


def _diff_value(path: str, before: Any, after: Any, changes: list[dict[str, Any]]) -> None:
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        for key in list(before) + [k for k in after if k not in before]:
            _diff_value(f"{path}.{key}", before.get(key), after.get(key), changes)
        return
    if _same(before, after):
        return
    changes.append({"path": path, "before": before, "after": after})


def _same(before: Any, after: Any) -> bool:
    # 50 and 50.0 are the same threshold (canonical JSON writes both as 50).
    numeric = all(
        isinstance(value, numbers.Real) and not isinstance(value, bool) for value in (before, after)
    )
    if numeric:
        return float(before) == float(after)
    return bool(before == after)


# --------------------------------------------------------------------------- helpers


def _read_issues(error: DocumentSyntaxError | DuplicateKeyError, text: str) -> list[Issue]:
    """Return the issues of a text the document reader refused."""
    if isinstance(error, DocumentSyntaxError):
        return [Issue("error", "", error.message, error.line)]
    # JSON names only the key: its line is where the field first appears.
    return [
        Issue(
            "error",
            duplicate.path or duplicate.key,
            f"duplicate key {duplicate.key!r}: each field appears once",
            duplicate.line if duplicate.path else document_lines(text).line(duplicate.key),
        )
        for duplicate in error.duplicates
    ]


def issues_with_lines(issues: Iterable[Issue], line_of: Callable[[str], int | None]) -> list[Issue]:
    """Return ``issues`` with the line of their field in the file they came from."""
    return [
        issue
        if issue.line is not None
        else Issue(issue.level, issue.field, issue.message, line_of(issue.field))
        for issue in issues
    ]
