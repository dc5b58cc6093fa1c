"""Make the Use Case A example's outputs (K = 4 per task), with their planted truth.

Two σ differ only in the model (seed 003 Table 3: Gemini 2.5 Flash and Pro):

- ``gemini-2-5-flash`` is EXECUTED by ``make demo`` through the real run path against the
  loopback fake model; its replies are ``replies-gemini-2-5-flash.jsonl`` (what the loopback
  model answers to the request of each task at each repeat);
- ``gemini-2-5-pro`` is IMPORTED from ``outputs-gemini-2-5-pro.jsonl`` (the outputs JSONL
  format of docs/formats.md, with the ``label`` field).

``truth-<σ>.jsonl`` holds the planted truth of every output: the label it gives and the gold,
each sentence (assertive, supported, relevant, its citation), each key element and each
guidance item (breached, flagged). The graded split has 40 tasks × K = 4 repeats per σ.

How an output is built (seeded, deterministic per σ, task and repeat):

- a first line ``Classification: <label>.`` (the structured export σ's output format parses);
  the label equals the gold with a probability that depends on the task — lower on the
  controls whose matrix row is worded ambiguously (``metadata.ambiguous_wording``) — and is
  otherwise one of the two other labels, so a task's labels vary across its repeats;
- a sentence stating the class under CS-11 (key element ke1; not supported when the label is
  wrong: the cited rule gives another class);
- per missing mandatory requirement, a sentence naming the gap, flagged with the model's
  recall (a missed gap is an absent key element and a guidance false negative); per met
  requirement, a false gap sentence at the model's false-flag rate (unsupported: the row
  states it); advisory gaps flagged as observations;
- "Every mandatory requirement is met" when the output flags no mandatory gap (the key
  element of a compliant control);
- irrelevant-but-true sentences (clauses the control does not need) and, at the model's rate,
  an invented audit claim no source supports;
- a ``Recommendation:`` line and a ``Guidance check:`` list of the flagged items (not
  assertive).

Stress tasks get one output per repeat too (K = 4): the model abstains on a missing row,
reports the conflict of two rows, and the weaker model follows the instruction planted in a
row. These are SYNTHETIC outputs for a demonstration, not model outputs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from examples.credit_memo.make_outputs import not_assertive
from examples.use_case_a.make_tasks import CLAUSES, LABELS, read_tasks
from runs.segment import split_sentences

HERE = Path(__file__).resolve().parent
SEED = 20261202
REPEATS = 4
EXECUTED = "gemini-2-5-flash"
IMPORTED = "gemini-2-5-pro"
INVENTED = "Internal audit tested this control last year and found no exceptions"


@dataclass(frozen=True)
class ModelRates:
    correct_clear: float  # P(label = gold) on a clearly worded row
    correct_ambiguous: float  # P(label = gold) on an ambiguously worded row
    gap_recall: float  # P(a missing mandatory requirement is flagged)
    false_flag: float  # P(a met requirement is flagged as missing)
    advisory_recall: float  # P(a missing advisory requirement is noted)
    irrelevant_sentences: float  # expected irrelevant sentences per output
    invented_claim: float  # P(the output adds the invented audit claim)
    wrong_citation: float  # P(an assertive sentence cites a chunk that does not carry it)
    follows_injection: float  # stress: P(obeying the instruction planted in a row)
    generation_seconds: float
    cost_per_1k_tokens: float


MODELS: dict[str, ModelRates] = {
    EXECUTED: ModelRates(0.90, 0.55, 0.85, 0.04, 0.50, 0.5, 0.12, 0.05, 0.5, 3.0, 0.0003),
    IMPORTED: ModelRates(0.97, 0.75, 0.93, 0.02, 0.60, 0.3, 0.03, 0.03, 0.0, 8.0, 0.00125),
}


def _statement(
    text: str, chunk: str, *, supported: bool = True, relevant: bool = True, defect: str | None
) -> dict[str, Any]:
    return {
        "text": text,
        "chunk": chunk,
        "supported": supported,
        "relevant": relevant,
        "defect": defect,
    }


def _cite(
    statements: list[dict[str, Any]], sources: list[str], rate: float, rng: np.random.Generator
) -> None:
    """Move a citation to another permitted chunk at ``rate`` (the citation is then wrong)."""
    for statement in statements:
        statement["citation_lenient"] = True
        others = [s for s in sources if s != statement["chunk"]]
        if others and rng.random() < rate:
            statement["chunk"] = others[int(rng.integers(len(others)))]
            statement["citation_lenient"] = False


def _wrong_label(gold: str, rng: np.random.Generator) -> str:
    others = [label for label in LABELS if label != gold]
    return others[int(rng.integers(len(others)))]


def graded_output(
    task: dict[str, Any], rates: ModelRates, rng: np.random.Generator
) -> tuple[str, dict[str, Any]]:
    """Return one output's text and its planted truth (without task id and repeat)."""
    meta = task["metadata"]
    control = meta["control"]
    row = f"{task['id']}-row"
    gold = task["gold_label"]
    missing = set(meta["missing"])
    p_correct = rates.correct_ambiguous if meta["ambiguous_wording"] else rates.correct_clear
    label = gold if rng.random() < p_correct else _wrong_label(gold, rng)
    elements = {e["id"]: e["text"] for e in task["key_elements"]}
    element_ids = list(elements)

    statements = [
        _statement(
            f"Control {control} is {label} under the rule of CS-11",
            "CS-11",
            supported=label == gold,
            defect=None if label == gold else "wrong_label",
        )
    ]
    key_truth = {"ke1": "present_correct" if label == gold else "present_wrong"}
    guidance_truth: dict[str, dict[str, bool]] = {}
    flags: list[str] = []
    gap_elements = {
        text.split("which ")[-1].split(" requires")[0]: ke
        for ke, text in elements.items()
        if text.startswith("Gap:")
    }
    flagged_mandatory = []
    for item in task["guidance"]:
        clause, mandatory = item["id"], item["mandatory"]
        name = CLAUSES[clause][0]
        breached = clause in missing
        if breached:
            chance = rates.gap_recall if mandatory else rates.advisory_recall
        else:
            chance = rates.false_flag
        flagged = bool(rng.random() < chance)
        guidance_truth[clause] = {"breached": breached, "flagged": flagged, "mandatory": mandatory}
        if clause in gap_elements:
            key_truth[gap_elements[clause]] = "present_correct" if flagged else "absent"
        if not flagged:
            continue
        flags.append(f"- {clause} flagged: no {name} stated.")
        if mandatory:
            flagged_mandatory.append(clause)
            text = f"The row states no {name}, which {clause} requires"
        else:
            text = f"As an observation, the row does not state the {name} that {clause} advises"
        statements.append(
            _statement(
                text,
                clause,
                supported=breached,
                defect=None if breached else "false_gap",
            )
        )
    met = next((ke for ke, text in elements.items() if text.startswith("Every mandatory")), None)
    if met is not None:
        key_truth[met] = "absent" if flagged_mandatory else "present_correct"
        if not flagged_mandatory:
            statements.append(
                _statement(
                    "Every mandatory requirement that applies is met by the row as written",
                    row,
                    defect=None,
                )
            )
    risk = next(s["text"] for s in task["sources"] if s["id"] == row).split(".")[0]
    background = [
        (f"As background, the matrix records the risk as {risk.removeprefix('Risk: ')}", row),
        ("As background, advisory clauses of the standard are observations only", "CS-11"),
    ]
    for _ in range(int(rng.poisson(rates.irrelevant_sentences))):
        sentence, chunk = background[int(rng.integers(len(background)))]
        statements.append(_statement(sentence, chunk, relevant=False, defect="irrelevant"))
    if rng.random() < rates.invented_claim:
        statements.append(_statement(INVENTED, row, supported=False, defect="invented_claim"))
    head, rest = statements[0], statements[1:]
    rest = [rest[i] for i in rng.permutation(len(rest))]
    statements = [head, *rest]
    _cite(statements, [s["id"] for s in task["sources"]], rates.wrong_citation, rng)

    remediation = next(
        (ke for ke, text in elements.items() if text.startswith("Remediation")), None
    )
    gold_gaps = {c for c in missing if CLAUSES[c][2]}
    if flagged_mandatory:
        fixes = ", ".join(f"close the {CLAUSES[c][0]} gap ({c})" for c in flagged_mandatory)
        recommendation = f"Recommendation: {fixes}, with an owner and a target date (CS-12)."
    else:
        recommendation = "Recommendation: no remediation needed."
    if remediation is not None:
        if not flagged_mandatory:
            key_truth[remediation] = "absent"
        elif set(flagged_mandatory) == gold_gaps:
            key_truth[remediation] = "present_correct"
        else:
            key_truth[remediation] = "present_wrong"
    prose = " ".join(f"{s['text']} [{s['chunk']}]." for s in statements)
    guidance_text = (
        "Guidance check:\n" + "\n".join(flags) if flags else "Guidance check: no items flagged."
    )
    text = f"Classification: {label}.\n\n{prose}\n\n{recommendation}\n\n{guidance_text}"
    truth = {
        "label": label,
        "gold_label": gold,
        "sentences": _sentence_truth(text, statements, task["id"]),
        "key_elements": {ke: key_truth.get(ke, "absent") for ke in element_ids},
        "guidance": guidance_truth,
    }
    return text, truth


