"""Hostile content in Chromium: text a model, a task author, a grader or an owner wrote is shown
as text on every page that renders it, and nothing in it runs (issue 17, Deliver 6).

Each payload sets ``window.__hostile`` if it ever runs. They go in through the product's own
paths: a task set (task input, source chunk text and title, key element), a σ (its display
name and prompt), an imported run (model output and file name), grader disagreement and the
adjudicator's note, a decision and the scorecard's committee fields; the use case's name and
business outcome (which the charter restates) are written as a migration would, since the
product freezes them. Then the grader's workspace, the adjudication page, the run and output
pages, the decision page and the scorecard page are opened in headless Chromium and each is
checked: no dialog, the flag unset, no CSP violation and no console error, no request beyond
the server's own origin, no element the payloads would create, the payload text visible,
and no page wider than the window (very long words wrap).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.urls import reverse

from charters.models import UseCase
from charters.services.configurations import configuration_upload
from charters.services.task_sets import task_set_import
from demo.testing.grading import EXAMPLES, GradingWorld, grade_apart, make_world
from demo.testing.scorecards import COMMITTEE_FIELDS, draft_scorecard, recorded_decision
from grading.models import Assignment, SessionArtefact
from grading.services.grades import adjudication_record
from grading.services.sessions import session_create
from runs.models import Output, Run
from runs.services.outputs import output_import

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-hostile-content-17!"
LONG_WORD = "Q" * 3000
RTL = "\u202eexe.memo\u202c"
# What a browser would run if any of it reached the DOM as markup.
PAYLOADS = {
    "script": "<script>window.__hostile='script'</script>",
    "img": "<img src=x onerror=\"window.__hostile='img'\">",
    "link": "[the memo](javascript:window.__hostile='link')",
    "anchor": "<a href=\"javascript:window.__hostile='anchor'\">open</a>",
    "textarea": "</textarea><script>window.__hostile='textarea'</script>",
    "svg": "<svg onload=\"window.__hostile='svg'\"><script>window.__hostile='svg2'</script></svg>",
    "css": "</style><style>body{background:url(http://127.0.0.2:9/css)}</style>",
    "attribute": '" autofocus onfocus="window.__hostile=\'attribute\'" x="',
    "rtl": RTL,
}
HOSTILE = " ".join(PAYLOADS.values())
# Elements or attributes only the payloads would put on a page.
INJECTED = (
    "[onerror], [onload], [onfocus], svg script, a[href^='javascript'], body style, img[src='x']"
)
SPY = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) =>
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}`));
"""


@dataclass
class HostileWorld:
    world: GradingWorld
    assignment: Assignment
    artefact: SessionArtefact
    run: Run
    output: Output
    decision_url: str
    scorecard_url: str


def hostile_task_file() -> bytes:
    """The example's first task, with every text a task author writes made hostile."""
    task = json.loads((EXAMPLES / "tasks.jsonl").read_text(encoding="utf-8").splitlines()[0])
    task["input"] = f"Draft the overview. {HOSTILE} {LONG_WORD}"
    for source in task["sources"]:
        source["source"] = f"{PAYLOADS['img']} {source['source']}"
        source["text"] = f"{source['text']} {HOSTILE} {LONG_WORD}"
    task["key_elements"][0]["text"] = f"{PAYLOADS['svg']} {task['key_elements'][0]['text']}"
    return (json.dumps(task) + "\n").encode()


def hostile_output_file(task_id: str) -> bytes:
    record = json.loads(
        (EXAMPLES / "outputs-gemini-2-5.jsonl").read_text(encoding="utf-8").splitlines()[0]
    )
    sources = " ".join(f"[{chunk}]" for chunk in ("G1-termsheet", "G1-ar24-p41"))
    record.update(
        task_id=task_id,
        text=(
            f"The hold is $22.5 million {PAYLOADS['script']} {sources}. "
            f"The spread {PAYLOADS['img']} shows EBITDA [G1-ar24-p41]. "
            f"{PAYLOADS['link']} {PAYLOADS['anchor']} {PAYLOADS['textarea']} "
            f"{PAYLOADS['svg']} {PAYLOADS['css']} {PAYLOADS['attribute']} {RTL} {LONG_WORD}."
        ),
    )
    return (json.dumps(record) + "\n").encode()


def hostile_sigma(world: GradingWorld) -> object:
    """σ as the example's, with a hostile display name (200 characters at most) and prompt."""
    example = (EXAMPLES / "sigma-gemini-2.5.yaml").read_text(encoding="utf-8")
    name_line = next(line for line in example.splitlines() if line.startswith("name:"))
    name = json.dumps(PAYLOADS["script"] + PAYLOADS["img"] + RTL)
    content = example.replace(name_line, f"name: {name}", 1).replace(
        "    Role. You are", f"    {PAYLOADS['script']} {LONG_WORD} Role. You are", 1
    )
    return configuration_upload(
        actor=world.model_owner, use_case=world.use_case, name="gemini-2-5-rtl", content=content
    )


