"""Read YAML and JSON documents one way: duplicate keys refused, YAML 1.2 booleans, field lines.

Pure: no Django import. Charter files, configuration documents σ and decision input files are
read by :func:`document_read`:

- YAML is read with the YAML 1.2 booleans (only ``true`` and ``false``: ``yes``, ``no``, ``on``
  and ``off`` stay strings) and without timestamps (dates stay strings), so no value changes
  meaning on its way in.
- A key given twice in a mapping is refused (both libraries would keep the last one silently);
  YAML reports every repeated key with its field path and both lines.
- :class:`LineIndex` gives the 1-based line of a field path (``metrics[0].theta_in``,
  ``metrics[hallucination_rate].theta_in`` where list items are named by their ``id``, or a
  sequence of keys and indexes), so a message can name the file, the line and the field.

The readers raise :class:`DocumentSyntaxError` or :class:`DuplicateKeyError` with where and
what; each caller words them for its own file type. A configuration file a program reads whole
(a routing, a registry, a table) is read by :func:`config_data`, which words both in one line
naming the file. :func:`json_unique_object` is the JSON hook that refuses a repeated key, for
readers that call :func:`json.loads` themselves (the JSONL imports).

Hostile input is refused before it can cost more than the text's own size (SPEC's limits; issue
17): YAML anchors and aliases are refused (a "billion laughs" document expands exponentially
through them, and no file of ours needs them), nesting deeper than :data:`MAX_DEPTH` levels is
refused in YAML and JSON, and so is an integer longer than :data:`MAX_INTEGER_DIGITS` digits
(Python's own 4,300-digit limit would otherwise surface as a crash). Each refusal is a
:class:`DocumentLimitError` (a :class:`DocumentSyntaxError`) with the line and column. The
size of a file is the caller's to bound before it reads the text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import yaml

__all__ = [
    "Document",
    "DocumentError",
    "DocumentLimitError",
    "DocumentLoader",
    "DocumentSyntaxError",
    "DuplicateKey",
    "DuplicateKeyError",
    "Format",
    "LineIndex",
    "config_data",
    "document_lines",
    "document_read",
    "json_decode",
    "json_unique_object",
]

MAX_DEPTH = 64
"""Deepest nesting of mappings and lists accepted in a YAML or JSON document."""
MAX_INTEGER_DIGITS = 300
"""Longest integer accepted, in characters: every such integer still converts to a float."""

Format = Literal["yaml", "json"]
FieldPath = str | Sequence[str | int]


class DocumentLoader(yaml.SafeLoader):
    """Safe YAML loader with YAML 1.2 booleans, no timestamps, no aliases and bounded nesting.

    Anchors and aliases are refused where they appear, before anything is expanded; a node
    nested deeper than :data:`MAX_DEPTH` levels, or an integer longer than
    :data:`MAX_INTEGER_DIGITS` characters, likewise.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event: Any = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            raise _LimitError(f"an alias (*{event.anchor}) {_NO_ALIASES}", event.start_mark)
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise _LimitError(f"an anchor (&{anchor}) {_NO_ALIASES}", event.start_mark)
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if self._depth >= MAX_DEPTH:
                raise _LimitError(_too_deep(), event.start_mark)
            self._depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1
        return super().compose_node(parent, index)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        if len(node.value) > MAX_INTEGER_DIGITS:
            raise _LimitError(_too_long(len(node.value)), node.start_mark)
        return super().construct_yaml_int(node)


_NO_ALIASES = "is not accepted: write the value out in full where it is used"


def _too_deep() -> str:
    return f"the document is nested more than {MAX_DEPTH} levels deep"


def _too_long(digits: int) -> str:
    return f"an integer of {digits:,} characters is longer than {MAX_INTEGER_DIGITS} allowed"


