"""``enterpriseval oversight_decisions_export``: the reviewer's own blind queue as the template
of ``oversight_decisions_import``, holding what the review API shows of each copy."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient

from grading.models import DefectKind, OversightItem, OversightStudy
from grading.selectors.oversight import oversight_decisions_file
from grading.services.oversight import (
    oversight_item_decide,
    oversight_study_close,
    oversight_study_create,
)

SEED = 7


def create(world, name: str) -> OversightStudy:
    return oversight_study_create(
        actor=world.owner,
        use_case=world.use_case,
        name=name,
        runs=world.runs,
        reviewers=world.graders[:2],
        items_per_reviewer=4,
        defect_share=0.5,
        seed=SEED,
    )


def exported(actor: str, *args: str) -> list[dict]:
    out = io.StringIO()
    call_command("oversight_decisions_export", f"--as={actor}", *args, stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_each_line_is_a_copy_of_the_reviewers_queue_as_the_api_shows_it(grading_world):
    study = create(grading_world, "Memo review")
    reviewer = grading_world.graders[0]
    items = list(OversightItem.objects.filter(study=study, reviewer=reviewer).order_by("position"))
    lines = exported("demo-grader")
    assert [line["item"] for line in lines] == [item.public_id for item in items]
    client = APIClient()
    client.force_authenticate(reviewer)
    for line, item in zip(lines, items, strict=True):
        page = client.get(reverse("api-grading-oversight-item", args=[item.public_id])).json()
        assert line["study"] == page["study"] == "Memo review"
        assert line["position"] == page["position"] == item.position
        for key in ("task_id", "task_input", "text", "sources", "guidance"):
            assert line[key] == page[key], key
        assert line["sentences"] == [
            {"key": u["key"], "text": u["text"]} for u in page["sentences"]
        ]
        assert line["key_elements"] == [
            {"key": u["key"], "text": u["text"]} for u in page["key_elements"]
        ]
        assert (line["decision"], line["flags"], line["comment"]) == (None, [], "")
        assert (line["elapsed_seconds"], line["reason"]) == (None, "")


def test_the_template_is_blind(grading_world):
    create(grading_world, "Memo review")
    text = json.dumps(exported("demo-grader")).lower()
    for word in [*grading_world.provenance, "seeded", "defect", "source_output"]:
        assert word.lower() not in text, word
    for kind in DefectKind.values:
        assert kind not in text, kind


def test_decided_copies_carry_their_decision_and_closed_studies_are_left_out(grading_world):
    closed = create(grading_world, "Earlier review")
    study = create(grading_world, "Memo review")
    reviewer = grading_world.graders[0]
    first = OversightItem.objects.filter(study=study, reviewer=reviewer).order_by("position")[0]
    oversight_item_decide(
        actor=reviewer,
        item=first,
        decision="reject",
        flags=["s1"],
        comment="Figure wrong.",
        elapsed_seconds=30,
    )
    oversight_study_close(actor=grading_world.owner, study=closed)
    lines = exported("demo-grader")
    assert {line["study"] for line in lines} == {"Memo review"} and len(lines) == 4
    assert (lines[0]["decision"], lines[0]["flags"], lines[0]["comment"]) == (
        "reject",
        ["s1"],
        "Figure wrong.",
    )
    assert exported("outsider") == []
    theirs = {line["item"] for line in exported("grader-two")}
    assert theirs and not theirs & {line["item"] for line in lines}


def test_the_template_takes_four_queries_whatever_the_queue(
    grading_world, django_assert_num_queries
):
    create(grading_world, "Memo review")
    create(grading_world, "Second review")
    with django_assert_num_queries(4):
        lines = list(oversight_decisions_file(user=grading_world.graders[0]))
    assert len(lines) == 8


def test_it_writes_a_file_and_refuses_an_unknown_user(grading_world, tmp_path):
    create(grading_world, "Memo review")
    target = tmp_path / "queue.jsonl"
    err = io.StringIO()
    call_command("oversight_decisions_export", "--as=demo-grader", f"--output={target}", stderr=err)
    assert len(target.read_text(encoding="utf-8").splitlines()) == 4
    assert err.getvalue() == f"{target}: 4 item(s) of demo-grader's review queue\n"
    with pytest.raises(CommandError) as error:
        exported("nobody")
    assert error.value.returncode == 2 and str(error.value) == "--as: no user 'nobody'"
