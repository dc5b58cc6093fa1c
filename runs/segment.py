"""Split an output into gradable units: sentences, cited chunks, key elements, guidance items.

Pure: no Django import. The same text always gives the same sentences and the same unit
keys, so a grade or a judge score recorded against ``s3`` still means the third sentence
after the output is segmented again (the splitter, pysbd, is pinned in pyproject.toml).

Citations. A statement cites its sources with a bracketed list of chunk ids right after it,
before or after its full stop: ``… up 6.1% y/y [c2].``, ``… (covenant: 3.5x) [c3, c4].`` or
``… was 2.4x. [c3; c4]``. :data:`CITATION_RE` is the exact syntax (docs/formats.md,
"Outputs (JSONL)"): a chunk id starts with a letter or digit and continues with letters,
digits and ``_ . : / # @ + -`` (at most 120 characters); ids in one bracket are separated
by ``,`` or ``;``; several brackets in a row (``[c1], [c2]`` or ``[c1][c2]``) are one run.
A bracket followed by ``(`` is a Markdown link, not a citation. A citation run belongs to
the sentence it follows (the last sentence that starts before it; the first sentence if
none does), and is removed, with the spaces before it, from the sentence text that graders
and judges see.

Sentences. The text is cut into blocks first, so that list items never merge: a blank line
ends a block; a line that starts with a list marker (``-``, ``*``, ``•``, ``1.``, ``1)``,
``(1)``, ``a)``, ``(a)``, ``iv.``, ``(iv)``) or a Markdown heading (``#``) starts one, and
its marker is not part of the sentence; a line that ends with ``.``, ``!``, ``?``, ``:`` or
a citation, and a line in bold (``**Repayment**``), ends its block. Other line breaks are
soft wraps inside a paragraph. Each block is split
by pysbd (Golden Rules English segmentation: abbreviations such as "Inc.", "U.S.", "No. 3",
"vs.", decimal points, "$45.0 million", "3.2x", "1.6%"). Two repairs follow: pysbd splits
after a few abbreviations common in financial prose ("approx.", "ca.", "c.", "est.",
"incl.", "excl."), so a split after one of them is undone when the next part starts with a
digit, a currency sign or a lower-case letter; and a part that starts with a lower-case
letter after a full stop continues the sentence before it. A part with no letter or digit
(a stray dash, a bracket of citations alone) is not a sentence; its citations go to the
sentence before it.

Cost. pysbd's time grows with the square of a word's length (0.85 s at a 10,000-character
word, 20 s at 50,000), so a word longer than :data:`MAX_SPLIT_WORD` characters (a URL with
a long query, a base64 blob, a hostile output) reaches it as its first and last
``MAX_SPLIT_WORD / 2`` characters only; the boundaries pysbd finds are mapped back to the
full text. Where a sentence ends depends on a word's ends, not its middle, so the sentences
are those of the full text, and splitting stays linear in the length of the output.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import pysbd  # type: ignore[import-untyped]

SENTENCE = "sentence"
CITED_CHUNK = "cited_chunk"
KEY_ELEMENT = "key_element"
GUIDANCE_ITEM = "guidance_item"
"""Unit kinds; they equal the values of ``runs.models.UnitKind``."""

CHUNK_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.:/#@+\-]{0,119}"
_BRACKET = rf"\[\s*{CHUNK_ID_PATTERN}(?:\s*[,;]\s*{CHUNK_ID_PATTERN})*\s*\](?!\()"
CITATION_RE = re.compile(rf"[ \t]*{_BRACKET}(?:[ \t]*[,;]?[ \t]*{_BRACKET})*")
"""A citation run: one or more bracketed lists of chunk ids, with the spaces before it."""
_CHUNK_ID_RE = re.compile(CHUNK_ID_PATTERN)

_LIST_MARKER_RE = re.compile(
    r"[ \t]*(?:[-*•‣◦▪–]|\d{1,3}[.)]|\(\d{1,3}\)|[a-z][.)]|\([A-Za-z]\)|\([ivxlc]{1,6}\)"
    r"|[ivx]{1,6}[.)]|\#{1,6})[ \t]+"
)
_HEADING_RE = re.compile(r"[ \t]*\#{1,6}[ \t]+")
_BLOCK_END_PUNCTUATION = ".!?:"
# Abbreviations that pysbd 0.3.4 treats as sentence ends before a number.
_SPLIT_ABBREVIATIONS = frozenset({"approx.", "ca.", "c.", "est.", "incl.", "excl.", "appx."})
_CONTINUATION_START = re.compile(r"[0-9a-z$€£¥(]")
_BOLD_LINE_RE = re.compile(r"(\*\*|__).+(\*\*|__)")
_WORDLIKE = re.compile(r"\w")
MAX_SPLIT_WORD = 256
"""Longest word pysbd sees whole; a longer one reaches it as its two ends (see "Cost")."""
_LONG_WORD = re.compile(rf"(?<!\S)\S{{{MAX_SPLIT_WORD + 1},}}")


@dataclass(frozen=True, slots=True)
class Citation:
    """A citation run in the original text: where it is and the ids it names, in order."""

    start: int
    end: int
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence: its 1-based position, its span in the original text, its graded text.

    ``start``/``end`` delimit the sentence in the original text, with the citation runs
    inside it and those that follow it on the same line; ``text`` is the sentence without
    its citations, list marker or line breaks; ``cited_chunk_ids`` are the ids it cites,
    each once, in order of first citation.
    """

    position: int
    start: int
    end: int
    text: str
    cited_chunk_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class UnitSpec:
    """A unit to store (``runs.models.Unit``): ``key`` is stable for the same text."""

    kind: str
    key: str
    position: int
    text: str
    ref_id: str
    sentence_position: int | None


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of original text; ``chunk_ids`` is non-empty when the piece is a citation."""

    text: str
    chunk_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Passage:
    """A stretch of the original text: a sentence (``key`` "s3") or the text between them."""

    key: str | None
    parts: tuple[Part, ...]


def find_citations(text: str) -> list[Citation]:
    """Return the citation runs of ``text`` in order (see :data:`CITATION_RE`)."""
    citations = []
    for match in CITATION_RE.finditer(text):
        ids = tuple(_CHUNK_ID_RE.findall(match.group()))
        start = match.start() + (len(match.group()) - len(match.group().lstrip(" \t")))
        citations.append(Citation(start=start, end=match.end(), chunk_ids=ids))
    return citations


def cited_chunk_ids(text: str) -> tuple[str, ...]:
    """Return every chunk id cited inline in ``text``, once each, in order of first citation."""
    return _unique(chunk_id for c in find_citations(text) for chunk_id in c.chunk_ids)


def split_sentences(text: str) -> list[Sentence]:
    """Return the sentences of ``text`` with their spans and the chunk ids each cites."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    citations = find_citations(text)
    clean, to_original, cuts = _without_citations(text)
    spans: list[tuple[int, int]] = []  # in ``clean``
    for block_start, block_end in _blocks(clean, cuts):
        spans.extend(_split_block(clean, block_start, block_end))

    kept: list[tuple[int, int, str]] = []  # original start, original end, graded text
    for start, end in spans:
        graded = " ".join(clean[start:end].split())
        if not _WORDLIKE.search(graded):
            continue
        kept.append((to_original[start], to_original[end - 1] + 1, graded))

    starts = [start for start, _end, _text in kept]
    ends = [end for _start, end, _text in kept]
    cited: list[list[str]] = [[] for _ in kept]
    for citation in citations:
        if not kept:
            break
        index = max(bisect_right(starts, citation.start) - 1, 0)
        cited[index].extend(citation.chunk_ids)
        if citation.start >= ends[index] and not text[ends[index] : citation.start].strip(" \t"):
            ends[index] = citation.end  # the citation right after the sentence joins its span
    return [
        Sentence(position=n, start=start, end=end, text=graded, cited_chunk_ids=_unique(ids))
        for n, ((start, _end, graded), end, ids) in enumerate(
            zip(kept, ends, cited, strict=True), start=1
        )
    ]


