"""Model names: provider prefixes and the alias table that links σ's model to EGI results.

Pure: PyYAML and the standard library, no Django import.

A σ names its model ``provider/id`` (``gemini/gemini-2.5-pro``); ``egi-bench`` names it by
its ``--model`` string (``gemini-2.5-pro``); a paper names it for people (``Gemini 2.5
Pro``). :func:`name_key` reduces a name to the form compared after the provider prefix is
stripped; :class:`AliasTable` (``model_aliases.yaml``) groups names of the same model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from enterpriseval.documents import config_data

__all__ = [
    "DEFAULT_ALIASES",
    "AliasTable",
    "default_aliases",
    "load_aliases",
    "name_key",
    "strip_provider",
]

DEFAULT_ALIASES = Path(__file__).with_name("model_aliases.yaml")
_SPACES = re.compile(r"\s+")


def strip_provider(name: str) -> str:
    """Return ``name`` without its provider prefix: everything up to the last ``/``.

    ``openrouter/anthropic/claude-sonnet-4-5`` → ``claude-sonnet-4-5``; a name without a
    ``/`` is returned stripped of surrounding spaces.
    """
    return name.rsplit("/", 1)[-1].strip()


def name_key(name: str) -> str:
    """Return the comparison key of ``name``: provider stripped, case-folded, spaces single."""
    return _SPACES.sub(" ", strip_provider(name)).casefold()


@dataclass(frozen=True)
class AliasTable:
    """Groups of names that denote the same model, compared by :func:`name_key`."""

    groups: tuple[frozenset[str], ...]
    source: str

    def aliases_of(self, name: str) -> frozenset[str]:
        """Return the keys of every name in ``name``'s group (empty when it has none)."""
        key = name_key(name)
        for group in self.groups:
            if key in group:
                return group
        return frozenset()


def load_aliases(path: str | Path = DEFAULT_ALIASES) -> AliasTable:
    """Read an alias table.

    The file holds ``models:``, a list of ``{name: <display name>, aliases: [<name>, ...]}``.

    Raises
    ------
    ValueError
        Naming the file and entry: unreadable or invalid YAML, a missing name, a non-string
        alias, or a name that falls in two groups.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"{path}: cannot read the alias table ({error.strerror})") from error
    return alias_table_from_mapping(config_data(text, str(path)), source=str(path))


def alias_table_from_mapping(data: Any, *, source: str = "<mapping>") -> AliasTable:
    """Validate an alias table given as parsed YAML (see :func:`load_aliases`)."""
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise ValueError(f"{source}: expected a mapping with a 'models' list")
    groups: list[frozenset[str]] = []
    owner: dict[str, int] = {}
    for index, entry in enumerate(data["models"]):
        where = f"{source}: models[{index}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: expected a mapping with 'name' and 'aliases'")
        name = entry.get("name")
        aliases = entry.get("aliases", [])
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{where}: 'name' must be a non-empty string")
        if not isinstance(aliases, list) or not all(
            isinstance(alias, str) and alias.strip() for alias in aliases
        ):
            raise ValueError(f"{where} ({name}): 'aliases' must be a list of non-empty strings")
        keys = frozenset(name_key(alias) for alias in _names(name, aliases))
        for key in keys:
            if key in owner and owner[key] != index:
                raise ValueError(
                    f"{where} ({name}): {key!r} is already an alias of models[{owner[key]}]"
                )
            owner[key] = index
        groups.append(keys)
    return AliasTable(groups=tuple(groups), source=source)


@lru_cache(maxsize=1)
def default_aliases() -> AliasTable:
    """Return the alias table shipped with the package (read once)."""
    return load_aliases(DEFAULT_ALIASES)


def _names(name: str, aliases: Iterable[str]) -> list[str]:
    return [name, *aliases]
