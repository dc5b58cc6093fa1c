"""Session management pages: list, new session, detail with seed and π, close, grades in and out."""

from __future__ import annotations

import io
import json

import pytest
from django.db import connection
from django.http import StreamingHttpResponse
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audit.models import AuditEntry
from demo.testing.grading import fill
from grading.models import GradingSession, SessionStatus
from grading.services.grades import assignment_submit
from grading.services.sessions import sample_plan, session_create
from runs.models import Output


def browser(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def user_of(world, persona: str):
    return world.graders[0] if persona == "grader" else getattr(world, persona)


def urls(world, session=None) -> dict[str, str]:
    key = world.use_case.key
    public_id = (session or world.session).public_id
    return {
        "list": reverse("grading-session-list", args=[key]),
        "new": reverse("grading-session-new", args=[key]),
        "detail": reverse("grading-session-detail", args=[key, public_id]),
        "close": reverse("grading-session-close", args=[key, public_id]),
        "export": reverse("grading-session-export", args=[key, public_id]),
        "import": reverse("grading-session-import", args=[key, public_id]),
    }


def another_session(world, size: int, name: str = "Round 2") -> GradingSession:
    return session_create(
        actor=world.owner,
        use_case=world.use_case,
        name=name,
        runs=world.runs,
        graders=world.graders,
        adjudicators=[world.adjudicator],
        design="uniform",
        sample_size=size,
        seed=7,
    )


def form(world, **fields) -> dict:
    return {
        "name": "Round 2",
        "runs": [run.pk for run in world.runs],
        "design": "stratified",
        "sample_size": "3",
        "graders_per_artefact": "2",
        "graders": [g.pk for g in world.graders],
        "adjudicators": [world.adjudicator.pk],
        "seed": "12345",
        **fields,
    }


def queries(client: Client, url: str) -> int:
    connection.queries_log.clear()  # each request resets the log: count from an empty one
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
        assert response.status_code == 200
        if response.streaming:
            b"".join(response.streaming_content)
    assert len(captured) > 0
    return len(captured)


def submit_all(world) -> None:
    for grader in world.graders:
        for assignment in world.assignments_of(grader):
            fill(assignment)
            assignment_submit(actor=grader, assignment=assignment)


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("owner", 200),
        ("reviewer", 200),
        ("adjudicator", 200),
        ("model_owner", 403),
        ("grader", 403),
        ("outsider", 404),
    ],
)
def test_session_pages_are_for_management_roles_only(grading_world, persona, status):
    client = browser(user_of(grading_world, persona))
    pages = urls(grading_world)
    for name in ("list", "detail", "export"):
        assert client.get(pages[name]).status_code == status, name


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("reviewer", 403),
        ("adjudicator", 403),
        ("model_owner", 403),
        ("grader", 403),
        ("outsider", 404),
    ],
)
def test_only_the_charter_owner_creates_imports_and_closes(grading_world, persona, status):
    client = browser(user_of(grading_world, persona))
    pages = urls(grading_world)
    assert client.get(pages["new"]).status_code == status
    assert client.post(pages["new"], form(grading_world)).status_code == status
    assert client.get(pages["import"]).status_code == status
    assert client.post(pages["close"], {"confirm": "yes"}).status_code == status
    assert GradingSession.objects.count() == 1
    assert GradingSession.objects.get().status == SessionStatus.OPEN


def test_the_list_shows_each_session_with_its_progress_in_flat_queries(grading_world):
    client = browser(grading_world.owner)
    url = urls(grading_world)["list"]
    one = queries(client, url)
    another_session(grading_world, 10, "Round 2")
    another_session(grading_world, 4, "Round 3")
    assert queries(client, url) == one
    assignment = grading_world.assignments_of(grading_world.graders[0])[0]
    fill(assignment)
    assignment_submit(actor=assignment.grader, assignment=assignment)
    page = client.get(url).content.decode()
    assert "Credit memo round 1" in page and "Round 3" in page
    assert "1 of 16" in page  # assignments submitted
    assert "8 of 24" in page  # artefacts of the population
    assert 'href="/use-cases/CREDIT-MEMO-B/grading/new/"' in page
    assert "New session" not in browser(grading_world.reviewer).get(url).content.decode()


