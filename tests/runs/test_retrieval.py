"""BM25 ranking of a task's permitted chunks, checked against a hand calculation."""

from __future__ import annotations

import math

import pytest

from runs.retrieval import Chunk, bm25_scores, retrieve, tokenize

CHUNKS = [
    Chunk("c1", "EBITDA was 30.9 million"),  # 5 tokens
    Chunk("c2", "Margin of 15.2 percent: EBITDA margin"),  # 7 tokens
    Chunk("c3", "Cash and cash equivalents"),  # 4 tokens
]
QUERY = "What was the EBITDA margin?"


def test_it_tokenizes_lower_case_words_and_digits():
    assert tokenize("EBITDA was $30.9 million.") == ["ebitda", "was", "30", "9", "million"]


def test_scores_match_a_hand_calculation_on_three_chunks():
    # N = 3, avgdl = 16 / 3; "ebitda" is in 2 chunks, "margin" in 1, "what"/"the" in none,
    # "was" in c1 only. idf = ln(1 + (N − n + 0.5) / (n + 0.5)).
    k1, b, avgdl = 1.5, 0.75, 16 / 3
    idf_ebitda = math.log(1 + 1.5 / 2.5)  # 0.470004
    idf_margin = math.log(1 + 2.5 / 1.5)  # 0.980829
    idf_was = idf_margin

    def term(f, length):
        return f * (k1 + 1) / (f + k1 * (1 - b + b * length / avgdl))

    c1 = idf_ebitda * term(1, 5) + idf_was * term(1, 5)
    c2 = idf_ebitda * term(1, 7) + idf_margin * term(2, 7)
    expected = [c1, c2, 0.0]
    assert bm25_scores(QUERY, [c.text for c in CHUNKS]).tolist() == pytest.approx(expected)
    assert expected[:2] == pytest.approx([1.492818, 1.685345], abs=1e-6)


def test_retrieve_returns_the_top_k_best_first_with_ranks():
    ranked = retrieve(QUERY, CHUNKS, top_k=2)
    assert [(r.chunk_id, r.rank) for r in ranked] == [("c2", 1), ("c1", 2)]
    assert ranked[0].text == CHUNKS[1].text


def test_ties_keep_the_chunks_given_order():
    chunks = [Chunk("b", "same words"), Chunk("a", "same words"), Chunk("c", "other")]
    assert [r.chunk_id for r in retrieve("same", chunks, top_k=3)] == ["b", "a", "c"]
    assert [r.chunk_id for r in retrieve("nothing shared", chunks, top_k=2)] == ["b", "a"]


def test_top_k_larger_than_the_chunks_returns_them_all_and_no_chunks_returns_none():
    assert len(retrieve(QUERY, CHUNKS, top_k=8)) == 3
    assert retrieve(QUERY, [], top_k=8) == []


@pytest.mark.parametrize("top_k", [0, -1, 1.5, True])
def test_a_bad_top_k_is_refused_naming_it(top_k):
    with pytest.raises(ValueError, match="top_k"):
        retrieve(QUERY, CHUNKS, top_k=top_k)
