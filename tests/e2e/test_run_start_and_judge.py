"""From the use-case page a model owner starts a run, watches it finish and judges it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from charters.models import Role
from charters.services.configurations import configuration_upload
from charters.services.task_sets import task_set_import
from charters.services.use_cases import membership_grant, use_case_create
from demo.testing.fakellm import FakeLLMServer
from runs.executor import load_litellm
from runs.models import Judging, JudgingStatus, Run, RunStatus
from runs.services.judging import judge_get_or_create
from runs.services.runs import run_create

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"
KEY = "CREDIT-MEMO-B"


def reply(request: dict) -> str:
    user = request["messages"][-1]["content"]
    first_id = user.split("[", 1)[1].split("]", 1)[0]
    return f"The facility is a revolving credit facility [{first_id}]."


@pytest.fixture
def fake_model():
    load_litellm()
    with FakeLLMServer(responder=reply) as server:
        yield server


@pytest.fixture
def use_case_with_fake_sigma(fake_model):
    owner = get_user_model().objects.create_user(username="olivia", password="pw-olivia-123!")
    model_owner = get_user_model().objects.create_user(username="mo", password="pw-mo-123!")
    use_case = use_case_create(
        actor=owner,
        key=KEY,
        name="Credit-memo drafting",
        business_outcome="Faster drafting.",
        value_hypothesis="Half the drafting time.",
        autonomy=1,
        consequence=3,
    )
    membership_grant(actor=owner, use_case=use_case, user=model_owner, role=Role.MODEL_OWNER)
    document = yaml.safe_load((EXAMPLE / "sigma-gemini-2.5.yaml").read_text())
    document["model"] = {
        "provider": "openai_compatible",
        "id": "fake-model",
        "api_base": fake_model.base_url,
        "parameters": {"temperature": 0},
    }
    configuration_upload(
        actor=model_owner,
        use_case=use_case,
        name="fake-sigma",
        content=json.dumps(document),
        filename="sigma.json",
    )
    with (EXAMPLE / "tasks.jsonl").open("rb") as fileobj:
        task_set_import(
            actor=model_owner, use_case=use_case, name="memo", fileobj=fileobj, filename="t"
        )
    return use_case


def test_a_model_owner_starts_a_run_watches_it_finish_and_judges_it(
    page, sign_in, use_case_with_fake_sigma, fake_model
):
    sign_in("mo", "pw-mo-123!")
    page.goto(f"/use-cases/{KEY}/")
    page.locator("#run-stage-actions").get_by_role("link", name="Start a run").click()
    page.wait_for_url(f"**/use-cases/{KEY}/runs/new/")

    page.get_by_label("σ").select_option(label="fake-sigma v1 (openai_compatible/fake-model)")
    page.get_by_label("Task set").select_option(label="memo v1 (dev 12, graded 65, stress 12)")
    page.get_by_label("Split").select_option("graded")
    page.get_by_label("Repeats K").fill("2")
    page.get_by_label("Concurrency").fill("4")
    page.get_by_label("Cost budget (USD)").fill("10")
    page.get_by_role("button", name="Start the run").click()

    page.wait_for_url(f"**/use-cases/{KEY}/runs/*/")
    progress = page.locator("#run-progress")
    expect(progress.locator("[data-field=status]")).to_have_text("Completed", timeout=60_000)
    expect(progress.locator("[data-field=items_done]")).to_have_text("130")
    expect(progress.locator("[data-field=items_failed]")).to_have_text("0")
    assert fake_model.calls == 130

    form = page.locator("#judge-form")
    expect(form).to_be_visible()
    form.get_by_label("Built-in offline judge (no model)").check()
    form.get_by_label("Purpose").select_option("gated")
    form.get_by_role("button", name="Judge the run").click()

    judging = page.locator(".judging-progress").first
    expect(judging.locator("[data-field=status]")).to_have_text("Completed", timeout=60_000)
    expect(judging.locator("[data-field=outputs_done]")).to_have_text("130")
    expect(judging.locator("[data-field=outputs_total]")).to_have_text("130")
    results = judging.locator("table.judge-results")
    expect(results).to_be_visible()
    expect(results.locator("tr", has_text="key_element_captured")).to_have_count(1)
    expect(results.locator("tr", has_text="citation_strict")).to_have_count(1)
    assert page.console_errors == []


def test_the_run_page_follows_a_judging_live_until_it_finishes(
    page, sign_in, use_case_with_fake_sigma
):
    use_case = use_case_with_fake_sigma
    model_owner = get_user_model().objects.get(username="mo")
    run = run_create(
        actor=model_owner,
        use_case=use_case,
        configuration=use_case.configurations.get(),
        task_set=use_case.task_sets.get(),
        split="graded",
        repeats=2,
    )
    Run.objects.filter(pk=run.pk).update(status=RunStatus.COMPLETED, items_done=130)
    # The workers would do this: the judging is running, 10 of 130 outputs judged.
    judging = Judging.objects.create(
        run=run,
        judge=judge_get_or_create(kind="offline"),
        purpose="gated",
        status=JudgingStatus.RUNNING,
        outputs_total=130,
        outputs_done=10,
        outputs_judged=10,
        requested_by=model_owner,
    )
    sign_in("mo", "pw-mo-123!")
    page.goto(f"/use-cases/{KEY}/runs/{run.pk}/")
    block = page.locator(f"#judging-{judging.pk}")
    expect(block.locator("[data-field=outputs_done]")).to_have_text("10")
    expect(block.locator("[data-field=status]")).to_have_text("Running")

    Judging.objects.filter(pk=judging.pk).update(outputs_done=70, outputs_judged=70)
    expect(block.locator("[data-field=outputs_done]")).to_have_text("70", timeout=10_000)
    assert block.locator("progress").get_attribute("value") == "70"

    Judging.objects.filter(pk=judging.pk).update(
        outputs_done=130, outputs_judged=130, status=JudgingStatus.COMPLETED
    )
    expect(page.locator(f"#judging-{judging.pk}[data-status=completed]")).to_have_count(
        1, timeout=10_000
    )
    expect(block.locator("[data-field=status]")).to_have_text("Completed")
    assert page.console_errors == []
