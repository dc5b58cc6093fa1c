"""The optional artefact-level rubric fields a charter asks (SPEC §4.1, §5.1).

"Classification correct?" (with "If not, which label is right?") and "Acceptable as is?" are
asked of every artefact of a session whose charter lists them in ``rubric_fields``, shown in
the workspace and the API beside value-add, checked, required before submitting, and blind:
the label shown is the artefact's own, and nothing says which σ or run it came from.
"""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from demo.testing.grading import make_world
from demo.testing.verdicts import GOLD, LABELS, grade_session, make_verdict_world, planted
from enterpriseval.errors import ServiceError
from grading.models import Assignment
from grading.rubric import FIELDS_BY_KIND, is_asked
from grading.selectors.artefacts import units_of
from grading.services.grades import GradeChange, assignment_submit, grades_save
from grading.services.sessions import provenance_strings

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    world = make_verdict_world()
    world.sample(sample_size=6)
    return world


def first_assignment(world) -> Assignment:
    assignment = (
        Assignment.objects.filter(session=world.session, grader=world.graders[0])
        .select_related("artefact__output__task")
        .order_by("position")
        .first()
    )
    assert assignment is not None
    return assignment


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def fieldset(body: str, field: str) -> str:
    match = re.search(
        rf'<fieldset class="ws-field" data-unit="[^"]+" data-field="{field}"[^>]*>', body
    )
    assert match, f"no fieldset for {field}"
    return match.group(0)


def test_a_session_asks_the_charters_verdicts_of_every_artefact(world):
    for artefact in world.session.artefacts.all():
        assert artefact.asks == ["label_correct", "acceptable"]
        keys = [unit.key for unit in units_of([artefact])[artefact.pk]]
        assert keys[-3:] == ["label", "acceptable", "artefact"]


def test_the_workspace_shows_the_label_the_artefact_gives_and_asks_if_it_is_right(world):
    assignment = first_assignment(world)
    output = assignment.artefact.output
    body = signed_in(assignment.grader).get(
        reverse("grading-workspace", args=[assignment.public_id])
    )
    assert body.status_code == 200
    page = body.content.decode()
    assert f'id="ws-label">{output.label}</strong>' in page
    assert "hidden" not in fieldset(page, "label_correct")
    assert "hidden" in fieldset(page, "correct_label")  # asked only once "No" is chosen
    for label in LABELS:  # the right label is one of the task set's, typed by its place
        assert f'name="label|correct_label" value="{label}"' in page
    assert 'data-field="acceptable"' in page and "Acceptable as is" in page
    assert 'data-field="value_add"' in page


def test_a_session_of_a_charter_without_them_asks_neither(db):
    world = make_world()
    artefact = world.session.artefacts.first()
    assert artefact.asks is None
    assert [unit.key for unit in units_of([artefact])[artefact.pk]][-1] == "artefact"
    assignment = world.assignments_of(world.graders[0])[0]
    page = signed_in(assignment.grader).get(
        reverse("grading-workspace", args=[assignment.public_id])
    )
    assert b"label_correct" not in page.content and b"Acceptable as is" not in page.content


def test_the_right_label_is_required_after_no_and_must_be_in_the_label_set(world):
    assignment = first_assignment(world)
    output = assignment.artefact.output
    for unit in units_of([assignment.artefact])[assignment.artefact_id]:
        if unit.key not in ("label", "acceptable"):
            grades: dict[str, str] = {}
            for spec in FIELDS_BY_KIND[unit.kind]:
                if is_asked(spec.name, grades):
                    grades[spec.name] = planted(output, unit.key, spec.name)
            grades_save(
                actor=assignment.grader,
                assignment=assignment,
                changes=[GradeChange(unit.key, name, value) for name, value in grades.items()],
            )
    grades_save(
        actor=assignment.grader,
        assignment=assignment,
        changes=[
            GradeChange("label", "label_correct", "N"),
            GradeChange("acceptable", "acceptable", "Y"),
        ],
    )
    with pytest.raises(ServiceError, match=r"1 grade\(s\) missing: label correct_label"):
        assignment_submit(actor=assignment.grader, assignment=assignment)
    with pytest.raises(ServiceError, match=r"correct_label: value must be one of compliant"):
        grades_save(
            actor=assignment.grader,
            assignment=assignment,
            changes=[GradeChange("label", "correct_label", "effective")],
        )
    right = GOLD[output.task.external_id]
    grades_save(
        actor=assignment.grader,
        assignment=assignment,
        changes=[GradeChange("label", "correct_label", right)],
    )
    submitted = assignment_submit(actor=assignment.grader, assignment=assignment)
    assert submitted.is_submitted
    stored = dict(
        submitted.grades.filter(unit_key__in=["label", "acceptable"]).values_list("field", "value")
    )
    assert stored == {"label_correct": "N", "correct_label": right, "acceptable": "Y"}


