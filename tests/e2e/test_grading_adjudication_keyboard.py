"""The adjudicator resolves every disputed field of an artefact on one page, with the keyboard."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from demo.testing.grading import grade_apart, make_world
from grading.models import Adjudication

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-adjudicator-123!"


@pytest.fixture
def disputes():
    """One artefact whose two graders disagree on five fields (demo.testing.grading.dissent)."""
    world = make_world()
    artefact = world.session.artefacts.order_by("public_id").first()
    grade_apart(artefact)
    world.adjudicator.set_password(PASSWORD)
    world.adjudicator.save()
    return world, artefact


def field(page, unit_key: str, name: str):
    return page.locator(f"section.dispute[data-unit='{unit_key}'][data-field='{name}']")


def test_the_adjudicator_takes_graders_values_with_the_keyboard(page, sign_in, disputes):
    world, artefact = disputes
    sign_in(world.adjudicator.get_username(), PASSWORD)
    queue = f"/use-cases/{world.use_case.key}/grading/{world.session.public_id}/adjudication/"
    page.goto(queue)
    expect(page.locator("#adjudication-progress [data-field=pending]")).to_have_text("5")
    page.locator("#adjudicate-next").click()
    expect(page.locator("#adj-form[data-keyboard=ready]")).to_be_attached()

    # The page's own words (not the artefact's text) say nothing of where it came from.
    chrome = " ".join(
        text
        for selector in ("h1", "#adj-actions", "#adj-help", ".grader-values", ".adj-choices")
        for text in page.locator(selector).all_inner_texts()
    )
    words = set(chrome.lower().replace("'", " ").split())
    assert not words & {"model", "models", "run", "runs", "output", "outputs", "σ", "baseline"}
    for grader in world.graders:
        expect(page.locator("main")).not_to_contain_text(grader.get_username())

    help_body = page.locator("#adj-help-body")
    expect(help_body).to_be_visible()
    page.keyboard.press("?")
    expect(help_body).to_be_hidden()
    page.keyboard.press("?")
    expect(help_body).to_contain_text("every remaining field without a choice")

    current = re.compile(r"\bis-current\b")
    waiting = re.compile(r"\bis-waiting\b")
    first = field(page, "s1", "relevant")  # the first disputed field has the focus
    expect(first).to_have_class("card dispute is-pending is-current")
    page.keyboard.press("1")  # Grader 1's value: Yes
    expect(first.locator("input[value=Y]")).to_be_checked()
    second = field(page, "s2", "assertive")
    supported = field(page, "s2", "supported")
    # s2 supported is asked only of an assertive s2: not offered while s2 assertive is open.
    expect(supported).to_have_class(waiting)
    expect(supported.locator("input[value=fully]")).to_be_disabled()
    expect(second).to_have_class("card dispute is-pending is-current")
    page.keyboard.press("2")  # Grader 2's value: No — s2 supported is no longer asked
    expect(second.locator("input[value=N]")).to_be_checked()
    expect(supported).to_have_class(waiting)
    expect(supported.locator(".adj-moot")).to_be_visible()
    key_element = field(page, "k:ke1", "key_element")
    expect(key_element).to_have_class(current)  # skipped over s2 supported
    page.keyboard.press("k")
    expect(second).to_have_class(current)
    page.keyboard.press("1")  # Grader 1's value: assertive, so s2 supported is asked
    expect(second.locator("input[value=Y]")).to_be_checked()
    expect(supported).not_to_have_class(waiting)
    expect(supported).to_have_class(current)
    page.keyboard.press("2")  # Grader 2 was not asked: nothing taken, the focus stays
    expect(supported).to_have_class(current)
    page.keyboard.press("b")  # a free choice: "Partially"
    expect(supported.locator("input[value=partially]")).to_be_checked()
    expect(key_element).to_have_class(current)
    for _ in range(3):
        page.keyboard.press("k")
    expect(first).to_have_class(current)
    page.keyboard.press("j")
    expect(second).to_have_class(current)
    page.keyboard.press("b")  # No after all: the choice made for s2 supported is withdrawn
    expect(second.locator("input[value=N]")).to_be_checked()
    expect(supported).to_have_class(waiting)
    expect(supported.locator("input[value=partially]")).not_to_be_checked()
    page.keyboard.press("Shift+Digit1")  # Grader 1 for every remaining field still asked
    expect(key_element.locator("input[value=present_correct]")).to_be_checked()
    expect(field(page, "artefact", "value_add").locator("input[value='0']")).to_be_checked()
    expect(second.locator("input[value=N]")).to_be_checked()  # chosen fields keep their choice
    expect(supported.locator("input:checked")).to_have_count(0)
    page.keyboard.press("s")

    messages = page.locator(".messages")
    expect(messages).to_contain_text("Every disagreement of this session is resolved")
    expect(messages).to_contain_text("No longer asked, given the final values: s2 supported.")
    expect(page.locator("#adjudication-progress [data-field=pending]")).to_have_text("0")
    expect(page.locator("#adjudication-progress [data-field=resolved]")).to_have_text("4")
    finals = {
        (a.unit_key, a.field): a.value for a in Adjudication.objects.filter(artefact=artefact)
    }
    assert finals == {
        ("s1", "relevant"): "Y",
        ("s2", "assertive"): "N",
        ("k:ke1", "key_element"): "present_correct",
        ("artefact", "value_add"): "0",
    }
    assert page.console_errors == []
