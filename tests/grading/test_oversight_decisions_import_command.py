"""``enterpriseval oversight_decisions_import``: a reviewer's decisions from a file, all or
nothing, checked as ``POST /api/v1/oversight/items/<id>/decision/`` checks one decision."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry
from grading.models import OversightItem, OversightStudy
from grading.selectors.oversight import oversight_results
from grading.services import oversight as oversight_services
from grading.services.oversight import oversight_study_close, oversight_study_create

SEED = 7


@pytest.fixture
def study(grading_world) -> OversightStudy:
    return oversight_study_create(
        actor=grading_world.owner,
        use_case=grading_world.use_case,
        name="Memo review",
        runs=grading_world.runs,
        reviewers=grading_world.graders[:2],
        items_per_reviewer=4,
        defect_share=0.5,
        seed=SEED,
    )


def items_of(study, reviewer) -> list[OversightItem]:
    return list(OversightItem.objects.filter(study=study, reviewer=reviewer).order_by("position"))


def write(path: Path, *lines: object) -> str:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )
    return str(path)


def run(path: str, actor: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "oversight_decisions_import", f"--file={path}", f"--as={actor}", stdout=out, stderr=err
    )
    return out.getvalue(), err.getvalue()


def refused(path: str, actor: str) -> tuple[str, list[str]]:
    err = io.StringIO()
    with pytest.raises(CommandError) as error:
        call_command(
            "oversight_decisions_import",
            f"--file={path}",
            f"--as={actor}",
            stdout=io.StringIO(),
            stderr=err,
        )
    assert error.value.returncode == 2
    return str(error.value), err.getvalue().splitlines()


def state(study) -> list[tuple]:
    return list(
        OversightItem.objects.filter(study=study)
        .order_by("pk")
        .values_list("decision", "flags", "comment", "seconds_spent", "decided_at")
    )


def decisions_logged() -> int:
    return AuditEntry.objects.filter(
        action__in=["oversight_item.decide", "oversight_item.revise", "oversight_decisions.import"]
    ).count()


def test_it_records_each_decision_with_its_time_and_one_import_entry(
    grading_world, study, tmp_path
):
    reviewer = grading_world.graders[0]
    queue = items_of(study, reviewer)
    seeded = next(item for item in queue if item.defects)
    clean = next(item for item in queue if not item.defects)
    rest = [item for item in queue if item not in (seeded, clean)]
    target = seeded.defects[0]["target"]
    path = write(
        tmp_path / "decisions.jsonl",
        {"item": seeded.public_id, "decision": "reject", "flags": [target], "elapsed_seconds": 30},
        {
            "item": clean.public_id,
            "decision": "accept",
            "comment": " Fine. ",
            "elapsed_seconds": 45,
        },
        *[{"item": item.public_id, "decision": None} for item in rest],
    )
    printed, _ = run(path, "demo-grader")
    seeded.refresh_from_db()
    clean.refresh_from_db()
    assert (seeded.decision, seeded.flags, seeded.seconds_spent) == ("reject", [target], 30)
    assert (clean.decision, clean.flags, clean.comment, clean.seconds_spent) == (
        "accept",
        [],
        "Fine.",
        45,
    )
    assert all(
        not item.decision for item in OversightItem.objects.filter(pk__in=[i.pk for i in rest])
    )
    decided = AuditEntry.objects.filter(action="oversight_item.decide").order_by("pk")
    assert [e.payload["item"] for e in decided] == [seeded.public_id, clean.public_id]
    assert [e.payload["seconds"] for e in decided] == [30, 45]
    entry = AuditEntry.objects.get(action="oversight_decisions.import")
    assert entry.actor_id == reviewer.pk and entry.target_id == str(study.pk)
    assert entry.use_case_id == grading_world.use_case.pk
    sha256 = entry.payload["sha256"]
    assert entry.payload == {
        "filename": "decisions.jsonl",
        "items": [seeded.public_id, clean.public_id],
        "sha256": sha256,
        "lines": 4,
        "decided": 2,
        "revised": 0,
        "unchanged": 0,
        "left_blank": 2,
    }
    assert printed == (
        f"{path}: 4 line(s): 2 decided, 0 revised, 0 unchanged, 2 left undecided; "
        f"SHA-256 {sha256}.\n"
    )
    # The review burden counts both decisions: (30 + 45) / 2 s.
    results = oversight_results(study=study)
    assert results.decided == 2 and results.mean_seconds == 37.5
    assert (results.overall.seeded, results.overall.caught) == (1, 1)


def test_importing_the_same_file_again_records_nothing(grading_world, study, tmp_path):
    item = items_of(study, grading_world.graders[0])[0]
    path = write(
        tmp_path / "d.jsonl", {"item": item.public_id, "decision": "accept", "elapsed_seconds": 12}
    )
    run(path, "demo-grader")
    before, logged = state(study), decisions_logged()
    printed, _ = run(path, "demo-grader")
    assert printed.startswith(f"{path}: 1 line(s): 0 decided, 0 revised, 1 unchanged, 0 left")
    assert state(study) == before and decisions_logged() == logged


def test_changing_a_decision_needs_a_reason_and_adds_its_time(grading_world, study, tmp_path):
    item = items_of(study, grading_world.graders[0])[0]
    first = write(
        tmp_path / "a.jsonl", {"item": item.public_id, "decision": "accept", "elapsed_seconds": 20}
    )
    run(first, "demo-grader")
    change = {"item": item.public_id, "decision": "reject", "flags": ["s1"], "elapsed_seconds": 6}
    before, logged = state(study), decisions_logged()
    _, lines = refused(write(tmp_path / "b.jsonl", change), "demo-grader")
    assert lines == [
        f'{tmp_path / "b.jsonl"}:1: reason: item "{item.public_id}" is already decided '
        "(accept); changing the decision needs a reason"
    ]
    assert state(study) == before and decisions_logged() == logged
    printed, _ = run(write(tmp_path / "c.jsonl", change | {"reason": "Misread s1."}), "demo-grader")
    assert "0 decided, 1 revised" in printed
    item.refresh_from_db()
    assert (item.decision, item.flags, item.seconds_spent) == ("reject", ["s1"], 26)
    revision = AuditEntry.objects.get(action="oversight_item.revise")
    assert revision.payload["reason"] == "Misread s1."
    assert revision.payload["previous"]["decision"] == "accept"


def test_every_bad_line_is_named_and_nothing_is_written(grading_world, study, tmp_path):
    mine = items_of(study, grading_world.graders[0])
    theirs = items_of(study, grading_world.graders[1])[0]
    good = {"item": mine[0].public_id, "decision": "accept", "elapsed_seconds": 10}
    path = write(
        tmp_path / "bad.jsonl",
        good,
        {"item": mine[1].public_id, "decision": "reject", "flags": ["s99"], "elapsed_seconds": 5},
        {"item": mine[2].public_id, "decision": "accept"},
        {"item": mine[3].public_id, "decision": "maybe", "elapsed_seconds": 5, "score": 3},
        {"item": theirs.public_id, "decision": "accept", "elapsed_seconds": 5},
        good,
        "{not json",
        {"item": mine[1].public_id, "decision": "accept", "elapsed_seconds": -1},
    )
    before, logged = state(study), decisions_logged()
    message, lines = refused(path, "demo-grader")
    assert message == (
        "bad.jsonl: 9 error(s) on 7 line(s); nothing was imported. Correct every listed line "
        "and import again."
    )
    assert lines[0].startswith(f'{path}:2: flags[0]: "s99" is not a sentence or key element')
    assert "; expected one of s1, s2" in lines[0]
    assert lines[1:] == [
        f"{path}:3: elapsed_seconds: required: the seconds spent on the item for this decision "
        "(its review time)",
        f"{path}:4: score: unknown field; the fields are item, decision, flags, comment, "
        "elapsed_seconds, reason",
        f'{path}:4: decision: expected accept or reject, or null, got "maybe"',
        f'{path}:5: item: unknown item "{theirs.public_id}": not in your review queue',
        f'{path}:6: item: duplicate: line 1 is also item "{mine[0].public_id}"; give each '
        "item once",
        f"{path}:7: line: not valid JSON: " + lines[6].split("not valid JSON: ", 1)[1],
        f'{path}:8: item: duplicate: line 2 is also item "{mine[1].public_id}"; give each '
        "item once",
        f"{path}:8: elapsed_seconds: expected a non-negative number, got -1",
    ]
    assert state(study) == before and decisions_logged() == logged


@pytest.mark.parametrize("actor", ["outsider", "grader-two", "demo-owner", "demo-reviewer"])
def test_only_the_reviewer_of_an_item_can_decide_it(grading_world, study, tmp_path, actor):
    item = items_of(study, grading_world.graders[0])[0]
    path = write(
        tmp_path / "d.jsonl", {"item": item.public_id, "decision": "reject", "elapsed_seconds": 9}
    )
    before, logged = state(study), decisions_logged()
    _, lines = refused(path, actor)
    assert lines == [f'{path}:1: item: unknown item "{item.public_id}": not in your review queue']
    assert state(study) == before and decisions_logged() == logged


def test_it_refuses_an_unknown_user_and_a_missing_file(grading_world, study, tmp_path):
    path = write(tmp_path / "d.jsonl", {"item": "x", "decision": None})
    with pytest.raises(CommandError, match=r"^--as: no user 'nobody'$"):
        run(path, "nobody")
    with pytest.raises(CommandError, match=r"^--file: .*missing.jsonl: No such file"):
        run(str(tmp_path / "missing.jsonl"), "demo-grader")


def test_a_closed_study_takes_no_decision(grading_world, study, tmp_path):
    item = items_of(study, grading_world.graders[0])[0]
    oversight_study_close(actor=grading_world.owner, study=study)
    path = write(
        tmp_path / "d.jsonl", {"item": item.public_id, "decision": "accept", "elapsed_seconds": 9}
    )
    before, logged = state(study), decisions_logged()
    _, lines = refused(path, "demo-grader")
    assert lines == [f"{path}:1: item: the oversight study is closed: no decision is accepted"]
    assert state(study) == before and decisions_logged() == logged


def test_a_file_over_its_size_limit_is_refused_before_parsing(
    grading_world, study, tmp_path, settings
):
    item = items_of(study, grading_world.graders[0])[0]
    line = {"item": item.public_id, "decision": "accept", "elapsed_seconds": 9}
    path = write(tmp_path / "big.jsonl", *[line] * 3)
    settings.ENTERPRISEVAL_UPLOAD_LIMITS = settings.ENTERPRISEVAL_UPLOAD_LIMITS | {
        "oversight_decisions": 100
    }
    before, logged = state(study), decisions_logged()
    message, _ = refused(path, "demo-grader")
    assert message == (
        "big.jsonl: the oversight decisions file is more than 100 bytes; the limit is 100 bytes "
        "(raise ENTERPRISEVAL_MAX_OVERSIGHT_DECISIONS_BYTES to accept larger files)"
    )
    assert state(study) == before and decisions_logged() == logged


def test_a_failure_while_writing_rolls_back_the_lines_already_written(
    grading_world, study, tmp_path, monkeypatch
):
    first, second = items_of(study, grading_world.graders[0])[:2]
    path = write(
        tmp_path / "d.jsonl",
        {"item": first.public_id, "decision": "accept", "elapsed_seconds": 9},
        {"item": second.public_id, "decision": "accept", "elapsed_seconds": 9},
    )
    decide = oversight_services.oversight_item_decide

    def fail_on_second(**kwargs):
        if kwargs["item"].pk == second.pk:
            raise oversight_services.ImmutableError("The oversight study is closed.", field="study")
        return decide(**kwargs)

    monkeypatch.setattr(oversight_services, "oversight_item_decide", fail_on_second)
    before, logged = state(study), decisions_logged()
    message, lines = refused(path, "demo-grader")
    assert message == f"{path}:2: study: The oversight study is closed."
    assert lines == [f"{path}:2: study: The oversight study is closed."]
    assert state(study) == before and decisions_logged() == logged


def test_the_exported_template_filled_in_imports(grading_world, study, tmp_path):
    template = tmp_path / "queue.jsonl"
    call_command(
        "oversight_decisions_export",
        "--as=demo-grader",
        f"--output={template}",
        stderr=io.StringIO(),
    )
    filled = []
    for n, raw in enumerate(template.read_text(encoding="utf-8").splitlines(), start=1):
        line = json.loads(raw)
        filled.append(line | {"decision": "reject", "flags": ["s1"], "elapsed_seconds": 10 * n})
    printed, _ = run(write(tmp_path / "filled.jsonl", *filled), "demo-grader")
    assert "4 line(s): 4 decided, 0 revised, 0 unchanged, 0 left undecided" in printed
    mine = items_of(study, grading_world.graders[0])
    assert [(i.decision, i.flags, i.seconds_spent) for i in mine] == [
        ("reject", ["s1"], 10.0),
        ("reject", ["s1"], 20.0),
        ("reject", ["s1"], 30.0),
        ("reject", ["s1"], 40.0),
    ]
    assert oversight_results(study=study).mean_seconds == 25.0