class _LimitError(yaml.MarkedYAMLError):
    """A YAML limit broken at ``mark`` (turned into a :class:`DocumentLimitError`)."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem=problem, problem_mark=mark)


DocumentLoader.add_constructor("tag:yaml.org,2002:int", DocumentLoader.construct_yaml_int)


DocumentLoader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
DocumentLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


class DocumentError(ValueError):
    """A YAML or JSON text that cannot be read."""


class DocumentSyntaxError(DocumentError):
    """The text is not valid YAML or JSON.

    ``problem`` is the parser's description, ``context`` what it was reading (YAML only) and
    ``context_line`` where that began; ``line`` and ``column`` are 1-based when known.
    """

    def __init__(
        self,
        fmt: Format,
        problem: str,
        *,
        context: str | None = None,
        context_line: int | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.fmt = fmt
        self.problem = problem
        self.context = context
        self.context_line = context_line
        self.line = line
        self.column = column
        super().__init__(self.message)

    @property
    def reason(self) -> str:
        """Return the context and the problem (``while parsing … (line 18) expected …``)."""
        context = self.context
        if context and self.context_line is not None and self.context_line != self.line:
            # An unclosed bracket is noticed lines later: say where it was opened.
            context += f" (line {self.context_line})"
        return " ".join(part for part in (context, self.problem) if part)

    @property
    def message(self) -> str:
        """Return ``not valid YAML: <reason> (column <n>)`` (the column when known)."""
        column = f" (column {self.column})" if self.column is not None else ""
        return f"not valid {self.fmt.upper()}: {self.reason}{column}"


class DocumentLimitError(DocumentSyntaxError):
    """The text breaks a limit (an alias, nesting too deep, an integer too long)."""

    @property
    def message(self) -> str:
        """Return ``YAML refused: <reason> (column <n>)`` (the column when known)."""
        column = f" (column {self.column})" if self.column is not None else ""
        return f"{self.fmt.upper()} refused: {self.reason}{column}"


@dataclass(frozen=True)
class DuplicateKey:
    """A key given twice in one mapping.

    ``path`` is the field path of the repeated key (``metrics[0].theta_in``); ``line`` is the
    repeat's line and ``first_line`` the first one's. The JSON reader knows only the key.
    """

    key: str
    path: str | None = None
    line: int | None = None
    first_line: int | None = None


class DuplicateKeyError(DocumentError):
    """One or more keys appear twice in the same mapping; ``duplicates`` in text order."""

    def __init__(self, duplicates: Sequence[DuplicateKey]) -> None:
        self.duplicates = tuple(duplicates)
        first = self.duplicates[0]
        super().__init__(f"key {first.key!r} appears twice")


class LineIndex:
    """The 1-based line of each field path of a YAML or JSON text (via the YAML node tree)."""

    def __init__(self, root: yaml.Node | None) -> None:
        self.root = root

    @property
    def root_line(self) -> int | None:
        """Return the line the document starts on, or ``None`` for an unreadable text."""
        return self.root.start_mark.line + 1 if self.root is not None else None

    def line(self, path: FieldPath, *, exact: bool = False) -> int | None:
        """Return the line of the deepest field of ``path`` the text has.

        ``path`` is text (``metrics[0].theta_in``; a list item may be named by its ``id``:
        ``metrics[hallucination_rate]``) or a sequence of keys and indexes. ``None`` when the
        text has not even the first field of ``path`` (with ``exact``, unless it has all).
        """
        node, line = self.root, None
        rest: FieldPath = path
        while node is not None and rest:
            found = _text_step(node, rest) if isinstance(rest, str) else _part_step(node, rest)
            if found is None:
                break
            line, node, rest = found
        return None if exact and rest else line


@dataclass(frozen=True)
class Document:
    """A decoded document and the line index of its text."""

    data: Any
    lines: LineIndex


def document_read(text: str, *, fmt: Format) -> Document:
    """Return the decoded YAML or JSON ``text`` with its line index.

    Raises
    ------
    DocumentSyntaxError
        The text is not valid YAML or JSON (with the line and, for syntax, the column).
    DocumentLimitError
        The text has an anchor or alias (YAML), nests too deep or holds too long an integer.
    DuplicateKeyError
        A mapping repeats a key: every repeat in YAML, the first one found in JSON.
    """
    if fmt == "json":
        data = json_decode(text, object_pairs_hook=json_unique_object)
        return Document(data, document_lines(text))
    if fmt != "yaml":
        raise ValueError(f"fmt must be 'yaml' or 'json', got {fmt!r}")
    loader = DocumentLoader(text)
    try:
        node = loader.get_single_node()
        duplicates = list(_duplicates(node, "")) if node is not None else []
        if duplicates:
            raise DuplicateKeyError(duplicates)
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as error:
        raise _yaml_error(error) from None
    finally:
        loader.dispose()
    return Document(data, LineIndex(node))


def config_data(text: str, source: str, *, error: Callable[[str], Exception] = ValueError) -> Any:
    """Return the data of the YAML configuration file ``text``; ``source`` names the file.

    Raises ``error`` with one line: ``<source>: not valid YAML (line 2, column 3: mapping
    values are not allowed here)``, or for a repeated key ``<source>: not valid YAML (line 5:
    key 'routes' appears twice, first on line 2; give each key once)``.
    """
    try:
        return document_read(text, fmt="yaml").data
    except DocumentSyntaxError as syntax:
        where = f"line {syntax.line}" if syntax.line is not None else ""
        where += f", column {syntax.column}" if where and syntax.column is not None else ""
        detail = f"{where}: {syntax.reason}" if where else syntax.reason
    except DuplicateKeyError as duplicated:
        first = duplicated.duplicates[0]
        detail = (
            f"line {first.line}: key {first.path!r} appears twice, first on line "
            f"{first.first_line}; give each key once"
        )
    raise error(f"{source}: not valid YAML ({detail})")


def json_decode(
    text: str,
    *,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    parse_constant: Callable[[str], Any] | None = None,
) -> Any:
    """Return the decoded JSON ``text`` within the limits; hooks as :func:`json.loads`.

    The nesting is measured once the text decodes (the C decoder guards its own recursion),
    over the brackets outside strings; a deeper text is then refused with the line and
    column of its first bracket past the limit.

    Raises
    ------
    DocumentLimitError
        Nesting deeper than :data:`MAX_DEPTH` or an integer longer than
        :data:`MAX_INTEGER_DIGITS` characters, with the line and column.
    DocumentSyntaxError
        The text is not valid JSON (or ``parse_constant`` refused a constant).
    """
    try:
        value = json.loads(
            text,
            object_pairs_hook=object_pairs_hook,
            parse_int=_json_int,
            parse_constant=parse_constant,
        )
    except json.JSONDecodeError as error:
        raise DocumentSyntaxError(
            "json", error.msg, line=error.lineno, column=error.colno
        ) from None
    except _IntegerTooLong as error:
        line, column = _line_column(text, _long_integer_at(text, error.digits))
        raise DocumentLimitError(
            "json", _too_long(error.digits), line=line, column=column
        ) from None
    except RecursionError:
        _raise_too_deep(text)
        raise
    # Decoded: its strings are well formed, so the quick measure of the nesting is exact.
    if text.count("[") + text.count("{") > MAX_DEPTH and _json_depth(text) > MAX_DEPTH:
        _raise_too_deep(text)
    return value


def _raise_too_deep(text: str) -> None:
    deep = _json_too_deep(text)
    if deep is not None:
        line, column = _line_column(text, deep)
        raise DocumentLimitError("json", _too_deep(), line=line, column=column)


# A well-formed JSON string, and a bracket: the nesting of a decoded text, strings removed.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def _json_depth(text: str) -> int:
    """Return the deepest nesting of a JSON text that decoded (its strings are closed)."""
    depth = deepest = 0
    for bracket in _JSON_BRACKET.findall(_JSON_STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


class _IntegerTooLong(ValueError):
    def __init__(self, digits: int) -> None:
        super().__init__(_too_long(digits))
        self.digits = digits


def _json_int(literal: str) -> int:
    if len(literal) > MAX_INTEGER_DIGITS:
        raise _IntegerTooLong(len(literal))
    return int(literal)


_JSON_SPECIAL = re.compile(r'[\[\]{}"\\]')


def _json_too_deep(text: str) -> int | None:
    """Return the offset of the bracket that nests deeper than MAX_DEPTH, or None.

    One pass over the brackets, quotes and backslashes only; brackets in strings do not nest.
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth, in_string, escaped = 0, False, -1
    for match in _JSON_SPECIAL.finditer(text):
        offset, char = match.start(), match.group()
        if in_string:
            if offset == escaped:
                continue
            if char == "\\":
                escaped = offset + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return offset
        elif char in "]}":
            depth -= 1
    return None