def test_the_new_session_form_shows_the_size_the_charter_plans_for_each_sigma(grading_world):
    page = browser(grading_world.owner).get(urls(grading_world)["new"]).content.decode()
    outputs = list(Output.objects.filter(run__in=grading_world.runs, task__split="graded"))
    plan = sample_plan(
        charter=grading_world.session.charter, runs=grading_world.runs, outputs=outputs
    )
    assert [(arm.size, arm.population) for arm in plan.arms] == [(12, 12), (12, 12)]
    assert plan.size == len(outputs) == 24 and all(arm.capped for arm in plan.arms)
    assert 'name="sample_size" value=' not in page  # blank: the plan of each σ
    for arm in plan.arms:
        assert arm.label in page
        assert arm.metric_id in page and f"n = {arm.planned_units}" in page
    assert "capped at the population" in page and "The planned n is per σ" in page
    for run in grading_world.runs:
        assert f'value="{run.pk}"' in page and "checked" in page
    assert " grader-two</label>" in page and " demo-adjudicator</label>" in page


def test_the_owner_creates_a_session_and_lands_on_its_page(grading_world):
    client = browser(grading_world.owner)
    response = client.post(urls(grading_world)["new"], form(grading_world))
    session = GradingSession.objects.get(name="Round 2")
    assert response.status_code == 302
    assert response["Location"] == urls(grading_world, session)["detail"]
    assert (session.seed, session.sample_size, session.design) == (12345, 6, "stratified")
    assert [arm["sampled"] for arm in session.arms] == [3, 3]
    assert session.artefacts.count() == 6 and session.assignments.count() == 12
    page = client.get(response["Location"]).content.decode()
    assert "seed 12345" in page.replace('<span class="mono" id="session-seed">', "seed ").replace(
        "</span>", ""
    )


def test_a_blank_seed_and_size_draw_a_random_seed_and_the_planned_size(grading_world):
    client = browser(grading_world.owner)
    client.post(urls(grading_world)["new"], form(grading_world, seed="", sample_size=""))
    session = GradingSession.objects.get(name="Round 2")
    assert session.sample_size == 24
    entry = AuditEntry.objects.filter(action="grading_session.create").latest("pk")
    assert entry.payload["seed"] == str(session.seed)


@pytest.mark.parametrize(
    ("fields", "field", "fragment"),
    [
        ({"name": "llama-4 round"}, "name", "must not reveal provenance"),
        ({"sample_size": "99"}, "sample_size", "between 1 and the 12 outputs of σ"),
        ({"graders_per_artefact": "5"}, "graders", "5 graders per artefact need at least 5"),
        ({"graders_per_artefact": "1"}, "graders_per_artefact", "Ensure this value is greater"),
        ({"runs": []}, "runs", "This field is required"),
        ({"seed": "-4"}, "seed", "Ensure this value is greater"),
    ],
)
def test_a_refused_session_shows_the_error_by_its_field(grading_world, fields, field, fragment):
    client = browser(grading_world.owner)
    response = client.post(urls(grading_world)["new"], form(grading_world, **fields))
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert field in errors, errors
    assert fragment in " ".join(errors[field])
    assert fragment in response.content.decode().replace("&#x27;", "'")
    assert GradingSession.objects.count() == 1


def test_an_adjudicator_who_grades_is_refused_on_the_adjudicators_field(grading_world):
    from charters.models import Role
    from charters.services.use_cases import membership_grant

    grader = grading_world.graders[0]
    membership_grant(
        actor=grading_world.owner,
        use_case=grading_world.use_case,
        user=grader,
        role=Role.ADJUDICATOR,
    )
    response = browser(grading_world.owner).post(
        urls(grading_world)["new"], form(grading_world, adjudicators=[grader.pk])
    )
    assert response.status_code == 400
    assert "third person" in " ".join(response.context["form"].errors["adjudicators"])


def test_the_detail_shows_the_seed_strata_with_pi_and_each_graders_progress(grading_world):
    submit_all(grading_world)
    session = grading_world.session
    response = browser(grading_world.reviewer).get(urls(grading_world)["detail"])
    page = response.content.decode()
    detail = response.context["detail"]
    assert f'id="session-seed">{session.seed}<' in page
    assert [(s.stratum, s.sampled, s.population) for s in detail.strata] == [
        (f"run:{grading_world.runs[0].pk}", 4, 12),
        (f"run:{grading_world.runs[1].pk}", 4, 12),
    ]
    assert "0.3333" in page and "3.00" in page  # π = 4/12 and its weight
    assert [(g.username, g.assigned, g.submitted) for g in detail.graders] == sorted(
        (g.username, len(grading_world.assignments_of(g)), len(grading_world.assignments_of(g)))
        for g in grading_world.graders
    )
    assert {g.mean_minutes for g in detail.graders} == {0.5}  # fill() spends 30 s
    assert detail.progress.submitted == 16 and detail.artefacts_complete == 8
    assert f"/use-cases/CREDIT-MEMO-B/grading/{session.public_id}/agreement/" in page
    assert f"/use-cases/CREDIT-MEMO-B/grading/{session.public_id}/adjudication/" in page
    assert "Close the session" not in page  # the reviewer reads only


