"""Regulatory mapping packs: which scorecard artefact evidences which clause (SPEC §7).

The mapping is data, not code (seed 003 Table 10). A pack is one YAML file in a folder of
packs; a compliance team can copy the folder, edit it, bump ``version`` and point the app at
the copy without a release. Every pack is validated when it is loaded, and every problem is
reported as a :class:`PackError` naming the file, the key path and, where known, the line::

    pack: eu-ai-act                    # must equal the file name without .yaml
    title: EU AI Act (high-risk)
    version: "2026.1"                  # a string: quote it, or YAML reads 2026.1 as a number
    issuer: European Parliament and Council of the EU
    document: Regulation (EU) 2024/1689 ...
    source_url: https://eur-lex.europa.eu/eli/reg/2024/1689/oj
    notes: [scope statements and dates, as strings]
    entries:
      - clause: Art. 14                # unique within the pack
        title: Human oversight
        requirement: one line, in the pack authors' words
        artefacts: [oversight_study, decision]   # kinds of scorecards.artefacts
        evidence: one line: how those artefacts evidence the clause

Pure: no Django import. The scorecard resolves each artefact kind to an
:class:`~scorecards.artefacts.ArtefactRef` and prints :func:`appendix_rows` and
:func:`packs_used`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from enterpriseval.documents import DocumentSyntaxError, DuplicateKeyError, LineIndex, document_read
from enterpriseval.values import type_name
from scorecards.artefacts import ARTEFACT_KINDS, ArtefactRef

__all__ = [
    "DEFAULT_PACK_DIR",
    "NO_ARTEFACT",
    "NO_HASH",
    "AppendixRow",
    "PackEntry",
    "PackError",
    "RegulatoryPack",
    "appendix_rows",
    "load_pack",
    "load_packs",
    "packs_used",
]

#: The packs shipped with EnterpriseVal; a deployment may point SCORECARD_PACK_DIR elsewhere.
DEFAULT_PACK_DIR = Path(__file__).resolve().with_name("packs")
PACK_SUFFIXES = (".yaml", ".yml")

PACK_KEYS = ("pack", "title", "version", "issuer", "document", "source_url", "notes", "entries")
ENTRY_KEYS = ("clause", "title", "requirement", "artefacts", "evidence")
_URL = re.compile(r"https?://\S+\Z")
NO_ARTEFACT = "this scorecard has no artefact of this kind"
NO_HASH = "no SHA-256 recorded for this artefact"


class PackError(ValueError):
    """A regulatory pack that cannot be used, with every problem found in it.

    ``problems`` holds one message per problem, each starting with the file name; the
    exception's text is those messages, one a line.
    """

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class PackEntry:
    """One clause of a framework and the artefact kinds that evidence it."""

    clause: str
    title: str
    requirement: str
    artefacts: tuple[str, ...]
    evidence: str


@dataclass(frozen=True)
class RegulatoryPack:
    """A validated pack; ``sha256`` is the hash of the file's bytes as loaded."""

    id: str
    title: str
    version: str
    issuer: str
    document: str
    source_url: str
    notes: tuple[str, ...]
    entries: tuple[PackEntry, ...]
    sha256: str
    path: Path


@dataclass(frozen=True)
class AppendixRow:
    """One line of the scorecard's regulatory appendix: (pack, clause, artefact kind).

    ``url`` and ``sha256`` are empty when the scorecard has no such artefact, and then
    ``missing`` says why (the appendix prints it as "missing: <why>").
    """

    pack_id: str
    pack_version: str
    clause: str
    clause_title: str
    requirement: str
    evidence: str
    kind: str
    artefact_title: str
    url: str
    sha256: str
    missing: str

    @property
    def present(self) -> bool:
        return not self.missing