@pytest.fixture
def hostile(triggers_lifted) -> HostileWorld:
    world = make_world()
    task_set = task_set_import(
        actor=world.model_owner,
        use_case=world.use_case,
        name="hostile-tasks",
        fileobj=io.BytesIO(hostile_task_file()),
        filename="tasks.jsonl",
    )
    task = task_set.tasks.get()
    run = output_import(
        actor=world.model_owner,
        use_case=world.use_case,
        configuration=hostile_sigma(world),
        task_set=task_set,
        split="graded",
        repeats=1,
        fileobj=io.BytesIO(hostile_output_file(task.external_id)),
        filename=f"{PAYLOADS['img']}{RTL}.jsonl",
    )
    session = session_create(
        actor=world.owner,
        use_case=world.use_case,
        name="Round two",
        runs=[run],
        graders=world.graders[1:],
        adjudicators=[world.adjudicator],
        sample_size=1,
        seed=1,
    )
    artefact = SessionArtefact.objects.get(session=session)
    first, _second = grade_apart(artefact)
    adjudication_record(
        actor=world.adjudicator,
        artefact=artefact,
        unit_key="s1",
        field="relevant",
        value="Y",
        note=f"{HOSTILE} {LONG_WORD}",
    )
    # Frozen once the charter is signed: written as a migration would.
    with triggers_lifted():
        UseCase.objects.filter(pk=world.use_case.pk).update(
            name=f"Credit memo {PAYLOADS['script']}",
            business_outcome=f"{HOSTILE} {LONG_WORD}",
        )
    decision = recorded_decision(world)
    scorecard = draft_scorecard(
        world,
        decision,
        failure_modes=f"{HOSTILE} {LONG_WORD}",
        conditions_of_use=f"{PAYLOADS['textarea']} {COMMITTEE_FIELDS['conditions_of_use']}",
        compensating_controls=f"{PAYLOADS['css']} {COMMITTEE_FIELDS['compensating_controls']}",
    )
    for user in (world.owner, world.model_owner, world.adjudicator, *world.graders):
        user.set_password(PASSWORD)
        user.save()
    key = world.use_case.key
    return HostileWorld(
        world=world,
        assignment=first,
        artefact=artefact,
        run=run,
        output=Output.objects.get(run=run),
        decision_url=reverse("decision-detail", args=[key, decision.pk]),
        scorecard_url=reverse("scorecard-detail", args=[key, scorecard.pk]),
    )


@dataclass
class Watched:
    """A page with what it did: dialogs opened, requests sent, errors logged."""

    page: Any
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def signed_in_page(browser, base_url: str, username: str) -> Watched:
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
    context.add_init_script(SPY)
    watched = Watched(context.new_page())
    page = watched.page
    page.on("dialog", lambda dialog: (watched.dialogs.append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: watched.requests.append(request.url))
    page.on("pageerror", lambda error: watched.errors.append(str(error)))
    page.on(
        "console",
        lambda message: watched.errors.append(message.text) if message.type == "error" else None,
    )
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/")
    return watched


def assert_inert(watched: Watched, base_url: str, texts: list[str]) -> None:
    """The page shows ``texts`` as text and ran, fetched and built nothing of the payloads."""
    page = watched.page
    where = page.url
    assert page.evaluate("() => window.__hostile") is None, where
    assert watched.dialogs == [], where
    assert page.evaluate("() => window.__violations") == [], where
    assert watched.errors == [], where
    assert [url for url in watched.requests if not url.startswith((base_url, "data:"))] == []
    assert page.locator(INJECTED).count() == 0, where
    shown = page.locator("main").inner_text()
    for text in texts:
        assert text in shown, f"{where}: {text[:60]!r} is not shown as text"
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"{where}: the page is {width[0]} px wide in {width[1]} px"


def test_hostile_text_is_shown_inert_on_every_page_that_renders_it(browser, live_server, hostile):
    world = hostile.world
    key = world.use_case.key
    session = hostile.artefact.session.public_id
    visits = [
        (
            hostile.assignment.grader,
            reverse("grading-workspace", args=[hostile.assignment.public_id]),
            [PAYLOADS["script"], PAYLOADS["img"], PAYLOADS["textarea"], PAYLOADS["link"]],
        ),
        (
            world.adjudicator,
            reverse("grading-adjudication-item", args=[key, session, hostile.artefact.public_id]),
            [PAYLOADS["script"], PAYLOADS["svg"], PAYLOADS["attribute"]],
        ),
        (
            world.model_owner,
            reverse("configuration-detail", args=[key, hostile.run.configuration.name, 1]),
            [PAYLOADS["script"] + PAYLOADS["img"] + RTL],
        ),
        (world.owner, reverse("run-detail", args=[key, hostile.run.pk]), [PAYLOADS["img"]]),
        (
            world.owner,
            reverse("run-output", args=[key, hostile.run.pk, hostile.output.pk]),
            [PAYLOADS["script"], PAYLOADS["css"], RTL],
        ),
        (world.owner, hostile.decision_url, []),  # names only; inert with the others around
        (
            world.owner,
            hostile.scorecard_url,
            # The committee's fields, and the use case's name and outcome the scorecard restates.
            [f"Credit memo {PAYLOADS['script']}", HOSTILE, PAYLOADS["textarea"], PAYLOADS["css"]],
        ),
    ]
    for user, url, texts in visits:
        watched = signed_in_page(browser, live_server.url, user.get_username())
        try:
            response = watched.page.goto(url)
            assert response is not None and response.status == 200, url
            watched.page.wait_for_load_state("networkidle")
            for summary in watched.page.locator("details > summary").all():
                summary.click()  # the collapsed parts: the artefact as written, the forms
            watched.page.keyboard.press("Tab")  # an injected onfocus would fire now
            assert_inert(watched, live_server.url, texts)
        finally:
            watched.page.context.close()
