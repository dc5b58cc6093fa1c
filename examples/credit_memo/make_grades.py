"""Simulated expert graders and oversight reviewers for the credit-memo example.

The outputs of ``make_outputs.py`` come with the truth of every unit (``truth-<sigma>.jsonl``).
Here three graders grade from that truth with KNOWN error rates (2 %, 3 % and 5 % per field,
what careful domain experts achieve on a clear rubric), so the agreement the
product computes (Cohen's κ, Krippendorff's α) and the catch rate of the oversight study
have a truth to compare with:

- each grader answers every rubric field of every unit (SPEC §5.1) with the true label,
  except that with probability ``error_rate`` they pick one of the other labels uniformly;
- each grader spends a log-normal time per artefact (median ``median_seconds``);
- an oversight reviewer catches a seeded defect (rejects the copy and marks where it is)
  with probability ``catch_rate`` and rejects a clean copy with ``false_alarm_rate``.

The true labels follow the planted defects: an altered figure is assertive and not
supported; a wrong citation is "not" used, other citations "strict"; the "Guidance check"
lines are not assertive; a guidance item is TP/FP/FN/correct from its truth (breached,
flagged); an item's severity is fixed per credit-policy item; value-add is 2 for a clean
draft, 1 with one defect and 0 with more. Everything is seeded: the same inputs give the
same grades. These are SYNTHETIC graders for a demonstration.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grading.rubric import ARTEFACT_KEY, FIELDS_BY_KIND, FIELDS_BY_NAME, is_asked, unit_kind_of

HERE = Path(__file__).resolve().parent
SEED = 20261130


@dataclass(frozen=True)
class SimulatedGrader:
    username: str
    error_rate: float
    median_seconds: float


@dataclass(frozen=True)
class SimulatedReviewer:
    username: str
    catch_rate: float
    false_alarm_rate: float


GRADERS = (
    SimulatedGrader("demo-grader", 0.02, 240.0),
    SimulatedGrader("demo-grader-2", 0.03, 200.0),
    SimulatedGrader("demo-grader-3", 0.05, 150.0),
)
REVIEWERS = (
    SimulatedReviewer("demo-grader-2", 0.75, 0.05),
    SimulatedReviewer("demo-grader-3", 0.60, 0.10),
)
SEVERITY = {
    "CP-01": "medium",
    "CP-02": "high",
    "CP-03": "high",
    "CP-04": "high",
    "CP-05": "medium",
    "CP-06": "low",
    "CP-07": "low",
    "CP-08": "medium",
    "CP-09": "high",
    "CP-10": "low",
}


def truth_records(sigma: str) -> dict[tuple[str, int], dict[str, Any]]:
    """Return the planted truth of one σ's outputs by (task id, repeat)."""
    return read_truth(HERE / f"truth-{sigma}.jsonl")