def build_units(
    text: str, *, key_element_ids: Sequence[str], guidance_item_ids: Sequence[str]
) -> list[UnitSpec]:
    """Return the units of one output: its sentences, cited chunks, key elements, guidance.

    Keys: ``s{n}`` for sentence n; ``c{n}:{chunk_id}`` for each chunk sentence n cites (a
    chunk cited twice in one sentence is one unit); ``k:{id}`` for each key element and
    ``g:{id}`` for each guidance item of the task, which are graded per output.
    """
    return units_from_sentences(
        split_sentences(text),
        key_element_ids=key_element_ids,
        guidance_item_ids=guidance_item_ids,
    )


def units_from_sentences(
    sentences: Iterable[Sentence],
    *,
    key_element_ids: Sequence[str],
    guidance_item_ids: Sequence[str],
) -> list[UnitSpec]:
    """Return the units of already split sentences (see :func:`build_units`)."""
    _check_ids(key_element_ids, "key_element_ids")
    _check_ids(guidance_item_ids, "guidance_item_ids")
    sentences = list(sentences)
    units = [
        UnitSpec(SENTENCE, f"s{s.position}", s.position, s.text, "", s.position) for s in sentences
    ]
    chunk_position = 0
    for sentence in sentences:
        for chunk_id in sentence.cited_chunk_ids:
            chunk_position += 1
            units.append(
                UnitSpec(
                    CITED_CHUNK,
                    f"c{sentence.position}:{chunk_id}",
                    chunk_position,
                    sentence.text,
                    chunk_id,
                    sentence.position,
                )
            )
    units.extend(
        UnitSpec(KEY_ELEMENT, f"k:{element_id}", n, "", element_id, None)
        for n, element_id in enumerate(key_element_ids, start=1)
    )
    units.extend(
        UnitSpec(GUIDANCE_ITEM, f"g:{item_id}", n, "", item_id, None)
        for n, item_id in enumerate(guidance_item_ids, start=1)
    )
    return units


