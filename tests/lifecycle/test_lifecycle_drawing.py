"""The use-case dashboard draws the lifecycle (SPEC §3) and shows the scorecards' state (§7).

Each of the seven stages is a step of an ordered list: done, in progress (aria-current),
blocked with what blocks it, or not started; who entered it and when. The scorecard block
says which scorecards need re-evaluation and why; graders see neither it nor names.
"""

from __future__ import annotations

import io
import re
from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from charters.models import Charter, Stage, StageEvent
from charters.services.charters import charter_revise
from charters.services.configurations import configuration_upload
from charters.services.task_sets import task_set_import
from charters.services.use_cases import use_case_advance
from demo.testing.grading import EXAMPLES, fill, make_world
from demo.testing.scorecards import draft_scorecard, final_scorecard, recorded_decision
from grading.models import Assignment
from grading.services.grades import assignment_submit

URL = reverse("use-case-detail", args=["CREDIT-MEMO-B"])


@pytest.fixture
def world(db):
    return make_world()


def page(client, user) -> str:
    client.force_login(user)
    response = client.get(URL)
    assert response.status_code == 200
    return response.content.decode()


def steps(html: str) -> list[dict[str, str]]:
    """Return each lifecycle step's class, aria-current and visible text, in order."""
    found = []
    lifecycle = html.split('<ol class="lifecycle"', 1)[1].split("</ol>", 1)[0]
    for match in re.finditer(
        r'<li class="lifecycle-step (?P<state>\w+)"(?P<attrs>[^>]*)>(?P<body>.*?)\n  </li>',
        lifecycle,
        re.S,
    ):
        # What a screen reader reads: the step number is drawn but hidden from it.
        body = re.sub(r'<span[^>]*aria-hidden="true">.*?</span>', "", match["body"])
        text = " ".join(unescape(re.sub(r"<[^>]+>", " ", body)).split())
        found.append({"state": match["state"], "attrs": match["attrs"], "text": text})
    return found


def sigma_v2() -> str:
    text = (EXAMPLES / "sigma-gemini-2.5.yaml").read_text(encoding="utf-8")
    return text.replace("version: sor-2.3", "version: sor-2.4")


def test_a_new_use_case_is_at_stage_1_and_stage_2_says_what_blocks_it(client, personas):
    drawn = steps(page(client, personas.owner))
    assert [s["state"] for s in drawn] == ["current", "blocked", *["upcoming"] * 5]
    assert drawn[0]["attrs"] == ' aria-current="step"'
    assert all("aria-current" not in s["attrs"] for s in drawn[1:])
    assert drawn[0]["text"].startswith("Stage 1: Charter in progress entered ")
    assert drawn[0]["text"].endswith(" by owner")
    assert drawn[1]["text"] == (
        "Stage 2: Configure and freeze σ blocked Blocked by: "
        "Write the charter: gated metrics with θout/θin, weights and harms. "
        "Upload and freeze the configuration σ under test."
    )
    assert drawn[6]["text"] == "Stage 7: Decide and monitor not started"


def test_a_sigma_frozen_after_the_task_set_is_stage_2s_entry(client, personas):
    task_set_import(
        actor=personas.model_owner,
        use_case=personas.use_case,
        name="memo-tasks",
        fileobj=io.BytesIO((EXAMPLES / "tasks.jsonl").read_bytes()),
        filename="tasks.jsonl",
    )
    drawn = steps(page(client, personas.owner))
    assert drawn[1]["state"] == "skipped"
    assert drawn[1]["text"].startswith("Stage 2: Configure and freeze σ passed without an entry")
    for name in ("gemini-2-5", "llama-4"):
        configuration_upload(
            actor=personas.model_owner,
            use_case=personas.use_case,
            name=name,
            content=(EXAMPLES / "sigma-gemini-2.5.yaml").read_text(encoding="utf-8"),
            filename="sigma.yaml",
        )
    drawn = steps(page(client, personas.owner))
    assert [s["state"] for s in drawn[:3]] == ["done", "done", "current"]
    entry = StageEvent.objects.get(use_case=personas.use_case, stage=Stage.CONFIGURE)
    assert drawn[1]["text"] == (
        f"Stage 2: Configure and freeze σ done entered {entry.entered_at:%Y-%m-%d %H:%M} "
        "by model_owner σ gemini-2-5 v1 frozen"
    )


