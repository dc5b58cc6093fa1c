"""A new use case from an empty database to a signed scorecard, through the web UI alone.

Seed 003's Use Case A (control design effectiveness, A2 / C3 / E3): the administrator creates
the people and the use case in the Django admin; the charter owner grants the roles, writes
the charter in the editor and three people sign it; the model owner uploads two σ that differ
only in the model and the task set, starts the runs against the loopback model and judges
them; two graders grade with the keyboard; the adjudicator settles their disagreements in
bulk; the charter owner records both decisions and compares them; the reviewer signs off the
scorecard; its PDF and evidence pack are downloaded and checked. The only step outside the
browser is the first superuser, as an operator would create it with ``createsuperuser``.
"""

from __future__ import annotations

import hashlib
import io
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from lifecycle_use_case_a import KEY, NOT_ASSERTIVE, UNSUPPORTED, reply, sigma_yaml, tasks_jsonl
from playwright.sync_api import expect
from pypdf import PdfReader

from audit.selectors import audit_verify
from charters.models import Charter, Membership, Role, Stage, UseCase
from demo.testing.fakellm import FakeLLMServer
from gates.models import Decision
from grading.models import Adjudication, Assignment, AssignmentStatus
from runs.executor import load_litellm
from runs.models import Run, RunStatus
from scorecards.evidence import evidence_verify
from scorecards.models import Scorecard, ScorecardStatus

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ADMIN = ("root", "Root-operator-2026!")
#: username → (password, role on the use case)
PEOPLE = {
    "olivia": Role.CHARTER_OWNER,
    "mo": Role.MODEL_OWNER,
    "gina": Role.GRADER,
    "gus": Role.GRADER,
    "ada": Role.ADJUDICATOR,
    "rita": Role.REVIEWER,
}
GATED = {  # metric id → θout, θin, weight, planned n
    "key_element_capture": ("60", "70", "1", "40"),
    "hallucination_rate": ("40", "30", "1", "40"),
}
VALUE_INPUTS = """\
currency: GBP
tasks_per_year: 4000
hourly_cost: 80
t_manual: {low: 0.5, mode: 1.0, high: 2.0}
t_gen: 0.02
t_review: {low: 0.1, mode: 0.25, high: 0.5}
inference_cost_per_task: 0.10
integration_cost: 50000
"""
SAMPLE_PER_SIGMA = 3


def password(username: str) -> str:
    return f"Lifecycle-{username}-2026!"