def _long_integer_at(text: str, digits: int) -> int:
    """Return the offset of the first integer ``digits`` characters long (0 if none)."""
    match = re.search(rf"(?<![\w.])-?\d{{{max(digits - 1, 1)},}}", text)
    return match.start() if match else 0


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def json_unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Return the object of JSON ``pairs``; raise :class:`DuplicateKeyError` on a repeated key.

    The ``object_pairs_hook`` of :func:`json.loads`: JSON itself would keep the last value.
    """
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKeyError([DuplicateKey(key)])
        result[key] = value
    return result


def document_lines(text: str) -> LineIndex:
    """Return the line index of a YAML or JSON text (an empty one if it cannot be read)."""
    try:
        return LineIndex(yaml.compose(text, Loader=DocumentLoader))
    except yaml.YAMLError:
        return LineIndex(None)


def _yaml_error(error: yaml.YAMLError) -> DocumentSyntaxError:
    if not isinstance(error, yaml.MarkedYAMLError):
        return DocumentSyntaxError("yaml", str(error))
    mark = error.problem_mark or error.context_mark
    line = mark.line + 1 if mark is not None else None
    # A constructor error (an unknown tag) points at a value, not at a character.
    column = None
    if mark is not None and not isinstance(error, yaml.constructor.ConstructorError):
        column = mark.column + 1
    opened = error.context_mark
    if isinstance(error, _LimitError):
        return DocumentLimitError("yaml", error.problem or "", line=line, column=column)
    return DocumentSyntaxError(
        "yaml",
        error.problem or "",
        context=error.context,
        context_line=opened.line + 1 if opened is not None else None,
        line=line,
        column=column,
    )


def _duplicates(node: yaml.Node, path: str) -> Iterator[DuplicateKey]:
    if isinstance(node, yaml.MappingNode):
        first: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            child = f"{path}.{key}" if path else key
            line = key_node.start_mark.line + 1
            if key in first:
                yield DuplicateKey(key, child, line, first[key])
            else:
                first[key] = line
            yield from _duplicates(value_node, child)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _duplicates(item, f"{path}[{index}]")


_Step = tuple[int, yaml.Node, Any]


def _part_step(node: yaml.Node, parts: Sequence[str | int]) -> _Step | None:
    part = parts[0]
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == part:
                return key_node.start_mark.line + 1, value_node, parts[1:]
    in_range = isinstance(part, int) and 0 <= part < len(node.value)
    if isinstance(node, yaml.SequenceNode) and in_range:
        item = node.value[part]
        return item.start_mark.line + 1, item, parts[1:]
    return None


def _text_step(node: yaml.Node, path: str) -> _Step | None:
    if path.startswith("["):
        end = path.find("]")
        if end < 0 or not isinstance(node, yaml.SequenceNode):
            return None
        name, rest = path[1:end], path[end + 1 :].removeprefix(".")
        item = _item(node, name)
        return (item.start_mark.line + 1, item, rest) if item is not None else None
    if not isinstance(node, yaml.MappingNode):
        return None
    # The longest key that starts the path, so a key holding a dot still matches whole.
    best: tuple[str, yaml.Node, yaml.Node] | None = None
    for key_node, value_node in node.value:
        key = str(key_node.value)
        starts = path == key or path.startswith((f"{key}.", f"{key}["))
        if starts and (best is None or len(key) > len(best[0])):
            best = (key, key_node, value_node)
    if best is None:
        return None
    key, key_node, value_node = best
    return key_node.start_mark.line + 1, value_node, path[len(key) :].removeprefix(".")


def _item(node: yaml.SequenceNode, name: str) -> yaml.Node | None:
    if name.isdigit():
        index = int(name)
        return node.value[index] if index < len(node.value) else None
    for item in node.value:
        if isinstance(item, yaml.MappingNode):
            for key_node, value_node in item.value:
                if (
                    key_node.value == "id"
                    and isinstance(value_node, yaml.ScalarNode)
                    and value_node.value == name
                ):
                    return item
    return None
