"""Session REST endpoints: create, list, detail, close, grades export and import; per persona."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from audit.models import AuditEntry
from demo.testing.grading import fill, first_values
from grading.models import Assignment, GradingSession, SessionStatus
from grading.services.grades import adjudication_record, assignment_submit


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def user_of(world, persona):
    return world.graders[0] if persona == "grader" else getattr(world, persona)


def list_url(world) -> str:
    return reverse("api-grading-session-list", args=[world.use_case.key])


def url(world, name: str, session=None) -> str:
    public_id = (session or world.session).public_id
    return reverse(f"api-grading-session-{name}", args=[world.use_case.key, public_id])


def payload(world, **fields) -> dict:
    return {
        "name": "Round 2",
        "runs": [run.pk for run in world.runs],
        "graders": [g.username for g in world.graders],
        "adjudicators": [world.adjudicator.username],
        "design": "uniform",
        "sample_size": 3,
        "seed": 99,
        **fields,
    }


def submit_all(world) -> None:
    for grader in world.graders:
        for assignment in world.assignments_of(grader):
            fill(assignment)
            assignment_submit(actor=grader, assignment=assignment)


def body_lines(response) -> list[dict]:
    return [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]


def test_the_owner_creates_a_session_and_gets_its_sample(grading_world):
    response = api(grading_world.owner).post(
        list_url(grading_world), payload(grading_world), format="json"
    )
    assert response.status_code == 201, response.json()
    data = response.json()
    session = GradingSession.objects.get(public_id=data["public_id"])
    assert (data["seed"], data["population_size"], data["sample_size"]) == ("99", 24, 6)
    assert data["design"] == "uniform" and data["graders_per_artefact"] == 2
    assert data["adjudicators"] == ["demo-adjudicator"]
    assert [run["id"] for run in data["runs"]] == sorted(run.pk for run in grading_world.runs)
    assert len(data["artefacts"]) == 6
    # The planned n is per σ: 3 of each σ's 12 outputs, uniform within the σ, π = 3/12.
    assert [(arm["population"], arm["sampled"]) for arm in data["arms"]] == [(12, 3), (12, 3)]
    for artefact in data["artefacts"]:
        assert artefact["inclusion_probability"] == pytest.approx(3 / 12)
        graders = {g["username"] for g in artefact["graders"]}
        stored = set(
            Assignment.objects.filter(artefact__public_id=artefact["public_id"]).values_list(
                "grader__username", flat=True
            )
        )
        assert len(graders) == 2 and graders == stored
    assert data["progress"] == {
        "artefacts": 6,
        "assignments": 12,
        "submitted": 0,
        "in_progress": 0,
        "pending": 12,
        "percent": 0.0,
    }
    assert data["url"] == url(grading_world, "detail", session)


def test_without_a_size_or_seed_it_draws_the_planned_size_with_a_recorded_seed(grading_world):
    fields = payload(grading_world)
    del fields["sample_size"], fields["seed"]
    data = api(grading_world.owner).post(list_url(grading_world), fields, format="json").json()
    assert data["sample_size"] == 24
    entry = AuditEntry.objects.filter(action="grading_session.create").latest("pk")
    assert entry.payload["seed"] == data["seed"]


@pytest.mark.parametrize(
    ("fields", "field", "fragment"),
    [
        ({"runs": [999999]}, "runs", "no run 999999"),
        ({"graders": ["grader-two", "nobody"]}, "graders", "no user 'nobody'"),
        ({"adjudicators": ["outsider"]}, "adjudicators", "does not hold the adjudicator role"),
        ({"graders": ["grader-two", "demo-reviewer"]}, "graders", "does not hold the grader role"),
        ({"design": "cluster"}, "design", "is not a valid choice"),
        ({"sample_size": 500}, "sample_size", "between 1 and the 12 outputs of σ"),
        ({"graders_per_artefact": 1}, "graders_per_artefact", "greater than or equal to 2"),
        ({"seed": -1}, "seed", "greater than or equal to 0"),
        ({"name": "  "}, "name", "blank"),
        ({"stratify_by": "section"}, "stratify_by", "needs the stratified design"),
    ],
)
def test_a_refused_session_names_the_field_at_fault(grading_world, fields, field, fragment):
    response = api(grading_world.owner).post(
        list_url(grading_world), payload(grading_world, **fields), format="json"
    )
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["field"] == field
    assert fragment in error["message"]
    assert GradingSession.objects.count() == 1


@pytest.mark.parametrize(
    ("persona", "read", "write"),
    [
        ("owner", 200, 201),
        ("reviewer", 200, 403),
        ("adjudicator", 200, 403),
        ("model_owner", 403, 403),
        ("grader", 403, 403),
        ("outsider", 404, 404),
    ],
)
def test_who_may_read_and_write_sessions(grading_world, persona, read, write):
    client = api(user_of(grading_world, persona))
    assert client.get(list_url(grading_world)).status_code == read
    assert client.get(url(grading_world, "detail")).status_code == read
    assert client.get(url(grading_world, "grades")).status_code == read
    response = client.post(list_url(grading_world), payload(grading_world), format="json")
    assert response.status_code == write
    if write != 201:
        assert client.post(url(grading_world, "close")).status_code == write
        file = io.BytesIO(b"{}\n")
        file.name = "g.jsonl"
        assert client.post(url(grading_world, "grades-import"), {"file": file}).status_code == write
        assert GradingSession.objects.get().status == SessionStatus.OPEN


def test_anonymous_callers_are_refused(grading_world):
    assert api().get(list_url(grading_world)).status_code in (401, 403)


def test_the_list_and_detail_show_progress_in_flat_queries(
    grading_world, django_assert_max_num_queries
):
    client = api(grading_world.reviewer)
    assignment = grading_world.assignments_of(grading_world.graders[0])[0]
    fill(assignment)
    assignment_submit(actor=assignment.grader, assignment=assignment)
    connection.queries_log.clear()  # each request resets the log: count from an empty one
    with CaptureQueriesContext(connection) as captured:
        listed = client.get(list_url(grading_world)).json()
    one = len(captured)
    assert listed["count"] == 1
    assert listed["results"][0]["progress"]["submitted"] == 1
    for n in range(3):
        client_owner = api(grading_world.owner)
        client_owner.post(
            list_url(grading_world),
            payload(grading_world, name=f"Round {n + 2}", sample_size=2 + 2 * n),
            format="json",
        )
    with django_assert_max_num_queries(one):
        assert client.get(list_url(grading_world)).json()["count"] == 4
    connection.queries_log.clear()
    with CaptureQueriesContext(connection) as captured:
        detail = client.get(url(grading_world, "detail")).json()
    small = len(captured)
    assert detail["graders"][0]["username"] == "demo-grader"
    assert sum(g["submitted"] for g in detail["graders"]) == 1
    assert detail["strata"][0]["population"] == 12
    biggest = GradingSession.objects.get(name="Round 4")
    with django_assert_max_num_queries(small):
        assert len(client.get(url(grading_world, "detail", biggest)).json()["artefacts"]) == 12


def test_close_is_for_the_owner_and_happens_once(grading_world):
    client = api(grading_world.owner)
    response = client.post(url(grading_world, "close"))
    assert response.status_code == 200
    assert response.json()["status"] == "closed" and response.json()["closed_at"]
    again = client.post(url(grading_world, "close"))
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "conflict"


def test_the_export_is_streamed_and_carries_provenance_only_when_asked(grading_world):
    submit_all(grading_world)
    client = api(grading_world.owner)
    response = client.get(url(grading_world, "grades"))
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "application/x-ndjson"
    lines = body_lines(response)
    assert len(lines) == 16
    assert set(lines[0]) == {
        "artefact",
        "grader",
        "task_id",
        "grades",
        "seconds",
        "submitted",
        "submitted_at",
    }
    assert lines[0]["submitted"] is True and lines[0]["seconds"] == 30.0
    with_provenance = body_lines(client.get(url(grading_world, "grades"), {"provenance": "1"}))
    sigmas = {line["sigma"] for line in with_provenance}
    assert sigmas == {run.configuration.name for run in grading_world.runs}
    assert {line["kind"] for line in with_provenance} == {"output"}
    pis = [line["inclusion_probability"] for line in with_provenance]
    assert pis == [pytest.approx(1 / 3)] * 16  # stratified: 4 of the 12 outputs of each run
    accepted = client.get(url(grading_world, "grades"), HTTP_ACCEPT="application/x-ndjson")
    assert accepted.status_code == 200


def test_the_final_export_has_one_line_per_artefact_with_agreed_values(grading_world):
    submit_all(grading_world)
    lines = body_lines(api(grading_world.owner).get(url(grading_world, "grades"), {"final": "1"}))
    assert len(lines) == 8
    for line in lines:
        assert line["complete"] is True and line["graders"] == 2
        assert line["disputed"] == [] and line["adjudicated"] == []
        assert line["grades"]["artefact"] == {"value_add": "0"}
        assert line["grades"]["s1"] == {"assertive": "Y", "supported": "fully", "relevant": "Y"}


def test_the_final_export_lists_disagreements_until_they_are_adjudicated(grading_world):
    dissenter = grading_world.assignments_of(grading_world.graders[0])[0]
    artefact = dissenter.artefact
    for grader in grading_world.graders:
        for assignment in grading_world.assignments_of(grader):
            if assignment.pk == dissenter.pk:
                fill(
                    assignment,
                    lambda k, f: "N" if (k, f) == ("s1", "relevant") else first_values(k, f),
                )
            else:
                fill(assignment)
            assignment_submit(actor=grader, assignment=assignment)
    client = api(grading_world.adjudicator)

    def final_line() -> dict:
        lines = body_lines(client.get(url(grading_world, "grades"), {"final": "1"}))
        return next(line for line in lines if line["artefact"] == artefact.public_id)

    line = final_line()
    assert line["disputed"] == [["s1", "relevant"]]
    assert line["grades"]["s1"] == {"assertive": "Y", "supported": "fully"}
    adjudication_record(
        actor=grading_world.adjudicator,
        artefact=artefact,
        unit_key="s1",
        field="relevant",
        value="N",
    )
    line = final_line()
    assert line["disputed"] == [] and line["adjudicated"] == [["s1", "relevant"]]
    assert line["grades"]["s1"]["relevant"] == "N"


def test_a_file_imported_as_multipart_or_raw_ndjson_is_applied(grading_world):
    submit_all(grading_world)
    client = api(grading_world.owner)
    exported = b"".join(client.get(url(grading_world, "grades")).streaming_content)
    file = io.BytesIO(exported)
    file.name = "mine.jsonl"
    response = client.post(url(grading_world, "grades-import"), {"file": file}, format="multipart")
    assert response.status_code == 200, response.json()
    assert response.json()["unchanged"] == 16 and response.json()["lines"] == 16
    raw = client.generic(
        "POST", url(grading_world, "grades-import"), exported, content_type="application/x-ndjson"
    )
    assert raw.status_code == 200, raw.json()
    assert raw.json()["unchanged"] == 16
    assert AuditEntry.objects.filter(action="grades.import").count() == 2


def test_a_bad_file_is_a_400_with_one_detail_per_line_error(grading_world):
    submit_all(grading_world)
    client = api(grading_world.owner)
    lines = b"".join(client.get(url(grading_world, "grades")).streaming_content).splitlines()
    second = json.loads(lines[1])
    second["grades"]["s1"]["relevant"] = "perhaps"
    second["seconds"] = "soon"
    body = b"\n".join([lines[0], json.dumps(second).encode(), b"[]", lines[0]]) + b"\n"
    response = client.generic(
        "POST", url(grading_world, "grades-import"), body, content_type="application/x-ndjson"
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "file" and "nothing was imported" in error["message"]
    assert [(d["line"], d["field"]) for d in error["details"]] == [
        (2, "seconds"),
        (2, "grades.s1.relevant"),
        (3, "line"),
        (4, "artefact"),
    ]
    empty = client.generic(
        "POST", url(grading_world, "grades-import"), b"", content_type="application/x-ndjson"
    )
    assert empty.status_code == 400
    assert empty.json()["error"]["details"][0]["field"] == "file"
    missing = client.post(url(grading_world, "grades-import"), {}, format="multipart")
    assert missing.status_code == 400 and missing.json()["error"]["field"] == "file"


def test_the_openapi_schema_documents_the_session_endpoints_without_warnings(grading_world):
    response = api(grading_world.owner).get("/api/schema/")
    assert response.status_code == 200
    for path in (
        b"/api/v1/use-cases/{key}/grading/sessions/",
        b"/api/v1/use-cases/{key}/grading/sessions/{public_id}/grades.jsonl",
        b"/api/v1/use-cases/{key}/grading/sessions/{public_id}/grades/import/",
    ):
        assert path in response.content
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")