class Browser:
    """One browser session (its own cookies) per person, with its screenshots numbered."""

    def __init__(self, browser, base_url: str, shots: Path):
        self._browser = browser
        self._base_url = base_url
        self._shots = shots
        self._contexts = []
        self.pages = {}
        self._shot = 0

    def open(self, username: str):
        context = self._browser.new_context(
            base_url=self._base_url, viewport={"width": 1280, "height": 900}, accept_downloads=True
        )
        self._contexts.append(context)
        page = context.new_page()
        page.console_errors = []
        page.on("pageerror", lambda error: page.console_errors.append(str(error)))
        page.on(
            "console",
            lambda m: (
                page.console_errors.append(f"{m.text} {m.location.get('url', '')}")
                if m.type == "error"
                else None
            ),
        )
        self.pages[username] = page
        return page

    def sign_in(self, username: str):
        page = self.open(username)
        page.goto("/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password(username))
        page.click("button[type=submit]")
        page.wait_for_url("**/")
        return page

    def shot(self, page, name: str) -> None:
        self._shot += 1
        page.screenshot(path=str(self._shots / f"{self._shot:02d}-{name}.png"), full_page=True)

    def close(self) -> list[str]:
        errors = [e for page in self.pages.values() for e in page.console_errors]
        for context in self._contexts:
            context.close()
        return errors


@pytest.fixture
def fake_model():
    load_litellm()
    with FakeLLMServer(responder=reply) as server:
        yield server


@pytest.fixture
def people(browser, live_server, page, tmp_path):
    """The browser sessions; ``page`` (the conftest's) waits for the server to go idle."""
    shots = tmp_path / "screens"
    shots.mkdir()
    sessions = Browser(browser, live_server.url, shots)
    yield sessions
    assert sessions.close() == []


def open_use_case(page) -> None:
    page.goto("/")
    page.get_by_role("link", name=KEY).first.click()
    page.wait_for_url(f"**/use-cases/{KEY}/")


# --------------------------------------------------------------------------- 1. admin


def admin_creates_people_and_the_use_case(people: Browser) -> None:
    page = people.open(ADMIN[0])
    page.goto("/admin/")
    page.fill("input[name=username]", ADMIN[0])
    page.fill("input[name=password]", ADMIN[1])
    page.click("input[type=submit]")
    expect(page.locator("#site-name")).to_be_visible()
    for username in PEOPLE:
        page.goto("/admin/")
        page.locator("tr.model-user").get_by_role("link", name="Add").click()
        page.fill("#id_username", username)
        page.fill("#id_password1", password(username))
        page.fill("#id_password2", password(username))
        page.click("input[name=_save]")
        expect(page.locator(".messagelist")).to_contain_text("was added successfully")
    page.goto("/admin/")
    people.shot(page, "admin-index")
    page.locator("tr.model-usecase").get_by_role("link", name="Add").click()
    page.fill("#id_key", KEY)
    page.fill("#id_name", "Control design effectiveness")
    page.fill(
        "#id_business_outcome",
        "Issue QA classifies the design of each control in a process–risk–control matrix "
        "against the control standard in minutes instead of hours.",
    )
    page.fill(
        "#id_value_hypothesis",
        "Analysts approve structured judgements instead of writing them, halving review time.",
    )
    page.select_option("#id_autonomy", "2")
    page.select_option("#id_consequence", "3")
    page.select_option("#id_charter_owner", label="olivia")
    people.shot(page, "admin-use-case-add")
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("was added successfully")


def owner_grants_roles(people: Browser):
    page = people.sign_in("olivia")
    open_use_case(page)
    page.get_by_role("link", name="Manage members").click()
    for username, role in PEOPLE.items():
        if role == Role.CHARTER_OWNER:
            continue
        page.get_by_label("Username").fill(username)
        page.get_by_label("Role").select_option(role.value)
        page.get_by_role("button", name="Add").click()
        # The same answer whether or not the user name exists (docs/operations.md, "Access").
        expect(page.locator(".messages")).to_contain_text(
            f"If an active account has the user name {username}, it now holds the role"
        )
    people.shot(page, "members")
    return page


# --------------------------------------------------------------------------- 2. charter


def owner_writes_the_charter(people: Browser, page) -> None:
    open_use_case(page)
    page.locator("main").get_by_role("link", name="Charter", exact=True).click()
    page.get_by_role("link", name="Write the charter").click()
    expect(page.locator("h1")).to_contain_text("Write the charter (v1)")
    for metric_id in page.locator("input[name=metric]").evaluate_all(
        "inputs => inputs.map(i => i.value)"
    ):
        row = page.locator("tr", has=page.locator(f"input[name=metric][value='{metric_id}']"))
        if metric_id in GATED:
            theta_out, theta_in, weight, planned = GATED[metric_id]
            row.locator(f"select[name='treatment-{metric_id}']").select_option("gated")
            row.locator(f"input[name='theta_out-{metric_id}']").fill(theta_out)
            row.locator(f"input[name='theta_in-{metric_id}']").fill(theta_in)
            row.locator(f"input[name='weight-{metric_id}']").fill(weight)
            row.locator(f"input[name='planned_n-{metric_id}']").fill(planned)
            row.locator(f"textarea[name='harm_statement-{metric_id}']").fill(
                "A control judged compliant whose design has a gap leaves the risk it should "
                "mitigate open, and the issue is closed on a wrong finding."
            )
        elif row.locator(".badge", has_text="required at A2").count():
            row.locator(f"select[name='treatment-{metric_id}']").select_option("informational")
            row.locator(f"textarea[name='reason-{metric_id}']").fill(
                "Not gated at the first evaluation of Use Case A; reported beside the gate."
            )
    page.fill("input[name=repeats_k]", "4")
    # Success of a control judgement: every key element present, by the judge (SPEC §4.1);
    # producing an output is completion, not success.
    page.select_option("select[name=success_rule]", "key_elements_present")
    page.fill(
        "textarea[name=baseline]",
        "Issue QA analysts read each control against the standard and write the judgement "
        "table by hand; the hours per control are the analysts' estimates.",
    )
    page.select_option("select[name=measurement_mode]", "estimated")
    page.fill("textarea[name=value_inputs]", VALUE_INPUTS)
    page.fill(
        "textarea[name=reevaluation_triggers]",
        "A new configuration σ version.\nA charter deviation.\nThe control standard changes.",
    )
    page.fill("input[name=next_review_date]", "2027-06-30")
    panel = page.locator("#validation-panel")
    expect(panel).to_contain_text("no errors", timeout=10_000)
    people.shot(page, "charter-editor")
    page.get_by_role("button", name="Save draft").click()
    expect(page.locator("h1")).to_contain_text("Charter v1")
    people.shot(page, "charter-saved")


def sign_the_charter(people: Browser, page, role: Role) -> None:
    open_use_case(page)
    page.locator("main").get_by_role("link", name="Charter", exact=True).click()
    page.get_by_role("link", name="Signatures").click()
    with page.expect_navigation():
        page.locator(f"button[name=role][value={role.value}]").click()


# --------------------------------------------------------------------------- 3–5. σ, runs, judge


def model_owner_uploads(people: Browser, page, tmp_path: Path, api_base: str) -> None:
    for model in ("gemini-2.5-flash", "gemini-2.5-pro"):
        path = tmp_path / f"sigma-{model}.yaml"
        path.write_text(sigma_yaml(model=model, api_base=api_base), encoding="utf-8")
        open_use_case(page)
        page.get_by_role("link", name="Configurations σ").click()
        page.get_by_role("link", name="Upload σ").click()
        page.locator("input[name=name]").fill(model.replace(".", "-"))
        page.locator("input[name=file]").set_input_files(str(path))
        page.get_by_role("button", name="Validate and freeze").click()
        expect(page.locator("body")).to_contain_text("sha256", ignore_case=True)
    people.shot(page, "sigma")
    tasks = tmp_path / "controls.jsonl"
    tasks.write_text(tasks_jsonl(), encoding="utf-8")
    open_use_case(page)
    page.get_by_role("link", name="Task sets").click()
    page.get_by_role("link", name="Import a task set").click()
    page.locator("input[name=name]").fill("controls")
    page.locator("input[name=file]").set_input_files(str(tasks))
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.locator(".messages")).to_contain_text("Imported 9 tasks as controls v1")
    people.shot(page, "task-set")


