"""The grader's pages: the queue, the workspace, and its plain-form fallback."""

from __future__ import annotations

import html
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from demo.testing.grading import GradingWorld, fill, first_values
from grading.models import Assignment, AssignmentStatus, GradeRevision
from grading.rubric import FIELDS_BY_KIND, FIELDS_BY_NAME, missing_fields
from grading.selectors.artefacts import grades_of, task_context, units_of
from grading.services.grades import GradeChange, assignment_submit, grades_save
from grading.services.sessions import session_close, session_create
from runs.models import Output, Unit

pytestmark = pytest.mark.django_db


def page_of(assignment: Assignment) -> str:
    return reverse("grading-workspace", args=[assignment.public_id])


def units(assignment: Assignment):
    return units_of([assignment.artefact])[assignment.artefact_id]


def checked(body: str, unit_key: str, field: str) -> str | None:
    """Return the value of the checked radio of ``unit_key|field`` in a page, if any."""
    name = re.escape(html.escape(f"{unit_key}|{field}"))
    match = re.search(rf'name="{name}" value="([^"]+)"[^>]*\bchecked\b', body)
    return match.group(1) if match else None


def fieldset(body: str, unit_key: str, field: str) -> str:
    match = re.search(
        rf'<fieldset class="ws-field" data-unit="{re.escape(unit_key)}" '
        rf'data-field="{field}"[^>]*>',
        body,
    )
    assert match, f"no fieldset for {unit_key} {field}"
    return match.group(0)


def form_data(grades: dict[str, dict[str, str]], **extra: str) -> dict:
    """Return the workspace form as a browser posts it (inputs named ``unit_key|field``)."""
    data = {
        f"{key}|{field}": value for key, unit in grades.items() for field, value in unit.items()
    }
    return {**data, **extra}


def another_session(world: GradingWorld, name: str, *, seed: int):
    return session_create(
        actor=world.owner,
        use_case=world.use_case,
        name=name,
        runs=world.runs,
        graders=world.graders,
        adjudicators=[world.adjudicator],
        sample_size=3,
        seed=seed,
    )


@pytest.fixture
def grader(grading_world: GradingWorld):
    return grading_world.graders[1]


def test_the_queue_shows_each_open_session_with_progress_and_continues_at_the_first_open_one(
    client, grading_world, grader
):
    assignments = grading_world.assignments_of(grader)
    fill(assignments[0])
    assignment_submit(actor=grader, assignment=assignments[0])
    second = another_session(grading_world, "Round 2", seed=7)
    closed = another_session(grading_world, "Closed round", seed=8)
    session_close(actor=grading_world.owner, session=closed)
    client.force_login(grader)

    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("grading-queue"))
    body = response.content.decode()

    assert response.status_code == 200
    assert len(queries) <= 4  # session, user, one for every session and assignment
    assert "Credit memo round 1" in body and "Round 2" in body
    assert "Closed round" not in body
    total = Assignment.objects.filter(session=grading_world.session, grader=grader).count()
    assert f"1 of {total} submitted" in body
    second_total = Assignment.objects.filter(session=second, grader=grader).count()
    assert f"0 of {second_total} submitted" in body
    assert page_of(assignments[1]) in body  # the first one not yet submitted
    assert page_of(assignments[0]) not in body


def test_the_queue_of_someone_without_assignments_says_so(client, grading_world):
    client.force_login(grading_world.outsider)
    response = client.get(reverse("grading-queue"))
    assert response.status_code == 200
    assert "no open grading sessions" in response.content.decode()


