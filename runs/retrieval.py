"""Rank a task's permitted source chunks against its input with Okapi BM25 (σ.retrieval).

Pure: no Django import. Tokens are the lower-cased runs of letters and digits (``\\w+``), so
"EBITDA" and "ebitda" match and "$45.0" gives "45" and "0". For a query q (the task input,
each distinct term once) and a chunk d among the task's N chunks::

    score(d, q) = Σ_{t ∈ q} idf(t) · f(t, d) · (k1 + 1) / (f(t, d) + k1 · (1 − b + b · |d| / avgdl))
    idf(t)      = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))

with f(t, d) the count of t in d, |d| the chunk's length in tokens, avgdl the mean length and
n(t) the number of chunks containing t (Robertson and Zaragoza 2009, Eq. 3.31; the "+ 1"
inside the logarithm is Lucene's, which keeps every idf positive so a term found in most
chunks still counts a little rather than negatively). The corpus is the task's own permitted
chunks, as SPEC §2 defines S_i per task. Ties, including chunks that share no term with the
input, keep the chunks' given order, so the ranking is deterministic.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

K1 = 1.5
B = 0.75
DEFAULT_TOP_K = 8
_TOKEN_RE = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Chunk:
    """A permitted source chunk: its id and its text."""

    chunk_id: str
    text: str


@dataclass(frozen=True, slots=True)
class RankedChunk:
    """A chunk with its BM25 score and its 1-based rank."""

    chunk_id: str
    text: str
    score: float
    rank: int


def tokenize(text: str) -> list[str]:
    """Return the lower-cased word tokens of ``text``."""
    return _TOKEN_RE.findall(text.lower())


def bm25_scores(
    query: str, documents: Sequence[str], *, k1: float = K1, b: float = B
) -> np.ndarray:
    """Return the Okapi BM25 score of each document for ``query`` (module docstring formula).

    Parameters
    ----------
    query
        The query text; each distinct term counts once.
    documents
        The corpus, which is also the collection the idf is computed over.
    k1, b
        Term-frequency saturation and length normalisation (defaults 1.5 and 0.75).

    Returns
    -------
    numpy.ndarray
        One float per document, in the documents' order; an empty corpus gives an empty array.
    """
    if k1 < 0:
        raise ValueError(f"k1 must be ≥ 0, got {k1}")
    if not 0 <= b <= 1:
        raise ValueError(f"b must be in [0, 1], got {b}")
    n_docs = len(documents)
    if n_docs == 0:
        return np.zeros(0)
    terms = sorted(set(tokenize(query)))
    counts = [Counter(tokenize(document)) for document in documents]
    lengths = np.array([sum(c.values()) for c in counts], dtype=float)
    if not terms:
        return np.zeros(n_docs)
    tf = np.array([[c.get(term, 0) for term in terms] for c in counts], dtype=float)
    containing = (tf > 0).sum(axis=0)
    idf = np.log1p((n_docs - containing + 0.5) / (containing + 0.5))
    avgdl = lengths.mean()
    norm = 1.0 - b + b * (lengths / avgdl if avgdl > 0 else np.ones(n_docs))
    weights = tf * (k1 + 1.0) / (tf + k1 * norm[:, None])
    return np.asarray(weights @ idf)


def retrieve(
    query: str, chunks: Sequence[Chunk], *, top_k: int = DEFAULT_TOP_K
) -> list[RankedChunk]:
    """Return the ``top_k`` chunks most relevant to ``query``, best first.

    Ties keep the chunks' given order (a stable sort on the negated score).
    """
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"top_k must be a whole number ≥ 1, got {top_k!r}")
    scores = bm25_scores(query, [chunk.text for chunk in chunks])
    order = np.argsort(-scores, kind="stable")[:top_k]
    return [
        RankedChunk(chunks[i].chunk_id, chunks[i].text, float(scores[i]), rank)
        for rank, i in enumerate(order, start=1)
    ]
