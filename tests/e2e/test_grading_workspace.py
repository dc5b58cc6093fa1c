"""The grading workspace in a real browser: keyboard only, reload-proof.

Model output carrying script is checked in tests/security/test_hostile_content.py.
"""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from demo.testing.grading import make_world
from grading.models import Assignment, AssignmentStatus
from grading.rubric import ARTEFACT_KEY
from grading.selectors.artefacts import grades_of, units_of

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

GRADES_ROUTE = "**/api/v1/grading/assignments/*/grades/"


@pytest.fixture
def world():
    return make_world()


def workspace_url(assignment: Assignment) -> str:
    return f"/grading/a/{assignment.public_id}/"


def radio(page, unit_key: str, field: str, value: str):
    return page.locator(f'input[name="{unit_key}|{field}"][value="{value}"]')


def dom_order(assignment: Assignment) -> list:
    """Return the units in the order the workspace shows them: each sentence, its citations."""
    units = units_of([assignment.artefact])[assignment.artefact_id]
    cited = [u for u in units if u.kind == "cited_chunk"]
    ordered = []
    for unit in units:
        if unit.kind == "sentence":
            ordered.append(unit)
            ordered.extend(c for c in cited if c.sentence_position == unit.position)
        elif unit.kind != "cited_chunk":
            ordered.append(unit)
    return ordered


def keyboard_plan(assignment: Assignment) -> tuple[list[str], dict[str, dict[str, str]]]:
    """Return the keys a grader presses to grade every asked field, and the grades they mean.

    Odd sentences: assertive y, supported p (letter), relevant 1 (digit). Even sentences:
    assertive n (supported is then not asked), relevant 2. Citations 2 (lenient), key
    elements 3 (absent), the first guidance item t (TP) then h (high severity), the others o
    (correct), value added 2.
    """
    keys: list[str] = []
    grades: dict[str, dict[str, str]] = {}
    sentences = guidance = 0
    for unit in dom_order(assignment):
        if unit.kind == "sentence":
            sentences += 1
            if sentences % 2:
                keys += ["y", "p", "1"]
                grades[unit.key] = {"assertive": "Y", "supported": "partially", "relevant": "Y"}
            else:
                keys += ["n", "2"]
                grades[unit.key] = {"assertive": "N", "relevant": "N"}
        elif unit.kind == "cited_chunk":
            keys.append("2")
            grades[unit.key] = {"citation": "lenient"}
        elif unit.kind == "key_element":
            keys.append("3")
            grades[unit.key] = {"key_element": "absent"}
        elif unit.kind == "guidance_item":
            guidance += 1
            if guidance == 1:
                keys += ["t", "h"]
                grades[unit.key] = {"guidance": "TP", "severity": "high"}
            else:
                keys.append("o")
                grades[unit.key] = {"guidance": "correct"}
        else:
            keys.append("2")
            grades[unit.key] = {"value_add": "2"}
    return keys, grades


def test_a_grader_grades_and_submits_an_artefact_with_the_keyboard_only(page, sign_in, world):
    grader = world.graders[1]
    first, second = world.assignments_of(grader)[:2]
    keys, expected = keyboard_plan(first)
    sign_in(grader.username, f"pw-{grader.username}")
    page.goto(workspace_url(first))
    expect(page.locator("h1")).to_contain_text(f"Artefact 1 of {len(world.assignments_of(grader))}")
    expect(page.locator("#ws-help")).to_contain_text("Next unit")  # the help is on the page

    # Moving about first: j and k between units, the arrows between fields, ? for the help.
    page.keyboard.press("j")
    page.keyboard.press("k")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("?")
    expect(page.locator("#ws-help-body")).to_be_hidden()
    page.keyboard.press("?")
    expect(page.locator("#ws-help-body")).to_be_visible()

    for key in keys:
        page.keyboard.press(key)
    expect(page.locator("#ws-save")).to_have_text("Saved", timeout=10_000)
    expect(page.locator("#ws-answered")).to_contain_text(
        f"{sum(map(len, expected.values()))} of {sum(map(len, expected.values()))}"
    )
    page.keyboard.press("s")
    page.wait_for_url(f"**{workspace_url(second)}", timeout=10_000)

    first.refresh_from_db()
    assert first.status == AssignmentStatus.SUBMITTED
    assert first.seconds_spent > 0
    assert grades_of(first) == expected
    assert ARTEFACT_KEY in expected
    assert page.console_errors == []