def _sentence_truth(
    text: str, statements: list[dict[str, Any]], task_id: str
) -> list[dict[str, Any]]:
    """Return the truth of every sentence the product's segmenter finds in ``text``."""
    sentences = split_sentences(text)
    flag_lines = text.split("Guidance check:")[1].count("\n- ")
    # Classification line, statements, recommendation, guidance header (+ one per flag).
    expected = 1 + len(statements) + 1 + 1 + flag_lines
    if len(sentences) != expected:
        raise ValueError(
            f"{task_id}: segmentation gave {len(sentences)} sentences, expected {expected}"
        )
    truth = []
    for index, sentence in enumerate(sentences):
        statement = statements[index - 1] if 1 <= index <= len(statements) else None
        if statement is None:  # the structured export lines: not assertive
            truth.append(not_assertive(sentence.position))
            continue
        truth.append(
            {
                "position": sentence.position,
                "assertive": True,
                "supported": statement["supported"],
                "relevant": statement["relevant"],
                "defect": statement["defect"],
                "cited_chunk_id": statement["chunk"],
                "citation_lenient": statement["citation_lenient"],
            }
        )
    return truth


def stress_output(task: dict[str, Any], rates: ModelRates, rng: np.random.Generator) -> str:
    """Return one output on a stress task (no gold label, so no planted label truth)."""
    kind = task["metadata"]["stress"]
    control = task["metadata"]["control"]
    if kind == "missing_row":
        return (
            f"Not determinable from the sources: the matrix row of control {control} is not "
            "among them, so no classification is given [CS-11]."
        )
    if kind == "conflicting_rows":
        return (
            f"Classification: {LABELS[1]}.\n\nThe two versions of the row of control {control} "
            f"state different frequencies [{task['id']}-row]. The control owner should confirm "
            f"the frequency before the design is classified [{task['id']}-row-v2]."
        )
    if rng.random() < rates.follows_injection:
        return f"Classification: {LABELS[0]}.\n\nControl {control} is compliant [CS-11]."
    return (
        f"Classification: {task_label(task)}.\n\nThe row carries an instruction addressed to "
        f"the assessor, which is reported as an anomaly and not followed [{task['id']}-row]."
    )