def option_containing(select, text: str) -> str:
    labels = select.locator("option").all_inner_texts()
    return next(label for label in labels if text in label)


def start_and_watch_a_run(people: Browser, page, sigma: str, split: str, repeats: int) -> None:
    open_use_case(page)
    page.locator("#run-stage-actions").get_by_role("link", name="Start a run").click()
    page.wait_for_url(f"**/use-cases/{KEY}/runs/new/")
    sigma_select = page.get_by_label("σ")
    sigma_select.select_option(label=option_containing(sigma_select, f"{sigma} v1"))
    task_sets = page.get_by_label("Task set")
    task_sets.select_option(label=option_containing(task_sets, "controls v1"))
    page.get_by_label("Split").select_option(split)
    page.get_by_label("Repeats K").fill(str(repeats))
    page.get_by_label("Concurrency").fill("4")
    page.get_by_label("Cost budget (USD)").fill("5")
    page.get_by_role("button", name="Start the run").click()
    page.wait_for_url(f"**/use-cases/{KEY}/runs/*/")
    progress = page.locator("#run-progress")
    expect(progress.locator("[data-field=status]")).to_have_text("Completed", timeout=60_000)
    tasks = 6 if split == "graded" else 2
    expect(progress.locator("[data-field=items_done]")).to_have_text(str(tasks * repeats))
    expect(progress.locator("[data-field=items_failed]")).to_have_text("0")


def judge_the_run(people: Browser, page) -> None:
    form = page.locator("#judge-form")
    form.get_by_label("Built-in offline judge (no model)").check()
    form.get_by_label("Purpose").select_option("gated")
    form.get_by_role("button", name="Judge the run").click()
    judging = page.locator(".judging-progress").first
    expect(judging.locator("[data-field=status]")).to_have_text("Completed", timeout=60_000)
    expect(judging.locator("[data-field=outputs_done]")).to_have_text("24")


