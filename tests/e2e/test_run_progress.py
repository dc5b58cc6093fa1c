"""The run page follows a running run live: numbers and bar change without a reload."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from charters.models import Role
from charters.services.configurations import configuration_upload
from charters.services.task_sets import task_set_import
from charters.services.use_cases import membership_grant, use_case_create
from runs.models import Run, RunStatus
from runs.services.runs import run_create

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"


@pytest.fixture
def running_run():
    owner = get_user_model().objects.create_user(username="olivia", password="pw-olivia-123!")
    model_owner = get_user_model().objects.create_user(username="mo", password="pw-mo-123!")
    use_case = use_case_create(
        actor=owner,
        key="CREDIT-MEMO-B",
        name="Credit-memo drafting",
        business_outcome="Faster drafting.",
        value_hypothesis="Half the drafting time.",
        autonomy=1,
        consequence=3,
    )
    membership_grant(actor=owner, use_case=use_case, user=model_owner, role=Role.MODEL_OWNER)
    configuration = configuration_upload(
        actor=model_owner,
        use_case=use_case,
        name="gemini-2-5",
        content=(EXAMPLE / "sigma-gemini-2.5.yaml").read_bytes(),
        filename="sigma-gemini-2.5.yaml",
    )
    with (EXAMPLE / "tasks.jsonl").open("rb") as fileobj:
        task_set = task_set_import(
            actor=model_owner, use_case=use_case, name="memo", fileobj=fileobj, filename="t"
        )
    run = run_create(
        actor=model_owner,
        use_case=use_case,
        configuration=configuration,
        task_set=task_set,
        split="graded",
        repeats=2,
    )
    # The workers would do this: the run is running, 10 of 130 outputs written.
    Run.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING,
        started_at=timezone.now() - timedelta(seconds=20),
        items_done=10,
    )
    return run


def test_the_run_page_updates_its_numbers_without_a_reload(page, sign_in, running_run):
    sign_in("mo", "pw-mo-123!")
    page.goto(f"/use-cases/CREDIT-MEMO-B/runs/{running_run.pk}/")
    done = page.locator("#run-progress [data-field=items_done]")
    expect(done).to_have_text("10")

    Run.objects.filter(pk=running_run.pk).update(items_done=70, items_failed=3)
    expect(done).to_have_text("70", timeout=10_000)
    expect(page.locator("#run-progress [data-field=items_failed]")).to_have_text("3")
    assert page.locator("#run-progress progress").get_attribute("value") == "70"

    Run.objects.filter(pk=running_run.pk).update(
        items_done=130, status=RunStatus.COMPLETED, finished_at=timezone.now()
    )
    expect(page.locator("#run-progress [data-field=status]")).to_have_text(
        "Completed", timeout=10_000
    )
    assert page.console_errors == []
