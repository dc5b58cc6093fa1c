"""The charter owner creates a sequential session with an adaptive uniform share in the browser
and watches it decide."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from demo.testing.grading import grade_all_open, make_world
from grading.models import GradingSession, SessionMode, SessionStatus, TauRule
from runs.services.judging import judge_get_or_create, judge_run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-owner-sequential-1!"


@pytest.fixture
def judged_world():
    world = make_world()
    judge = judge_get_or_create(kind="offline")
    judge_run(actor=world.model_owner, run=world.runs[0], judge=judge, purpose="gated")
    world.owner.set_password(PASSWORD)
    world.owner.save()
    return world, judge


def test_the_owner_creates_a_sequential_session_and_sees_its_sequences(page, sign_in, judged_world):
    world, judge = judged_world
    sign_in(world.owner.get_username(), PASSWORD)
    page.goto(f"/use-cases/{world.use_case.key}/grading/new/")
    form = page.locator("#session-form")
    form.get_by_label("Name").fill("Credit memo round 2")
    for run in world.runs[1:]:
        form.locator(f"input[name=runs][value='{run.pk}']").uncheck()
    form.locator(f"input[name=runs][value='{world.runs[0].pk}']").check()
    form.locator("input[name=mode][value=sequential]").check()
    form.locator("input[name=tau_rule][value=adaptive]").check()
    form.locator("select[name=judge]").select_option(str(judge.pk))
    form.locator("input[name=budget]").fill("5")
    form.locator("input[name=agreement_size]").fill("2")
    form.locator("input[name=seed]").fill("99")
    for grader in world.graders:
        form.locator(f"input[name=graders][value='{grader.pk}']").check()
    form.locator(f"input[name=adjudicators][value='{world.adjudicator.pk}']").check()
    form.get_by_role("button", name="Draw the sample and assign it").click()

    expect(page.locator("#sequential-summary")).to_contain_text("Sequential session")
    expect(page.locator("#sequential-stop")).to_contain_text("grades final so far")
    expect(page.locator("#sequential-tau")).to_contain_text("Adaptive, τ as floor, τ = 0.5")
    expect(page.locator("#sequential-tau")).to_contain_text("latest τ_t = 0.500")
    session = GradingSession.objects.get(name="Credit memo round 2")
    assert session.mode == SessionMode.SEQUENTIAL and session.budget == 5
    assert session.tau_rule == TauRule.ADAPTIVE

    grade_all_open(session)
    session.refresh_from_db()
    assert session.status == SessionStatus.CLOSED
    page.reload()
    expect(page.locator("#sequential-stop")).to_contain_text(
        f"Decided after {session.stop['grades_used']} grades"
    )
    latest = session.draws.order_by("-index").first().tau
    expect(page.locator("#sequential-tau")).to_contain_text(f"latest τ_t = {latest:.3f}")
    plots = page.locator("figure.sequence-plot img")
    expect(plots).to_have_count(len(session.stop["metrics"]))
    assert plots.first.get_attribute("src").startswith("data:image/svg+xml;base64,")
    assert page.console_errors == []