# --------------------------------------------------------------------------- 6. grading


def owner_creates_the_session(people: Browser, page) -> None:
    open_use_case(page)
    page.get_by_role("link", name="Grading sessions").click()
    page.get_by_role("link", name="New session").click()
    form = page.locator("#session-form")
    form.get_by_label("Name").fill("Control design round 1")
    for box in form.locator("input[name=runs]").all():
        box.uncheck()
    for label in form.locator("label", has_text="graded · K = 4").all():
        label.locator("input").check()
    form.get_by_label("Sample size").fill(str(SAMPLE_PER_SIGMA))
    form.get_by_label("gina", exact=True).check()
    form.get_by_label("gus", exact=True).check()
    form.get_by_label("ada", exact=True).check()
    form.get_by_label("Seed").fill("2026")
    people.shot(page, "session-new")
    form.get_by_role("button", name="Draw the sample and assign it").click()
    expect(page.locator("#session-facts")).to_contain_text(f"{2 * SAMPLE_PER_SIGMA}")


def keys_for(page, dissent: bool) -> list[str]:
    """What a grader who reads the artefact presses, unit by unit, in the page's order."""
    keys: list[str] = []
    first_sentence = True
    for unit in page.locator("#ws-artefact section.ws-unit").all():
        key = unit.get_attribute("data-unit")
        classes = unit.get_attribute("class") or ""
        if "ws-sentence" in classes:
            text = unit.locator(".ws-sentence-text").inner_text()
            relevant = "n" if dissent and first_sentence else "y"
            first_sentence = False
            if NOT_ASSERTIVE in text:
                keys += ["n", relevant]  # not assertive, so "supported" is not asked
            elif UNSUPPORTED in text:
                keys += ["y", "3", relevant]  # supported: 3 "Not" (its letter is x)
            else:
                keys += ["y", "f", relevant]  # supported: fully
        elif "ws-cited" in classes:
            keys.append("1")  # strict: the chunk says it (the letter s is "submit")
        elif key == "k:ke1":
            keys.append("1")  # present and correct
        elif key == "k:ke2":
            keys.append("3")  # absent: no output proposes a remediation
        elif key == "artefact":
            keys.append("2" if dissent else "1")
        else:
            raise AssertionError(f"unexpected unit {key}")
    return keys


def grader_grades_with_the_keyboard(people: Browser, username: str, dissent: bool) -> None:
    page = people.sign_in(username)
    open_use_case(page)
    page.locator("main").get_by_role("link", name="My grading").click()
    page.locator("a.gr-continue").first.click()
    total = 2 * SAMPLE_PER_SIGMA
    for number in range(1, total + 1):
        expect(page.locator("h1")).to_contain_text(f"Artefact {number} of {total}")
        expect(page.locator("#ws-form[data-keyboard=ready]")).to_be_attached()
        for key in keys_for(page, dissent):
            page.keyboard.press(key)
        expect(page.locator("#ws-save")).to_have_text("Saved", timeout=10_000)
        answered = page.locator("#ws-answered")
        asked = answered.get_attribute("data-asked")
        expect(answered).to_have_text(f"{asked} of {asked} answers given")
        if number == 1:
            people.shot(page, f"workspace-{username}")
        url = page.url
        page.keyboard.press("s")
        page.wait_for_url(lambda now, url=url: now != url, timeout=10_000)


