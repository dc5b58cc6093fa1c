"""The credit-memo example outputs: reproducible, aligned with their truth, defects as planted."""

import json
from pathlib import Path

from examples.credit_memo import make_outputs
from runs.segment import split_sentences

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"


def load(name: str) -> list[dict]:
    return [json.loads(line) for line in (EXAMPLE / name).read_text().splitlines()]


def test_the_committed_outputs_and_truth_are_what_the_generator_makes():
    for name, content in make_outputs.expected_files().items():
        assert (EXAMPLE / name).read_text(encoding="utf-8") == content, name


def test_every_truth_sentence_is_a_sentence_of_its_output():
    for sigma in make_outputs.MODELS:
        outputs = load(f"outputs-{sigma}.jsonl")
        truths = load(f"truth-{sigma}.jsonl")
        assert len(outputs) == len(truths) >= 60
        for output, truth in zip(outputs, truths, strict=True):
            assert output["task_id"] == truth["task_id"]
            sentences = split_sentences(output["text"])
            assert [s["position"] for s in truth["sentences"]] == [s.position for s in sentences]
            for sentence, fact in zip(sentences, truth["sentences"], strict=True):
                if fact["cited_chunk_id"] is not None:
                    assert sentence.cited_chunk_ids == (fact["cited_chunk_id"],)


def test_planted_defects_differ_by_model_in_the_direction_of_table_4():
    def hallucination_rate(sigma: str) -> float:
        facts = [f for t in load(f"truth-{sigma}.jsonl") for f in t["sentences"] if f["assertive"]]
        return sum(not f["supported"] for f in facts) / len(facts)

    def guidance_recall(sigma: str) -> float:
        items = [g for t in load(f"truth-{sigma}.jsonl") for g in t["guidance"].values()]
        breached = [g for g in items if g["breached"]]
        return sum(g["flagged"] for g in breached) / len(breached)

    assert 0 < hallucination_rate("gemini-2-5") < 0.05
    assert 0 < hallucination_rate("llama-4") < 0.06
    assert guidance_recall("llama-4") > guidance_recall("gemini-2-5")


def test_an_unsupported_sentence_carries_a_figure_no_cited_source_has():
    tasks = {t["id"]: t for t in make_outputs.tasks()}
    outputs = {o["task_id"]: o for o in load("outputs-llama-4.jsonl")}
    found = 0
    for truth in load("truth-llama-4.jsonl"):
        sentences = split_sentences(outputs[truth["task_id"]]["text"])
        chunks = {c["id"]: c["text"] for c in tasks[truth["task_id"]]["sources"]}
        for sentence, fact in zip(sentences, truth["sentences"], strict=True):
            if fact["defect"] == "unsupported":
                found += 1
                figures = make_outputs.NUMBER_RE.findall(sentence.text)
                known = set(make_outputs.NUMBER_RE.findall(" ".join(chunks.values())))
                unsupported_claim = "above the sector median" in sentence.text
                assert unsupported_claim or any(f not in known for f in figures)
    assert found > 0
