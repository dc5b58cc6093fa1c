"""Make the credit-memo example's workflow outputs, with planted defects and their truth.

For each of the two σ (Gemini 2.5, Llama 4) this writes one output per graded task
(K = 1, as the charter says) to ``outputs-<sigma>.jsonl`` in the outputs JSONL format
(docs/formats.md, "Outputs (JSONL)"), and the ground truth of every planted defect to
``truth-<sigma>.jsonl``, so that later stages (judge calibration, PPI, the gate) can be
checked against known rates.

How an output is built (seeded, deterministic): one sentence per gold key element, stating
it and citing the source chunk that carries its figures; plus irrelevant-but-true sentences
(facts from the permitted sources that the section does not need); then a "Guidance check"
list of the guidance items the draft flags. Defects are planted independently per unit at
the rates below, which follow seed 003 Table 4 for each model:

- unsupported statement: a figure in the sentence is altered (the citation is kept), so the
  sentence is assertive and not supported (hallucination);
- wrong citation: the sentence cites a permitted chunk that does not carry its content;
- missed key element: the sentence is left out;
- guidance: each mandatory item is truly breached with probability 0.4; a breached item is
  flagged with the model's recall, and a sound item is flagged falsely at a rate that gives
  the model's precision.

These are SYNTHETIC outputs for a demonstration, not model outputs; the truth files say
exactly which units are defective. Run ``python -m examples.credit_memo.make_outputs`` to
rewrite them; a test checks the committed files equal what this script produces.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from runs.segment import split_sentences

HERE = Path(__file__).resolve().parent
SEED = 20261129


@dataclass(frozen=True)
class DefectRates:
    unsupported: float
    wrong_citation: float
    missed_key_element: float
    irrelevant_sentences: float  # expected irrelevant sentences per output
    guidance_recall: float
    guidance_false_flag: float
    generation_seconds: float
    cost_per_1k_tokens: float | None  # None: the model is not in the cost map


MODELS: dict[str, DefectRates] = {
    "gemini-2-5": DefectRates(0.016, 0.12, 0.01, 1.2, 0.80, 0.01, 11.0, 0.00125),
    "llama-4": DefectRates(0.032, 0.24, 0.04, 1.6, 0.95, 0.05, 7.5, None),
}
NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")


def tasks() -> list[dict[str, Any]]:
    lines = (HERE / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    return [task for task in map(json.loads, lines) if task["split"] == "graded"]


def chunk_for(text: str, sources: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the source chunk that shares the most figures (then words) with ``text``."""
    numbers = set(NUMBER_RE.findall(text))
    words = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", text)}

    def score(chunk: dict[str, Any]) -> tuple[int, int]:
        chunk_words = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", chunk["text"])}
        return len(numbers & set(NUMBER_RE.findall(chunk["text"]))), len(words & chunk_words)

    return max(sources, key=score)


def alter_figure(text: str, sources: list[dict[str, Any]], rng: np.random.Generator) -> str:
    """Change one figure in ``text`` to a value that no permitted source contains."""
    figures = [m for m in NUMBER_RE.finditer(text) if len(m.group()) != 4 or "." in m.group()]
    if not figures:  # no figure other than a year: add an unsupported claim instead
        return text + ", which was well above the sector median"
    known = {figure for chunk in sources for figure in NUMBER_RE.findall(chunk["text"])}
    match = figures[int(rng.integers(len(figures)))]
    value = float(match.group())
    decimals = len(match.group().split(".")[1]) if "." in match.group() else 0
    for _ in range(50):
        changed = value * (1.0 + float(rng.choice([-1, 1])) * float(rng.uniform(0.08, 0.25)))
        replacement = f"{changed:.{decimals}f}"
        if replacement != match.group() and replacement not in known:
            break
    else:
        raise ValueError(f"no unsupported replacement found for {match.group()!r}")
    return text[: match.start()] + replacement + text[match.end() :]


def lower_first(text: str) -> str:
    """Lower-case the first letter unless the first word is an acronym or a code (FY2024)."""
    first = text.split(" ", 1)[0]
    if len(first) > 1 and (first[1].isupper() or any(c.isdigit() for c in first)):
        return text
    return text[0].lower() + text[1:]


def as_statement(key_element: str, borrower: str) -> str:
    """Turn a gold key element ("Label: detail") into a sentence of the draft."""
    label, _, detail = key_element.partition(":")
    body = f"{label.strip()} is {detail.strip()}" if detail else key_element.strip()
    return f"For {borrower}, {lower_first(body)}"


def not_assertive(position: int) -> dict[str, Any]:
    """Return the truth of a sentence that asserts nothing (a heading, a list of flags)."""
    return {
        "position": position,
        "assertive": False,
        "supported": True,
        "relevant": True,
        "defect": None,
        "cited_chunk_id": None,
        "citation_lenient": None,
    }


