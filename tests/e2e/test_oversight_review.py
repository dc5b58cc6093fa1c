"""A reviewer rejects a copy with an altered figure, flagging its sentence; the study counts it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from demo.testing.grading import make_world
from grading.models import OversightItem
from grading.services.oversight import oversight_study_create

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-oversight-123!"


@pytest.fixture
def study_world():
    """One reviewer's queue of four copies, one of them with a changed figure."""
    world = make_world()
    study = oversight_study_create(
        actor=world.owner,
        use_case=world.use_case,
        name="Memo sign-off round",
        runs=world.runs,
        reviewers=[world.graders[0]],
        items_per_reviewer=4,
        defect_share=0.25,
        kinds=["changed_figure"],
        seed=7,
    )
    for user in (world.graders[0], world.owner):
        user.set_password(PASSWORD)
        user.save()
    return world, study


def test_a_reviewer_catches_a_changed_figure_and_the_results_count_it(page, sign_in, study_world):
    world, study = study_world
    item = next(i for i in OversightItem.objects.filter(study=study) if i.defects)
    target = item.defects[0]["target"]
    sign_in(world.graders[0].get_username(), PASSWORD)

    page.goto("/oversight/")
    expect(page.locator("#review-queue tbody tr")).to_have_count(4)
    page.goto(f"/oversight/{item.public_id}/")
    expect(page.locator("h1")).to_contain_text(f"Review {item.position} of 4")
    page.locator(f"#draft-sentences input[name=flags][value={target}]").check()
    page.get_by_label("Comment (optional)").fill("The figure does not match its source.")
    page.get_by_role("button", name="Reject").click()
    expect(page.locator(".messages")).to_contain_text(f"Decision on copy {item.position} recorded")
    assert page.console_errors == []

    page.get_by_role("button", name="Sign out").click()
    sign_in(world.owner.get_username(), PASSWORD)
    page.goto(f"/use-cases/{world.use_case.key}/oversight/{study.public_id}/")
    overall = page.locator("#results-by-kind tr[data-kind=overall]")
    expect(overall.locator("[data-field=caught]")).to_have_text("1")
    expect(overall.locator("[data-field=seeded]")).to_have_text("1")
    expect(page.locator("#seeded-items")).to_contain_text("caught")
    expect(page.locator("#caught-rule")).to_contain_text("rejected the copy and marked")

    item.refresh_from_db()
    assert (item.decision, item.flags) == ("reject", [target])
    assert page.console_errors == []
