"""A charter owner records a decision through the form, from the use-case page to the decision."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from playwright.sync_api import expect

from demo.testing.decisions import make_decidable_world
from gates.models import Decision

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-decision-123!"


def built_apart():
    """Build the world in its own thread: judging runs an event loop, and Playwright's is open."""
    try:
        return make_decidable_world()
    finally:
        connection.close()


@pytest.fixture
def decidable():
    with ThreadPoolExecutor(max_workers=1) as pool:
        world, judge = pool.submit(built_apart).result()
    world.owner.set_password(PASSWORD)
    world.owner.save()
    return world, judge


def test_record_a_decision_through_the_form(page, sign_in, decidable):
    world, judge = decidable
    key = world.use_case.key
    run = world.runs[0]
    sign_in(world.owner.get_username(), PASSWORD)
    page.goto(f"/use-cases/{key}/")
    page.get_by_role("link", name="Record a decision").click()
    expect(page.locator("h1")).to_contain_text("Record a decision")
    page.get_by_label("Charter version").select_option("1")
    page.get_by_label("Run", exact=True).select_option(str(run.pk))
    page.get_by_label("Grading session").select_option(world.session.public_id)
    page.get_by_label("Judge").select_option(str(judge.pk))
    page.get_by_role("button", name="Record the decision").click()
    decision = Decision.objects.get()
    expect(page).to_have_url(
        f"{page.url.split('/use-cases/')[0]}/use-cases/{key}/decisions/{decision.pk}/"
    )
    expect(page.locator("body")).to_contain_text(decision.sha256[:12])
    expect(page.locator("body")).to_contain_text(run.configuration.name)
    assert page.console_errors == []
