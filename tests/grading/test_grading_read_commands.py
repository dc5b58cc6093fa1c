"""``sessions_list``, ``judge_calibration`` and ``oversight_studies_list`` answer as the API."""

from __future__ import annotations

import json

import pytest

from demo.testing.decisions import make_decidable_world
from demo.testing.reads import SITE, queries, read, refusals_for_personas, refused
from grading.models import Assignment, GradingSession, OversightStudy, SessionArtefact
from grading.services.oversight import oversight_study_create
from grading.services.sessions import session_create


@pytest.fixture
def judged(db):
    """A closed session, every assignment submitted, both runs judged offline."""
    return make_decidable_world()


def second_session(world) -> GradingSession:
    return session_create(
        actor=world.owner,
        use_case=world.use_case,
        name="Round 2",
        runs=world.runs,
        graders=world.graders[:2],
        adjudicators=[world.adjudicator],
        sample_size=2,
        seed=2,
    )


def study(world, name: str, *, seed: int) -> OversightStudy:
    return oversight_study_create(
        actor=world.owner,
        use_case=world.use_case,
        name=name,
        runs=world.runs,
        reviewers=world.graders[:2],
        items_per_reviewer=4,
        defect_share=0.5,
        seed=seed,
    )


@pytest.fixture
def world(judged):
    world, _judge = judged
    study(world, "Memo review", seed=7)
    return world


def reads(world) -> dict[str, tuple[str, list[str]]]:
    key = world.use_case.key
    session = world.session.public_id
    base = f"/api/v1/use-cases/{key}"
    uc = ["--use-case", key]
    return {
        "sessions_list": (f"{base}/grading/sessions/", uc),
        "judge_calibration": (
            f"{base}/grading/sessions/{session}/calibration/",
            [*uc, "--session", session],
        ),
        "oversight_studies_list": (f"{base}/oversight/", uc),
    }


MANAGERS_ONLY = {"model_owner": 403, "grader": 403, "outsider": 404}
REFUSED = {
    "sessions_list": MANAGERS_ONLY,
    "judge_calibration": MANAGERS_ONLY,
    "oversight_studies_list": {**MANAGERS_ONLY, "adjudicator": 403},
}


@SITE
@pytest.mark.parametrize("command", list(REFUSED))
def test_json_is_the_api_answer_and_refusals_are_the_apis(world, command):
    path, args = reads(world)[command]
    assert refusals_for_personas(world, path, command, *args) == REFUSED[command]


def test_sessions_list_gives_each_sessions_progress_from_the_database(world):
    key = world.use_case.key
    session = world.session
    lines = read("sessions_list", "--use-case", key, "--as", "demo-adjudicator").splitlines()
    assert lines[0] == f"1 grading session(s) of {key}."
    row = lines[3].split()
    assignments = Assignment.objects.filter(session=session)
    submitted = assignments.filter(submitted_at__isnull=False).count()
    assert row[0] == session.public_id and submitted == assignments.count()
    assert row[-2:] == [f"{submitted}/{assignments.count()}", "100.0"]


@SITE
def test_sessions_list_pages_as_the_api(world):
    key = world.use_case.key
    second_session(world)
    page = json.loads(
        read("sessions_list", "--use-case", key, "--limit", "1", "--as", "demo-owner",
             "--format", "json")
    )  # fmt: skip
    assert page["count"] == GradingSession.objects.filter(use_case=world.use_case).count() == 2
    assert len(page["results"]) == 1
    assert (
        page["next"]
        == f"http://testserver/api/v1/use-cases/{key}/grading/sessions/?limit=1&offset=1"
    )
    lines = read("sessions_list", "--use-case", key, "--limit", "1", "--offset", "1", "--as",
                 "demo-owner").splitlines()  # fmt: skip
    assert lines[0] == f"2 grading session(s) of {key}; 2–2 shown."


def test_judge_calibration_names_the_judge_and_the_complete_artefacts(judged, world):
    _world, judge = judged
    session = world.session
    printed = read(
        "judge_calibration", "--use-case", world.use_case.key, "--session", session.public_id,
        "--as", "demo-reviewer",
    ).splitlines()  # fmt: skip
    total = SessionArtefact.objects.filter(session=session).count()
    assert printed[0].startswith(
        f"calibration of judge {judge.name}:{judge.version} on session {session.public_id} "
        f"(95% intervals): {total}/{total} artefacts complete"
    )
    data = json.loads(
        read("judge_calibration", "--use-case", world.use_case.key, "--session",
             session.public_id, "--as", "demo-reviewer", "--format", "json")
    )  # fmt: skip
    rows = {line.split()[0]: line.split() for line in printed[3:]}
    assert set(rows) == {r["criterion"] for r in data["rows"]} and rows
    for r in data["rows"]:
        assert rows[r["criterion"]][1] == str(r["n_units"])
        if r["kappa"] is not None:
            assert rows[r["criterion"]][2] == f"{r['kappa']:.2f}"


def test_judge_calibration_refuses_an_unknown_judge_and_session(world):
    key = world.use_case.key
    message = refused(
        "judge_calibration", "--use-case", key, "--session", world.session.public_id,
        "--judge", "nobody:9", "--as", "demo-owner",
    )  # fmt: skip
    assert message.startswith("--judge: ")
    message = refused(
        "judge_calibration", "--use-case", key, "--session", "NOPE", "--as", "demo-owner"
    )
    assert message.startswith("--session: ")


def test_oversight_studies_list_counts_items_from_the_database(world):
    study = OversightStudy.objects.get(use_case=world.use_case)
    lines = read(
        "oversight_studies_list", "--use-case", world.use_case.key, "--as", "demo-owner"
    ).splitlines()
    assert lines[0] == f"1 oversight study(ies) of {world.use_case.key}."
    assert lines[3].split()[:3] == [study.public_id, "Memo", "review"]
    assert f"0/{study.items.count()}" in lines[3].split()


def test_sessions_list_queries_do_not_grow_with_the_sessions(world):
    uc = ["--use-case", world.use_case.key, "--as", "demo-owner"]
    before = queries("sessions_list", *uc)
    second_session(world)
    assert queries("sessions_list", *uc) == before


def test_oversight_studies_list_queries_do_not_grow_with_the_studies(world):
    uc = ["--use-case", world.use_case.key, "--as", "demo-owner"]
    before = queries("oversight_studies_list", *uc)
    study(world, "Second review", seed=8)
    assert queries("oversight_studies_list", *uc) == before
