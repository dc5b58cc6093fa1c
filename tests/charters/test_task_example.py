"""The credit-memo example task set: reproducible from its generator and importable."""

from __future__ import annotations

import json
import re
from collections import Counter

from charters.services.task_sets import task_set_import
from charters.task_import import check_task_file
from examples.credit_memo import make_tasks

MONEY = re.compile(r"\$[\d,]+\.\d million")


def committed() -> list[dict]:
    with make_tasks.OUTPUT.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def test_the_committed_file_is_what_the_generator_writes():
    assert make_tasks.OUTPUT.read_text(encoding="utf-8") == make_tasks.render(
        make_tasks.make_tasks()
    )


def test_the_generator_is_deterministic_and_the_seed_matters():
    assert make_tasks.make_tasks() == make_tasks.make_tasks()
    assert make_tasks.make_tasks(seed=1) != make_tasks.make_tasks()


def test_the_splits_have_the_planned_sizes_and_every_graded_section_type():
    tasks = committed()
    splits = Counter(t["split"] for t in tasks)
    assert splits == {"graded": 65, "dev": 12, "stress": 12}
    graded_sections = Counter(t["metadata"]["section"] for t in tasks if t["split"] == "graded")
    assert set(graded_sections) == {key for key, _ in make_tasks.SECTIONS}
    assert len(graded_sections) == 13
    assert set(graded_sections.values()) == {5}


def test_dev_and_graded_borrowers_are_disjoint():
    tasks = committed()
    dev = {t["metadata"]["borrower"] for t in tasks if t["split"] == "dev"}
    graded = {t["metadata"]["borrower"] for t in tasks if t["split"] == "graded"}
    assert dev and graded and not dev & graded


def test_stress_tasks_cover_missing_conflicting_and_not_determinable_sources():
    stress = [t for t in committed() if t["split"] == "stress"]
    kinds = Counter(t["metadata"]["stress"] for t in stress)
    assert kinds == {"missing_source": 4, "conflicting_sources": 4, "not_determinable": 4}
    for t in stress:
        abstains = t["metadata"]["stress"] in {"missing_source", "not_determinable"}
        assert t.get("expected_abstention", False) is abstains, t["id"]
    for t in stress:
        if t["metadata"]["stress"] == "missing_source":
            missing = t["metadata"]["missing_chunk"]
            assert missing.startswith(t["id"].split("-")[0] + "-")
            assert missing not in {s["id"] for s in t["sources"]}


def test_every_amount_in_a_graded_key_element_is_in_the_task_sources():
    for t in committed():
        if t["split"] != "graded":
            continue
        sources = " ".join(s["text"] for s in t["sources"])
        for element in t["key_elements"]:
            for amount in MONEY.findall(element["text"]):
                if "Undrawn" in element["text"] or "Available" in element["text"]:
                    continue  # derived: cash + revolver size − drawn
                assert amount in sources, (t["id"], element["text"], amount)


def test_the_example_imports_cleanly(personas):
    report = check_task_file(make_tasks.OUTPUT.open("rb"))
    assert report.ok, report.errors
    with make_tasks.OUTPUT.open("rb") as fileobj:
        task_set = task_set_import(
            actor=personas.owner,
            use_case=personas.use_case,
            name="credit-memo",
            fileobj=fileobj,
            filename="tasks.jsonl",
        )
    assert task_set.split_counts == {"dev": 12, "graded": 65, "stress": 12}
    assert task_set.tasks.filter(expected_abstention=True).count() == 8