def output_for(
    task: dict[str, Any], rates: DefectRates, rng: np.random.Generator
) -> tuple[dict[str, Any], dict[str, Any]]:
    borrower = task["metadata"].get("borrower", "the borrower")
    sources = task["sources"]
    statements: list[dict[str, Any]] = []
    key_truth = {}
    for element in task["key_elements"]:
        if rng.random() < rates.missed_key_element:
            key_truth[element["id"]] = "absent"
            continue
        text = as_statement(element["text"], borrower)
        cited = chunk_for(element["text"], sources)
        supported = True
        if rng.random() < rates.unsupported:
            text = alter_figure(text, sources, rng)
            supported = False
        citation_ok = True
        others = [s for s in sources if s["id"] != cited["id"]]
        if others and rng.random() < rates.wrong_citation:
            cited = others[int(rng.integers(len(others)))]
            citation_ok = False
        key_truth[element["id"]] = "present_correct" if supported else "present_wrong"
        statements.append(
            {
                "text": text,
                "chunk": cited["id"],
                "assertive": True,
                "supported": supported,
                "relevant": True,
                "citation_lenient": citation_ok,
                "defect": None
                if supported and citation_ok
                else ("unsupported" if not supported else "wrong_citation"),
            }
        )
    for _ in range(int(rng.poisson(rates.irrelevant_sentences))):
        chunk = sources[int(rng.integers(len(sources)))]
        fact = re.split(r"(?<=[.;])\s+", chunk["text"])[-1].rstrip(".;")
        statements.append(
            {
                "text": f"As background, {fact[0].lower()}{fact[1:]}",
                "chunk": chunk["id"],
                "assertive": True,
                "supported": True,
                "relevant": False,
                "citation_lenient": True,
                "defect": "irrelevant",
            }
        )
    order = rng.permutation(len(statements))
    statements = [statements[i] for i in order]

    guidance_truth = {}
    flags = []
    for item in task["guidance"]:
        if not item.get("mandatory", True):
            continue
        breached = bool(rng.random() < 0.4)
        flagged = bool(
            rng.random() < (rates.guidance_recall if breached else rates.guidance_false_flag)
        )
        guidance_truth[item["id"]] = {"breached": breached, "flagged": flagged}
        if flagged:
            flags.append(f"- {item['id']} flagged: {item['text']}")

    prose = " ".join(f"{s['text']} [{s['chunk']}]." for s in statements)
    text = prose + (
        "\n\nGuidance check:\n" + "\n".join(flags)
        if flags
        else "\n\nGuidance check: no items flagged."
    )
    sentences = split_sentences(text)
    expected = len(statements) + (len(flags) + 1 if flags else 1)
    if len(sentences) != expected:
        raise ValueError(
            f"{task['id']}: segmentation gave {len(sentences)} sentences, expected {expected}"
        )
    sentence_truth = [
        {
            "position": sentence.position,
            **{k: s[k] for k in ("assertive", "supported", "relevant", "defect")},
            "cited_chunk_id": s["chunk"],
            "citation_lenient": s["citation_lenient"],
        }
        for sentence, s in zip(sentences, statements, strict=False)
    ]
    sentence_truth += [not_assertive(s.position) for s in sentences[len(statements) :]]
    prompt_tokens = (len(task["input"]) + sum(len(s["text"]) for s in sources)) // 4 + 350
    completion_tokens = len(text) // 4
    cost = (
        None
        if rates.cost_per_1k_tokens is None
        else round((prompt_tokens + completion_tokens) / 1000 * rates.cost_per_1k_tokens, 6)
    )
    seconds = round(float(rng.gamma(9.0, rates.generation_seconds / 9.0)), 3)
    output = {
        "task_id": task["id"],
        "repeat": 0,
        "text": text,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "cost_usd": cost,
        "latency_ms": int(seconds * 1000),
        "generation_seconds": seconds,
        "success": True,
    }
    truth = {
        "task_id": task["id"],
        "repeat": 0,
        "sentences": sentence_truth,
        "key_elements": key_truth,
        "guidance": guidance_truth,
    }
    return output, truth


def expected_files() -> dict[str, str]:
    """Return file name → content of every generated outputs and truth file."""
    files = {}
    graded = tasks()
    for index, (sigma, rates) in enumerate(MODELS.items()):
        rng = np.random.default_rng([SEED, index])
        pairs = [output_for(task, rates, rng) for task in graded]
        files[f"outputs-{sigma}.jsonl"] = "".join(
            json.dumps(output, ensure_ascii=False, sort_keys=True) + "\n" for output, _ in pairs
        )
        files[f"truth-{sigma}.jsonl"] = "".join(
            json.dumps(truth, ensure_ascii=False, sort_keys=True) + "\n" for _, truth in pairs
        )
    return files


def main() -> None:
    for name, content in expected_files().items():
        (HERE / name).write_text(content, encoding="utf-8")
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
