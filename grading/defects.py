"""Seed one defect into a copy of an output, for the oversight study (SPEC §4, catch_rate).

Pure: no Django import. :func:`seed_defect` returns the defective copy and where the defect
is, as the unit key a reviewer would flag: the sentence key (``s3``) of the modified text,
numbered by :func:`runs.segment.split_sentences` exactly as the review page numbers it, or,
for a key element left out, its key (``k:ke2``).

Kinds:

- ``changed_figure``: one figure (an amount, a percentage, a multiple or a decimal) of a
  sentence that cites a source is scaled by 20–45 % up or down; its citation stays, so the
  cited source now contradicts it. The new value appears in no permitted source.
- ``citation_removed``: the citation markers of one citing sentence are dropped.
- ``citation_wrong``: the citation of one citing sentence is replaced by another permitted
  chunk of the task that does not carry its content (no figure and under half the words).
- ``unsupported_claim``: a new assertive sentence, with a figure that appears in no permitted
  source, is inserted after a citing sentence and cited to a real chunk of the task.
- ``missed_mandatory``: every sentence that states one key element is removed, and only
  those: no other key element stated before is lost.

Sentences whose citation already fails to carry them are avoided where others exist: a
defect in a sentence that was wrong to begin with would be no new defect.

A kind that cannot be applied to the text (no figure, no citation, no key element stated,
no other chunk to cite) raises ``ValueError`` naming the argument at fault, so that a caller
can try another output. The same text, kind, gold and generator state give the same copy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from runs.segment import Citation, Sentence, find_citations, split_sentences

CHANGED_FIGURE: Final = "changed_figure"
CITATION_REMOVED: Final = "citation_removed"
CITATION_WRONG: Final = "citation_wrong"
UNSUPPORTED_CLAIM: Final = "unsupported_claim"
MISSED_MANDATORY: Final = "missed_mandatory"
KINDS: Final = (
    CHANGED_FIGURE,
    CITATION_REMOVED,
    CITATION_WRONG,
    UNSUPPORTED_CLAIM,
    MISSED_MANDATORY,
)
"""Every defect kind; equal to the values of ``grading.models.DefectKind``."""

KEY_ELEMENT_PREFIX: Final = "k:"
SCALE_RANGE: Final = (0.2, 0.45)
"""A changed figure is scaled by 1 ± u, u uniform in this range: visibly different."""
KEY_ELEMENT_WORD_SHARE: Final = 0.6
"""A sentence states a key element when it has all its numbers and this share of its words."""

_FIGURE_RE = re.compile(
    r"(?<![\w.\-])(?P<currency>[$€£¥])?"
    r"(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<unit>%|x\b|\s?(?:million|billion|bn|m)\b)?",
)
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
_STOPWORD_LIST = (
    "a an and are as at be by for from has have in is it its of on or the to was were with"
)
_STOPWORDS = frozenset(_STOPWORD_LIST.split())
_MARKER_LINE_RE = re.compile(r"[ \t]*(?:[-*•‣◦▪–]|\d{1,3}[.)]|\([a-z0-9]{1,6}\))?[ \t]*")
_ATTEMPTS = 50

_CLAIMS: Final = (
    ("Capital expenditure is budgeted at ${value} million for FY2025", 5.0, 95.0, 1),
    ("The facility margin is set at {value}% over the reference rate", 1.5, 4.5, 2),
    ("Management targets net leverage of {value}x by the end of FY2025", 1.1, 4.9, 2),
    ("The order backlog stood at ${value} million at the last year end", 20.0, 400.0, 1),
    ("Debt service coverage is projected at {value}x for FY2026", 1.1, 3.9, 2),
    ("Working capital is expected to absorb ${value} million next year", 2.0, 60.0, 1),
)
"""Templates of inserted claims: text, range of the figure, its decimals."""


@dataclass(frozen=True, slots=True)
class SeededDefect:
    """A defective copy: ``text`` is the copy, ``target`` the unit key the defect affects.

    ``detail`` says what changed, for the study's owner (never for the reviewer).
    """

    kind: str
    text: str
    target: str
    detail: str

    def as_record(self) -> dict[str, str]:
        """Return the defect as stored on an oversight item: ``{kind, target, detail}``."""
        return {"kind": self.kind, "target": self.target, "detail": self.detail}


def seed_defect(
    text: str,
    kind: str,
    *,
    sources: Mapping[str, str],
    key_elements: Mapping[str, str],
    rng: np.random.Generator,
) -> SeededDefect:
    """Return a copy of ``text`` carrying one defect of ``kind``, and where it is.

    Parameters
    ----------
    text
        The output's text, with inline ``[chunk-id]`` citations (``runs.segment``).
    kind
        One of :data:`KINDS`.
    sources
        The task's permitted source chunks, chunk id → chunk text.
    key_elements
        The task's key elements, element id → text.
    rng
        The generator that chooses the sentence, figure, chunk or element.

    Returns
    -------
    SeededDefect
        The modified copy; ``target`` is ``s{n}`` of the modified text, or ``k:{id}`` for
        ``missed_mandatory``.

    Raises
    ------
    ValueError
        If ``kind`` is unknown or cannot be applied to this ``text`` with these
        ``sources``/``key_elements``; the message names the argument at fault.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    seeders: dict[str, Callable[[_Draft], SeededDefect]] = {
        CHANGED_FIGURE: _changed_figure,
        CITATION_REMOVED: _citation_removed,
        CITATION_WRONG: _citation_wrong,
        UNSUPPORTED_CLAIM: _unsupported_claim,
        MISSED_MANDATORY: _missed_mandatory,
    }
    if kind not in seeders:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    draft = _Draft(text, split_sentences(text), find_citations(text), sources, key_elements, rng)
    return seeders[kind](draft)


