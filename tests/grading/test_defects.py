"""Seeding defects: each kind changes exactly what it claims, at the unit it names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from grading.defects import (
    CHANGED_FIGURE,
    CITATION_REMOVED,
    CITATION_WRONG,
    KINDS,
    MISSED_MANDATORY,
    UNSUPPORTED_CLAIM,
    seed_defect,
    states_key_element,
)
from grading.models import DefectKind
from runs.segment import split_sentences

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "credit_memo"
NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def _examples() -> list[tuple[str, dict[str, str], dict[str, str]]]:
    tasks = {}
    for line in (EXAMPLES / "tasks.jsonl").read_text(encoding="utf-8").splitlines():
        task = json.loads(line)
        tasks[task["id"]] = task
    cases = []
    for sigma in ("gemini-2-5", "llama-4"):
        for line in (EXAMPLES / f"outputs-{sigma}.jsonl").read_text(encoding="utf-8").splitlines():
            output = json.loads(line)
            task = tasks[output["task_id"]]
            cases.append(
                (
                    output["text"],
                    {s["id"]: s["text"] for s in task["sources"]},
                    {k["id"]: k["text"] for k in task["key_elements"]},
                )
            )
    return cases


CASES = _examples()


def _seeded(kind: str, seed: int = 7):
    """Yield (original, defect, sources, key elements) for every example output that takes it."""
    for n, (text, sources, key_elements) in enumerate(CASES):
        try:
            defect = seed_defect(
                text,
                kind,
                sources=sources,
                key_elements=key_elements,
                rng=np.random.default_rng([seed, n]),
            )
        except ValueError:
            continue
        yield text, defect, sources, key_elements


def _pairs(text: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(s.text, s.cited_chunk_ids) for s in split_sentences(text)]


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in NUMBER.findall(text)}


def _target_index(defect) -> int:
    assert re.fullmatch(r"s[1-9][0-9]*", defect.target), defect.target
    return int(defect.target[1:]) - 1


def test_the_kinds_are_the_models_defect_kinds():
    assert list(KINDS) == list(DefectKind.values)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_applies_to_nearly_every_example_output(kind):
    applied = sum(1 for _ in _seeded(kind))
    assert applied >= 0.9 * len(CASES), f"{kind}: {applied} of {len(CASES)}"


def test_a_changed_figure_alters_one_number_of_one_cited_sentence_and_keeps_its_citation():
    for text, defect, sources, _gold in _seeded(CHANGED_FIGURE):
        before, after = _pairs(text), _pairs(defect.text)
        index = _target_index(defect)
        assert len(before) == len(after)
        assert [p for i, p in enumerate(before) if i != index] == [
            p for i, p in enumerate(after) if i != index
        ]
        (old_text, old_cites), (new_text, new_cites) = before[index], after[index]
        assert new_cites == old_cites and new_cites
        old_tokens, new_tokens = old_text.split(), new_text.split()
        changed = [(a, b) for a, b in zip(old_tokens, new_tokens, strict=True) if a != b]
        assert len(changed) == 1, changed
        old_value = float(NUMBER.search(changed[0][0]).group().replace(",", ""))
        new_number = NUMBER.search(changed[0][1]).group().replace(",", "")
        assert not any(new_number in _numbers(chunk) for chunk in sources.values())
        assert abs(float(new_number) / old_value - 1) >= 0.15  # visibly different
        assert defect.kind == CHANGED_FIGURE and "→" in defect.detail


def test_a_removed_citation_leaves_the_sentence_uncited_and_everything_else_alone():
    for text, defect, _sources, _gold in _seeded(CITATION_REMOVED):
        before, after = _pairs(text), _pairs(defect.text)
        index = _target_index(defect)
        assert [t for t, _ in before] == [t for t, _ in after]
        assert before[index][1] and after[index][1] == ()
        assert [c for i, (_, c) in enumerate(before) if i != index] == [
            c for i, (_, c) in enumerate(after) if i != index
        ]


def test_a_wrong_citation_points_at_another_permitted_chunk_without_the_sentences_figures():
    for text, defect, sources, _gold in _seeded(CITATION_WRONG):
        before, after = _pairs(text), _pairs(defect.text)
        index = _target_index(defect)
        assert [t for t, _ in before] == [t for t, _ in after]
        (sentence, old_cites), (_same, new_cites) = before[index], after[index]
        assert len(new_cites) == 1
        assert new_cites[0] in sources and new_cites[0] not in old_cites
        assert not (_numbers(sentence) - {"2024", "2025"}) & _numbers(sources[new_cites[0]])
        assert [c for i, (_, c) in enumerate(before) if i != index] == [
            c for i, (_, c) in enumerate(after) if i != index
        ]


def test_an_unsupported_claim_is_one_new_cited_sentence_with_a_figure_in_no_source():
    for text, defect, sources, _gold in _seeded(UNSUPPORTED_CLAIM):
        before, after = _pairs(text), _pairs(defect.text)
        index = _target_index(defect)
        assert len(after) == len(before) + 1
        assert after[:index] + after[index + 1 :] == before
        claim, cites = after[index]
        assert len(cites) == 1 and cites[0] in sources
        figures = _numbers(claim) - {"2025", "2026"}
        assert figures and not figures & set().union(*map(_numbers, sources.values()))


def test_a_missed_key_element_removes_only_the_sentences_that_state_it():
    for text, defect, _sources, key_elements in _seeded(MISSED_MANDATORY):
        assert defect.target.startswith("k:")
        element_id = defect.target[2:]
        element = key_elements[element_id]
        before, after = split_sentences(text), split_sentences(defect.text)
        removed = [s for s in before if states_key_element(s.text, element)]
        assert removed and len(after) == len(before) - len(removed)
        assert [(s.text, s.cited_chunk_ids) for s in after] == [
            (s.text, s.cited_chunk_ids) for s in before if s not in removed
        ]
        assert not any(states_key_element(s.text, element) for s in after)
        for other_id, other in key_elements.items():
            if other_id != element_id and any(states_key_element(s.text, other) for s in before):
                assert any(states_key_element(s.text, other) for s in after), other_id
        assert "\n\n\n" not in defect.text and not defect.text.startswith(" ")


def test_states_key_element_needs_the_numbers_and_most_words():
    element = "FY2024 EBITDA of $30.9 million"
    assert states_key_element("For Kestrel, FY2024 EBITDA of $30.9 million.", element)
    assert not states_key_element("For Kestrel, FY2024 EBITDA of $31.9 million.", element)
    assert not states_key_element("EBITDA was $30.9 million in the year.", element)


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_seed_gives_the_same_copy_and_another_seed_may_not(kind):
    first = [d for _t, d, _s, _k in _seeded(kind, seed=11)]
    again = [d for _t, d, _s, _k in _seeded(kind, seed=11)]
    other = [d for _t, d, _s, _k in _seeded(kind, seed=12)]
    assert first == again
    assert first != other


def test_the_worked_example_changes_the_figure_in_the_third_sentence():
    text = (
        "Revenue was $203.9 million [c1]. EBITDA was $30.9 million [c2]. "
        "Borrowings were $117.7 million [c3].\n\nGuidance check: no items flagged."
    )
    sources = {
        "c1": "Revenue was $203.9 million.",
        "c2": "EBITDA was $30.9 million.",
        "c3": "Borrowings were $117.7 million.",
    }
    for seed in range(20):
        defect = seed_defect(
            text, CHANGED_FIGURE, sources=sources, key_elements={}, rng=np.random.default_rng(seed)
        )
        sentence = split_sentences(defect.text)[_target_index(defect)]
        original = split_sentences(text)[_target_index(defect)]
        assert sentence.text != original.text
        assert sentence.cited_chunk_ids == original.cited_chunk_ids
        assert defect.detail.split(" → ")[0] in original.text


def test_a_kind_that_cannot_apply_names_the_argument_at_fault():
    rng = np.random.default_rng(0)
    plain = "The borrower is a logistics company [c1]. It is well run [c1]."
    with pytest.raises(ValueError, match=r"^text"):
        seed_defect(plain, CHANGED_FIGURE, sources={"c1": "x"}, key_elements={}, rng=rng)
    with pytest.raises(ValueError, match=r"^text"):
        seed_defect("No citation here.", CITATION_REMOVED, sources={}, key_elements={}, rng=rng)
    with pytest.raises(ValueError, match=r"^sources"):
        seed_defect(plain, UNSUPPORTED_CLAIM, sources={}, key_elements={}, rng=rng)
    with pytest.raises(ValueError, match=r"^sources"):
        seed_defect(
            plain,
            CITATION_WRONG,
            sources={"c1": "The borrower is a logistics company."},
            key_elements={},
            rng=rng,
        )
    with pytest.raises(ValueError, match=r"^key_elements"):
        seed_defect(
            plain, MISSED_MANDATORY, sources={}, key_elements={"ke1": "Founded 1981"}, rng=rng
        )
    with pytest.raises(ValueError, match=r"^kind"):
        seed_defect(plain, "typo", sources={}, key_elements={}, rng=rng)