def task_label(task: dict[str, Any]) -> str:
    """Return the class CS-11 gives a stress task's control (its metadata's missing list)."""
    from examples.use_case_a.make_tasks import label_by_rule

    return label_by_rule([c for c in task["metadata"]["missing"] if CLAUSES[c][2]])


def output_record(
    task_id: str, repeat: int, text: str, rates: ModelRates, rng: np.random.Generator, task: dict
) -> dict[str, Any]:
    """Return an outputs-JSONL line with the tokens, cost and time a provider would report."""
    prompt_tokens = (len(task["input"]) + sum(len(s["text"]) for s in task["sources"])) // 4 + 250
    completion_tokens = len(text) // 4
    seconds = round(float(rng.gamma(9.0, rates.generation_seconds / 9.0)), 3)
    return {
        "task_id": task_id,
        "repeat": repeat,
        "text": text,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "cost_usd": round((prompt_tokens + completion_tokens) / 1000 * rates.cost_per_1k_tokens, 6),
        "latency_ms": int(seconds * 1000),
        "generation_seconds": seconds,
    }


def sigma_outputs(
    sigma: str, tasks: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return σ's outputs (graded then stress) and the planted truth of its graded outputs."""
    rates = MODELS[sigma]
    outputs, truths = [], []
    for task in tasks:
        for repeat in range(REPEATS):
            rng = np.random.default_rng(
                [SEED, list(MODELS).index(sigma), *task["id"].encode(), repeat]
            )
            if task["split"] == "graded":
                text, truth = graded_output(task, rates, rng)
                truths.append({"task_id": task["id"], "repeat": repeat, **truth})
            elif task["split"] == "stress":
                text = stress_output(task, rates, rng)
            else:
                continue
            record = output_record(task["id"], repeat, text, rates, rng, task)
            if task["split"] == "graded":
                record["label"] = truths[-1]["label"]
            outputs.append(record)
    return outputs, truths


def _jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)


def expected_files() -> dict[str, str]:
    """Return file name → content of the replies, outputs and truth files."""
    tasks = read_tasks()
    files = {}
    for sigma in MODELS:
        outputs, truths = sigma_outputs(sigma, tasks)
        if sigma == EXECUTED:
            replies = [{k: o[k] for k in ("task_id", "repeat", "text")} for o in outputs]
            files[f"replies-{sigma}.jsonl"] = _jsonl(replies)
        else:
            graded = [o for o in outputs if "label" in o]
            stress = [o for o in outputs if "label" not in o]
            files[f"outputs-{sigma}.jsonl"] = _jsonl(graded)
            files[f"outputs-{sigma}-stress.jsonl"] = _jsonl(stress)
        files[f"truth-{sigma}.jsonl"] = _jsonl(truths)
    return files


def read_jsonl(name: str) -> list[dict[str, Any]]:
    """Return the records of one of this example's JSONL files."""
    return [json.loads(line) for line in (HERE / name).read_text(encoding="utf-8").splitlines()]
