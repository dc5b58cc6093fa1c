"""Sentence splitting of an output holding a very long word, against pysbd on the text whole.

pysbd's time grows with the square of a word's length; ``runs.segment`` hands it the word's
two ends only (issue 17, finding 4), so the same sentences come out in linear time.
"""

from __future__ import annotations

from collections.abc import Iterator

from bench.harness import Case
from runs.segment import pysbd_split, split_sentences

WORD = 20_000


def cases() -> Iterator[Case]:
    text = f"The ratio was 2.4x in 2024. Z{'z' * WORD} ends the second. The third is short."
    yield Case(
        name=f"split_sentences, one {WORD:,}-character word (pysbd whole: sentence count)",
        ours=lambda: len(split_sentences(text)),
        reference=lambda: len(pysbd_split(text)),
    )
