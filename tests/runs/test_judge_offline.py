"""The offline judge on hand-built sentences, chunks, key elements and guidance items."""

from __future__ import annotations

import pytest

from runs.judges.offline import OfflineJudge, figures
from runs.judges.rubric import (
    CITED_CHUNK,
    CRITERIA,
    GUIDANCE_ITEM,
    KEY_ELEMENT,
    QUESTIONS_BY_NAME,
    RUBRIC_PROMPT,
    RUBRIC_SHA256,
    RUBRIC_VERSION,
    SENTENCE,
    Answer,
    CitedChunkUnit,
    GuidanceUnit,
    JudgeItem,
    KeyElementUnit,
    SentenceUnit,
    answers_to_scores,
    expected_criteria,
)

TERM_SHEET = (
    "Kestrel Logistics Group Ltd requests a $45.0 million five-year senior secured revolving "
    "credit facility to refinance the existing revolver and fund working capital; the bank's "
    "proposed hold is $22.5 million."
)
INCOME = (
    "Revenue for the year ended 31 December 2024 was $421.3 million (FY2023: $396.1 million). "
    "EBITDA was $30.9 million, a margin of 7.3%. Net leverage was 2.4x at year end."
)
SOURCES = {"termsheet": TERM_SHEET, "income": INCOME}
TASK = (
    "Draft the 'Transaction overview' section of the credit memo for Kestrel Logistics Group "
    "Ltd, which requests a $45.0 million revolving credit facility."
)


def judge_sentence(text: str, cites: tuple[str, ...] = ()) -> dict[str, Answer]:
    item = JudgeItem(
        output_text=text,
        task_input=TASK,
        sources=SOURCES,
        sentences=(SentenceUnit("s1", text, cites),),
    )
    return {a.question: a for a in OfflineJudge().answers(item)}


def supported(text: str, cites: tuple[str, ...] = ()) -> str:
    return judge_sentence(text, cites)["supported"].label


# -- figures ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("$45.0 million", 45_000_000, "amount"),
        ("45m", 45_000_000, "amount"),
        ("45 mn", 45_000_000, "amount"),
        ("45,000,000", 45_000_000, "amount"),
        ("$1.2bn", 1_200_000_000, "amount"),
        ("$250k", 250_000, "amount"),
        ("2.4x", 2.4, "multiple"),
        ("2.4 times", 2.4, "multiple"),
        ("1.6%", 1.6, "percent"),
        ("1.6 per cent", 1.6, "percent"),
        ("FY2024", 2024, "amount"),
    ],
)
def test_figures_are_normalised_to_a_value_and_kind(text, value, kind):
    (figure,) = figures(text)
    assert figure.value == pytest.approx(value)
    assert figure.kind == kind


def test_digits_inside_chunk_ids_and_codes_are_not_figures():
    assert figures("see G1-ar24-p41 and Q3") == []


# -- supported ----------------------------------------------------------------------------------


def test_a_sentence_whose_figure_differs_from_its_cited_chunk_is_not_supported():
    answer = judge_sentence("FY2024 revenue was $412.3 million.", ("income",))["supported"]
    assert answer.label == "not"
    assert "412.3 million" in answer.rationale


def test_a_paraphrase_with_the_same_figures_in_another_notation_is_supported():
    assert (
        supported(
            "Kestrel requested a $45m five-year senior secured revolver to refinance its "
            "existing revolver.",
            ("termsheet",),
        )
        == "fully"
    )


def test_a_loose_paraphrase_with_the_right_figures_is_partially_supported_which_counts():
    answer = judge_sentence(
        "In FY2024 the company earned sales of $421.3m with EBITDA of $30.9m.", ("income",)
    )["supported"]
    assert answer.label == "partially"
    assert QUESTIONS_BY_NAME["supported"].scores("partially") == {"supported": 1.0}


def test_an_uncited_sentence_is_not_supported_even_if_a_source_states_it():
    answer = judge_sentence("Revenue for 2024 was $421.3 million.")["supported"]
    assert answer.label == "not"
    assert answer.rationale == "cites no source chunk"


def test_a_sentence_citing_a_chunk_outside_the_permitted_sources_is_not_supported():
    answer = judge_sentence("Revenue was $421.3 million.", ("broker-note",))["supported"]
    assert answer.label == "not"
    assert "broker-note not permitted" in answer.rationale


