"""``runs_list``, ``run_show`` and ``judgings_list`` answer as the API answers the same user."""

from __future__ import annotations

import json

import pytest

from demo.testing.grading import make_world
from demo.testing.reads import SITE, queries, read, refusals_for_personas, refused
from runs.models import JudgeScore, Judging, Output, Run
from runs.services.judging import run_judge_execute, run_judge_start


@pytest.fixture
def world(db):
    world = make_world()
    judging = run_judge_start(
        actor=world.model_owner, run=world.runs[0], kind="offline", purpose="gated", enqueue=False
    )
    run_judge_execute(judging_id=judging.pk)
    return world


def reads(world) -> dict[str, tuple[str, list[str]]]:
    key = world.use_case.key
    run = world.runs[0].pk
    base = f"/api/v1/use-cases/{key}/runs"
    uc = ["--use-case", key]
    return {
        "runs_list": (f"{base}/?limit=1&offset=1", [*uc, "--limit", "1", "--offset", "1"]),
        "run_show": (f"{base}/{run}/", [*uc, "--run", str(run)]),
        "judgings_list": (f"{base}/{run}/judgings/", [*uc, "--run", str(run)]),
    }


@SITE
@pytest.mark.parametrize("command", ["runs_list", "run_show", "judgings_list"])
def test_json_is_the_api_answer_and_graders_and_outsiders_are_refused(world, command):
    path, args = reads(world)[command]
    assert refusals_for_personas(world, path, command, *args) == {"grader": 403, "outsider": 404}


@SITE
def test_runs_list_pages_newest_first_with_the_sites_links(world):
    key = world.use_case.key
    page = json.loads(
        read("runs_list", "--use-case", key, "--limit", "1", "--as", "demo-owner", "--format=json")
    )
    newest, oldest = sorted(world.runs, key=lambda r: r.pk, reverse=True)
    assert page["count"] == 2 and [r["id"] for r in page["results"]] == [newest.pk]
    assert page["next"] == f"http://testserver/api/v1/use-cases/{key}/runs/?limit=1&offset=1"
    lines = read("runs_list", "--use-case", key, "--as", "demo-owner").splitlines()
    assert lines[0] == f"2 run(s) of {key}, newest first."
    rows = [line.split() for line in lines[3:]]
    assert [int(row[0]) for row in rows] == [newest.pk, oldest.pk]
    done = Output.objects.filter(run=oldest).count()
    assert rows[1][1:5] == [
        "imported",
        "completed",
        f"{oldest.configuration.name}:1",
        oldest.split,
    ]
    assert rows[1][5] == f"{done}/{oldest.items_total}"


def test_run_show_gives_the_sha256s_and_counts_from_the_database(world):
    run = Run.objects.select_related("configuration", "task_set").get(pk=world.runs[0].pk)
    printed = read(
        "run_show", "--use-case", world.use_case.key, "--run", str(run.pk), "--as", "demo-reviewer"
    )
    assert printed.startswith(f"run {run.pk} of {world.use_case.key}: imported, completed")
    assert f"{run.configuration.name}:1 {run.configuration.sha256}" in printed
    assert f"{run.task_set.name}:1 {run.task_set.manifest_sha256}" in printed
    assert f"succeeded {Output.objects.filter(run=run).count()}, failed 0" in printed
    assert f"{run.source_filename} {run.source_sha256}" in printed


def test_judgings_list_gives_each_judging_of_the_run(world):
    run = world.runs[0]
    judging = Judging.objects.get(run=run)
    lines = read(
        "judgings_list", "--use-case", world.use_case.key, "--run", str(run.pk), "--as",
        "demo-model-owner",
    ).splitlines()  # fmt: skip
    assert lines[0] == f"1 judging(s) of run {run.pk} of {world.use_case.key}."
    row = lines[3].split()
    outputs = Output.objects.filter(run=run).count()
    scores = JudgeScore.objects.filter(judge=judging.judge, unit__output__run=run).count()
    assert row[0] == str(judging.pk) and row[2:5] == ["offline", "gated", "completed"]
    assert row[5:7] == [f"{outputs}/{outputs}", str(scores)] and scores > 0
    other = world.runs[1].pk
    empty = read("judgings_list", "--use-case", world.use_case.key, "--run", str(other), "--as",
                 "demo-owner")  # fmt: skip
    assert empty == f"0 judging(s) of run {other} of {world.use_case.key}.\n"


def test_an_unknown_run_is_named(world):
    key = world.use_case.key
    message = refused("run_show", "--use-case", key, "--run", "999", "--as", "demo-owner")
    assert message.startswith("--run: ")
    assert refused("judgings_list", "--use-case", key, "--run", "999", "--as", "outsider") == (
        f"--as: outsider holds no role on {key}"
    )


def test_queries_do_not_grow_with_the_rows(world):
    key = world.use_case.key
    one = queries("runs_list", "--use-case", key, "--limit", "1", "--as", "demo-owner")
    two = queries("runs_list", "--use-case", key, "--limit", "2", "--as", "demo-owner")
    assert one == two
    run = world.runs[0]
    before = queries("judgings_list", "--use-case", key, "--run", str(run.pk), "--as", "demo-owner")
    run_judge_start(
        actor=world.model_owner,
        run=run,
        kind="offline",
        name="second",
        purpose="informational",
        enqueue=False,
    )
    after = queries("judgings_list", "--use-case", key, "--run", str(run.pk), "--as", "demo-owner")
    assert Judging.objects.filter(run=run).count() == 2 and after == before
