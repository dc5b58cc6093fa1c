"""Configuration documents σ = ⟨M, P, Φ, U, Γ, H⟩: parse, validate, hash, compare (SPEC §2, §9).

Pure: no Django import. The services freeze what :func:`configuration_load` returns; the
selectors and pages compare versions with :func:`parity_report`.

- Parsing takes YAML or JSON text, read by :mod:`enterpriseval.documents`: YAML 1.2 booleans
  (only ``true`` and ``false``: ``no`` stays the string "no"), no timestamps (dates stay
  strings), and a key given twice is an error in both formats, so nothing in σ changes
  meaning silently.
- Validation collects every problem at once, each with the path of the field at fault
  (``model.parameters.temperature``) and, where the text allows, its line.
- Secrets are refused wherever they appear: σ names the environment variable that holds a
  key (``model.api_key_env``), never the key. Refusals never repeat the secret.
- The frozen form is ``audit.canonical.canonical_json`` of the document and its SHA-256.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from audit.canonical import canonical_json, canonical_value, sha256_hex
from enterpriseval.documents import (
    DocumentSyntaxError,
    DuplicateKeyError,
    LineIndex,
    document_read,
)

__all__ = [
    "ABSENT",
    "COMPONENTS",
    "CREDENTIAL_ADVICE",
    "SCHEMA_PATH",
    "Component",
    "ComponentParity",
    "ConfigurationInvalid",
    "DocumentProblem",
    "LeafDifference",
    "ParityReport",
    "ParsedConfiguration",
    "configuration_load",
    "configuration_parse",
    "configuration_problems",
    "configuration_schema",
    "configuration_secret_problems",
    "label_pattern_problem",
    "parity_report",
]

SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "configuration.schema.json"
CREDENTIAL_ADVICE = (
    "looks like an API key or secret; store it in an environment variable and name that "
    "variable in model.api_key_env"
)
Path_ = tuple[str | int, ...]


# ---------------------------------------------------------------------------------------------
# Problems


@dataclass(frozen=True)
class DocumentProblem:
    """One thing wrong with a σ document: where (JSON path, line) and what."""

    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.path or '(document)'}: {self.message}"

    def located(self, filename: str | None = None) -> str:
        """Return the problem prefixed with its file and line, when known."""
        where = [part for part in (filename, f"line {self.line}" if self.line else None) if part]
        return f"{', '.join(where)}: {self}" if where else str(self)

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.path, "line": self.line, "message": self.message}


class ConfigurationInvalid(ValueError):
    """The σ document cannot be frozen; ``problems`` lists every reason."""

    def __init__(self, problems: Sequence[DocumentProblem], filename: str | None = None):
        self.problems = tuple(problems)
        self.filename = filename
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        super().__init__(
            f"σ has {count} {noun}: " + "; ".join(p.located(filename) for p in self.problems)
        )


def _format_path(parts: Iterable[str | int]) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text


# ---------------------------------------------------------------------------------------------
# Parsing


def _decode(content: str | bytes) -> str:
    if isinstance(content, str):
        return content.removeprefix("\ufeff")
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigurationInvalid(
            [DocumentProblem("", f"the file is not UTF-8 text (byte {error.start} is invalid)")]
        ) from None


def _source_format(text: str, filename: str | None, content_type: str | None) -> str:
    suffix = Path(filename).suffix.lower() if filename else ""
    if suffix == ".json":
        return "json"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    media = (content_type or "").split(";")[0].strip().lower()
    if media.endswith("json"):
        return "json"
    if media.endswith("yaml"):
        return "yaml"
    return "json" if text.lstrip().startswith("{") else "yaml"


def configuration_parse(
    content: str | bytes, *, filename: str | None = None, content_type: str | None = None
) -> tuple[Any, str, LineIndex]:
    """Return ``(document, source_format, line_index)`` for YAML or JSON text.

    The format comes from the file's extension, else the content type, else the first
    character (``{`` is JSON). Raises :class:`ConfigurationInvalid` with the line of a
    syntax error.
    """
    text = _decode(content)
    source_format = _source_format(text, filename, content_type)
    if not text.strip():
        raise ConfigurationInvalid([DocumentProblem("", "the document is empty")], filename)
    try:
        read = document_read(text, fmt="json" if source_format == "json" else "yaml")
    except DocumentSyntaxError as error:
        raise ConfigurationInvalid(
            [DocumentProblem("", error.message, error.line)], filename
        ) from None
    except DuplicateKeyError as error:
        duplicate = error.duplicates[0]
        if duplicate.path is None:  # JSON: the reader knows the key only
            problem = DocumentProblem("", f"key {duplicate.key!r} appears twice; keep one")
        else:
            problem = DocumentProblem(
                "",
                f"not valid YAML: key {duplicate.key!r} appears twice (first on line "
                f"{duplicate.first_line}); keep one",
                duplicate.line,
            )
        raise ConfigurationInvalid([problem], filename) from None
    return read.data, source_format, read.lines


# ---------------------------------------------------------------------------------------------
# Validation


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return schema


@lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    return Draft202012Validator(_schema())


def configuration_schema() -> dict[str, Any]:
    """Return the published JSON Schema (Draft 2020-12) of σ."""
    return copy.deepcopy(_schema())


def _short(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_JSON_TYPES = {
    "object": "an object",
    "array": "a list",
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true or false",
    "null": "null",
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _schema_problems(error: ValidationError) -> Iterator[tuple[Path_, str]]:
    parts: Path_ = tuple(error.absolute_path)
    kind, expected, instance = error.validator, error.validator_value, error.instance
    if kind == "required":
        for key in expected:
            if isinstance(instance, Mapping) and key not in instance and repr(key) in error.message:
                yield (*parts, key), "is required"
                return
        yield parts, error.message
    elif kind == "additionalProperties" and isinstance(instance, Mapping):
        known = sorted(error.schema.get("properties", {}))
        for key in instance:
            if key not in known:
                yield (*parts, key), f"unknown field; expected one of: {', '.join(known)}"
    elif kind == "type":
        types = [expected] if isinstance(expected, str) else list(expected)
        wanted = " or ".join(_JSON_TYPES.get(t, t) for t in types)
        got = _JSON_TYPES.get(_json_type(instance), _json_type(instance))
        yield parts, f"expected {wanted}, got {got} {_short(instance)}"
    elif kind == "oneOf" and parts and parts[-1] == "output_format":
        if isinstance(instance, Mapping):
            for sub in error.context or ():
                if sub.relative_schema_path and sub.relative_schema_path[0] == 1:
                    yield from _schema_problems(sub)
        else:
            yield (
                parts,
                "expected a text (free format, not parsed) or a mapping {kind: label, pattern: "
                f"<regex with a named group label>}}, got {_short(instance)}",
            )
    elif kind == "const":
        yield parts, f"must be {_short(expected)}, got {_short(instance)}"
    elif kind == "enum":
        choices = ", ".join(_short(value) for value in expected)
        yield parts, f"must be one of {choices}; got {_short(instance)}"
    elif kind == "pattern" and parts and parts[-1] == "api_key_env":
        yield (
            parts,
            (
                "must be the name of an environment variable (capital letters, digits and _, "
                "starting with a letter, e.g. GEMINI_API_KEY), not the key itself"
            ),
        )
    elif kind == "pattern":
        yield parts, f"{_short(instance)} does not match the pattern {expected}"
    elif kind == "minLength" and instance == "":
        yield parts, "must not be empty"
    else:
        message = error.message
        yield parts, message if len(message) <= 240 else message[:239] + "…"


def _semantic_problems(document: Mapping[str, Any]) -> Iterator[tuple[Path_, str]]:
    retrieval = document.get("retrieval")
    chunking = retrieval.get("chunking") if isinstance(retrieval, Mapping) else None
    if isinstance(chunking, Mapping):
        size, overlap = chunking.get("size"), chunking.get("overlap")
        if isinstance(size, int) and isinstance(overlap, int) and overlap >= size:
            yield (
                ("retrieval", "chunking", "overlap"),
                f"{overlap} must be smaller than the chunk size {size}",
            )
    yield from _duplicate_names(document.get("tools"), ("tools",), "tool")
    guardrails = document.get("guardrails")
    output_format = guardrails.get("output_format") if isinstance(guardrails, Mapping) else None
    if isinstance(output_format, Mapping) and isinstance(output_format.get("pattern"), str):
        problem = label_pattern_problem(output_format["pattern"])
        if problem:
            yield ("guardrails", "output_format", "pattern"), problem
    oversight = document.get("oversight")
    if isinstance(oversight, Mapping):
        yield from _duplicate_names(
            oversight.get("checkpoints"), ("oversight", "checkpoints"), "checkpoint"
        )


def label_pattern_problem(pattern: str) -> str:
    """Return why ``pattern`` cannot read an output's label ("" when it can, SPEC §4.1)."""
    try:
        compiled = re.compile(pattern, re.MULTILINE)
    except re.error as error:
        return f"is not a valid regular expression: {error}"
    if "label" not in compiled.groupindex:
        return (
            "has no named group label: write the part that captures the label as "
            "(?P<label>...), e.g. ^Judgement:\\s*(?P<label>.+)$"
        )
    return ""


def _duplicate_names(items: Any, parts: Path_, noun: str) -> Iterator[tuple[Path_, str]]:
    if not isinstance(items, list):
        return
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str):
            continue
        if name in first:
            yield (
                (*parts, index, "name"),
                f"{noun} {_short(name)} is already {_format_path((*parts, first[name]))}; "
                f"names must be unique",
            )
        else:
            first[name] = index