def test_the_detail_takes_the_same_queries_whatever_the_size_of_the_session(grading_world):
    client = browser(grading_world.owner)
    small = queries(client, urls(grading_world)["detail"])
    bigger = another_session(grading_world, 10)
    assert queries(client, urls(grading_world, bigger)["detail"]) == small


def test_closing_needs_the_confirmation(grading_world):
    client = browser(grading_world.owner)
    pages = urls(grading_world)
    response = client.post(pages["close"], follow=True)
    assert "it was not closed" in response.content.decode()
    assert GradingSession.objects.get().status == SessionStatus.OPEN
    response = client.post(pages["close"], {"confirm": "yes"}, follow=True)
    assert GradingSession.objects.get().status == SessionStatus.CLOSED
    assert AuditEntry.objects.filter(action="grading_session.close").count() == 1
    page = response.content.decode()
    assert "is closed" in page and "Import grades" not in page
    response = client.post(pages["close"], {"confirm": "yes"}, follow=True)
    assert "already closed" in response.content.decode()


def test_the_export_streams_one_line_per_assignment_in_flat_queries(grading_world):
    submit_all(grading_world)
    client = browser(grading_world.owner)
    response = client.get(urls(grading_world)["export"])
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"] == "application/x-ndjson"
    assert "attachment" in response["Content-Disposition"]
    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert len(lines) == 16
    assert {"kind", "sigma", "run", "stratum"}.isdisjoint(lines[0])
    small = queries(client, urls(grading_world)["export"])
    bigger = another_session(grading_world, 10)
    for grader in grading_world.graders:
        for assignment in bigger.assignments.filter(grader=grader)[:3]:
            fill(assignment)
    assert queries(client, urls(grading_world, bigger)["export"]) == small
    assert queries(client, urls(grading_world, bigger)["export"] + "?provenance=1") == small
    assert queries(client, urls(grading_world, bigger)["export"] + "?final=1") <= small + 3


def test_the_import_page_imports_a_file_or_lists_every_bad_line(grading_world):
    submit_all(grading_world)
    client = browser(grading_world.owner)
    pages = urls(grading_world)
    exported = b"".join(client.get(pages["export"]).streaming_content)
    lines = exported.splitlines()
    bad = json.loads(lines[3])
    bad["grades"]["artefact"]["value_add"] = "7"
    lines[3] = json.dumps(bad).encode()
    upload = io.BytesIO(b"\n".join(lines) + b"\n{oops\n")
    upload.name = "grades.jsonl"
    response = client.post(pages["import"], {"file": upload})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Nothing was imported" in page
    assert [(e["line"], e["field"]) for e in response.context["errors"]] == [
        (4, "grades.artefact.value_add"),
        (17, "line"),
    ]
    good = io.BytesIO(exported)
    good.name = "grades.jsonl"
    response = client.post(pages["import"], {"file": good}, follow=True)
    assert "16 unchanged" in response.content.decode()


def test_the_use_case_page_links_the_sessions_for_management_roles_only(grading_world):
    page = reverse("use-case-detail", args=[grading_world.use_case.key])
    link = 'href="/use-cases/CREDIT-MEMO-B/grading/"'
    for user in (grading_world.owner, grading_world.reviewer, grading_world.adjudicator):
        assert link in browser(user).get(page).content.decode()
    for user in (grading_world.graders[0], grading_world.model_owner):
        assert link not in browser(user).get(page).content.decode()


def test_the_strata_list_runs_in_run_order_not_text_order():
    """run 99 before run 100 (a text sort puts "run:100" first), the baseline first."""
    from types import SimpleNamespace

    from grading.models import SampleDesign
    from grading.selectors.sessions import _strata

    class Rows(list):
        def values(self, *_):
            return self

        def annotate(self, **_):
            return self

        def order_by(self, *_):
            return Rows(sorted(self, key=lambda row: row["stratum"]))

    rows = Rows(
        {"stratum": key, "n": 4, "pi_min": 0.5, "pi_max": 0.5}
        for key in ("run:100", "run:99", "baseline")
    )
    session = SimpleNamespace(design=SampleDesign.STRATIFIED, artefacts=rows)
    labels = {"baseline": "human baseline artefacts", "run:99": "run 99", "run:100": "run 100"}
    strata = _strata(session, labels)  # type: ignore[arg-type]
    assert [s.stratum for s in strata] == ["baseline", "run:99", "run:100"]
    assert [s.population for s in strata] == [8, 8, 8]