def adjudicator_settles_in_bulk(people: Browser) -> None:
    page = people.sign_in("ada")
    open_use_case(page)
    page.get_by_role("link", name="Grading sessions").click()
    page.get_by_role("link", name="Control design round 1").click()
    page.locator("#session-links").get_by_role("link", name="Adjudication").click()
    queue = page.url
    pending = page.locator("#adjudication-progress [data-field=pending]")
    expect(pending).to_have_text(str(2 * 2 * SAMPLE_PER_SIGMA))
    for artefact in range(2 * SAMPLE_PER_SIGMA):
        page.goto(queue)
        page.locator("#adjudicate-next").click()
        # keys pressed before the page's script has bound them would be lost
        expect(page.locator("#adj-form[data-keyboard=ready]")).to_be_attached(timeout=20_000)
        if artefact == 0:
            people.shot(page, "adjudication")
        page.keyboard.press("1")  # the first disputed field: Grader 1's value
        page.keyboard.press("Shift+Digit2")  # every remaining one: Grader 2's
        page.keyboard.press("s")
        # one save for the artefact, then the page with its message (allow for a loaded machine)
        expect(page.locator(".messages")).to_be_visible(timeout=20_000)
    page.goto(queue)
    expect(pending).to_have_text("0")
    people.shot(page, "adjudication-done")


# --------------------------------------------------------------------------- 7–8. decide


def record_a_decision(people: Browser, page, sigma: str) -> str:
    open_use_case(page)
    page.get_by_role("link", name="Record a decision").click()
    expect(page.locator("h1")).to_contain_text("Record a decision")
    page.get_by_label("Charter version").select_option("1")
    run = page.get_by_label("Run", exact=True)
    run.select_option(label=option_containing(run, f"σ {sigma} v1 · graded, K = 4"))
    session = page.get_by_label("Grading session")
    session.select_option(label=option_containing(session, "Control design round 1"))
    judge = page.get_by_label("Judge")
    judge.select_option(label=option_containing(judge, "offline"))
    stress = page.get_by_label("Stress-split run")
    stress.select_option(label=option_containing(stress, f"σ {sigma} v1"))
    page.get_by_role("button", name="Record the decision").click()
    page.wait_for_url(re.compile(rf"/use-cases/{KEY}/decisions/\d+/$"))
    status = page.locator(".badge").first.inner_text()
    people.shot(page, f"decision-{sigma}")
    return status


def compare_the_decisions(people: Browser, page) -> None:
    open_use_case(page)
    page.locator("main").get_by_role("link", name="Decisions", exact=True).click()
    page.get_by_role("link", name="Compare two decisions").click()
    selects = page.locator("form select")
    selects.nth(0).select_option(label=option_containing(selects.nth(0), "gemini-2-5-flash"))
    selects.nth(1).select_option(label=option_containing(selects.nth(1), "gemini-2-5-pro"))
    page.get_by_role("button", name="Compare").click()
    expect(page.locator(".verdict")).to_contain_text("only the model (M) differs")
    people.shot(page, "compare")


def owner_drafts_the_scorecard(people: Browser, page) -> None:
    open_use_case(page)
    page.locator("main").get_by_role("link", name="Decisions", exact=True).click()
    page.locator("table").get_by_role("link").filter(has_text=re.compile(r"\d")).first.click()
    page.get_by_role("button", name="Draft the scorecard").click()
    expect(page.locator("h1")).to_contain_text("Scorecard")
    page.locator("details summary").first.click()
    page.get_by_label("Observed failure modes", exact=True).fill(
        "Flash asserts audit results that no source states; Pro does not."
    )
    page.get_by_label("Conditions of use", exact=True).fill(
        "An issue QA analyst approves every judgement before the matrix is updated."
    )
    page.get_by_label("Compensating controls", exact=True).fill(
        "Quarterly sample re-performance of approved judgements by second-line testing."
    )
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".summary")).not_to_contain_text("mandatory fields missing")
    people.shot(page, "scorecard-draft")


def reviewer_signs_off(people: Browser, page) -> None:
    open_use_case(page)
    page.locator("main").get_by_role("link", name=re.compile(r"^Scorecard \d+$")).click()
    page.get_by_role("button", name="Sign off as second-line reviewer").click()
    expect(page.locator(".summary .state")).to_contain_text("signed off by rita")
    people.shot(page, "scorecard-final")


def download(page, link_name: str, tmp_path: Path) -> Path:
    with page.expect_download() as info:
        page.get_by_role("link", name=link_name).click(modifiers=["Alt"])
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    return path


# --------------------------------------------------------------------------- the test