def figures_of(text: str) -> set[str]:
    """Return the numbers of ``text`` as written without thousands separators (``1019.2``)."""
    return {match.group("number").replace(",", "") for match in _FIGURE_RE.finditer(text)}


def states_key_element(sentence: str, key_element: str) -> bool:
    """Return whether ``sentence`` states ``key_element``.

    It does when it contains every number of the key element and at least
    :data:`KEY_ELEMENT_WORD_SHARE` of its other words (lower-case, stop words left out).
    """
    have = set(_TOKEN_RE.findall(sentence.lower()))
    wanted = [t for t in _TOKEN_RE.findall(key_element.lower()) if t not in _STOPWORDS]
    numbers = [t for t in wanted if any(c.isdigit() for c in t)]
    words = [t for t in wanted if not any(c.isdigit() for c in t)]
    if not wanted or any(n not in have for n in numbers):
        return False
    return not words or sum(w in have for w in words) / len(words) >= KEY_ELEMENT_WORD_SHARE


@dataclass(frozen=True, slots=True)
class _Draft:
    """The text to seed, its sentences and citations, the task's gold and the generator."""

    text: str
    sentences: list[Sentence]
    citations: list[Citation]
    sources: Mapping[str, str]
    key_elements: Mapping[str, str]
    rng: np.random.Generator

    @property
    def known_figures(self) -> set[str]:
        return set().union(*(figures_of(t) for t in self.sources.values())) | figures_of(self.text)

    def citing(self) -> list[Sentence]:
        """Return the citing sentences, those whose citation carries them if there are any.

        A defect in a sentence that was already wrongly cited would be no new defect.
        """
        citing = [s for s in self.sentences if s.cited_chunk_ids]
        if not citing:
            raise ValueError("text has no sentence that cites a source")
        well_cited = [
            s
            for s in citing
            if any(
                c in self.sources and _carries(self.sources[c], s.text) for c in s.cited_chunk_ids
            )
        ]
        return well_cited or citing

    def recited(self, sentence: Sentence, chunk_id: str | None) -> str:
        """Return the text with the sentence's citations dropped, or replaced by ``chunk_id``."""
        runs = [c for c in self.citations if sentence.start <= c.start < sentence.end]
        copy = self.text
        for citation in reversed(runs[1:] if chunk_id else runs):
            copy = copy[: citation.start].rstrip(" \t") + copy[citation.end :]
        if chunk_id:
            copy = copy[: runs[0].start] + f"[{chunk_id}]" + copy[runs[0].end :]
        return copy