def test_citation_markers_left_in_the_sentence_count_as_citations_and_not_as_figures():
    assert supported("Net leverage was 2.4x at year end [income].") == "fully"


def test_a_percentage_does_not_match_the_same_number_as_a_multiple():
    assert supported("Net leverage was 2.4% at year end.", ("income",)) == "not"


def test_a_figure_found_only_in_an_uncited_chunk_is_not_supported():
    assert supported("The bank's proposed hold is $22.5 million.", ("income",)) == "not"


def test_copied_words_with_no_figure_are_fully_supported_the_documented_weakness():
    # The judge reads words, not meaning: a reversed claim with the same words passes.
    assert supported("Kestrel does not request a revolving credit facility.", ("termsheet",)) == (
        "fully"
    )


# -- assertive and relevant ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Revenue was $421.3 million.", "Y"),
        ("EBITDA margin 7.3%", "Y"),
        ("The chief executive enjoys sailing at weekends.", "Y"),
        ("Transaction overview", "N"),
        ("Is leverage sustainable?", "N"),
        ("Leverage may rise in 2025.", "N"),
        ("The covenant test date is not determinable from the sources.", "N"),
    ],
)
def test_assertive_needs_a_claim_without_a_question_or_hedge(text, label):
    assert judge_sentence(text)["assertive"].label == label


def test_a_sentence_sharing_words_with_the_task_is_relevant_and_one_sharing_nothing_is_not():
    assert judge_sentence("The revolving facility is committed.")["relevant"].label == "Y"
    irrelevant = judge_sentence("The chief executive enjoys sailing at weekends.")["relevant"]
    assert irrelevant.label == "N"


def test_a_sentence_sharing_a_figure_with_the_sources_is_relevant():
    assert judge_sentence("Net leverage stood at 2.4x.")["relevant"].label == "Y"


# -- citations ----------------------------------------------------------------------------------


def judge_citation(sentence: str, chunk_id: str) -> Answer:
    item = JudgeItem(
        output_text=sentence,
        task_input=TASK,
        sources=SOURCES,
        sentences=(SentenceUnit("s1", sentence, (chunk_id,)),),
        cited_chunks=(CitedChunkUnit(f"c1:{chunk_id}", chunk_id, "s1"),),
    )
    (answer,) = [a for a in OfflineJudge().answers(item) if a.question == "citation"]
    return answer


def test_a_citation_sharing_a_figure_is_used_strictly():
    assert judge_citation("Leverage was 2.4x.", "income").label == "strict"


def test_a_citation_sharing_three_content_words_is_used_strictly():
    assert judge_citation("A senior secured revolving line.", "termsheet").label == "strict"


def test_a_citation_sharing_one_content_word_is_used_leniently():
    answer = judge_citation("The facility matters to the bank.", "termsheet")
    assert answer.label == "lenient"
    assert answer.rationale == "shares 2 content word(s) with termsheet"


def test_a_citation_sharing_nothing_is_not_used():
    assert judge_citation("The chief executive enjoys sailing.", "income").label == "not"


def test_a_cited_chunk_that_is_not_permitted_is_not_used():
    answer = judge_citation("Revenue was $421.3 million.", "elsewhere")
    assert (answer.label, answer.rationale) == (
        "not",
        "elsewhere is not a permitted source of this task",
    )


def test_a_citation_without_a_sentence_link_is_read_against_the_whole_output():
    item = JudgeItem(
        output_text="Net leverage was 2.4x at year end.",
        task_input=TASK,
        sources=SOURCES,
        cited_chunks=(CitedChunkUnit("c:income", "income", None),),
    )
    assert OfflineJudge().answers(item)[0].label == "strict"


# -- key elements and guidance --------------------------------------------------------------------


def judge_output(output: str, *, element: str = "", guidance: str = "") -> Answer:
    item = JudgeItem(
        output_text=output,
        task_input=TASK,
        sources=SOURCES,
        key_elements=(KeyElementUnit("k:ke1", "ke1", element),) if element else (),
        guidance=(GuidanceUnit("g:CP-06", "CP-06", guidance),) if guidance else (),
    )
    (answer,) = OfflineJudge().answers(item)
    return answer


def test_a_key_element_stated_with_its_figure_is_present_and_correct():
    answer = judge_output(
        "FY2024 EBITDA was $30.9m [income].", element="FY2024 EBITDA of $30.9 million"
    )
    assert answer.label == "present_correct"


