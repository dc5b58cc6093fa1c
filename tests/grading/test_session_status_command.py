"""``enterpriseval session_status``: what is still open in a grading session."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from demo.testing.grading import DISSENT, fill, grade_apart
from grading.models import Adjudication, Assignment
from grading.services.adjudication import adjudication_take
from grading.services.grades import assignment_submit


def status(world, actor: str = "demo-owner", *extra: str) -> str:
    out = io.StringIO()
    call_command(
        "session_status",
        f"--use-case={world.use_case.key}",
        f"--session={world.session.public_id}",
        f"--as={actor}",
        *extra,
        stdout=out,
    )
    return out.getvalue()


def test_a_new_session_is_open_with_every_assignment_unsubmitted(grading_world):
    data = json.loads(status(grading_world, "demo-owner", "--format=json"))
    assignments = Assignment.objects.filter(session=grading_world.session).count()
    assert data["open"] is True
    assert data["assignments"] == data["assignments_not_submitted"] == assignments == 16
    by_grader = {g["grader"]: g["not_submitted"] for g in data["graders"]}
    for grader in grading_world.graders:
        assert by_grader.get(grader.username, 0) == len(grading_world.assignments_of(grader))
    assert data["awaiting_adjudication"] == [] and data["disagreements_pending"] == 0


def test_it_lists_each_artefacts_disagreements_until_they_are_adjudicated(grading_world):
    artefact = grading_world.session.artefacts.order_by("public_id").first()
    grade_apart(artefact)
    data = json.loads(status(grading_world, "demo-adjudicator", "--format=json"))
    [row] = data["awaiting_adjudication"]
    assert row["artefact"] == artefact.public_id
    pending = set(row["pending"])
    assert {f"{unit}.{field}" for unit, field in DISSENT} <= pending
    assert data["disagreements_pending"] == len(pending)
    printed = status(grading_world, "demo-reviewer")
    assert artefact.public_id in printed and "s1.relevant" in printed
    assert "awaiting adjudication" in printed


def test_a_session_with_everything_submitted_and_agreed_is_closed(grading_world):
    for assignment in Assignment.objects.filter(session=grading_world.session).select_related(
        "grader", "artefact", "session"
    ):
        fill(assignment)
        assignment_submit(actor=assignment.grader, assignment=assignment)
    printed = status(grading_world)
    assert printed.startswith(f"Session {grading_world.session.public_id}")
    assert "closed: every assignment submitted and every disagreement adjudicated" in printed


@pytest.mark.parametrize(
    ("actor", "start"),
    [("demo-grader", "--as: "), ("demo-model-owner", "--as: "), ("outsider", "--as: outsider")],
)
def test_graders_model_owners_and_outsiders_are_refused(grading_world, actor, start):
    with pytest.raises(CommandError) as refused:
        status(grading_world, actor)
    assert refused.value.returncode == 2 and str(refused.value).startswith(start)


def test_an_unknown_session_is_refused_naming_the_option(grading_world):
    with pytest.raises(CommandError) as refused:
        call_command(
            "session_status",
            f"--use-case={grading_world.use_case.key}",
            "--session=nope",
            "--as=demo-owner",
        )
    assert refused.value.returncode == 2
    assert str(refused.value).startswith("--session: no grading session 'nope'")


def test_a_session_closes_once_s2_is_adjudicated_not_assertive_without_s2_supported(
    grading_world,
):
    # Grader 1: s2 assertive, fully supported; Grader 2: s2 not assertive (supported not asked).
    for artefact in grading_world.session.artefacts.all():
        grade_apart(artefact)
    for artefact in grading_world.session.artefacts.all():
        adjudication_take(actor=grading_world.adjudicator, artefact=artefact, grader=2)
    data = json.loads(status(grading_world, "demo-adjudicator", "--format=json"))
    assert data["disagreements_pending"] == 0 and data["awaiting_adjudication"] == []
    assert data["open"] is False
    assert not Adjudication.objects.filter(field="supported").exists()