def test_the_workspace_shows_position_sentences_cited_sources_and_gold(
    client, grading_world, grader
):
    assignment = grading_world.assignments_of(grader)[2]
    client.force_login(grader)
    response = client.get(page_of(assignment))
    body = response.content.decode()

    assert response.status_code == 200
    total = len(grading_world.assignments_of(grader))
    assert f"Artefact 3 of {total}" in body
    context = task_context(assignment.artefact.task)
    assert html.escape(context.input) in body
    chunks = {chunk.chunk_id: chunk for chunk in context.sources}
    for unit in units(assignment):
        if unit.kind == "sentence":
            assert html.escape(unit.text) in body
        if unit.kind == "cited_chunk" and unit.ref_id in chunks:
            assert f"<mark>{html.escape(chunks[unit.ref_id].text)}</mark>" in body
    for element in context.key_elements:
        assert html.escape(element.text) in body
    for item in context.guidance_items:
        assert html.escape(item.text) in body
    previous, following = grading_world.assignments_of(grader)[1:4:2]
    assert f'href="{page_of(previous)}" rel="prev"' in body
    assert f'href="{page_of(following)}" rel="next"' in body


def test_every_field_of_every_unit_is_a_radio_group_with_its_shortcut(
    client, grading_world, grader
):
    assignment = grading_world.assignments_of(grader)[0]
    client.force_login(grader)
    body = client.get(page_of(assignment)).content.decode()

    for unit in units(assignment):
        for spec in FIELDS_BY_KIND[unit.kind]:
            for value in spec.values:
                name = html.escape(f"{unit.key}|{spec.name}")
                assert f'type="radio" name="{name}" value="{value}"' in body
    # Value added is typed as itself; a citation's "s"trict is reached by its digit only
    # because s submits.
    assert re.search(r'name="artefact\|value_add" value="0" data-digit="0"', body)
    assert re.search(r'\|citation" value="strict" data-digit="1" data-letter=""', body)
    assert re.search(r'\|assertive" value="Y" data-digit="1" data-letter="y"', body)
    assert "Next unit" in body and "Submit the artefact" in body  # the printed help


def test_a_reload_shows_every_saved_value_and_hides_what_is_not_asked(
    client, grading_world, grader
):
    assignment = grading_world.assignments_of(grader)[0]
    sentence = next(u for u in units(assignment) if u.kind == "sentence")
    item = next(u for u in units(assignment) if u.kind == "guidance_item")
    grades_save(
        actor=grader,
        assignment=assignment,
        changes=[
            GradeChange(sentence.key, "assertive", "N"),
            GradeChange(sentence.key, "relevant", "Y"),
            GradeChange(item.key, "guidance", "FN"),
            GradeChange(item.key, "severity", "medium"),
            GradeChange("artefact", "value_add", "1"),
        ],
    )
    client.force_login(grader)
    body = client.get(page_of(assignment)).content.decode()

    assert checked(body, sentence.key, "assertive") == "N"
    assert checked(body, sentence.key, "relevant") == "Y"
    assert checked(body, item.key, "guidance") == "FN"
    assert checked(body, item.key, "severity") == "medium"
    assert checked(body, "artefact", "value_add") == "1"
    assert " hidden" in fieldset(body, sentence.key, "supported")
    assert " hidden" not in fieldset(body, item.key, "severity")
    other_item = [u for u in units(assignment) if u.kind == "guidance_item"][1:]
    for unit in other_item:
        assert " hidden" in fieldset(body, unit.key, "severity")
    still = missing_fields([u.key for u in units(assignment)], grades_of(assignment))
    assert f"5 of {5 + len(still)} answers given" in body


def test_another_graders_assignment_is_not_found_and_a_stranger_must_sign_in(
    client, grading_world, grader
):
    assignment = grading_world.assignments_of(grader)[0]
    for someone in (grading_world.graders[0], grading_world.owner, grading_world.outsider):
        client.force_login(someone)
        assert client.get(page_of(assignment)).status_code == 404
        assert client.post(page_of(assignment), {"action": "save"}).status_code == 404
    client.logout()
    response = client.get(page_of(assignment))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_the_plain_form_saves_and_submits_then_moves_to_the_next_artefact(
    client, grading_world, grader
):
    first, second = grading_world.assignments_of(grader)[:2]
    keys = [u.key for u in units(first)]
    answers: dict[str, dict[str, str]] = {}
    for unit in units(first):
        answers[unit.key] = {
            spec.name: first_values(unit.key, spec.name) for spec in FIELDS_BY_KIND[unit.kind]
        }
    half = dict(list(answers.items())[:2])
    client.force_login(grader)

    saved = client.post(page_of(first), form_data(half, action="save"))
    assert saved.status_code == 302 and saved["Location"] == page_of(first)
    assert grades_of(first) == half

    refused = client.post(page_of(first), form_data({}, action="submit"))
    assert refused.status_code == 400
    body = refused.content.decode()
    missing = missing_fields(keys, half)
    assert f"{len(missing)} grade(s) missing" in body
    for unit_key, field in missing:
        assert f'href="#unit-{unit_key}">{unit_key} · {field}</a>' in body

    submitted = client.post(page_of(first), form_data(answers, action="submit"))
    assert submitted.status_code == 302 and submitted["Location"] == page_of(second)
    first.refresh_from_db()
    assert first.status == AssignmentStatus.SUBMITTED
    assert grades_of(first) == answers