def test_grading_in_progress_blocks_the_gate_with_the_unsubmitted_count(client, world):
    assignment = world.assignments_of(world.graders[0])[0]
    fill(assignment)
    assignment_submit(actor=world.graders[0], assignment=assignment)
    total = Assignment.objects.filter(session=world.session).count()
    assert total == 16  # 8 artefacts × 2 graders

    html = page(client, world.owner)
    drawn = steps(html)
    assert [s["state"] for s in drawn] == ["done"] * 4 + ["current", "blocked", "upcoming"]
    assert drawn[4]["attrs"] == ' aria-current="step"'
    blocker = "Grading session “Credit memo round 1” open: 15 of 16 assignments not submitted."
    assert drawn[5]["text"] == f"Stage 6: Gate blocked Blocked by: {blocker}"
    # The same blocker heads "What is missing next".
    assert f'<li class="warning">{blocker}</li>' in unescape(html)
    # Who entered each stage, as recorded by the services that moved the lifecycle.
    events = {e.stage: e for e in StageEvent.objects.filter(use_case=world.use_case)}
    for stage, actor in (
        (Stage.CHARTER, "demo-owner"),
        (Stage.CONFIGURE, "demo-model-owner"),
        (Stage.GOLD_SET, "demo-model-owner"),
        (Stage.RUN, "demo-model-owner"),
        (Stage.GRADE, "demo-owner"),
    ):
        when = f"{events[stage].entered_at:%Y-%m-%d %H:%M}"
        assert f"entered {when} by {actor}" in drawn[stage - 1]["text"]


def test_a_recorded_decision_without_a_signed_scorecard_blocks_stage_7(client, world):
    decision = recorded_decision(world)
    drawn = steps(page(client, world.owner))
    assert [s["state"] for s in drawn] == ["done"] * 5 + ["current", "blocked"]
    assert drawn[6]["text"].endswith("Blocked by: No scorecard signed off.")
    draft_scorecard(world, decision)
    drawn = steps(page(client, world.owner))
    assert drawn[6]["text"].endswith(
        "Blocked by: No scorecard signed off: 1 draft awaiting second-line sign-off."
    )


def test_signing_a_scorecard_off_completes_stage_7(client, world):
    final_scorecard(world)
    html = page(client, world.owner)
    drawn = steps(html)
    assert [s["state"] for s in drawn] == ["done"] * 7
    assert drawn[6]["attrs"] == ' aria-current="step"'
    assert "by demo-reviewer" in drawn[6]["text"]
    assert "Blocked by" not in html and "Needs attention" not in html


def test_the_scorecard_block_shows_why_a_scorecard_needs_reevaluation(client, world):
    scorecard = final_scorecard(world)
    configuration_upload(
        actor=world.model_owner,
        use_case=world.use_case,
        name="gemini-2-5",
        content=sigma_v2(),
        filename="sigma.yaml",
    )
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    charter_revise(actor=world.owner, charter=charter, reason="<script>alert(1)</script>")

    html = page(client, world.owner)
    block = unescape(html.split("<h2>Scorecards</h2>", 1)[1].split("<h2>", 1)[0])
    detail = reverse("scorecard-detail", args=["CREDIT-MEMO-B", scorecard.pk])
    assert f'<a href="{detail}">Scorecard {scorecard.pk}</a>' in block
    assert f'href="{reverse("scorecard-list", args=["CREDIT-MEMO-B"])}"' in block
    assert '<span class="badge error">re-evaluation required</span>' in block
    assert "σ gemini-2-5 v2 registered on " in block
    assert f"prompts changed from gemini-2-5 v1, the σ of decision {scorecard.decision_id}" in block
    assert "Charter deviation v1 → v2 recorded on " in block
    assert "owners not yet e-mailed" in block
    # The deviation's reason is user text: escaped, never markup.
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # Stage 7 stays done and says it needs attention.
    last = steps(html)[6]
    assert last["state"] == "done"
    assert last["text"].endswith("Needs attention: Re-evaluation required: 1 signed-off scorecard.")


