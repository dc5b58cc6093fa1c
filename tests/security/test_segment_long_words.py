"""Issue 17 finding 4: sentence splitting stays linear however long a word is.

pysbd's time grows with the square of a word's length, so the bound is on what pysbd is
given (a count of characters, deterministic), not on a wall clock.
"""

from __future__ import annotations

import re

import pysbd
import pytest

from runs import segment
from runs.segment import MAX_SPLIT_WORD, split_sentences

LONGEST_WORD = re.compile(r"\S+")


@pytest.fixture
def pysbd_inputs(monkeypatch) -> list[str]:
    """Record every text handed to pysbd by runs.segment."""
    seen: list[str] = []
    real = pysbd.Segmenter

    class Recording(real):  # type: ignore[misc, valid-type]
        def processor(self, text):
            seen.append(text)
            return super().processor(text)

    monkeypatch.setattr(segment.pysbd, "Segmenter", Recording)
    return seen


def longest_word(texts: list[str]) -> int:
    return max((len(word) for text in texts for word in LONGEST_WORD.findall(text)), default=0)


@pytest.mark.parametrize("length", [50_000, 200_000])
def test_a_very_long_word_reaches_pysbd_only_as_its_two_ends(pysbd_inputs, length):
    text = f"Leverage rose to 2.4x [c1]. Z{'z' * length} closes it. The last one [c2]."
    sentences = split_sentences(text)
    assert longest_word(pysbd_inputs) <= MAX_SPLIT_WORD
    # What pysbd reads does not grow with the word: the same for 50k and 200k characters.
    assert sum(map(len, pysbd_inputs)) <= len(text) - length + MAX_SPLIT_WORD
    assert [s.text[:12] for s in sentences] == ["Leverage ros", "Z" + "z" * 11, "The last one"]
    assert sentences[1].end - sentences[1].start == length + 1 + len(" closes it.")
    assert [s.cited_chunk_ids for s in sentences] == [("c1",), (), ("c2",)]


@pytest.mark.parametrize(
    "text",
    [
        "See https://example.com/" + "x" * 600 + ".html for details. Then approx. 5 units. Done.",
        "Token " + "A." * 400 + " Next one starts. And " + "b" * 300 + ". End [c4].",
        "Cash was $45.0 million [c1]. " + "Q" * 1_000 + "! Really? " + "w" * 5_000 + " ok.",
    ],
)
def test_long_words_split_as_pysbd_splits_the_whole_text(monkeypatch, text):
    shortened = split_sentences(text)
    # The independent computation: pysbd given every word whole.
    monkeypatch.setattr(segment, "_LONG_WORD", re.compile(r"(?!x)x"))
    whole = split_sentences(text)
    assert shortened == whole