def _changed_figure(draft: _Draft) -> SeededDefect:
    text, known = draft.text, draft.known_figures
    spans = [(c.start, c.end) for c in draft.citations]
    candidates = [
        (sentence, match)
        for sentence in draft.citing()
        for match in _FIGURE_RE.finditer(text, sentence.start, sentence.end)
        if _is_figure(match) and not any(a <= match.start() < b for a, b in spans)
    ]
    if not candidates:
        raise ValueError("text has no figure in a sentence that cites a source")
    for index in draft.rng.permutation(len(candidates)):
        sentence, match = candidates[int(index)]
        number = match.group("number")
        replacement = _scaled(number, known, draft.rng)
        if replacement is None:
            continue
        start, end = match.span("number")
        copy = text[:start] + replacement + text[end:]
        changed = _one_sentence_changed(draft.sentences, split_sentences(copy), same_citations=True)
        if changed != sentence.position:
            continue
        old = match.group()
        new = old.replace(number, replacement, 1)
        return SeededDefect(CHANGED_FIGURE, copy, f"s{changed}", f"{old} → {new}")
    raise ValueError("text has no figure that can be changed to a value absent from sources")


def _citation_removed(draft: _Draft) -> SeededDefect:
    citing = draft.citing()
    for index in draft.rng.permutation(len(citing)):
        sentence = citing[int(index)]
        copy = draft.recited(sentence, None)
        after = split_sentences(copy)
        if _one_sentence_changed(draft.sentences, after, same_text=True) != sentence.position:
            continue
        if after[sentence.position - 1].cited_chunk_ids:
            continue
        removed = ", ".join(f"[{i}]" for i in sentence.cited_chunk_ids)
        return SeededDefect(CITATION_REMOVED, copy, f"s{sentence.position}", f"{removed} removed")
    raise ValueError("text has no citation that can be removed without merging sentences")


def _citation_wrong(draft: _Draft) -> SeededDefect:
    citing = draft.citing()
    for index in draft.rng.permutation(len(citing)):
        sentence = citing[int(index)]
        others = sorted(
            chunk_id
            for chunk_id, chunk_text in draft.sources.items()
            if chunk_id not in sentence.cited_chunk_ids and not _carries(chunk_text, sentence.text)
        )
        if not others:
            continue
        chosen = others[int(draft.rng.integers(len(others)))]
        copy = draft.recited(sentence, chosen)
        after = split_sentences(copy)
        if _one_sentence_changed(draft.sentences, after, same_text=True) != sentence.position:
            continue
        if after[sentence.position - 1].cited_chunk_ids != (chosen,):
            continue
        was = ", ".join(f"[{i}]" for i in sentence.cited_chunk_ids)
        return SeededDefect(CITATION_WRONG, copy, f"s{sentence.position}", f"{was} → [{chosen}]")
    raise ValueError(
        "sources has no other permitted chunk that does not carry a citing sentence's content"
    )


def _unsupported_claim(draft: _Draft) -> SeededDefect:
    if not draft.sources:
        raise ValueError("sources is empty: an inserted claim must cite a permitted chunk")
    text, sentences, rng = draft.text, draft.sentences, draft.rng
    citing = [s for s in sentences if s.cited_chunk_ids]
    if not citing:
        raise ValueError("text has no sentence that cites a source to insert a claim after")
    known = draft.known_figures
    chunk_ids = sorted(draft.sources)
    for _ in range(_ATTEMPTS):
        after_sentence = citing[int(rng.integers(len(citing)))]
        template, low, high, decimals = _CLAIMS[int(rng.integers(len(_CLAIMS)))]
        value = f"{rng.uniform(low, high):.{decimals}f}"
        chunk_id = chunk_ids[int(rng.integers(len(chunk_ids)))]
        if value in known:
            continue
        claim = template.format(value=value)
        cut = after_sentence.end
        copy = f"{text[:cut]} {claim} [{chunk_id}].{text[cut:]}"
        after = split_sentences(copy)
        position = after_sentence.position + 1
        if len(after) != len(sentences) + 1:
            continue
        inserted = after[position - 1]
        rest = after[: position - 1] + after[position:]
        if inserted.text != f"{claim}." or inserted.cited_chunk_ids != (chunk_id,):
            continue
        if _pairs(rest) != _pairs(sentences):
            continue
        return SeededDefect(
            UNSUPPORTED_CLAIM, copy, f"s{position}", f"inserted: {claim} [{chunk_id}]."
        )
    raise ValueError("text: no place found to insert a claim that stays one sentence")


