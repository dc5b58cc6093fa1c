"""A grader's assignments under /api/v1/grading/assignments/: read, autosave, submit."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.authtoken.models import Token

from demo.testing.grading import GradingWorld, fill
from grading.models import Assignment, AssignmentStatus, GradeRevision
from grading.rubric import FIELDS, FIELDS_BY_NAME, missing_fields
from grading.selectors.artefacts import grades_of, task_context, units_of
from grading.services.grades import MAX_ELAPSED_PER_CALL, assignment_submit

pytestmark = pytest.mark.django_db


def url(name: str, assignment: Assignment | None = None) -> str:
    args = [assignment.public_id] if assignment else []
    return reverse(f"api-grading-assignment-{name}", args=args)


def keys_of(assignment: Assignment) -> list[str]:
    return [u.key for u in units_of([assignment.artefact])[assignment.artefact_id]]


def post(client: Client, path: str, body: dict) -> object:
    return client.post(path, body, content_type="application/json")


@pytest.fixture
def grader(grading_world: GradingWorld):
    return grading_world.graders[1]


@pytest.fixture
def signed_in(client, grader):
    client.force_login(grader)
    return client


def test_the_list_holds_only_the_graders_own_assignments_in_blind_order(
    signed_in, grading_world, grader
):
    with CaptureQueriesContext(connection) as queries:
        response = signed_in.get(url("list"))
    assert response.status_code == 200
    assert len(queries) <= 4  # session, user, count, page
    mine = grading_world.assignments_of(grader)
    results = response.json()["results"]
    assert response.json()["count"] == len(mine)
    assert [r["public_id"] for r in results] == [a.public_id for a in mine]
    assert [r["position"] for r in results] == list(range(1, len(mine) + 1))
    first = results[0]
    assert first["session_name"] == "Credit memo round 1"
    assert first["session"] == grading_world.session.public_id
    assert first["total"] == len(mine)
    assert first["status"] == "pending"
    assert first["workspace_url"] == reverse("grading-workspace", args=[mine[0].public_id])
    assert set(first) == {
        "public_id",
        "session",
        "session_name",
        "session_status",
        "position",
        "total",
        "status",
        "seconds_spent",
        "started_at",
        "submitted_at",
        "url",
        "workspace_url",
    }


def test_the_detail_is_the_blind_artefact_with_the_graders_own_grades(
    signed_in, grading_world, grader
):
    assignment = grading_world.assignments_of(grader)[1]
    grades = fill(assignment)
    co_grader = Assignment.objects.exclude(grader=grader).get(artefact=assignment.artefact)
    fill(co_grader, lambda _key, field: FIELDS_BY_NAME[field].values[-1])
    body = signed_in.get(url("detail", assignment)).json()

    units = units_of([assignment.artefact])[assignment.artefact_id]
    assert [u["key"] for u in body["units"]] == [u.key for u in units]
    assert body["grades"] == grades  # the co-grader's answers are nowhere
    assert body["missing"] == []
    assert body["position"] == 2
    context = task_context(assignment.artefact.task)
    assert body["task"]["input"] == context.input
    assert [s["id"] for s in body["task"]["sources"]] == [s.chunk_id for s in context.sources]
    assert [k["text"] for k in body["task"]["key_elements"]] == [
        k.text for k in context.key_elements
    ]
    assert [g["mandatory"] for g in body["task"]["guidance"]] == [
        g.mandatory for g in context.guidance_items
    ]
    assert [f["name"] for f in body["rubric"]] == [f.name for f in FIELDS]
    assert body["units"][0]["asks"] == ["assertive", "supported", "relevant"]
    mine = grading_world.assignments_of(grader)
    assert body["previous_url"] == url("detail", mine[0])
    assert body["next_url"] == url("detail", mine[2])


def test_the_detail_makes_the_same_number_of_queries_whatever_the_units(
    signed_in, grading_world, grader
):
    by_size = sorted(grading_world.assignments_of(grader), key=lambda a: len(keys_of(a)))
    counts = []
    for assignment in (by_size[0], by_size[-1]):
        with CaptureQueriesContext(connection) as queries:
            assert signed_in.get(url("detail", assignment)).status_code == 200
        counts.append(len(queries))
    assert len(keys_of(by_size[-1])) > len(keys_of(by_size[0]))
    assert counts[0] == counts[1] <= 10, counts


def test_another_graders_assignment_is_a_404_in_the_one_error_shape(client, grading_world, grader):
    assignment = grading_world.assignments_of(grader)[0]
    client.force_login(grading_world.graders[2])
    for response in (
        client.get(url("detail", assignment)),
        post(client, url("grades", assignment), {"changes": []}),
        post(client, url("heartbeat", assignment), {"elapsed_seconds": 5}),
        post(client, url("submit", assignment), {}),
    ):
        assert response.status_code == 404
        assert response.json() == {
            "error": {
                "code": "not_found",
                "message": "No such assignment.",
                "field": None,
                "details": [],
            }
        }
    assert grades_of(assignment) == {}


def test_autosave_stores_changes_and_adds_the_time_capped_per_call(
    signed_in, grading_world, grader
):
    assignment = grading_world.assignments_of(grader)[0]
    response = post(
        signed_in,
        url("grades", assignment),
        {
            "changes": [
                {"unit_key": "s1", "field": "assertive", "value": "Y"},
                {"unit_key": "s1", "field": "relevant", "value": "N"},
                {"unit_key": "artefact", "field": "value_add", "value": "1"},
            ],
            "elapsed_seconds": 12.5,
        },
    )
    assert response.status_code == 200
    body = response.json()
    expected = {"s1": {"assertive": "Y", "relevant": "N"}, "artefact": {"value_add": "1"}}
    assert body["grades"] == expected == grades_of(assignment)
    assert body["missing"] == [
        {"unit_key": k, "field": f} for k, f in missing_fields(keys_of(assignment), expected)
    ]
    assert body["status"] == "in_progress"
    assert body["seconds_spent"] == 12.5

    cleared = post(
        signed_in,
        url("grades", assignment),
        {
            "changes": [{"unit_key": "s1", "field": "relevant", "value": ""}],
            "elapsed_seconds": 10_000,
        },
    )
    assert cleared.json()["grades"]["s1"] == {"assertive": "Y"}
    assert cleared.json()["seconds_spent"] == 12.5 + MAX_ELAPSED_PER_CALL

    beat = post(signed_in, url("heartbeat", assignment), {"elapsed_seconds": 15})
    assert beat.status_code == 200
    assignment.refresh_from_db()
    assert assignment.seconds_spent == beat.json()["seconds_spent"] == 27.5 + MAX_ELAPSED_PER_CALL


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"unit_key": "s1", "field": "assertive", "value": "maybe"}, "changes[0]"),
        ({"unit_key": "s999", "field": "assertive", "value": "Y"}, "changes[0].unit_key"),
        ({"unit_key": "s1", "field": "citation", "value": "strict"}, "changes[0]"),
    ],
)
def test_a_bad_change_is_refused_naming_it_and_nothing_is_saved(
    signed_in, grading_world, grader, change, field
):
    assignment = grading_world.assignments_of(grader)[0]
    good = {"unit_key": "s1", "field": "relevant", "value": "Y"}
    response = post(signed_in, url("grades", assignment), {"changes": [good, change]})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["field"] == field.replace("[0]", "[1]")
    assert grades_of(assignment) == {}


def test_a_malformed_body_is_refused_in_the_one_error_shape(signed_in, grading_world, grader):
    assignment = grading_world.assignments_of(grader)[0]
    response = post(signed_in, url("grades", assignment), {"elapsed_seconds": -1})
    assert response.status_code == 400
    error = response.json()["error"]
    assert {d["field"] for d in error["details"]} == {"changes", "elapsed_seconds"}


def test_session_auth_needs_the_csrf_token_and_a_token_does_not(grading_world, grader):
    assignment = grading_world.assignments_of(grader)[0]
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(grader)
    body = {"changes": [{"unit_key": "s1", "field": "assertive", "value": "Y"}]}
    refused = post(browser, url("grades", assignment), body)
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["error"]["message"]
    assert grades_of(assignment) == {}

    token = Token.objects.create(user=grader)
    script = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Token {token.key}")
    assert post(script, url("grades", assignment), body).status_code == 200
    assert grades_of(assignment) == {"s1": {"assertive": "Y"}}


def test_submit_lists_every_missing_field_then_accepts_a_complete_artefact(
    signed_in, grading_world, grader
):
    first, second, third = grading_world.assignments_of(grader)[:3]
    fill(second)
    assignment_submit(actor=grader, assignment=second)
    partial = {"s1": {"assertive": "Y"}}
    post(
        signed_in,
        url("grades", first),
        {"changes": [{"unit_key": "s1", "field": "assertive", "value": "Y"}]},
    )

    refused = post(signed_in, url("submit", first), {})
    assert refused.status_code == 400
    details = refused.json()["error"]["details"]
    assert details == [
        {"unit_key": k, "field": f} for k, f in missing_fields(keys_of(first), partial)
    ]

    fill(first)
    accepted = post(signed_in, url("submit", first), {"elapsed_seconds": 3})
    assert accepted.status_code == 200
    body = accepted.json()
    assert body["status"] == "submitted"
    assert body["next_page"] == reverse("grading-workspace", args=[third.public_id])
    first.refresh_from_db()
    assert first.status == AssignmentStatus.SUBMITTED

    again = post(signed_in, url("submit", first), {})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "conflict"


def test_the_last_submission_leads_back_to_the_queue(signed_in, grading_world, grader):
    mine = grading_world.assignments_of(grader)
    for assignment in mine:
        fill(assignment)
    for assignment in mine[:-1]:
        assignment_submit(actor=grader, assignment=assignment)
    response = post(signed_in, url("submit", mine[-1]), {})
    assert response.json()["next_page"] == reverse("grading-queue")


def test_a_change_after_submission_is_a_revision_with_a_reason(signed_in, grading_world, grader):
    assignment = grading_world.assignments_of(grader)[0]
    fill(assignment)
    assignment_submit(actor=grader, assignment=assignment)
    change = {"changes": [{"unit_key": "artefact", "field": "value_add", "value": "2"}]}

    refused = post(signed_in, url("grades", assignment), change)
    assert refused.status_code == 400
    assert refused.json()["error"]["field"] == "reason"
    assert not GradeRevision.objects.filter(assignment=assignment).exists()

    revised = post(signed_in, url("grades", assignment), {**change, "reason": "Second look."})
    assert revised.status_code == 200
    assert revised.json()["status"] == "submitted"
    revision = GradeRevision.objects.get(assignment=assignment)
    assert (revision.old_value, revision.new_value, revision.reason) == ("0", "2", "Second look.")


def test_a_closed_session_refuses_changes(signed_in, grading_world, grader):
    from grading.services.sessions import session_close

    assignment = grading_world.assignments_of(grader)[0]
    session_close(actor=grading_world.owner, session=grading_world.session)
    response = post(
        signed_in,
        url("grades", assignment),
        {"changes": [{"unit_key": "s1", "field": "assertive", "value": "Y"}]},
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "immutable"


def test_a_stranger_is_refused_in_the_one_error_shape(client, grading_world, grader):
    assignment = grading_world.assignments_of(grader)[0]
    for response in (client.get(url("list")), client.get(url("detail", assignment))):
        assert response.status_code == 401
        assert response["WWW-Authenticate"] == "Token"
        assert response.json()["error"]["code"] == "not_authenticated"


def test_an_autosave_takes_a_fixed_number_of_queries(
    signed_in, grading_world, grader, django_assert_num_queries
):
    """The busiest write of the product (``make bench-load``): session, user, the assignment,
    the assignment locked, its units (read once), the upsert, the time, the grades; with the
    savepoint and its release. Before: 13 (the assignment and its artefact read back, the
    units read twice)."""
    assignment = grading_world.assignments_of(grader)[0]
    path = url("grades", assignment)
    post(signed_in, path, {"changes": [{"unit_key": "s1", "field": "relevant", "value": "Y"}]})
    for value in ("N", "Y"):
        with django_assert_num_queries(10):
            response = post(
                signed_in,
                path,
                {
                    "changes": [{"unit_key": "s1", "field": "relevant", "value": value}],
                    "elapsed_seconds": 2,
                },
            )
        assert response.status_code == 200
        assert response.json()["grades"]["s1"] == {"relevant": value}
    assignment.refresh_from_db()
    assert assignment.seconds_spent == 4
