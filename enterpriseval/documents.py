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
    "DocumentLoader",
    "DocumentSyntaxError",
    "DuplicateKey",
    "DuplicateKeyError",
    "Format",
    "LineIndex",
    "config_data",
    "document_lines",
    "document_read",
    "json_unique_object",
]

Format = Literal["yaml", "json"]
FieldPath = str | Sequence[str | int]


class DocumentLoader(yaml.SafeLoader):
    """Safe YAML loader with YAML 1.2 booleans and no timestamps."""


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
    DuplicateKeyError
        A mapping repeats a key: every repeat in YAML, the first one found in JSON.
    """
    if fmt == "json":
        try:
            data = json.loads(text, object_pairs_hook=json_unique_object)
        except json.JSONDecodeError as error:
            raise DocumentSyntaxError(
                "json", error.msg, line=error.lineno, column=error.colno
            ) from None
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