def _missed_mandatory(draft: _Draft) -> SeededDefect:
    sentences, key_elements = draft.sentences, draft.key_elements
    stated = _stated(sentences, key_elements)
    candidates = sorted(element_id for element_id, where in stated.items() if where)
    if not candidates:
        raise ValueError("key_elements: the text states none of the task's key elements")
    for index in draft.rng.permutation(len(candidates)):
        element_id = candidates[int(index)]
        removed = stated[element_id]
        if len(removed) == len(sentences):
            continue
        copy = draft.text
        for sentence in sorted(removed, key=lambda s: s.start, reverse=True):
            copy = _cut(copy, sentence.start, sentence.end)
        after = split_sentences(copy)
        if _pairs(after) != _pairs(s for s in sentences if s not in removed):
            continue
        now = _stated(after, key_elements)
        lost = {e for e, where in stated.items() if where and not now[e]}
        if lost != {element_id}:
            continue
        detail = "removed: " + " ".join(s.text for s in sorted(removed, key=lambda s: s.start))
        return SeededDefect(MISSED_MANDATORY, copy, f"{KEY_ELEMENT_PREFIX}{element_id}", detail)
    raise ValueError("key_elements: every stated key element shares its sentences with another one")


def _pairs(sentences: Iterable[Sentence]) -> list[tuple[str, tuple[str, ...]]]:
    return [(s.text, s.cited_chunk_ids) for s in sentences]


def _is_figure(match: re.Match[str]) -> bool:
    return bool(match.group("currency") or match.group("unit") or "." in match.group("number"))


def _scaled(number: str, known: set[str], rng: np.random.Generator) -> str | None:
    plain = number.replace(",", "")
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    value = float(plain)
    for _ in range(_ATTEMPTS):
        sign = -1.0 if rng.random() < 0.5 else 1.0
        changed = value * (1.0 + sign * rng.uniform(*SCALE_RANGE))
        candidate = f"{changed:.{decimals}f}"
        if candidate != plain and candidate not in known and changed > 0:
            return f"{changed:,.{decimals}f}" if "," in number else candidate
    return None


def _carries(chunk_text: str, sentence: str) -> bool:
    """Return whether a chunk carries a sentence's content: a figure, or half its words."""
    if figures_of(sentence) & figures_of(chunk_text):
        return True
    words = {t for t in _TOKEN_RE.findall(sentence.lower()) if t not in _STOPWORDS}
    have = set(_TOKEN_RE.findall(chunk_text.lower()))
    return bool(words) and len(words & have) / len(words) >= 0.5


def _stated(
    sentences: Sequence[Sentence], key_elements: Mapping[str, str]
) -> dict[str, list[Sentence]]:
    return {
        element_id: [s for s in sentences if states_key_element(s.text, element_text)]
        for element_id, element_text in key_elements.items()
    }


def _one_sentence_changed(
    before: Sequence[Sentence],
    after: Sequence[Sentence],
    *,
    same_citations: bool = False,
    same_text: bool = False,
) -> int | None:
    """Return the position of the one sentence that differs, else ``None``."""
    if len(before) != len(after):
        return None
    differing = [
        b.position
        for b, a in zip(before, after, strict=True)
        if (b.text, b.cited_chunk_ids) != (a.text, a.cited_chunk_ids)
    ]
    if len(differing) != 1:
        return None
    b, a = before[differing[0] - 1], after[differing[0] - 1]
    if same_citations and b.cited_chunk_ids != a.cited_chunk_ids:
        return None
    if same_text and b.text != a.text:
        return None
    return differing[0]


def _cut(text: str, start: int, end: int) -> str:
    """Remove ``text[start:end]`` with the spaces that separated it, and its line if emptied."""
    tail = text[end:]
    stripped = tail.lstrip(" \t")
    if stripped and stripped[0] not in "\r\n":
        copy = text[:start] + stripped
    else:
        copy = text[:start].rstrip(" \t") + tail
        start = len(text[:start].rstrip(" \t"))
    line_start = copy.rfind("\n", 0, start) + 1
    line_end = copy.find("\n", start)
    line_end = len(copy) if line_end < 0 else line_end
    if _MARKER_LINE_RE.fullmatch(copy[line_start:line_end]):
        copy = copy[:line_start] + copy[line_end + 1 :]
    return copy