def passages(text: str, sentences: Sequence[Sentence] | None = None) -> list[Passage]:
    """Return ``text`` cut into sentences and the stretches between them, for display.

    Joining every part's text gives back ``text`` exactly; citation runs are parts of their
    own, with the ids they name.
    """
    if sentences is None:
        sentences = split_sentences(text)
    citations = find_citations(text)
    result: list[Passage] = []
    cursor = 0
    for sentence in sentences:
        if sentence.start > cursor:
            result.append(Passage(None, _parts(text, cursor, sentence.start, citations)))
        result.append(
            Passage(f"s{sentence.position}", _parts(text, sentence.start, sentence.end, citations))
        )
        cursor = sentence.end
    if cursor < len(text):
        result.append(Passage(None, _parts(text, cursor, len(text), citations)))
    return result


def _parts(text: str, start: int, end: int, citations: Sequence[Citation]) -> tuple[Part, ...]:
    parts: list[Part] = []
    cursor = start
    for citation in citations:
        if citation.end <= start or citation.start >= end:
            continue
        begin, finish = max(citation.start, start), min(citation.end, end)
        if begin > cursor:
            parts.append(Part(text[cursor:begin]))
        parts.append(Part(text[begin:finish], citation.chunk_ids))
        cursor = finish
    if cursor < end:
        parts.append(Part(text[cursor:end]))
    return tuple(parts)


def _without_citations(text: str) -> tuple[str, list[int], set[int]]:
    """Return ``text`` without its citation runs, each kept character's original index, and
    the positions in the result where a run was cut out."""
    pieces: list[str] = []
    to_original: list[int] = []
    cuts: set[int] = set()
    cursor = 0
    for match in CITATION_RE.finditer(text):
        pieces.append(text[cursor : match.start()])
        to_original.extend(range(cursor, match.start()))
        cuts.add(len(to_original))
        cursor = match.end()
    pieces.append(text[cursor:])
    to_original.extend(range(cursor, len(text)))
    return "".join(pieces), to_original, cuts


