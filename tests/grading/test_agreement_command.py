"""``enterpriseval agreement``: the agreement page from the command line, through the access
check, selector and serializer of ``GET …/grading/sessions/<id>/agreement/`` (whose figures
``test_agreement_views.py`` checks against scikit-learn and Krippendorff's α)."""

from __future__ import annotations

import io
import json
import zlib

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient

from demo.testing.grading import fill
from grading.agreement import compared_text
from grading.models import Assignment
from grading.rubric import FIELDS_BY_NAME
from grading.services.grades import assignment_submit

MANAGERS_ONLY = (
    "--as: This needs one of these roles on CREDIT-MEMO-B: Adjudicator, Charter owner, "
    "Second-line reviewer / risk committee."
)


def truth(unit_key: str, field: str) -> str:
    values = FIELDS_BY_NAME[field].values
    return values[zlib.crc32(f"{unit_key}/{field}".encode()) % len(values)]


def contrarian(unit_key: str, field: str) -> str:
    values = FIELDS_BY_NAME[field].values
    label = truth(unit_key, field)
    if zlib.crc32(unit_key.encode()) % 3:
        return label
    return values[(values.index(label) + 1) % len(values)]


@pytest.fixture
def graded(grading_world):
    first, second, third = (g.username for g in grading_world.graders)
    choose = {first: truth, second: truth, third: contrarian}
    for assignment in Assignment.objects.filter(session=grading_world.session).order_by("pk"):
        fill(assignment, choose[assignment.grader.username])
        assignment_submit(actor=assignment.grader, assignment=assignment)
    return grading_world


def run(world, *args: str, session: str | None = None) -> str:
    out = io.StringIO()
    call_command(
        "agreement",
        f"--use-case={world.use_case.key}",
        f"--session={session or world.session.public_id}",
        *args,
        stdout=out,
    )
    return out.getvalue()


def api(world, user) -> dict:
    client = APIClient()
    client.force_authenticate(user)
    response = client.get(
        reverse("api-grading-agreement", args=[world.use_case.key, world.session.public_id])
    )
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize("actor", ["demo-owner", "demo-reviewer", "demo-adjudicator"])
def test_json_is_what_the_agreement_endpoint_returns(graded, actor):
    data = json.loads(run(graded, f"--as={actor}", "--format=json"))
    assert data == api(graded, graded.owner)
    assert data["artefacts_complete"] == data["artefacts_total"] == 8


def test_the_table_shows_each_field_against_the_target_and_each_metric_eligibility(graded):
    printed = run(graded, "--as=demo-reviewer")
    data = api(graded, graded.reviewer)
    assert printed.startswith(
        f"Agreement in session {graded.session.public_id} (Credit memo round 1) of "
        "CREDIT-MEMO-B: 8 of 8 artefacts graded by every grader; κ target 0.6, 95% bootstrap "
        "intervals.\n"
    )
    lines = printed.splitlines()
    for row in data["fields"]:
        [line] = [line for line in lines if line.split()[:1] == [row["field"]]]
        symbol = {"cohen_kappa": "κ", "krippendorff_alpha": "α"}[row["statistic"]]
        if row["point"] is None:
            assert line.split()[1:3] == [symbol, "—"]
            continue
        text = compared_text(row["point"], row["target"])
        assert line.split()[1] == symbol
        assert f" {text} [{row['lo']:.2f}, {row['hi']:.2f}] " in line
        assert line.rstrip().endswith("yes" if row["passes"] else "no")
    for row in data["eligibility"]:
        [line] = [line for line in lines if line.split()[:1] == [row["metric_id"]]]
        gate = {True: "eligible", False: "not eligible", None: "—"}[row["eligible"]]
        assert f" {gate} " in line and line.rstrip().endswith(row["reason"])


@pytest.mark.parametrize(
    ("actor", "expected"),
    [
        ("outsider", "--as: outsider holds no role on CREDIT-MEMO-B"),
        ("demo-grader", MANAGERS_ONLY),
        ("demo-model-owner", MANAGERS_ONLY),
    ],
)
def test_graders_model_owners_and_outsiders_are_refused(graded, actor, expected):
    with pytest.raises(CommandError) as error:
        run(graded, f"--as={actor}")
    assert error.value.returncode == 2 and str(error.value) == expected


def test_an_unknown_session_is_refused_naming_the_option(grading_world):
    with pytest.raises(CommandError) as error:
        run(grading_world, "--as=demo-owner", session="nope")
    assert error.value.returncode == 2
    assert str(error.value) == "--session: no grading session 'nope' in CREDIT-MEMO-B"
