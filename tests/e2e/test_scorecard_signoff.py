"""A charter owner drafts a decision's scorecard in the browser; the reviewer signs it off."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from demo.testing.grading import make_world
from demo.testing.scorecards import COMMITTEE_FIELDS, recorded_decision
from scorecards.models import Scorecard, ScorecardStatus

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-scorecard-123!"


@pytest.fixture
def decided_world():
    world = make_world()
    decision = recorded_decision(world)
    for user in (world.owner, world.reviewer):
        user.set_password(PASSWORD)
        user.save()
    return world, decision


def test_draft_fill_in_and_sign_off_a_scorecard(page, sign_in, decided_world):
    world, decision = decided_world
    key = world.use_case.key
    sign_in(world.owner.get_username(), PASSWORD)
    page.goto(f"/use-cases/{key}/decisions/{decision.pk}/")
    page.get_by_role("button", name="Draft the scorecard").click()
    expect(page.locator("h1")).to_contain_text("Scorecard")
    expect(page.locator(".summary .warning").first).to_contain_text("3 mandatory fields missing")
    page.locator("details summary").click()
    page.get_by_label("Observed failure modes", exact=True).fill(COMMITTEE_FIELDS["failure_modes"])
    page.get_by_label("Conditions of use", exact=True).fill(
        '<img src=x onerror="window.__xss=1">' + COMMITTEE_FIELDS["conditions_of_use"]
    )
    page.get_by_label("Compensating controls", exact=True).fill(
        COMMITTEE_FIELDS["compensating_controls"]
    )
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".summary")).not_to_contain_text("mandatory fields missing")
    assert page.evaluate("window.__xss") is None
    # The charter owner sees no sign-off button: that is the second line's.
    expect(page.get_by_role("button", name="Sign off as second-line reviewer")).to_have_count(0)
    assert page.console_errors == []

    page.get_by_role("button", name="Sign out").click()
    sign_in(world.reviewer.get_username(), PASSWORD)
    scorecard = Scorecard.objects.get(decision=decision)
    page.goto(f"/use-cases/{key}/scorecards/{scorecard.pk}/")
    page.get_by_role("button", name="Sign off as second-line reviewer").click()
    expect(page.locator(".summary .state")).to_contain_text("final")
    expect(page.locator(".summary .state")).to_contain_text("signed off by demo-reviewer")
    scorecard.refresh_from_db()
    assert scorecard.status == ScorecardStatus.FINAL
    expect(page.locator("body")).to_contain_text(scorecard.sha256)
    # The PDF link serves the PDF of the same scorecard.
    response = page.request.get(f"/use-cases/{key}/scorecards/{scorecard.pk}/scorecard.pdf")
    assert response.status == 200 and response.body().startswith(b"%PDF")
    assert page.console_errors == []
