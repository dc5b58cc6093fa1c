"""The adjudicator resolves a disagreement between two graders in the browser."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from demo.testing.grading import fill, first_values, make_world
from grading.models import Adjudication, Assignment
from grading.services.grades import assignment_submit

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-adjudicator-123!"


def supported_partially(unit_key: str, field: str) -> str:
    return (
        "partially" if (unit_key, field) == ("s1", "supported") else first_values(unit_key, field)
    )


@pytest.fixture
def disagreement():
    """Two graders who disagree on whether s1 of one artefact is supported."""
    world = make_world()
    artefact = world.session.artefacts.order_by("pk").first()
    first, second = Assignment.objects.filter(artefact=artefact).order_by("public_id")
    fill(first)
    fill(second, supported_partially)
    for assignment in (first, second):
        assignment_submit(actor=assignment.grader, assignment=assignment)
    world.adjudicator.set_password(PASSWORD)
    world.adjudicator.save()
    return world, artefact


def test_the_adjudicator_resolves_a_disagreement(page, sign_in, disagreement):
    world, artefact = disagreement
    sign_in(world.adjudicator.get_username(), PASSWORD)

    page.goto(f"/use-cases/{world.use_case.key}/grading/{world.session.public_id}/adjudication/")
    progress = page.locator("#adjudication-progress")
    expect(progress.locator("[data-field=pending]")).to_have_text("1")
    expect(progress.locator("[data-field=resolved]")).to_have_text("0")
    row = page.locator(f"#adjudication-queue tr[data-artefact='{artefact.public_id}']")
    row.get_by_role("link", name="Adjudicate").click()

    dispute = page.locator("section.dispute[data-unit=s1][data-field=supported]")
    expect(dispute).to_contain_text("Grader 1: Fully")
    expect(dispute).to_contain_text("Grader 2: Partially")
    dispute.get_by_label("Partially").check()
    dispute.get_by_label("Note (optional)").fill(
        "the cover ratio is in the source, the date is not"
    )
    page.get_by_role("button", name="Record final values").click()

    expect(page.locator(".messages")).to_contain_text(
        "Every disagreement of this session is resolved"
    )
    expect(page.locator("#adjudication-progress [data-field=pending]")).to_have_text("0")
    expect(page.locator("#adjudication-progress [data-field=resolved]")).to_have_text("1")
    expect(row.locator(".badge")).to_have_text("resolved")

    row.get_by_role("link", name="Open").click()
    dispute = page.locator("section.dispute[data-unit=s1][data-field=supported]")
    expect(dispute.locator(".badge")).to_have_text("final")
    expect(dispute.locator("[data-field=final]")).to_have_text("Partially")
    expect(dispute.locator("input[type=radio]")).to_have_count(0)

    adjudication = Adjudication.objects.get()
    assert (adjudication.artefact_id, adjudication.unit_key, adjudication.field) == (
        artefact.pk,
        "s1",
        "supported",
    )
    assert adjudication.value == "partially"
    assert adjudication.adjudicator == world.adjudicator
    assert page.console_errors == []
