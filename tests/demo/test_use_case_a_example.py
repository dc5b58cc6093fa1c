"""The Use Case A example (seed 003 §7.1): generated files, gold and the planted figures.

The figures are pinned to a hand calculation from the truth files (counted here, and checked
against scikit-learn and an enumeration of repeat subsets), not to the product's estimators.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from pathlib import Path

import pytest
from sklearn.metrics import accuracy_score, f1_score
from use_case_a_hand import EXPECTED, HAND, hand_figures

from examples.use_case_a import generate, make_outputs, make_tasks
from examples.use_case_a.make_tasks import CLAUSES, LABELS, label_by_rule
from examples.use_case_a.planted import planted

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "use_case_a"
SIGMAS = (make_outputs.EXECUTED, make_outputs.IMPORTED)


def truth(sigma: str) -> list[dict]:
    lines = (EXAMPLE / f"truth-{sigma}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_the_committed_files_are_what_the_generators_make():
    for name, content in generate.expected_files().items():
        assert (EXAMPLE / name).read_text(encoding="utf-8") == content, name


def test_the_same_seed_gives_the_same_task_bytes_and_another_seed_other_tasks():
    # The committed files were written by an earlier run of the generators, so the test
    # above already shows that the same seeds give the same bytes for every file.
    first = make_tasks.render(make_tasks.make_tasks())
    assert make_tasks.render(make_tasks.make_tasks()) == first
    assert make_tasks.render(make_tasks.make_tasks(seed=make_tasks.SEED + 1)) != first


def test_the_task_set_has_forty_graded_controls_over_four_matrices_with_gold_by_the_rule():
    lines = (EXAMPLE / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"label_set": list(LABELS)}
    tasks = [json.loads(line) for line in lines[1:]]
    graded = [t for t in tasks if t["split"] == "graded"]
    assert len(graded) == 40
    assert len({t["metadata"]["matrix"] for t in graded}) == 4
    assert {t["split"] for t in tasks} == {"graded", "dev", "stress"}
    clauses = {s["id"] for t in tasks for s in t["sources"] if s["id"].startswith("CS-")}
    assert clauses <= set(CLAUSES) and len(CLAUSES) == 12
    for task in graded:
        mandatory = [c for c in task["metadata"]["missing"] if CLAUSES[c][2]]
        assert task["gold_label"] == label_by_rule(mandatory), task["id"]
        row = next(s for s in task["sources"] if s["id"] == f"{task['id']}-row")
        if "CS-01" in mandatory:  # the row names no owner
            assert "ensures that" not in row["text"]
        assert any(not g["mandatory"] for g in task["guidance"]) or task["metadata"]["kind"]
    assert {t["gold_label"] for t in graded} == set(LABELS)
    assert all("gold_label" not in t for t in tasks if t["split"] == "stress")


@pytest.mark.parametrize("sigma", SIGMAS)
def test_labels_vary_across_repeats_and_every_output_has_its_truth(sigma):
    records = truth(sigma)
    assert len(records) == 160
    labels = defaultdict(set)
    for record in records:
        labels[record["task_id"]].add(record["label"])
    assert sum(len(v) > 1 for v in labels.values()) >= 5
    replies_or_outputs = (
        f"replies-{sigma}.jsonl" if sigma == make_outputs.EXECUTED else f"outputs-{sigma}.jsonl"
    )
    lines = (EXAMPLE / replies_or_outputs).read_text(encoding="utf-8").splitlines()
    texts = {(o["task_id"], o["repeat"]): o["text"] for o in map(json.loads, lines)}
    for record in records:
        text = texts[(record["task_id"], record["repeat"])]
        assert text.startswith(f"Classification: {record['label']}.\n")


@pytest.mark.parametrize("sigma", SIGMAS)
def test_accuracy_macro_f1_and_pass_k_equal_the_hand_calculation(sigma):
    records = truth(sigma)
    hand = HAND[sigma]
    # The pinned counts are the truth files' counts: labels at the first repeat ...
    first = [r for r in records if r["repeat"] == 0]
    gold = [r["gold_label"] for r in first]
    given = [r["label"] for r in first]
    assert sum(g == p for g, p in zip(gold, given, strict=True)) == hand["correct_first"]
    for label, (tp, fp, fn) in hand["counts_first"].items():
        assert sum(g == p == label for g, p in zip(gold, given, strict=True)) == tp
        assert sum(p == label != g for g, p in zip(gold, given, strict=True)) == fp
        assert sum(g == label != p for g, p in zip(gold, given, strict=True)) == fn
    # ... and successes over the four repeats of each task.
    by_task = defaultdict(list)
    for record in records:
        by_task[record["task_id"]].append(record["label"] == record["gold_label"])
    tasks_by_c = defaultdict(int)
    for repeats in by_task.values():
        assert len(repeats) == 4
        tasks_by_c[sum(repeats)] += 1
    assert dict(tasks_by_c) == hand["tasks_by_c"]

    figures = hand_figures(sigma)
    assert figures == pytest.approx(EXPECTED[sigma], abs=1e-9)
    # A reference library agrees on accuracy and macro-F1.
    assert 100 * accuracy_score(gold, given) == pytest.approx(figures["classification_accuracy"])
    macro = 100 * f1_score(gold, given, labels=list(LABELS), average="macro", zero_division=0)
    assert macro == pytest.approx(figures["classification_macro_f1"])
    # pass^k as the share of k-subsets of a task's repeats that all succeed, enumerated.
    for k in (1, 2, 4):
        shares = [
            sum(all(c) for c in itertools.combinations(v, k))
            / len(list(itertools.combinations(v, k)))
            for v in by_task.values()
        ]
        assert 100 * sum(shares) / len(shares) == pytest.approx(figures[f"pass^{k}"])
    # What the demo prints beside the estimates is this calculation.
    printed = planted(sigma)
    for key, value in figures.items():
        assert printed[key] == pytest.approx(value)


def test_guidance_recall_counts_mandatory_items_only():
    records = truth(make_outputs.IMPORTED)
    items = [g for r in records for g in r["guidance"].values()]
    missing_mandatory = [g for g in items if g["breached"] and g["mandatory"]]
    missing_advisory = [g for g in items if g["breached"] and not g["mandatory"]]
    assert missing_advisory, "the example must have advisory gaps for the rule to matter"
    recall = 100 * sum(g["flagged"] for g in missing_mandatory) / len(missing_mandatory)
    assert planted(make_outputs.IMPORTED)["guidance_recall"] == pytest.approx(recall)
