"""Rendering σ's prompts for a task and reading back the chunk ids a reply cites."""

from __future__ import annotations

import pytest

from runs.prompting import (
    CITATION_INSTRUCTION,
    TemplateError,
    check_prompts,
    cited_ids,
    format_sources,
    render_messages,
)
from runs.retrieval import RankedChunk

CHUNKS = [
    RankedChunk("G1-ar24-p41", "EBITDA was $30.9 million.\n  Margin 15.2%.", 1.7, 1),
    RankedChunk("G1-termsheet", "A $45.0 million revolver.", 1.2, 2),
]
PROMPTS = {
    "system": "You draft credit memos for task {task_id}.",
    "user_template": "Input: {input}\n\nSources:\n{sources}\n\nKeep {{braces}}.",
}


def render(prompts=PROMPTS, chunks=CHUNKS):
    return render_messages(prompts, task_id="G1", task_input="Draft the overview.", chunks=chunks)


def test_sources_are_one_bracketed_id_line_per_chunk_in_rank_order():
    assert format_sources(CHUNKS) == (
        "[G1-ar24-p41] EBITDA was $30.9 million. Margin 15.2%.\n"
        "[G1-termsheet] A $45.0 million revolver."
    )


def test_it_fills_input_sources_and_task_id_and_keeps_literal_braces():
    system, user = render()
    assert system == {
        "role": "system",
        "content": f"You draft credit memos for task G1.\n\n{CITATION_INSTRUCTION}",
    }
    assert user["role"] == "user"
    assert user["content"] == (
        "Input: Draft the overview.\n\nSources:\n"
        "[G1-ar24-p41] EBITDA was $30.9 million. Margin 15.2%.\n"
        "[G1-termsheet] A $45.0 million revolver.\n\nKeep {braces}."
    )


def test_few_shot_examples_become_turns_before_the_user_prompt():
    prompts = {**PROMPTS, "few_shot": [{"input": "Q1", "output": "A1 [c1]."}]}
    roles = [(m["role"], m["content"]) for m in render(prompts)[1:]]
    assert roles[:2] == [("user", "Q1"), ("assistant", "A1 [c1].")]
    assert roles[2][0] == "user"


@pytest.mark.parametrize(
    ("template", "shown"),
    [
        ("Borrower: {borrower_name}", "{borrower_name}"),
        ("{}", "{}"),
        ("{0}", "{0}"),
        ("{input.upper}", "{input.upper}"),
        ("{input[0]}", "{input[0]}"),
    ],
)
def test_an_unknown_field_is_an_error_naming_it(template, shown):
    with pytest.raises(TemplateError) as raised:
        render({**PROMPTS, "user_template": template})
    assert f"prompts.user_template: unknown field {shown}" in str(raised.value)
    assert raised.value.field == "prompts.user_template"


def test_an_unbalanced_brace_is_an_error_naming_the_field():
    with pytest.raises(TemplateError, match=r"prompts\.system: not a valid template"):
        check_prompts({**PROMPTS, "system": "Use {input"})


def test_cited_ids_are_read_once_each_in_order_of_first_citation():
    text = (
        "EBITDA was $30.9 million [G1-ar24-p41]. The facility is $45m [G1-termsheet; G1-ar24-p41]."
    )
    assert cited_ids(text) == ["G1-ar24-p41", "G1-termsheet"]
    assert cited_ids("See [the docs](http://x) and nothing else.") == []
