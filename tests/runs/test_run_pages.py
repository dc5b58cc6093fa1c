"""Run pages: list, import, a run with its progress block, one output with units and timeline."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from runs.models import Output, Run
from runs.selectors.runs import output_get, run_detail, run_list, run_outputs, run_progress
from runs.services.outputs import output_import

MEMBERS = ("owner", "model_owner", "grader", "adjudicator", "reviewer")
TRAJECTORY = {
    "final_outcome": [{"at": 3, "summary": "Draft accepted by the analyst"}],
    "planning": [
        {"at": 1, "summary": "Plan: revenue, then leverage"},
        {"at": 2, "summary": "Stop when both are drafted", "step_count": 2},
    ],
    "tool_use": [
        {
            "at": 2,
            "summary": "Called <b>spreads</b>",
            "tool": "spreads.get",
            "arguments": {"q": "<script>alert(3)</script>"},
        }
    ],
}


def browser(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def jsonl(*objects) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objects)


def upload(data: bytes, name: str = "outputs.jsonl") -> io.BytesIO:
    stream = io.BytesIO(data)
    stream.name = name
    return stream


def statement(task) -> str:
    chunks = [chunk.chunk_id for chunk in task.source_chunks.all()]
    return (
        f"Kestrel Logistics Group Ltd. reported revenue of $412.3 million, up 6.1% y/y "
        f"[{chunks[0]}]. Net leverage was 2.4x (covenant: 3.5x) [{chunks[0]}, {chunks[1]}]."
    )


def imported(world, *lines, repeats: int = 1) -> Run:
    tasks = world.tasks()
    if not lines:
        lines = (
            {
                "task_id": tasks[0].external_id,
                "text": statement(tasks[0]),
                "trajectory": TRAJECTORY,
            },
            {"task_id": tasks[1].external_id, "error": "timeout", "cost_usd": None},
        )
    return output_import(
        actor=world.model_owner,
        use_case=world.use_case,
        configuration=world.configuration,
        task_set=world.task_set,
        split="graded",
        repeats=repeats,
        fileobj=io.BytesIO(jsonl(*lines)),
        filename="outputs.jsonl",
    )


def pages(world, run: Run) -> dict[str, str]:
    output = Output.objects.filter(run=run).order_by("pk").first()
    return {
        "run-list": reverse("run-list", args=[world.key]),
        "run-import": reverse("run-import", args=[world.key]),
        "run-detail": reverse("run-detail", args=[world.key, run.pk]),
        "run-output": reverse("run-output", args=[world.key, run.pk, output.pk]),
    }


READERS = {"owner": 200, "model_owner": 200, "grader": 403, "adjudicator": 200, "reviewer": 200}
EXPECTED = {
    "run-list": READERS,
    "run-import": {**READERS, "adjudicator": 403, "reviewer": 403},
    "run-detail": READERS,
    "run-output": READERS,
}


@pytest.mark.parametrize("page", EXPECTED)
@pytest.mark.parametrize("persona", [*MEMBERS, "outsider"])
def test_each_page_answers_each_persona_as_its_role_allows(runs_world, page, persona):
    url = pages(runs_world, imported(runs_world))[page]
    response = browser(runs_world.by_name(persona)).get(url)
    assert response.status_code == (404 if persona == "outsider" else EXPECTED[page][persona])


@pytest.mark.parametrize("page", EXPECTED)
def test_anonymous_users_are_sent_to_sign_in(runs_world, page):
    response = browser().get(pages(runs_world, imported(runs_world))[page])
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_the_list_shows_each_run_with_counts_and_the_import_link_to_importers(runs_world):
    run = imported(runs_world)
    html = browser(runs_world.reviewer).get(reverse("run-list", args=[runs_world.key])).content
    html = html.decode()
    assert reverse("run-detail", args=[runs_world.key, run.pk]) in html
    assert "gemini-2-5 v1" in html and "credit-memo v1" in html
    assert "2 of 65" in html
    assert reverse("run-import", args=[runs_world.key]) not in html
    owner_html = browser(runs_world.owner).get(reverse("run-list", args=[runs_world.key]))
    assert reverse("run-import", args=[runs_world.key]) in owner_html.content.decode()


def test_a_good_import_through_the_page_redirects_to_the_run(runs_world):
    task = runs_world.tasks()[0]
    response = browser(runs_world.model_owner).post(
        reverse("run-import", args=[runs_world.key]),
        {
            "configuration": runs_world.configuration.pk,
            "task_set": runs_world.task_set.pk,
            "split": "graded",
            "repeats": 2,
            "file": upload(jsonl({"task_id": task.external_id, "text": statement(task)})),
        },
    )
    run = Run.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("run-detail", args=[runs_world.key, run.pk])
    assert (run.repeats, run.items_total, run.items_done) == (2, 130, 1)


def test_a_bad_import_through_the_page_lists_every_bad_line_and_writes_nothing(runs_world):
    task = runs_world.tasks()[0]
    response = browser(runs_world.owner).post(
        reverse("run-import", args=[runs_world.key]),
        {
            "configuration": runs_world.configuration.pk,
            "task_set": runs_world.task_set.pk,
            "split": "graded",
            "repeats": 1,
            "file": upload(
                jsonl(
                    {"task_id": task.external_id, "text": statement(task)},
                    {"task_id": "unknown", "text": "x"},
                    {"task_id": task.external_id, "repeat": 1, "text": "x"},
                )
            ),
        },
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was imported" in html
    assert '<td>2</td><td class="mono">task_id</td>' in html
    assert '<td>3</td><td class="mono">repeat</td>' in html
    assert Run.objects.count() == 0


def test_the_run_page_has_the_progress_block_the_live_script_polls(runs_world):
    run = imported(runs_world)
    html = browser(runs_world.owner).get(reverse("run-detail", args=[runs_world.key, run.pk]))
    html = html.content.decode()
    api_url = reverse("api-run-detail", args=[runs_world.key, run.pk])
    assert f'id="run-progress" data-progress-url="{api_url}"' in html
    assert (
        '<span data-field="items_done">2</span> of <span data-field="items_total">65</span>' in html
    )
    assert '<dd data-field="items_failed">1</dd>' in html
    assert '<span data-field="cost_unknown_items">2</span>' in html
    assert '<span data-field="stop_reason"></span>' in html
    assert "63 of 65 (task, repeat) pairs have no output." in html
    # outputs succeeded, failed, sentences, cited chunks, key elements, guidance, trajectories
    tasks = runs_world.tasks()
    elements = tasks[0].key_elements.count() + tasks[1].key_elements.count()
    items = tasks[0].guidance_items.count() + tasks[1].guidance_items.count()
    cells = [1, 1, 2, 3, elements, items, 1]
    assert "".join(f"\n    <td>{n}</td>" for n in cells) in html


def test_the_output_page_highlights_sentences_and_lists_units_and_cited_chunks(runs_world):
    run = imported(runs_world)
    task = runs_world.tasks()[0]
    chunks = list(task.source_chunks.all())
    output = Output.objects.get(run=run, task=task)
    html = browser(runs_world.owner).get(
        reverse("run-output", args=[runs_world.key, run.pk, output.pk])
    )
    html = html.content.decode()
    assert '<mark class="sentence" id="s1" title="s1">Kestrel Logistics Group Ltd.' in html
    assert (
        f'<span class="citation" title="cites {chunks[0].chunk_id}">[{chunks[0].chunk_id}]</span>'
        in html
    )
    assert '<sup class="unit-key">s2</sup></mark>' in html
    assert html.count('<mark class="sentence"') == 2
    assert escape(chunks[0].text) in html and escape(chunks[1].text) in html
    assert f"c2:{chunks[1].chunk_id}" in html
    for element in task.key_elements.all():
        assert f"k:{element.element_id}" in html and escape(element.text) in html


def test_the_output_page_shows_the_generation_time_rounded(runs_world):
    task = runs_world.tasks()[0]
    run = imported(
        runs_world,
        {"task_id": task.external_id, "text": statement(task), "generation_seconds": 41.23456789},
    )
    output = Output.objects.get(run=run, task=task)
    html = browser(runs_world.owner).get(
        reverse("run-output", args=[runs_world.key, run.pk, output.pk])
    )
    html = html.content.decode()
    assert "generation 41.2 s" in html
    assert "41.23456789" not in html


def test_model_output_is_escaped_never_rendered_as_html(runs_world):
    task = runs_world.tasks()[0]
    chunk = task.source_chunks.all()[0].chunk_id
    hostile = (
        f'Revenue rose <script>alert(1)</script> [{chunk}]. <img src=x onerror="alert(2)"> '
        "was cut. </mark></div><b>bold</b>."
    )
    run = imported(runs_world, {"task_id": task.external_id, "text": hostile, "error": "<i>e</i>"})
    output = Output.objects.get(run=run)
    html = (
        browser(runs_world.owner)
        .get(reverse("run-output", args=[runs_world.key, run.pk, output.pk]))
        .content.decode()
    )
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in html
    assert "<b>bold</b>" not in html and "<i>e</i>" not in html


def test_the_trajectory_is_a_timeline_of_phases_in_order_with_steps_in_order(runs_world):
    run = imported(runs_world)
    output = Output.objects.get(run=run, trajectory__isnull=False)
    html = (
        browser(runs_world.owner)
        .get(reverse("run-output", args=[runs_world.key, run.pk, output.pk]))
        .content.decode()
    )
    positions = [
        html.index(f'id="phase-{key}"') for key in ("planning", "tool_use", "final_outcome")
    ]
    assert positions == sorted(positions)
    assert html.index("Plan: revenue, then leverage") < html.index("Stop when both are drafted")
    assert "<dt>step_count</dt><dd>2</dd>" in html
    assert "Called &lt;b&gt;spreads&lt;/b&gt;" in html
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in html and "<script>alert(3)" not in html


# Selectors: query counts stay flat whatever the size.


def test_the_run_list_is_one_query(runs_world, django_assert_num_queries):
    imported(runs_world)
    imported(runs_world)
    with django_assert_num_queries(1):
        runs = list(run_list(use_case=runs_world.use_case))
        assert [run.configuration.name for run in runs] == ["gemini-2-5", "gemini-2-5"]
        assert [run.task_set.name for run in runs] == ["credit-memo", "credit-memo"]


def test_run_detail_and_output_pages_take_a_fixed_number_of_queries(
    runs_world, django_assert_num_queries
):
    tasks = runs_world.tasks()
    run = imported(
        runs_world,
        *(
            {"task_id": t.external_id, "text": statement(t), "repeat": r}
            for t in tasks[:20]
            for r in (0, 1)
        ),
        repeats=2,
    )
    with django_assert_num_queries(2):
        detail = run_detail(run=run)
    assert detail.outputs_by_status == {"succeeded": 40, "failed": 0}
    assert detail.units_by_kind["sentence"] == 80 and detail.units_by_kind["cited_chunk"] == 120
    for limit in (3, 30):
        with django_assert_num_queries(2):
            page = run_outputs(run=run, limit=limit)
        assert len(page.outputs) == limit and page.total == 40
        assert {o.sentence_units for o in page.outputs} == {2}
        assert {o.cited_chunk_units for o in page.outputs} == {3}
    assert [(o.task.external_id, o.repeat_index) for o in page.outputs[:3]] == [
        (tasks[0].external_id, 0),
        (tasks[0].external_id, 1),
        (tasks[1].external_id, 0),
    ]
    output = page.outputs[0]
    with django_assert_num_queries(5):
        view = output_get(run=run, output_id=output.pk)
    assert [u.key for u in view.units["sentence"]] == ["s1", "s2"]
    assert [c.chunk_id for c in view.cited_chunks] == output.cited_chunk_ids
    assert output_get(run=run, output_id=10**9) is None


def test_progress_gives_throughput_and_time_left_only_while_running():
    now = timezone.now()
    run = Run(
        status="running",
        items_total=200,
        items_done=50,
        started_at=now - timedelta(seconds=10),
        cost_usd=0,
    )
    progress = run_progress(run, now=now)
    assert progress.throughput_per_second == pytest.approx(5.0)
    assert progress.eta_seconds == pytest.approx(30.0)
    assert progress.percent == 25.0
    run.status = "completed"
    finished = run_progress(run, now=now)
    assert finished.throughput_per_second is None and finished.eta_seconds is None
    run.status, run.items_done = "running", 0
    assert run_progress(run, now=now).throughput_per_second is None