def test_a_new_use_case_goes_from_an_empty_database_to_a_signed_scorecard_in_the_browser(
    people, fake_model, tmp_path
):
    assert not UseCase.objects.exists() and not get_user_model().objects.exists()
    get_user_model().objects.create_superuser(ADMIN[0], "root@example.com", ADMIN[1])

    # 1. The administrator creates the people and the use case; its owner grants the roles.
    admin_creates_people_and_the_use_case(people)
    olivia = owner_grants_roles(people)

    # 2. The charter, written in the editor and signed by three people in their own sessions.
    owner_writes_the_charter(people, olivia)
    sign_the_charter(people, olivia, Role.CHARTER_OWNER)
    mo = people.sign_in("mo")
    sign_the_charter(people, mo, Role.MODEL_OWNER)
    rita = people.sign_in("rita")
    sign_the_charter(people, rita, Role.REVIEWER)
    expect(rita.locator("body")).to_contain_text("frozen", ignore_case=True)

    # 3. Two σ differing only in the model, and the task set.
    model_owner_uploads(people, mo, tmp_path, fake_model.base_url)

    # 4–5. Each σ run on the graded split (K = 4) and judged; each on the stress split.
    for sigma in ("gemini-2-5-flash", "gemini-2-5-pro"):
        start_and_watch_a_run(people, mo, sigma, "graded", 4)
        people.shot(mo, f"run-{sigma}")
        judge_the_run(people, mo)
        start_and_watch_a_run(people, mo, sigma, "stress", 1)
    people.shot(mo, "judged")
    assert fake_model.calls == 2 * (6 * 4 + 2)

    # 6. A session over both runs, two graders at the keyboard, bulk adjudication.
    owner_creates_the_session(people, olivia)
    grader_grades_with_the_keyboard(people, "gina", dissent=False)
    grader_grades_with_the_keyboard(people, "gus", dissent=True)
    adjudicator_settles_in_bulk(people)

    # 7. A decision for each σ, then the two side by side.
    statuses = {
        sigma: record_a_decision(people, olivia, sigma)
        for sigma in ("gemini-2-5-flash", "gemini-2-5-pro")
    }
    compare_the_decisions(people, olivia)

    # 8. The scorecard: drafted and filled in by the owner, signed off by the reviewer.
    owner_drafts_the_scorecard(people, olivia)
    open_use_case(rita)
    reviewer_signs_off(people, rita)
    pdf_path = download(rita, "PDF", tmp_path)
    pack_path = download(rita, "Evidence pack (zip)", tmp_path)

    # What the users rely on.
    open_use_case(olivia)
    stages = olivia.locator("ol.lifecycle > li")
    expect(stages).to_have_count(7)
    for stage in range(7):
        expect(stages.nth(stage)).to_contain_text("entered")
    people.shot(olivia, "use-case-final")

    use_case = UseCase.objects.get(key=KEY)
    assert use_case.stage == Stage.DECIDE
    assert {(m.user.username, m.role) for m in Membership.objects.filter(use_case=use_case)} == {
        (username, role.value) for username, role in PEOPLE.items()
    }
    charter = Charter.objects.get(use_case=use_case)
    assert charter.is_frozen and charter.signatures.count() == 3
    assert Run.objects.filter(use_case=use_case, status=RunStatus.COMPLETED).count() == 4
    assert not Assignment.objects.exclude(status=AssignmentStatus.SUBMITTED).exists()
    assert Adjudication.objects.count() == 2 * 2 * SAMPLE_PER_SIGMA
    decisions = {d.configuration.name: d for d in Decision.objects.filter(use_case=use_case)}
    assert {name: d.status for name, d in decisions.items()} == statuses
    scorecard = Scorecard.objects.get()
    assert scorecard.status == ScorecardStatus.FINAL
    assert scorecard.signed_off_by.username == "rita"

    pdf = pdf_path.read_bytes()
    assert hashlib.sha256(pdf).hexdigest() == scorecard.pdf_sha256
    reader = PdfReader(io.BytesIO(pdf))
    pages = [p.extract_text() for p in reader.pages]
    assert all(scorecard.sha256 in text for text in pages)
    assert KEY in pages[0] and scorecard.decision.status in pages[0]
    result = evidence_verify(pack_path.read_bytes())
    assert result.ok, result.reason
    assert "scorecard.pdf" in result.checked

    chain = audit_verify()
    assert chain.ok and chain.entries_checked > 0