def test_a_key_element_stated_with_a_wrong_figure_is_present_but_wrong():
    answer = judge_output("FY2024 EBITDA was $39.0m.", element="FY2024 EBITDA of $30.9 million")
    assert answer.label == "present_wrong"
    assert "30.9 million" in answer.rationale


def test_a_key_element_not_addressed_is_absent():
    answer = judge_output(
        "The borrower operates warehouses.", element="Borrowings of $117.7 million"
    )
    assert answer.label == "absent"


def test_a_guidance_item_whose_key_terms_the_output_mentions_is_flagged():
    guidance = "Note customer concentration above 25% of revenue."
    assert judge_output("Customer concentration is high.", guidance=guidance).label == "Y"
    assert judge_output("EBITDA grew.", guidance=guidance).label == "N"


# -- stored scores --------------------------------------------------------------------------------


def test_every_unit_gets_every_criterion_of_its_kind_exactly_once():
    item = JudgeItem(
        output_text="Revenue was $421.3 million [income]. EBITDA was $30.9 million [income].",
        task_input=TASK,
        sources=SOURCES,
        sentences=(
            SentenceUnit("s1", "Revenue was $421.3 million.", ("income",)),
            SentenceUnit("s2", "EBITDA was $30.9 million.", ("income",)),
        ),
        cited_chunks=(
            CitedChunkUnit("c1:income", "income", "s1"),
            CitedChunkUnit("c2:income", "income", "s2"),
        ),
        key_elements=(KeyElementUnit("k:ke1", "ke1", "EBITDA of $30.9 million"),),
        guidance=(GuidanceUnit("g:CP-01", "CP-01", "State the accounting period."),),
    )
    scores = OfflineJudge().score(item)
    pairs = [(s.unit_key, s.criterion) for s in scores]
    assert len(pairs) == len(set(pairs)) == 2 * 3 + 2 * 2 + 1 + 1
    assert set(pairs) == expected_criteria(item)
    by_pair = {(s.unit_key, s.criterion): s for s in scores}
    assert by_pair[("s1", "supported")].score == 1.0
    assert by_pair[("c1:income", "citation_strict")].label == "strict"
    assert by_pair[("c1:income", "citation_lenient")].score == 1.0


def test_the_judge_is_deterministic():
    item = JudgeItem(
        output_text="Revenue was $421.3 million.",
        task_input=TASK,
        sources=SOURCES,
        sentences=(SentenceUnit("s1", "Revenue was $421.3 million.", ("income",)),),
    )
    assert OfflineJudge().score(item) == OfflineJudge().score(item)


# -- the rubric as data ------------------------------------------------------------------------


def test_the_rubric_scores_partially_supported_as_supported_and_a_lenient_citation_as_lenient():
    assert QUESTIONS_BY_NAME["supported"].scores("fully") == {"supported": 1.0}
    assert QUESTIONS_BY_NAME["supported"].scores("not") == {"supported": 0.0}
    assert QUESTIONS_BY_NAME["citation"].scores("lenient") == {
        "citation_strict": 0.0,
        "citation_lenient": 1.0,
    }
    assert QUESTIONS_BY_NAME["key_element"].scores("present_wrong") == {"key_element_captured": 0.0}


def test_the_rubric_names_each_stored_criterion_with_its_unit_kind():
    assert dict(CRITERIA) == {
        "assertive": SENTENCE,
        "supported": SENTENCE,
        "relevant": SENTENCE,
        "citation_strict": CITED_CHUNK,
        "citation_lenient": CITED_CHUNK,
        "key_element_captured": KEY_ELEMENT,
        "flagged": GUIDANCE_ITEM,
    }


def test_a_label_outside_the_rubric_is_refused():
    with pytest.raises(ValueError, match="supported: label must be one of fully, partially, not"):
        answers_to_scores([Answer("s1", "supported", "mostly")])


def test_the_rubric_prompt_is_versioned_and_hashed():
    import hashlib

    assert RUBRIC_VERSION == "1"
    assert hashlib.sha256(RUBRIC_PROMPT.encode()).hexdigest() == RUBRIC_SHA256
    for word in ("sentences", "cited_chunks", "key_elements", "guidance", "partially"):
        assert word in RUBRIC_PROMPT