def test_after_submission_a_change_needs_a_reason_and_is_a_logged_revision(
    client, grading_world, grader
):
    assignment = grading_world.assignments_of(grader)[0]
    grades = fill(assignment)
    assignment_submit(actor=grader, assignment=assignment)
    client.force_login(grader)
    page = client.get(page_of(assignment)).content.decode()
    assert 'name="reason"' in page and "submitted" in page
    assert 'value="submit"' not in page

    changed = {**grades, "artefact": {"value_add": "2"}}
    refused = client.post(page_of(assignment), form_data(changed, action="save"))
    assert refused.status_code == 400
    assert "say why the grade changes" in refused.content.decode()
    assert grades_of(assignment)["artefact"] == {"value_add": "0"}

    revised = client.post(
        page_of(assignment),
        form_data(changed, action="save", reason="Re-read: it adds a lot."),
    )
    assert revised.status_code == 302
    assert grades_of(assignment)["artefact"] == {"value_add": "2"}
    revision = GradeRevision.objects.get(assignment=assignment)
    assert (revision.unit_key, revision.field, revision.old_value, revision.new_value) == (
        "artefact",
        "value_add",
        "0",
        "2",
    )
    assert revision.reason == "Re-read: it adds a lot."


def test_a_closed_session_shows_the_work_read_only(client, grading_world, grader):
    assignment = grading_world.assignments_of(grader)[0]
    fill(assignment)
    session_close(actor=grading_world.owner, session=grading_world.session)
    client.force_login(grader)
    body = client.get(page_of(assignment)).content.decode()
    assert "session closed" in body
    assert 'value="submit"' not in body
    for match in re.finditer(r'<fieldset class="ws-field"[^>]*>', body):
        assert " disabled" in match.group(0)


def test_model_output_is_rendered_as_text_never_as_markup(
    client, grading_world, grader, triggers_lifted
):
    assignment = next(
        a for a in grading_world.assignments_of(grader) if a.artefact.output_id is not None
    )
    payload = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
    # Outputs and units are immutable (audit/db_guards.py): plant the payload behind the guards.
    with triggers_lifted("runs_output"):
        Output.objects.filter(pk=assignment.artefact.output_id).update(text=payload)
    with triggers_lifted("runs_unit"):
        Unit.objects.filter(output_id=assignment.artefact.output_id, key="s1").update(text=payload)
    client.force_login(grader)
    body = client.get(page_of(assignment)).content.decode()
    assert "<script>window" not in body
    assert "<img" not in body
    assert html.escape(payload) in body


def test_the_workspace_page_makes_the_same_number_of_queries_whatever_the_units(
    client, grading_world, grader
):
    assignments = grading_world.assignments_of(grader)
    by_size = sorted(assignments, key=lambda a: len(units(a)))
    small, large = by_size[0], by_size[-1]
    assert len(units(large)) > len(units(small))
    fill(large)
    client.force_login(grader)
    counts = []
    for assignment in (small, large):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(page_of(assignment)).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
    assert counts[1] <= 12


def test_field_titles_cover_the_rubric():
    from grading.selectors.workspace import FIELD_TITLES

    assert set(FIELD_TITLES) == set(FIELDS_BY_NAME)