@functools.cache
def read_truth(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Return the planted truth records of a truth file by (task id, repeat)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return {(r["task_id"], r["repeat"]): r for r in map(json.loads, lines)}


@functools.cache
def task_guidance() -> dict[str, list[str]]:
    """Return every task's guidance item ids (mandatory or not), in file order."""
    lines = (HERE / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    return {t["id"]: [g["id"] for g in t["guidance"]] for t in map(json.loads, lines)}


def true_grades(
    record: Mapping[str, Any],
    guidance_ids: Sequence[str],
    severity: Mapping[str, str] = SEVERITY,
) -> dict[str, dict[str, str]]:
    """Return the true rubric labels of every unit of one output.

    ``severity`` gives each guidance item's severity (medium where it gives none).
    """
    grades: dict[str, dict[str, str]] = {}
    defects = 0
    for sentence in record["sentences"]:
        key = f"s{sentence['position']}"
        assertive = bool(sentence["assertive"])
        grades[key] = {
            "assertive": "Y" if assertive else "N",
            "relevant": "Y" if sentence["relevant"] else "N",
        }
        grades[key]["supported"] = "fully" if sentence["supported"] else "not"
        if sentence["cited_chunk_id"]:
            citation = "strict" if sentence["citation_lenient"] else "not"
            grades[f"c{sentence['position']}:{sentence['cited_chunk_id']}"] = {"citation": citation}
        defects += not sentence["supported"] or sentence["citation_lenient"] is False
    for element_id, label in record["key_elements"].items():
        grades[f"k:{element_id}"] = {"key_element": label}
        defects += label != "present_correct"
    for item_id in guidance_ids:
        truth = record["guidance"].get(item_id, {"breached": False, "flagged": False})
        label = {
            (True, True): "TP",
            (False, True): "FP",
            (True, False): "FN",
            (False, False): "correct",
        }[(bool(truth["breached"]), bool(truth["flagged"]))]
        grades[f"g:{item_id}"] = {"guidance": label, "severity": severity.get(item_id, "medium")}
        defects += label in ("FP", "FN")
    grades[ARTEFACT_KEY] = {"value_add": "2" if defects == 0 else "1" if defects == 1 else "0"}
    return grades


def simulate(
    truth: Mapping[str, Mapping[str, str]], error_rate: float, rng: np.random.Generator
) -> dict[str, dict[str, str]]:
    """Return one grader's answers: the truth, each field flipped with ``error_rate``.

    Fields are answered in rubric order, so a sentence graded "not assertive" is not asked
    whether it is supported, exactly as in the workspace.
    """
    answers: dict[str, dict[str, str]] = {}
    for key, labels in truth.items():
        unit: dict[str, str] = {}
        for spec in FIELDS_BY_KIND[unit_kind_of(key)]:
            if not is_asked(spec.name, unit):
                continue
            value = labels.get(spec.name, spec.values[0])
            if rng.random() < error_rate:
                others = [v for v in spec.values if v != value]
                value = others[int(rng.integers(len(others)))]
            unit[spec.name] = value
        answers[key] = unit
    return answers


def grader_answers(
    grader: SimulatedGrader, sigma: str, task_id: str, repeat: int
) -> tuple[dict[str, dict[str, str]], float]:
    """Return what ``grader`` answers on one output, and the seconds they take."""
    record = truth_records(sigma)[(task_id, repeat)]
    return answers_from_truth(
        grader, true_grades(record, task_guidance()[task_id]), sigma, task_id, repeat
    )


def answers_from_truth(
    grader: SimulatedGrader, truth: Mapping[str, Mapping[str, str]], *key: object
) -> tuple[dict[str, dict[str, str]], float]:
    """Return what ``grader`` answers on an output whose true labels are ``truth``, and the
    seconds they take; ``key`` (σ, task id, repeat) seeds the grader's draws."""
    rng = _rng(grader.username, *key)
    seconds = float(grader.median_seconds * np.exp(rng.normal(0.0, 0.35)))
    return simulate(truth, grader.error_rate, rng), round(seconds, 1)


def reviewer_decision(
    reviewer: SimulatedReviewer, item_key: str, targets: Sequence[str]
) -> tuple[str, list[str], float]:
    """Return a reviewer's decision, flags and seconds on one oversight item.

    ``targets`` are the unit keys of the item's seeded defects (empty for a clean copy).
    """
    rng = _rng(reviewer.username, "oversight", item_key, 0)
    seconds = round(float(180.0 * np.exp(rng.normal(0.0, 0.3))), 1)
    caught = [t for t in targets if rng.random() < reviewer.catch_rate]
    if caught:
        return "reject", caught, seconds
    if not targets and rng.random() < reviewer.false_alarm_rate:
        return "reject", [], seconds
    return "accept", [], seconds


def _rng(*parts: object) -> np.random.Generator:
    text = "|".join(str(p) for p in parts)
    return np.random.default_rng([SEED, *text.encode("utf-8")])


def expected_agreement_draws(
    truths: Sequence[Mapping[str, Mapping[str, str]]],
    pairs: Sequence[Sequence[SimulatedGrader]],
    fields: Sequence[str],
    *,
    draws: int = 200,
    seed: int = SEED,
) -> dict[str, np.ndarray]:
    """Return Krippendorff's α of each field over many re-simulations of the same design.

    ``truths[i]`` are the true labels of artefact i and ``pairs[i]`` the graders who grade
    it. Each draw re-simulates every grader's answers; the spread of the draws is the
    sampling error within which the α observed on one simulation should fall.
    """
    from enterpriseval.stats import krippendorff_alpha

    rng = np.random.default_rng(seed)
    width = max(len(pair) for pair in pairs)
    results = {field: np.empty(draws) for field in fields}
    for d in range(draws):
        columns: dict[str, list[list[float]]] = {f: [[] for _ in range(width)] for f in fields}
        for truth, pair in zip(truths, pairs, strict=True):
            answers = [simulate(truth, grader.error_rate, rng) for grader in pair]
            for key in truth:
                for field in fields:
                    domain = FIELDS_BY_NAME[field].values
                    values = [a.get(key, {}).get(field) for a in answers]
                    if all(v is None for v in values):
                        continue
                    values += [None] * (width - len(values))
                    for column, value in zip(columns[field], values, strict=True):
                        column.append(np.nan if value is None else float(domain.index(value)))
        for field in fields:
            spec = FIELDS_BY_NAME[field]
            results[field][d] = krippendorff_alpha(
                np.array(columns[field], dtype=float),
                level=spec.level,
                value_domain=list(range(len(spec.values))),
            )
    return results
