"""The charter editor validates live in a real browser and the owner signs in the browser."""

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from charters.charter_document import document_from_text
from charters.models import Charter, Role
from charters.services.charters import charter_create
from charters.services.use_cases import membership_grant, use_case_create

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CHARTER = Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "charter.yaml"


@pytest.fixture
def draft_charter():
    users = {
        name: get_user_model().objects.create_user(username=name, password=f"pw-{name}-123!")
        for name in ("olivia", "mo", "rita")
    }
    use_case = use_case_create(
        actor=users["olivia"],
        key="CREDIT-MEMO-B",
        name="Credit-memo drafting",
        business_outcome="Faster drafting.",
        value_hypothesis="Half the drafting time.",
        autonomy=1,
        consequence=3,
    )
    membership_grant(
        actor=users["olivia"], use_case=use_case, user=users["mo"], role=Role.MODEL_OWNER
    )
    membership_grant(
        actor=users["olivia"], use_case=use_case, user=users["rita"], role=Role.REVIEWER
    )
    document = document_from_text(CHARTER.read_text(encoding="utf-8"), fmt="yaml")
    return charter_create(actor=users["olivia"], use_case=use_case, document=document)


def test_an_inverted_pair_is_flagged_live_without_saving(page, sign_in, draft_charter, tmp_path):
    sign_in("olivia", "pw-olivia-123!")
    page.goto("/use-cases/CREDIT-MEMO-B/charter/edit/")
    panel = page.locator("#validation-panel")
    assert "inverted pair" not in panel.inner_text()

    # The paper's printed pair for a lower-is-better metric: θout < 50, θin < 55.
    page.fill("input[name='theta_in-irrelevance_rate']", "55")
    # Playwright polls the DOM; the CSP forbids the eval that wait_for_function would need.
    expect(panel).to_contain_text("inverted pair", timeout=10_000)
    text = panel.inner_text()
    assert "irrelevance_rate" in text
    # The error also stands on the metric's own row, where the pair was typed.
    row = page.locator("[data-row-issues='irrelevance_rate']")
    expect(row).to_contain_text("inverted pair", timeout=10_000)
    other = page.locator("[data-row-issues='hallucination_rate']")
    assert "inverted pair" not in other.inner_text()
    page.screenshot(path=str(tmp_path / "charter-editor.png"), full_page=True)

    # Nothing was saved: the stored draft keeps the corrected pair.
    stored = draft_charter.metrics.get(metric_id="irrelevance_rate")
    assert stored.theta_in == 45

    # Putting it right clears the error, again without a reload.
    page.fill("input[name='theta_in-irrelevance_rate']", "45")
    expect(panel).not_to_contain_text("inverted pair", timeout=10_000)
    expect(row).not_to_contain_text("inverted pair", timeout=10_000)
    assert page.console_errors == []


def test_the_owner_signs_in_the_browser_and_the_charter_waits_for_the_others(
    page, sign_in, draft_charter
):
    sign_in("olivia", "pw-olivia-123!")
    page.goto(f"/use-cases/CREDIT-MEMO-B/charter/v{draft_charter.version}/sign/")
    with page.expect_navigation():
        page.click("button:has-text('Sign as Charter owner')")
    draft_charter.refresh_from_db()
    assert draft_charter.signatures.filter(role=Role.CHARTER_OWNER).count() == 1
    assert not draft_charter.is_frozen
    assert Charter.objects.get(pk=draft_charter.pk).frozen_at is None
    assert page.console_errors == []