# ---------------------------------------------------------------------------------------------
# Secrets


def _looks_random(text: str) -> bool:
    return (
        len(text) >= 20
        and any(c.isupper() for c in text)
        and any(c.islower() for c in text)
        and any(c.isdigit() for c in text)
    )


def _has_digit(text: str) -> bool:
    return any(c.isdigit() for c in text)


_SECRET_FORMATS: tuple[tuple[str, re.Pattern[str], Any], ...] = (
    (
        "Anthropic API key",
        re.compile(r"(?<![A-Za-z0-9])sk-ant-(?:[a-z]+\d*-)?([A-Za-z0-9_-]{20,})"),
        _looks_random,
    ),
    (
        "OpenAI API key",
        re.compile(r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})"),
        _looks_random,
    ),
    (
        "AWS access key id",
        re.compile(r"(?<![A-Za-z0-9])((?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})(?![A-Za-z0-9])"),
        None,
    ),
    ("Google API key", re.compile(r"(?<![A-Za-z0-9])(AIza[0-9A-Za-z_-]{35})"), None),
    (
        "GitHub token",
        re.compile(r"(?<![A-Za-z0-9])(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
        None,
    ),
    ("Slack token", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-([A-Za-z0-9-]{10,})"), _has_digit),
    (
        "JSON Web Token",
        re.compile(
            r"(?<![A-Za-z0-9_-])(eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
        ),
        None,
    ),
    ("private key", re.compile(r"(-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----)"), None),
    (
        "password in a URL",
        re.compile(r"(?i)[a-z][a-z0-9+.-]*://[^/\s:@]+:([^/\s@]+)@"),
        None,
    ),
    (
        "key in a URL query",
        re.compile(
            r"(?i)[?&](?:api[_-]?key|key|token|access[_-]?token|secret|password|sig)=([^&#\s]{8,})"
        ),
        None,
    ),
)

_SECRET_WORDS = {
    "apikey",
    "authorization",
    "bearer",
    "credential",
    "credentials",
    "passwd",
    "password",
    "passphrase",
    "pwd",
    "secret",
    "secrets",
    "token",
}
_SECRET_PAIRS = {
    ("access", "key"),
    ("access", "token"),
    ("api", "key"),
    ("auth", "token"),
    ("client", "secret"),
    ("private", "key"),
    ("refresh", "token"),
    ("secret", "key"),
    ("session", "token"),
}
_SECRET_JOINED = {"accesskey", "accesstoken", "apikey", "authtoken", "privatekey", "secretkey"}


def _key_words(key: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key)
    return [word.lower() for word in re.split(r"[^A-Za-z0-9]+", spaced) if word]


def _is_secret_key(key: str) -> bool:
    """Return whether a field named ``key`` would hold a credential.

    A name ending in ``env`` (``api_key_env``) names an environment variable, which is the
    safe way to refer to a key, so it is not one.
    """
    words = _key_words(key)
    if not words or words[-1] == "env":
        return False
    if any(word in _SECRET_WORDS for word in words):
        return True
    if any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words)):
        return True
    return "".join(words) in _SECRET_JOINED