def test_the_api_gives_the_label_unit_its_fields_and_the_label_set(world):
    assignment = first_assignment(world)
    client = signed_in(assignment.grader)
    body = client.get(reverse("api-grading-assignment-detail", args=[assignment.public_id])).json()
    units = {unit["key"]: unit for unit in body["units"]}
    assert units["label"]["text"] == assignment.artefact.output.label
    assert units["label"]["asks"] == ["label_correct", "correct_label"]
    assert units["acceptable"]["asks"] == ["acceptable"]
    assert body["label_set"] == list(LABELS)
    rubric = {field["name"]: field for field in body["rubric"]}
    assert rubric["correct_label"]["values"] == []  # open: the task set's label set
    assert rubric["acceptable"]["values"] == ["Y", "N"]
    assert ["label", "label_correct"] in [[m["unit_key"], m["field"]] for m in body["missing"]]


def test_the_verdict_fields_reveal_no_provenance_in_the_page_or_the_api(world):
    secrets = [*provenance_strings([world.run]), f"/runs/{world.run.pk}/"]
    for assignment in Assignment.objects.filter(session=world.session).select_related(
        "artefact__output"
    ):
        client = signed_in(assignment.grader)
        page = client.get(reverse("grading-workspace", args=[assignment.public_id]))
        api = client.get(reverse("api-grading-assignment-detail", args=[assignment.public_id]))
        for text in (page.content.decode(), api.content.decode()):
            for secret in secrets:
                assert secret not in text, f"{secret!r} shown to a grader"
            assert f'"id": {assignment.artefact.output_id}' not in text


def run_command(name: str, world, *options: str) -> tuple[str, str, CommandError | None]:
    stdout, stderr = StringIO(), StringIO()
    arguments = ["--use-case", world.use_case.key, "--session", world.session.public_id]
    try:
        call_command(name, *arguments, *options, stdout=stdout, stderr=stderr)
    except CommandError as error:
        return stdout.getvalue(), stderr.getvalue(), error
    return stdout.getvalue(), stderr.getvalue(), None


def test_the_cli_exports_the_verdicts_and_refuses_a_right_label_outside_the_set(world, tmp_path):
    grade_session(world.session)
    out, _err, failure = run_command(
        "grades_export", world, "--final", "--as", world.owner.username
    )
    assert failure is None
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 6
    for line in lines:
        assert set(line["grades"]["label"]) <= {"label_correct", "correct_label"}
        assert line["grades"]["acceptable"]["acceptable"] in ("Y", "N")
    out, _err, failure = run_command("grades_export", world, "--as", world.owner.username)
    line = json.loads(out.splitlines()[0])
    line["grades"]["label"] = {"label_correct": "N", "correct_label": "effective"}
    path = tmp_path / "grades.jsonl"
    path.write_text(json.dumps({**line, "revise": True, "reason": "second look"}) + "\n")
    _out, err, failure = run_command(
        "grades_import", world, "--file", str(path), "--as", world.owner.username
    )
    assert failure is not None
    assert "grades.label.correct_label" in err
    assert "value must be one of compliant, partially compliant, non-compliant" in err
