"""Splitting outputs into sentences and units: boundaries, citations, stable keys."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runs.models import UnitKind
from runs.segment import (
    _LIST_MARKER_RE,
    CITED_CHUNK,
    GUIDANCE_ITEM,
    KEY_ELEMENT,
    SENTENCE,
    _without_citations,
    build_units,
    cited_chunk_ids,
    find_citations,
    passages,
    split_sentences,
)

KESTREL = (
    "Kestrel Logistics Group Ltd. reported revenue of $412.3 million in FY2025, up 6.1% y/y "
    "[c2]. Net leverage was 2.4x (covenant: 3.5x) [c3, c4]."
)


def texts(text: str) -> list[str]:
    return [sentence.text for sentence in split_sentences(text)]


def cited(text: str) -> list[tuple[str, ...]]:
    return [sentence.cited_chunk_ids for sentence in split_sentences(text)]


def test_the_kestrel_statements_are_two_sentences_with_their_citations_stripped():
    sentences = split_sentences(KESTREL)
    assert [s.position for s in sentences] == [1, 2]
    assert [s.text for s in sentences] == [
        "Kestrel Logistics Group Ltd. reported revenue of $412.3 million in FY2025, up 6.1% y/y.",
        "Net leverage was 2.4x (covenant: 3.5x).",
    ]
    assert [s.cited_chunk_ids for s in sentences] == [("c2",), ("c3", "c4")]


def test_spans_delimit_each_sentence_in_the_original_text_citations_included():
    first, second = split_sentences(KESTREL)
    assert (first.start, first.end) == (0, 92)
    assert KESTREL[first.start : first.end].endswith("y/y [c2].")
    assert (second.start, second.end) == (93, len(KESTREL))
    assert KESTREL[second.start : second.end] == "Net leverage was 2.4x (covenant: 3.5x) [c3, c4]."


def test_abbreviations_of_financial_prose_do_not_end_a_sentence():
    text = (
        "The U.S. subsidiary, Kestrel Inc., contributed approx. 40% of EBITDA [c5]. "
        "Interest cover was 3.2x vs. 2.9x in FY2024; see No. 3 below. "
        "Cash was $13.0 million at Dec. 31, 2024. Ca. 40% of revenue is recurring."
    )
    assert texts(text) == [
        "The U.S. subsidiary, Kestrel Inc., contributed approx. 40% of EBITDA.",
        "Interest cover was 3.2x vs. 2.9x in FY2024; see No. 3 below.",
        "Cash was $13.0 million at Dec. 31, 2024.",
        "Ca. 40% of revenue is recurring.",
    ]
    assert cited(text) == [("c5",), (), (), ()]


def test_amounts_multiples_and_percentages_at_a_full_stop_end_their_sentence():
    text = "The facility is $45.0 million. The margin is 1.6%. Leverage was 3.2x. It is senior."
    assert texts(text) == [
        "The facility is $45.0 million.",
        "The margin is 1.6%.",
        "Leverage was 3.2x.",
        "It is senior.",
    ]


def test_each_item_of_a_numbered_or_bulleted_list_is_a_sentence_without_its_marker():
    text = (
        "Key risks [c1]:\n"
        "1. Customer concentration: the top three customers are 35% of revenue [c1].\n"
        "2. Refinancing of the $98.1 million term loan due 2028 [c2].\n"
        "3) Covenant headroom of approx. 1.1x [c3, c3].\n"
        "- Mitigant: a $22.5 million hold [c4]\n"
        "• Mitigant: guarantees from Kestrel Holdings Ltd."
    )
    assert texts(text) == [
        "Key risks:",
        "Customer concentration: the top three customers are 35% of revenue.",
        "Refinancing of the $98.1 million term loan due 2028.",
        "Covenant headroom of approx. 1.1x.",
        "Mitigant: a $22.5 million hold",
        "Mitigant: guarantees from Kestrel Holdings Ltd.",
    ]
    assert cited(text) == [("c1",), ("c1",), ("c2",), ("c3",), ("c4",), ()]


def test_list_items_without_full_stops_do_not_run_together():
    text = "Covenants:\n(a) net leverage below 3.5x\n(b) interest cover above 2.0x\n(c) capex cap"
    assert texts(text) == [
        "Covenants:",
        "net leverage below 3.5x",
        "interest cover above 2.0x",
        "capex cap",
    ]


def test_a_citation_after_the_full_stop_belongs_to_the_sentence_before_it():
    text = (
        "Revenue was $203.9 million. [G1-ar24-p41] EBITDA was $30.9 million, a margin of "
        "15.2%. [G1-ar24-p41; G1-termsheet]"
    )
    assert texts(text) == [
        "Revenue was $203.9 million.",
        "EBITDA was $30.9 million, a margin of 15.2%.",
    ]
    assert cited(text) == [("G1-ar24-p41",), ("G1-ar24-p41", "G1-termsheet")]
    assert [text[s.start : s.end] for s in split_sentences(text)] == [
        "Revenue was $203.9 million. [G1-ar24-p41]",
        "EBITDA was $30.9 million, a margin of 15.2%. [G1-ar24-p41; G1-termsheet]",
    ]


def test_soft_wrapped_lines_join_and_a_citation_at_a_line_end_ends_the_statement():
    text = (
        "The primary source of repayment is operating\n"
        "cash flow of $30.9 million [c1]\n"
        "Secondary sources are asset sales [c2][c3]."
    )
    assert texts(text) == [
        "The primary source of repayment is operating cash flow of $30.9 million",
        "Secondary sources are asset sales.",
    ]
    assert cited(text) == [("c1",), ("c2", "c3")]


def test_headings_are_sentences_of_their_own():
    text = "## Source of repayment\nCash flow covers debt service.\n**Secondary sources**\nNone."
    assert texts(text) == [
        "Source of repayment",
        "Cash flow covers debt service.",
        "**Secondary sources**",
        "None.",
    ]


def test_a_markdown_link_is_not_a_citation_but_any_other_bracketed_id_is():
    text = "See the [term sheet](https://example.com) [sic]."
    assert texts(text) == ["See the [term sheet](https://example.com)."]
    assert cited(text) == [("sic",)]


def test_citation_syntax_accepts_commas_semicolons_and_runs_of_brackets():
    text = (
        "Revenue rose [c1]. Costs fell [c2,c3]. Cash grew [ c4 ; c5 ]. Debt fell [c6], [c7]. "
        "Cover rose [c8] [c9]. Capex fell [doc:p4/1#2]."
    )
    assert cited(text) == [
        ("c1",),
        ("c2", "c3"),
        ("c4", "c5"),
        ("c6", "c7"),
        ("c8", "c9"),
        ("doc:p4/1#2",),
    ]
    assert texts(text) == [
        "Revenue rose.",
        "Costs fell.",
        "Cash grew.",
        "Debt fell.",
        "Cover rose.",
        "Capex fell.",
    ]


def test_brackets_that_hold_no_chunk_id_stay_in_the_text():
    text = "Leverage [x 2] rose [] sharply [-c1]."
    assert cited(text) == [()]
    assert texts(text) == ["Leverage [x 2] rose [] sharply [-c1]."]


def test_text_without_words_has_no_sentences_and_lone_citations_join_the_sentence_before():
    assert split_sentences("") == []
    assert split_sentences("  \n\n ") == []
    assert split_sentences("[c1]") == []
    assert split_sentences("- \n* ") == []
    text = "Net leverage was 2.4x.\n\n[c4]\n-"
    assert texts(text) == ["Net leverage was 2.4x."]
    assert cited(text) == [("c4",)]


def test_cited_chunk_ids_lists_every_inline_id_once_in_order():
    assert cited_chunk_ids(KESTREL + " Cash [c4, c2].") == ("c2", "c3", "c4")
    assert cited_chunk_ids("No citation.") == ()


def test_find_citations_gives_the_span_of_each_run_without_leading_spaces():
    [first, second] = find_citations(KESTREL)
    assert KESTREL[first.start : first.end] == "[c2]"
    assert first.chunk_ids == ("c2",)
    assert KESTREL[second.start : second.end] == "[c3, c4]"


def test_build_units_keys_sentences_citations_key_elements_and_guidance_items():
    units = build_units(KESTREL, key_element_ids=["ke1", "ke2"], guidance_item_ids=["CP-01"])
    assert [(u.kind, u.key, u.position, u.ref_id, u.sentence_position) for u in units] == [
        (SENTENCE, "s1", 1, "", 1),
        (SENTENCE, "s2", 2, "", 2),
        (CITED_CHUNK, "c1:c2", 1, "c2", 1),
        (CITED_CHUNK, "c2:c3", 2, "c3", 2),
        (CITED_CHUNK, "c2:c4", 3, "c4", 2),
        (KEY_ELEMENT, "k:ke1", 1, "ke1", None),
        (KEY_ELEMENT, "k:ke2", 2, "ke2", None),
        (GUIDANCE_ITEM, "g:CP-01", 1, "CP-01", None),
    ]
    assert units[0].text == units[2].text == split_sentences(KESTREL)[0].text
    assert units[5].text == ""


def test_a_chunk_cited_twice_in_one_sentence_is_one_unit_but_one_per_sentence_citing_it():
    units = build_units(
        "Leverage is 2.4x [c3, c3] [c3]. Cover is 3.1x [c3].",
        key_element_ids=[],
        guidance_item_ids=[],
    )
    assert [u.key for u in units if u.kind == CITED_CHUNK] == ["c1:c3", "c2:c3"]


def test_the_same_text_always_gives_the_same_keys():
    first = build_units(KESTREL, key_element_ids=["ke1"], guidance_item_ids=["g1"])
    again = build_units(str(KESTREL), key_element_ids=["ke1"], guidance_item_ids=["g1"])
    assert first == again


def test_an_empty_output_still_has_its_key_element_and_guidance_units():
    units = build_units("", key_element_ids=["ke1"], guidance_item_ids=["g1", "g2"])
    assert [u.key for u in units] == ["k:ke1", "g:g1", "g:g2"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"key_element_ids": ["k1", "k1"], "guidance_item_ids": []}, "key_element_ids"),
        ({"key_element_ids": [], "guidance_item_ids": ["g", ""]}, "guidance_item_ids"),
        ({"key_element_ids": "k1", "guidance_item_ids": []}, "key_element_ids"),
    ],
)
def test_build_units_refuses_repeated_empty_or_unlisted_ids_naming_the_argument(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        build_units("A.", **kwargs)


def test_unit_kinds_are_those_of_the_unit_model():
    assert {SENTENCE, CITED_CHUNK, KEY_ELEMENT, GUIDANCE_ITEM} == set(UnitKind.values)


def test_passages_mark_sentences_and_citations_and_give_back_the_text():
    result = passages(KESTREL)
    assert [p.key for p in result] == ["s1", None, "s2"]
    assert "".join(part.text for p in result for part in p.parts) == KESTREL
    assert [part.chunk_ids for part in result[0].parts] == [(), ("c2",), ()]


TEXT_ALPHABET = st.sampled_from(
    [
        "Revenue",
        " ",
        ".",
        "\n",
        "[c1]",
        "[c2, c3]",
        "1. ",
        "- ",
        "approx.",
        "3.2x",
        "$4.5m",
        "U.S.",
        "Inc.",
        "rose",
        "?",
        "(a) ",
        "\n\n",
        "#",
        "**",
        ":",
        "[",
        "]",
        "é",
        "\r\n",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(TEXT_ALPHABET, max_size=40).map("".join))
def test_any_text_splits_into_ordered_disjoint_sentences_that_cover_it(text):
    sentences = split_sentences(text)
    previous_end = 0
    for n, sentence in enumerate(sentences, start=1):
        assert sentence.position == n
        assert previous_end <= sentence.start < sentence.end <= len(text)
        assert sentence.text and sentence.text == " ".join(sentence.text.split())
        previous_end = sentence.end
    assert "".join(part.text for p in passages(text) for part in p.parts) == text
    assert _uncovered_words(text, sentences) == []
    owners: list[list[str]] = [[] for _ in sentences]
    for citation in find_citations(text) if sentences else []:
        starts = [s.start for s in sentences if s.start <= citation.start]
        owners[max(len(starts) - 1, 0)].extend(citation.chunk_ids)
    assert [s.cited_chunk_ids for s in sentences] == [tuple(dict.fromkeys(o)) for o in owners]
    assert split_sentences(text) == sentences


def _uncovered_words(text: str, sentences) -> list[int]:
    """Return positions of letters and digits outside every sentence, citation and marker."""
    covered = bytearray(len(text))
    for span in [*sentences, *find_citations(text)]:
        covered[span.start : span.end] = b"\1" * (span.end - span.start)
    clean, to_original, _cuts = _without_citations(text)
    position = 0
    for line in clean.splitlines(keepends=True):
        if marker := _LIST_MARKER_RE.match(line):
            for index in range(position, position + marker.end()):
                covered[to_original[index]] = 1
        position += len(line)
    return [i for i, ch in enumerate(text) if ch.isalnum() and not covered[i]]
