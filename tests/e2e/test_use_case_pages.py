"""The dashboard and use-case pages in a real browser, under the real CSP."""

import pytest
from django.contrib.auth import get_user_model

from charters.services.use_cases import use_case_create

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_owner_signs_in_and_finds_what_is_missing_next(page, sign_in, tmp_path):
    owner = get_user_model().objects.create_user(username="olivia", password="s3cret-pass-1")
    use_case_create(
        actor=owner,
        key="CREDIT-MEMO-B",
        name="Credit-memo drafting <b>bold</b>",
        business_outcome="Faster drafting.",
        value_hypothesis="Half the drafting time.",
        autonomy=1,
        consequence=3,
    )
    sign_in("olivia", "s3cret-pass-1")
    row = page.locator("table tbody tr").first
    assert "CREDIT-MEMO-B" in row.inner_text()
    assert "A1 / C3 / E2" in row.inner_text()
    # Untrusted text is shown as text, never as markup.
    assert "<b>bold</b>" in row.inner_text()
    assert page.locator("table b").count() == 0

    page.click("text=CREDIT-MEMO-B")
    page.wait_for_url("**/use-cases/CREDIT-MEMO-B/")
    missing = page.locator("ul.issues").inner_text()
    assert "Write the charter" in missing
    assert "Import the task set" in missing
    page.screenshot(path=str(tmp_path / "use-case.png"), full_page=True)
    assert page.console_errors == []