def load_pack(path: str | Path) -> RegulatoryPack:
    """Return the pack in the YAML file at ``path``, validated.

    Raises
    ------
    PackError
        If the file cannot be read or parsed, a key is missing, unknown or of the wrong
        type, a text is empty, ``pack`` is not the file name without its suffix, an entry
        lists no artefact, names an artefact kind outside ``ARTEFACT_KINDS`` or repeats one,
        or two entries share a clause id. Every problem found is listed.
    """
    path = Path(path)
    name = path.name
    try:
        content = path.read_bytes()
    except OSError as error:
        raise PackError([f"{name}: cannot be read: {error.strerror or error}"]) from None
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PackError([f"{name}: not UTF-8 text (byte {error.start})"]) from None
    document, lines = _parse(name, text)
    check = _Checker(name, lines)
    pack = check.pack(document, expected_id=path.stem)
    if check.problems or pack is None:
        raise PackError(check.problems)
    header, entries = pack
    return RegulatoryPack(
        **header,
        entries=entries,
        sha256=hashlib.sha256(content).hexdigest(),
        path=path,
    )


def load_packs(directory: str | Path = DEFAULT_PACK_DIR) -> tuple[RegulatoryPack, ...]:
    """Return every pack in ``directory`` (``*.yaml`` and ``*.yml``), sorted by id.

    Files whose names start with a dot (editor back-ups) and sub-folders are skipped.

    Raises
    ------
    PackError
        If ``directory`` is not a folder or holds no pack, if any pack is invalid (the
        problems of every invalid file are listed), or if two files carry the same pack id.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise PackError([f"{directory}: not a folder of regulatory packs"])
    files = sorted(
        child
        for child in directory.iterdir()
        if child.suffix in PACK_SUFFIXES and not child.name.startswith(".") and child.is_file()
    )
    if not files:
        raise PackError([f"{directory}: holds no regulatory pack (*.yaml)"])
    problems: list[str] = []
    packs: dict[str, RegulatoryPack] = {}
    for file in files:
        try:
            pack = load_pack(file)
        except PackError as error:
            problems.extend(error.problems)
            continue
        if pack.id in packs:
            first = packs[pack.id].path.name
            problems.append(f"{file.name}: pack: duplicate pack id {pack.id!r} (first in {first})")
            continue
        packs[pack.id] = pack
    if problems:
        raise PackError(problems)
    return tuple(packs[pack_id] for pack_id in sorted(packs))


def appendix_rows(
    packs: Iterable[RegulatoryPack], artefacts: Mapping[str, ArtefactRef]
) -> list[AppendixRow]:
    """Return one appendix row per (pack, entry, artefact kind), in pack and entry order.

    ``artefacts`` maps each kind to the scorecard's artefact of that kind. A kind absent
    from the map, or present with an empty ``sha256``, gives a row with ``missing`` set.

    Raises
    ------
    ValueError
        If a key of ``artefacts`` is not the ``kind`` of its :class:`ArtefactRef`.
    """
    for key, given in artefacts.items():
        if key != given.kind:
            raise ValueError(f"artefacts[{key!r}]: holds an artefact of kind {given.kind!r}")
    rows = []
    for pack in packs:
        for entry in pack.entries:
            for kind in entry.artefacts:
                ref = artefacts.get(kind)
                if ref is None:
                    title, url, sha256 = ARTEFACT_KINDS[kind], "", ""
                    missing = NO_ARTEFACT
                elif not ref.sha256:
                    title, url, sha256 = ref.title or ARTEFACT_KINDS[kind], "", ""
                    missing = ref.missing or NO_HASH
                else:
                    title, url, sha256, missing = ref.title, ref.url, ref.sha256, ""
                rows.append(
                    AppendixRow(
                        pack_id=pack.id,
                        pack_version=pack.version,
                        clause=entry.clause,
                        clause_title=entry.title,
                        requirement=entry.requirement,
                        evidence=entry.evidence,
                        kind=kind,
                        artefact_title=title,
                        url=url,
                        sha256=sha256,
                        missing=missing,
                    )
                )
    return rows


def packs_used(packs: Iterable[RegulatoryPack]) -> list[dict[str, str]]:
    """Return id, title, version and file SHA-256 of each pack, for printing and hashing."""
    return [
        {"id": pack.id, "title": pack.title, "version": pack.version, "sha256": pack.sha256}
        for pack in packs
    ]


# ---------------------------------------------------------------------------------------------
# Parsing


def _parse(name: str, text: str) -> tuple[Any, LineIndex]:
    """Return the YAML document and the line index of its key paths."""
    try:
        read = document_read(text, fmt="yaml")
    except DocumentSyntaxError as error:
        where = f"line {error.line}: " if error.line is not None else ""
        raise PackError([f"{name}: {where}not valid YAML: {error.reason}"]) from None
    except DuplicateKeyError as error:
        raise PackError(
            [
                f"{name}: {d.path}: duplicate key {d.key!r} (line {d.line}; first at line "
                f"{d.first_line})"
                for d in error.duplicates
            ]
        ) from None
    return read.data, read.lines


# ---------------------------------------------------------------------------------------------
# Validation


class _Checker:
    """Collect the problems of one pack document, each naming the file, key path and line."""

    def __init__(self, name: str, lines: LineIndex) -> None:
        self.name = name
        self.lines = lines
        self.problems: list[str] = []

    def fail(self, path: str, message: str) -> None:
        line = self.lines.line(path, exact=True)
        suffix = f" (line {line})" if line is not None else ""
        self.problems.append(f"{self.name}: {path}: {message}{suffix}")

    def pack(
        self, document: Any, *, expected_id: str
    ) -> tuple[dict[str, Any], tuple[PackEntry, ...]] | None:
        if not isinstance(document, dict):
            self.problems.append(
                f"{self.name}: the pack must be a mapping with the keys {', '.join(PACK_KEYS)};"
                f" found {type_name(document, style='shown')}"
            )
            return None
        self.keys(document, "", PACK_KEYS)
        header = {key: self.text(document, key) for key in PACK_KEYS[:6]}
        pack_id = header.pop("pack")
        if pack_id is not None and pack_id != expected_id:
            self.fail(
                "pack",
                f"id {pack_id!r} does not match the file name (expected {expected_id!r})",
            )
        url = header["source_url"]
        if url is not None and not _URL.match(url):
            self.fail("source_url", f"expected an http(s) URL, got {url!r}")
        notes = self.notes(document)
        entries = self.entries(document)
        if self.problems:
            return None
        return {"id": pack_id, **header, "notes": notes}, entries

    def keys(self, mapping: Mapping[Any, Any], path: str, allowed: Sequence[str]) -> None:
        prefix = f"{path}." if path else ""
        for key in mapping:
            if key not in allowed:
                self.fail(f"{prefix}{key}", f"unknown key {key!r} (allowed: {', '.join(allowed)})")
        for key in allowed:
            if key not in mapping:
                where = f"{path}: " if path else ""
                line = self.lines.line(path, exact=True)
                suffix = f" (line {line})" if line is not None else ""
                self.problems.append(f"{self.name}: {where}missing key {key!r}{suffix}")

    def text(self, mapping: Mapping[str, Any], key: str, path: str = "") -> str | None:
        full = f"{path}.{key}" if path else key
        if key not in mapping:
            return None
        value = mapping[key]
        if not isinstance(value, str):
            hint = ' (quote it, e.g. version: "2026.1")' if isinstance(value, float) else ""
            self.fail(full, f"expected a text, got {type_name(value, style='shown')}{hint}")
            return None
        if not value.strip():
            self.fail(full, "must not be empty")
            return None
        return " ".join(value.split())

    def notes(self, document: Mapping[str, Any]) -> tuple[str, ...]:
        value = document.get("notes")
        if "notes" not in document:
            return ()
        if not isinstance(value, list):
            self.fail("notes", f"expected a list of texts, got {type_name(value, style='shown')}")
            return ()
        notes = []
        for position, note in enumerate(value):
            path = f"notes[{position}]"
            if not isinstance(note, str) or not note.strip():
                self.fail(path, f"expected a non-empty text, got {type_name(note, style='shown')}")
            else:
                notes.append(" ".join(note.split()))
        return tuple(notes)

    def entries(self, document: Mapping[str, Any]) -> tuple[PackEntry, ...]:
        if "entries" not in document:
            return ()
        value = document["entries"]
        if not isinstance(value, list) or not value:
            self.fail(
                "entries",
                f"expected a non-empty list of entries, got {type_name(value, style='shown')}",
            )
            return ()
        entries = []
        first_at: dict[str, int] = {}
        for position, raw in enumerate(value):
            path = f"entries[{position}]"
            if not isinstance(raw, dict):
                self.fail(path, f"expected a mapping with keys {', '.join(ENTRY_KEYS)}")
                continue
            self.keys(raw, path, ENTRY_KEYS)
            clause = self.text(raw, "clause", path)
            if clause is not None:
                if clause in first_at:
                    self.fail(
                        f"{path}.clause",
                        f"duplicate clause id {clause!r} (first at entries[{first_at[clause]}])",
                    )
                else:
                    first_at[clause] = position
            title = self.text(raw, "title", path)
            requirement = self.text(raw, "requirement", path)
            evidence = self.text(raw, "evidence", path)
            artefacts = self.artefacts(raw, path)
            if (
                clause is None
                or title is None
                or requirement is None
                or evidence is None
                or artefacts is None
            ):
                continue
            entries.append(PackEntry(clause, title, requirement, artefacts, evidence))
        return tuple(entries)

    def artefacts(self, entry: Mapping[str, Any], path: str) -> tuple[str, ...] | None:
        if "artefacts" not in entry:
            return None
        value = entry["artefacts"]
        full = f"{path}.artefacts"
        if not isinstance(value, list):
            self.fail(
                full, f"expected a list of artefact kinds, got {type_name(value, style='shown')}"
            )
            return None
        if not value:
            self.fail(full, "lists no artefact: each clause needs at least one")
            return None
        kinds: list[str] = []
        ok = True
        for position, kind in enumerate(value):
            item = f"{full}[{position}]"
            if not isinstance(kind, str):
                self.fail(item, f"expected an artefact kind, got {type_name(kind, style='shown')}")
                ok = False
            elif kind not in ARTEFACT_KINDS:
                known = ", ".join(ARTEFACT_KINDS)
                self.fail(item, f"unknown artefact kind {kind!r} (known: {known})")
                ok = False
            elif kind in kinds:
                first = kinds.index(kind)
                self.fail(item, f"artefact kind {kind!r} listed twice (first at [{first}])")
                ok = False
            else:
                kinds.append(kind)
        return tuple(kinds) if ok else None


@dataclass(frozen=True)
class MatrixRow:
    """One artefact of the scorecard with the clauses of each pack it evidences.

    ``clauses[i]`` lists the clause ids of the i-th pack (in the order given to
    :func:`mapping_matrix`) whose entries name this artefact's kind; empty when none does.
    """

    kind: str
    title: str
    url: str
    sha256: str
    missing: str
    clauses: tuple[tuple[str, ...], ...]


def mapping_matrix(
    packs: Sequence[RegulatoryPack], artefacts: Mapping[str, ArtefactRef]
) -> list[MatrixRow]:
    """Return seed 003 Table 10 for this scorecard: artefact kinds × packs → clause ids.

    One row per artefact kind (in :data:`ARTEFACT_KINDS` order) that at least one pack maps,
    with its link and SHA-256 (or why it is missing), and per pack the clause ids it
    evidences, in the pack's entry order.
    """
    rows = []
    for kind, description in ARTEFACT_KINDS.items():
        clauses = tuple(
            tuple(entry.clause for entry in pack.entries if kind in entry.artefacts)
            for pack in packs
        )
        if not any(clauses):
            continue
        ref = artefacts.get(kind)
        if ref is None:
            title, url, sha256, missing = description, "", "", NO_ARTEFACT
        elif not ref.sha256:
            title, url, sha256, missing = ref.title or description, "", "", ref.missing or NO_HASH
        else:
            title, url, sha256, missing = ref.title, ref.url, ref.sha256, ""
        rows.append(MatrixRow(kind, title, url, sha256, missing, clauses))
    return rows