def test_graders_see_the_lifecycle_but_no_scorecards_names_or_sigma(client, world):
    final_scorecard(world)
    configuration_upload(
        actor=world.model_owner,
        use_case=world.use_case,
        name="gemini-2-5",
        content=sigma_v2(),
        filename="sigma.yaml",
    )
    html = page(client, world.graders[0])
    # The lifecycle up to their grading, nothing of the gate or the decision after it.
    assert [s["text"].split(" ", 2)[1] for s in steps(html)] == ["1:", "2:", "3:", "4:", "5:"]
    assert "<h2>Scorecards</h2>" not in html
    assert "scorecards/" not in html
    assert "re-evaluation required" not in html.replace("Re-evaluation required", "")
    assert "demo-owner" not in html and "demo-model-owner" not in html
    for secret in world.provenance:
        assert secret not in html, secret
    assert "gemini" not in html


def test_a_grader_sees_neither_the_decision_nor_the_sign_off_only_their_grading(client, personas):
    use_case = personas.use_case
    for stage, note in (
        (Stage.GATE, "decision recorded"),
        (Stage.DECIDE, "scorecard 1 signed off"),
    ):
        use_case_advance(actor=personas.reviewer, use_case=use_case, stage=stage, note=note)
    owner = page(client, personas.owner)
    assert "decision recorded" in owner and "scorecard 1 signed off" in owner
    for path in (URL, "/api/v1/use-cases/CREDIT-MEMO-B/"):
        client.force_login(personas.grader)
        html = unescape(client.get(path).content.decode())
        for later in (
            "decision recorded",
            "signed off",
            "Gate",
            "Decide and monitor",
            "No decision",
            "scorecard",
        ):
            assert later not in html, (path, later)
    drawn = steps(page(client, personas.grader))
    assert len(drawn) == 5 and drawn[-1]["text"].startswith("Stage 5: Grade")


def test_a_graders_next_step_is_what_they_have_left_to_grade(client, world):
    html = unescape(page(client, world.graders[0]))
    missing = html.split("What is missing next", 1)[1].split("<h2", 1)[0]
    left = len(world.assignments_of(world.graders[0]))
    assert re.findall(r'<li class="warning">(.*?)</li>', missing) == [
        f"You have {left} assignments to grade: open My grading."
    ]


def test_the_page_reads_a_fixed_number_of_queries_however_many_scorecards(client, world):
    final_scorecard(world)
    client.force_login(world.owner)
    with CaptureQueriesContext(connection) as one:
        assert client.get(URL).status_code == 200

    final_scorecard(world, recorded_decision(world, "llama-4", grade=False))
    fill(world.assignments_of(world.graders[1])[0])
    draft_scorecard(world, recorded_decision(world, grade=False))
    configuration_upload(
        actor=world.model_owner,
        use_case=world.use_case,
        name="gemini-2-5",
        content=sigma_v2(),
        filename="sigma.yaml",
    )
    with CaptureQueriesContext(connection) as three:
        html = client.get(URL).content.decode()
    assert html.count("re-evaluation required") == 2
    assert html.count('<span class="badge">draft</span>') == 1
    assert len(three) == len(one)


def test_the_api_keeps_the_stage_rows(client, world):
    client.force_login(world.owner)
    data = client.get("/api/v1/use-cases/CREDIT-MEMO-B/").json()
    assert [row["stage"] for row in data["stages"]] == list(range(1, 8))
    assert data["stages"][4]["entered_at"] is not None
    assert data["stages"][5]["entered_at"] is None