def test_a_reload_or_a_dropped_connection_loses_no_grade(page, sign_in, world):
    grader = world.graders[1]
    assignment = world.assignments_of(grader)[0]
    sign_in(grader.username, f"pw-{grader.username}")
    page.goto(workspace_url(assignment))

    for key in ["y", "f", "2"]:  # s1: assertive Y, supported fully, relevant N
        page.keyboard.press(key)
    expect(page.locator("#ws-save")).to_have_text("Saved", timeout=10_000)
    page.reload()
    expect(radio(page, "s1", "assertive", "Y")).to_be_checked()
    expect(radio(page, "s1", "supported", "fully")).to_be_checked()
    expect(radio(page, "s1", "relevant", "N")).to_be_checked()
    assert grades_of(assignment)["s1"] == {"assertive": "Y", "supported": "fully", "relevant": "N"}

    # The connection drops: the change waits in the browser, and nothing reaches the server.
    page.route(GRADES_ROUTE, lambda route: route.abort())
    s1_citations = [u for u in dom_order(assignment) if u.sentence_position == 1][1:]
    expect(page.locator(".ws-unit.is-current")).to_have_attribute("data-unit", s1_citations[0].key)
    for _ in s1_citations:  # the page opened at the first question left: s1's citation
        page.keyboard.press("j")
    expect(page.locator(".ws-unit.is-current")).to_have_attribute("data-unit", "s2")
    page.keyboard.press("n")
    page.keyboard.press("1")
    expect(page.locator("#ws-save")).to_have_text("Offline — will retry", timeout=10_000)
    stored = json.loads(
        page.evaluate(f"() => localStorage.getItem('enterpriseval.grading.{assignment.public_id}')")
    )
    assert stored["changes"] == {"s2|assertive": "N", "s2|relevant": "Y"}
    assert "s2" not in grades_of(assignment)

    # Back online, then a reload before the retry: the page resends what was waiting.
    page.unroute(GRADES_ROUTE)
    page.reload()
    expect(radio(page, "s2", "assertive", "N")).to_be_checked()
    expect(radio(page, "s2", "relevant", "Y")).to_be_checked()
    expect(page.locator('.ws-field[data-unit="s2"][data-field="supported"]')).to_be_hidden()
    expect(page.locator("#ws-save")).to_have_text("Saved", timeout=10_000)
    assert grades_of(assignment)["s2"] == {"assertive": "N", "relevant": "Y"}
    assert grades_of(assignment)["s1"] == {"assertive": "Y", "supported": "fully", "relevant": "N"}
    assert (
        page.evaluate(f"() => localStorage.getItem('enterpriseval.grading.{assignment.public_id}')")
        is None
    )


def test_a_second_grader_cannot_reach_the_first_graders_assignment(page, sign_in, world):
    owner_of_it, intruder = world.graders[1], world.graders[2]
    assignment = world.assignments_of(owner_of_it)[0]
    sign_in(intruder.username, f"pw-{intruder.username}")

    response = page.goto(workspace_url(assignment))
    assert response.status == 404
    api = page.request.get(f"/api/v1/grading/assignments/{assignment.public_id}/")
    assert api.status == 404
    assert api.json()["error"]["code"] == "not_found"
    saved = page.request.post(
        f"/api/v1/grading/assignments/{assignment.public_id}/grades/",
        data={"changes": [{"unit_key": "s1", "field": "assertive", "value": "Y"}]},
        headers={"X-CSRFToken": _csrf(page)},
    )
    assert saved.status == 404
    task_input = assignment.artefact.task.input
    for body in (page.content(), api.text(), saved.text()):
        assert task_input[:40] not in body
    assert grades_of(assignment) == {}


def _csrf(page) -> str:
    cookie = next(c for c in page.context.cookies() if c["name"] == "csrftoken")
    return re.sub(r"\s", "", cookie["value"])
