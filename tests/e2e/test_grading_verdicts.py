"""A grader answers the charter's verdict fields in a real browser (SPEC §4.1, §5.1).

The session's charter asks "Classification correct?" and "Acceptable as is?". The grader
sees the label the artefact gives, says it is wrong with the mouse, picks the right label
that this reveals, moves on with the keyboard and answers "Acceptable as is?" and value-add
by their keys, submits with ``s``; the values are stored as given.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from demo.testing.verdicts import LABELS, make_verdict_world, planted
from grading.models import Assignment, AssignmentStatus
from grading.rubric import FIELDS_BY_KIND, is_asked
from grading.selectors.artefacts import grades_of, units_of
from grading.services.grades import GradeChange, grades_save

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

VERDICT_UNITS = ("label", "acceptable", "artefact")


@pytest.fixture
def world():
    world = make_verdict_world()
    world.sample(sample_size=4)
    return world


def fill_all_but_the_verdicts(assignment: Assignment) -> None:
    """Answer every sentence and citation field through the service, as a grader would."""
    output = assignment.artefact.output
    changes = []
    for unit in units_of([assignment.artefact])[assignment.artefact_id]:
        if unit.key in VERDICT_UNITS:
            continue
        answered: dict[str, str] = {}
        for spec in FIELDS_BY_KIND[unit.kind]:
            if is_asked(spec.name, answered):
                answered[spec.name] = planted(output, unit.key, spec.name)
                changes.append(GradeChange(unit.key, spec.name, answered[spec.name]))
    grades_save(actor=assignment.grader, assignment=assignment, changes=changes)


def test_a_grader_answers_the_verdicts_with_mouse_and_keys_and_they_are_stored(
    page, sign_in, world
):
    grader = world.graders[0]
    first, second = Assignment.objects.filter(session=world.session, grader=grader).order_by(
        "position"
    )[:2]
    fill_all_but_the_verdicts(first)
    given = first.artefact.output.label
    right = next(label for label in LABELS if label != given)
    sign_in(grader.username, f"pw-{grader.username}")
    page.goto(f"/grading/a/{first.public_id}/")
    expect(page.locator("#ws-form[data-keyboard=ready]")).to_be_attached(timeout=10_000)
    expect(page.locator("#ws-label")).to_have_text(given)
    right_label = page.locator('.ws-field[data-unit="label"][data-field="correct_label"]')
    expect(right_label).to_be_hidden()  # asked only once the label is said to be wrong

    page.locator('input[name="label|label_correct"][value="N"]').check()
    expect(right_label).to_be_visible()
    page.locator(f'input[name="label|correct_label"][value="{right}"]').check()
    page.keyboard.press("j")  # to the next unit: "Acceptable as is?"
    expect(page.locator(".ws-unit.is-current")).to_have_attribute("data-unit", "acceptable")
    page.keyboard.press("y")
    page.keyboard.press("1")  # value added: 1 some
    expect(page.locator("#ws-save")).to_have_text("Saved", timeout=10_000)
    page.keyboard.press("s")
    page.wait_for_url(f"**/grading/a/{second.public_id}/", timeout=10_000)

    first.refresh_from_db()
    assert first.status == AssignmentStatus.SUBMITTED
    stored = grades_of(first)
    assert stored["label"] == {"label_correct": "N", "correct_label": right}
    assert stored["acceptable"] == {"acceptable": "Y"}
    assert stored["artefact"] == {"value_add": "1"}
    assert page.console_errors == []