def _blocks(text: str, cuts: set[int]) -> list[tuple[int, int]]:
    """Return the (start, end) of each block: paragraphs, list items and headings."""
    blocks: list[tuple[int, int]] = []
    block_start: int | None = None
    block_end = 0
    position = 0
    for line in text.splitlines(keepends=True):
        line_start, position = position, position + len(line)
        content = line.strip()
        if not content:
            if block_start is not None:
                blocks.append((block_start, block_end))
                block_start = None
            continue
        marker = _LIST_MARKER_RE.match(line)
        content_start = line_start + (marker.end() if marker else len(line) - len(line.lstrip()))
        if marker and block_start is not None:
            blocks.append((block_start, block_end))
            block_start = None
        if block_start is None:
            block_start = content_start
        block_end = line_start + len(line.rstrip())
        ends_block = (
            content[-1] in _BLOCK_END_PUNCTUATION
            or block_end in cuts
            or bool(_HEADING_RE.match(line) or _BOLD_LINE_RE.fullmatch(content))
        )
        if ends_block:
            blocks.append((block_start, block_end))
            block_start = None
    if block_start is not None:
        blocks.append((block_start, block_end))
    return blocks


def _split_block(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Return the sentence spans of one block, which together cover all its text."""
    block = text[start:end].replace("\r", " ").replace("\n", " ")
    short, original = _long_words_shortened(block)
    boundaries = [0]
    cursor = 0
    for piece in pysbd_split(short):
        piece = piece.strip()
        if not piece:
            continue
        found = short.find(piece, cursor)
        if found < 0:
            # pysbd rewrote this piece: leave it in the sentence before, so no text is lost.
            continue
        if found > boundaries[-1] and short[boundaries[-1] : found].strip():
            boundaries.append(found)
        cursor = found + len(piece)
    boundaries = [original(boundary) for boundary in boundaries]
    boundaries.append(len(block))
    spans: list[tuple[int, int]] = []
    for begin, finish in pairwise(boundaries):
        piece = block[begin:finish]
        stripped_end = begin + len(piece.rstrip())
        if spans and _continues(block[spans[-1][0] : spans[-1][1]], piece.lstrip()):
            spans[-1] = (spans[-1][0], stripped_end)
        else:
            spans.append((begin + len(piece) - len(piece.lstrip()), stripped_end))
    return [(start + begin, start + finish) for begin, finish in spans if finish > begin]


def pysbd_split(block: str) -> list[str]:
    """Return pysbd's sentences of ``block`` (English, text not cleaned)."""
    return list(pysbd.Segmenter(language="en", clean=False).processor(block).process())


def _long_words_shortened(block: str) -> tuple[str, Callable[[int], int]]:
    """Return ``block`` with each word over MAX_SPLIT_WORD characters cut to its two ends,
    and the map from an offset in the result to the offset in ``block``."""
    keep = MAX_SPLIT_WORD // 2
    pieces: list[str] = []
    cuts: list[int] = []  # offsets in the result where characters were taken out
    removed: list[int] = []  # characters taken out up to and including each cut
    cursor = length = 0
    for match in _LONG_WORD.finditer(block):
        pieces.append(block[cursor : match.start() + keep])
        length += len(pieces[-1])
        cuts.append(length)
        removed.append((removed[-1] if removed else 0) + len(match.group()) - 2 * keep)
        cursor = match.end() - keep
    if not cuts:
        return block, lambda offset: offset
    pieces.append(block[cursor:])

    def original(offset: int) -> int:
        index = bisect_right(cuts, offset) - 1
        return offset + (removed[index] if index >= 0 else 0)

    return "".join(pieces), original


def _continues(previous: str, following: str) -> bool:
    """Return whether ``following`` continues ``previous`` (a false split by pysbd)."""
    if not following or not _CONTINUATION_START.match(following):
        return False
    words = previous.rsplit(maxsplit=1)  # not a regex: linear however long the last word
    if words and words[-1].lower() in _SPLIT_ABBREVIATIONS:
        return True
    return following[0].islower() and previous.rstrip().endswith(".")


def _unique(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ids))


def _check_ids(ids: Sequence[str], name: str) -> None:
    if isinstance(ids, str):
        raise TypeError(f"{name} must be a sequence of ids, not a string")
    seen: set[str] = set()
    for value in ids:
        if not isinstance(value, str) or not value:
            raise ValueError(f"{name} must hold non-empty strings, got {value!r}")
        if value in seen:
            raise ValueError(f"{name} holds {value!r} twice; ids must be unique")
        seen.add(value)