def _secret_kind(text: str) -> tuple[str, str] | None:
    for kind, pattern, check in _SECRET_FORMATS:
        for match in pattern.finditer(text):
            if check is None or check(match.group(1)):
                return kind, match.group(0)
    return None


def _walk_secrets(
    value: Any, parts: Path_, under_secret_key: str | None
) -> Iterator[tuple[Path_, str, str]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            secret_key = str(key) if _is_secret_key(str(key)) else None
            yield from _walk_secrets(item, (*parts, str(key)), secret_key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk_secrets(item, (*parts, index), under_secret_key)
    elif isinstance(value, str):
        found = _secret_kind(value)
        if found is not None:
            yield parts, found[0], value
        elif under_secret_key and value.strip():
            yield parts, f"a value in a field named {under_secret_key!r}", value


def _secrets(document: Any) -> list[tuple[Path_, str, str]]:
    return list(_walk_secrets(document, (), None))


def configuration_secret_problems(document: Any) -> list[DocumentProblem]:
    """Return a problem for every string in ``document`` that looks like a credential.

    Detected: OpenAI (``sk-…``), Anthropic (``sk-ant-…``), AWS (``AKIA…``), Google
    (``AIza…``), GitHub (``ghp_…``, ``github_pat_…``), Slack (``xox…``) keys, JSON Web
    Tokens, PEM private keys, passwords and keys in URLs, and any non-empty string under a
    field named like a credential (``api_key``, ``password``, ``token``, ``secret``,
    ``access_key``…) other than ``…_env`` names. The secret itself is never repeated.
    """
    return [
        DocumentProblem(_format_path(parts), f"{CREDENTIAL_ADVICE} (detected: {kind})")
        for parts, kind, _ in _secrets(document)
    ]


def configuration_problems(
    document: Any, *, lines: LineIndex | None = None
) -> list[DocumentProblem]:
    """Return every schema, consistency and secret problem of ``document``, in text order."""
    found: list[tuple[Path_, str]] = []
    for error in _validator().iter_errors(document):
        found.extend(_schema_problems(error))
    if isinstance(document, Mapping):
        found.extend(_semantic_problems(document))
    secrets = _secrets(document)
    found.extend((parts, f"{CREDENTIAL_ADVICE} (detected: {kind})") for parts, kind, _ in secrets)
    values = sorted({value for *_, value in secrets}, key=len, reverse=True)
    index = lines or LineIndex(None)
    problems = []
    seen: set[tuple[str, str]] = set()
    for parts, message in found:
        for value in values:
            message = message.replace(value, "«redacted»").replace(
                json.dumps(value, ensure_ascii=False), "«redacted»"
            )
        path = _format_path(parts)
        if (path, message) in seen:
            continue
        seen.add((path, message))
        line = index.line(parts)
        problems.append(DocumentProblem(path, message, index.root_line if line is None else line))
    order = {problem: position for position, problem in enumerate(problems)}
    return sorted(problems, key=lambda p: (p.line or 0, order[p]))


# ---------------------------------------------------------------------------------------------
# Loading


@dataclass(frozen=True)
class ParsedConfiguration:
    """A valid σ: its document in canonical form, canonical JSON text and SHA-256."""

    document: dict[str, Any]
    canonical_json: str
    sha256: str
    source_format: str

    @property
    def model_ref(self) -> str:
        model = self.document["model"]
        return f"{model['provider']}/{model['id']}"


def configuration_load(
    content: str | bytes, *, filename: str | None = None, content_type: str | None = None
) -> ParsedConfiguration:
    """Parse and validate a σ document; return it canonicalised and hashed.

    Raises :class:`ConfigurationInvalid` listing every problem (syntax, schema, consistency,
    secrets) with its path and line.
    """
    document, source_format, lines = configuration_parse(
        content, filename=filename, content_type=content_type
    )
    problems = configuration_problems(document, lines=lines)
    if not problems:
        try:
            text = canonical_json(document)
        except ValueError as error:
            where, _, reason = str(error).partition(": ")
            path = where.removeprefix("$").removeprefix(".")
            problems = [DocumentProblem(path, reason or str(error))]
    if problems:
        raise ConfigurationInvalid(problems, filename)
    return ParsedConfiguration(
        document=canonical_value(document),
        canonical_json=text,
        sha256=sha256_hex(text),
        source_format=source_format,
    )


# ---------------------------------------------------------------------------------------------
# Parity (SPEC §9)


class _Absent:
    """A field one of the two documents does not have."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "(absent)"

    def __bool__(self) -> bool:
        return False


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Component:
    symbol: str
    key: str
    label: str


COMPONENTS: tuple[Component, ...] = (
    Component("M", "model", "Model"),
    Component("P", "prompts", "Prompts"),
    Component("Φ", "retrieval", "Retrieval"),
    Component("U", "tools", "Tools"),
    Component("Γ", "guardrails", "Guardrails"),
    Component("H", "oversight", "Human oversight"),
)
_METADATA_KEYS = ("schema_version", "name", "description")


@dataclass(frozen=True)
class LeafDifference:
    """A leaf that differs: its path and the value in each document (``ABSENT`` if none)."""

    path: str
    a: Any
    b: Any

    @property
    def a_present(self) -> bool:
        return self.a is not ABSENT

    @property
    def b_present(self) -> bool:
        return self.b is not ABSENT

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "a": None if self.a is ABSENT else self.a,
            "b": None if self.b is ABSENT else self.b,
            "a_present": self.a_present,
            "b_present": self.b_present,
        }


@dataclass(frozen=True)
class ComponentParity:
    component: Component
    differences: tuple[LeafDifference, ...]

    @property
    def differs(self) -> bool:
        return bool(self.differences)

    def as_dict(self) -> dict[str, Any]:
        return {
            "symbol": self.component.symbol,
            "key": self.component.key,
            "label": self.component.label,
            "differs": self.differs,
            "differences": [difference.as_dict() for difference in self.differences],
        }


ATTRIBUTABLE = "attributable to the model alone"
NOT_ATTRIBUTABLE = "not attributable to the model alone"
IDENTICAL = "identical configurations"


@dataclass(frozen=True)
class ParityReport:
    """Which σ components differ between two configurations, leaf by leaf (SPEC §9).

    ``attributable_to_model_alone`` holds when M differs and nothing else does; identical
    configurations are not "attributable to the model" (nothing differs at all). Differences
    in ``name``, ``description`` or ``schema_version`` describe the document, not the system,
    and do not count.
    """

    components: tuple[ComponentParity, ...]
    metadata_differences: tuple[LeafDifference, ...] = field(default=())

    @property
    def differing(self) -> list[str]:
        return [parity.component.key for parity in self.components if parity.differs]

    @property
    def identical(self) -> bool:
        return not self.differing

    @property
    def attributable_to_model_alone(self) -> bool:
        return self.differing == ["model"]

    @property
    def label(self) -> str:
        if self.identical:
            return IDENTICAL
        return ATTRIBUTABLE if self.attributable_to_model_alone else NOT_ATTRIBUTABLE

    def component(self, key: str) -> ComponentParity:
        return next(parity for parity in self.components if parity.component.key == key)

    def as_dict(self) -> dict[str, Any]:
        return {
            "identical": self.identical,
            "attributable_to_model_alone": self.attributable_to_model_alone,
            "label": self.label,
            "differing_components": self.differing,
            "components": [parity.as_dict() for parity in self.components],
            "metadata_differences": [d.as_dict() for d in self.metadata_differences],
        }


def _same(a: Any, b: Any) -> bool:
    if a is ABSENT or b is ABSENT:
        return a is b
    return canonical_json(a) == canonical_json(b)


def _leaves(a: Any, b: Any, parts: Path_) -> list[LeafDifference]:
    if _same(a, b):
        return []
    found: list[LeafDifference] = []
    if isinstance(a, Mapping | _Absent) and isinstance(b, Mapping | _Absent):
        left: Mapping[str, Any] = a if isinstance(a, Mapping) else {}
        right: Mapping[str, Any] = b if isinstance(b, Mapping) else {}
        for key in sorted(set(left) | set(right)):
            found += _leaves(left.get(key, ABSENT), right.get(key, ABSENT), (*parts, key))
    elif isinstance(a, list | _Absent) and isinstance(b, list | _Absent):
        first: list[Any] = a if isinstance(a, list) else []
        second: list[Any] = b if isinstance(b, list) else []
        for index in range(max(len(first), len(second))):
            found += _leaves(
                first[index] if index < len(first) else ABSENT,
                second[index] if index < len(second) else ABSENT,
                (*parts, index),
            )
    return found or [LeafDifference(_format_path(parts), a, b)]


def parity_report(a: Mapping[str, Any], b: Mapping[str, Any]) -> ParityReport:
    """Compare two σ documents component by component (SPEC §9).

    Each component lists the leaves that differ with both values; a field present in one
    document only is compared against ``ABSENT``. Values compare by canonical JSON, so
    ``1`` and ``1.0`` are the same and ``true`` and ``1`` are not.
    """
    return ParityReport(
        components=tuple(
            ComponentParity(
                component,
                tuple(
                    _leaves(
                        a.get(component.key, ABSENT),
                        b.get(component.key, ABSENT),
                        (component.key,),
                    )
                ),
            )
            for component in COMPONENTS
        ),
        metadata_differences=tuple(
            difference
            for key in _METADATA_KEYS
            for difference in _leaves(a.get(key, ABSENT), b.get(key, ABSENT), (key,))
        ),
    )
