"""``enterpriseval oversight_study_create|oversight_study_close|oversight_status``: an oversight
study from the command line, through the services, access checks and serializers of the API."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient
from statsmodels.stats.proportion import proportion_confint

from audit.models import AuditEntry
from grading.models import OversightItem, OversightStudy
from grading.services.oversight import oversight_item_decide, oversight_study_create

SEED = 7


def run(world, command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, f"--use-case={world.use_case.key}", *args, stdout=out)
    return out.getvalue()


def refused(world, command: str, *args: str) -> str:
    with pytest.raises(CommandError) as error:
        run(world, command, *args)
    assert error.value.returncode == 2
    return str(error.value)


def create(world, *extra: str, name: str = "Memo review", actor: str = "demo-owner") -> str:
    return run(
        world,
        "oversight_study_create",
        f"--name={name}",
        *[f"--run={run.pk}" for run in world.runs],
        "--reviewer=demo-grader",
        "--reviewer=grader-two",
        "--items-per-reviewer=4",
        "--defect-share=0.5",
        f"--seed={SEED}",
        f"--as={actor}",
        *extra,
    )


def api_get(user, name: str, *args: str):
    client = APIClient()
    client.force_authenticate(user)
    response = client.get(reverse(name, args=list(args)))
    assert response.status_code == 200, response.content
    return response.json()


def listed(world, study) -> dict:
    rows = api_get(world.owner, "api-grading-oversight-list", world.use_case.key)
    return next(row for row in rows if row["public_id"] == study.public_id)


@pytest.fixture
def study(grading_world) -> OversightStudy:
    return oversight_study_create(
        actor=grading_world.owner,
        use_case=grading_world.use_case,
        name="Memo review",
        runs=grading_world.runs,
        reviewers=grading_world.graders[:2],
        items_per_reviewer=4,
        defect_share=0.5,
        seed=SEED,
    )


def items_of(study, reviewer) -> list[OversightItem]:
    return list(OversightItem.objects.filter(study=study, reviewer=reviewer).order_by("position"))


# --------------------------------------------------------------------------- create


def test_create_builds_the_seeded_blind_queues_and_records_them(grading_world):
    printed = create(grading_world)
    study = OversightStudy.objects.get()
    assert (study.name, study.seed, study.defect_share, study.status) == (
        "Memo review",
        SEED,
        0.5,
        "open",
    )
    assert study.created_by == grading_world.owner
    assert sorted(r.pk for r in study.runs.all()) == sorted(r.pk for r in grading_world.runs)
    for reviewer in grading_world.graders[:2]:
        queue = items_of(study, reviewer)
        assert [i.position for i in queue] == [1, 2, 3, 4]
        # round(0.5 · 4) = 2 copies of each queue carry one seeded defect.
        assert sum(len(i.defects) for i in queue) == 2
    assert not OversightItem.objects.filter(reviewer=grading_world.graders[2]).exists()
    entry = AuditEntry.objects.get(action="oversight_study.create")
    assert entry.actor == grading_world.owner and entry.target_id == str(study.pk)
    assert entry.payload["seed"] == str(SEED) and entry.payload["items"] == 8
    assert sum(entry.payload["seeded"].values()) == 4
    assert printed.startswith(
        f"Oversight study {study.public_id} (Memo review) of {grading_world.use_case.key}: "
        f"8 copies for 2 reviewer(s), defect share 0.5, seed {SEED}."
    )


def test_the_same_seed_builds_the_same_queues_as_the_service(grading_world, study):
    create(grading_world, name="Second round")
    again = OversightStudy.objects.get(name="Second round")

    def fingerprint(s):
        return [
            (i.reviewer_id, i.position, i.source_output_id, i.text, i.defects)
            for i in OversightItem.objects.filter(study=s).order_by("reviewer_id", "position")
        ]

    assert fingerprint(again) == fingerprint(study)


def test_create_json_is_the_study_as_the_api_lists_it(grading_world):
    data = json.loads(create(grading_world, "--kind=changed_figure", "--format=json"))
    study = OversightStudy.objects.get()
    assert data == listed(grading_world, study)
    assert (data["items"], data["decided"], data["reviewers"], data["seed"]) == (8, 0, 2, "7")
    assert {d["kind"] for i in study.items.all() for d in i.defects} == {"changed_figure"}


@pytest.mark.parametrize(
    ("changes", "start"),
    [
        ({"run": ["999999"]}, "--run: no run 999999 in"),
        ({"reviewer": ["nobody"]}, "--reviewer: no user 'nobody'"),
        ({"reviewer": ["demo-reviewer"]}, "--reviewer: demo-reviewer does not hold the grader"),
        ({"reviewer": ["demo-grader"] * 2}, "--reviewer: A user is named twice among the"),
        ({"items_per_reviewer": ["0"]}, "--items-per-reviewer: items_per_reviewer must be between"),
        (
            {"items_per_reviewer": ["99"]},
            "--items-per-reviewer: items_per_reviewer must be at most",
        ),
        ({"defect_share": ["1.5"]}, "--defect-share: defect_share must be a share between 0 and"),
        ({"seed": ["-1"]}, "--seed: seed must be between 0 and 2^62, got -1."),
        ({"kind": ["changed_figure"] * 2}, "--kind: A kind of defect is named twice."),
        ({"name": ["  "]}, "--name: Give the study a name."),
        ({"name": ["Seeded round"]}, "--name: The study name is shown to reviewers and must not"),
    ],
)
def test_create_refuses_bad_input_naming_the_option(grading_world, changes, start):
    message = refused(
        grading_world, "oversight_study_create", *command_line(grading_world, **changes)
    )
    assert message.startswith(start), message
    assert not OversightStudy.objects.exists()
    assert not AuditEntry.objects.filter(action="oversight_study.create").exists()


def command_line(world, **changes: list[str]) -> list[str]:
    """The create command line of :func:`create`, an option's values replaced by ``changes``
    (``items_per_reviewer=["0"]`` for ``--items-per-reviewer=0``)."""
    options = {
        "name": ["Memo review"],
        "run": [str(run.pk) for run in world.runs],
        "reviewer": ["demo-grader", "grader-two"],
        "items_per_reviewer": ["4"],
        "defect_share": ["0.5"],
        "seed": [str(SEED)],
        "as": ["demo-owner"],
    } | changes
    return [f"--{o.replace('_', '-')}={v}" for o, values in options.items() for v in values]


@pytest.mark.parametrize(
    ("actor", "start"),
    [
        ("demo-reviewer", "--as: "),
        ("demo-grader", "--as: "),
        ("demo-model-owner", "--as: "),
        ("outsider", "--as: outsider holds no role on "),
        ("nobody", "--as: no user 'nobody'"),
    ],
)
def test_only_the_charter_owner_creates_a_study(grading_world, actor, start):
    message = refused(
        grading_world, "oversight_study_create", *command_line(grading_world, **{"as": [actor]})
    )
    assert message.startswith(start)
    assert not OversightStudy.objects.exists()


def test_an_unknown_kind_is_refused_by_the_parser(grading_world):
    with pytest.raises(CommandError) as error:
        run(grading_world, "oversight_study_create", *command_line(grading_world, kind=["typo"]))
    assert "argument --kind: invalid choice: 'typo'" in str(error.value)
    assert not OversightStudy.objects.exists()


# --------------------------------------------------------------------------- close


def test_close_closes_the_study_once_and_records_it(grading_world, study):
    printed = run(
        grading_world, "oversight_study_close", f"--study={study.public_id}", "--as=demo-owner"
    )
    study.refresh_from_db()
    assert study.status == "closed" and study.closed_at is not None
    entry = AuditEntry.objects.get(action="oversight_study.close")
    assert entry.actor == grading_world.owner and entry.target_id == str(study.pk)
    assert printed.startswith(
        f"Oversight study {study.public_id} (Memo review) of {grading_world.use_case.key} is "
        "closed: 0 of 8 copies decided"
    )
    message = refused(
        grading_world, "oversight_study_close", f"--study={study.public_id}", "--as=demo-owner"
    )
    assert message == "--study: The study is already closed."
    assert AuditEntry.objects.filter(action="oversight_study.close").count() == 1


def test_close_json_is_the_study_as_the_api_lists_it(grading_world, study):
    data = json.loads(
        run(
            grading_world,
            "oversight_study_close",
            f"--study={study.public_id}",
            "--as=demo-owner",
            "--format=json",
        )
    )
    assert data["status"] == "closed" and data["closed_at"] is not None
    assert data == listed(grading_world, study)


@pytest.mark.parametrize("actor", ["demo-reviewer", "demo-grader", "demo-model-owner", "outsider"])
def test_only_the_charter_owner_closes_a_study(grading_world, study, actor):
    message = refused(
        grading_world, "oversight_study_close", f"--study={study.public_id}", f"--as={actor}"
    )
    assert message.startswith("--as: ")
    study.refresh_from_db()
    assert study.status == "open"


def test_an_unknown_study_is_refused_naming_the_option(grading_world, study):
    for command in ("oversight_study_close", "oversight_status"):
        message = refused(grading_world, command, "--study=nope", "--as=demo-owner")
        assert message == f"--study: no oversight study 'nope' in {grading_world.use_case.key}"


# --------------------------------------------------------------------------- status


def decide_first_queue(world, study) -> None:
    """The first reviewer decides all four copies: one defect caught, one missed, one clean
    copy rejected (a false alarm), one accepted; the second reviewer decides nothing."""
    reviewer = world.graders[0]
    seeded = [i for i in items_of(study, reviewer) if i.defects]
    clean = [i for i in items_of(study, reviewer) if not i.defects]
    assert (len(seeded), len(clean)) == (2, 2)
    target = seeded[0].defects[0]["target"]
    oversight_item_decide(actor=reviewer, item=seeded[0], decision="reject", flags=[target])
    oversight_item_decide(actor=reviewer, item=seeded[1], decision="accept", flags=[])
    oversight_item_decide(actor=reviewer, item=clean[0], decision="reject", flags=["s1"])
    oversight_item_decide(actor=reviewer, item=clean[1], decision="accept", flags=[])


def wilson(successes: int, n: int) -> str:
    """The status line's ``k/n = p% [lo%, hi%]``, from statsmodels' Wilson interval."""
    lo, hi = proportion_confint(successes, n, alpha=0.05, method="wilson")
    return f"{successes}/{n} = {100 * successes / n:.1f}% [{100 * lo:.1f}%, {100 * hi:.1f}%]"


def test_status_of_an_open_study_gives_progress_per_reviewer_and_no_rates(grading_world, study):
    decide_first_queue(grading_world, study)
    printed = run(
        grading_world, "oversight_status", f"--study={study.public_id}", "--as=demo-owner"
    )
    lines = printed.splitlines()
    assert lines[0] == (
        f"Oversight study {study.public_id} (Memo review) of {grading_world.use_case.key}: "
        "open, 4 of 8 copies decided."
    )
    assert lines[1].split() == ["reviewer", "copies", "decided", "remaining"]
    assert lines[3].split() == ["demo-grader", "4", "4", "0"]
    assert lines[4].split() == ["grader-two", "4", "0", "4"]
    assert "Rates are given once the study is closed" in printed
    assert "%" not in printed


def test_status_of_a_closed_study_gives_the_rates_with_wilson_intervals(grading_world, study):
    decide_first_queue(grading_world, study)
    run(grading_world, "oversight_study_close", f"--study={study.public_id}", "--as=demo-owner")
    printed = run(
        grading_world, "oversight_status", f"--study={study.public_id}", "--as=demo-reviewer"
    )
    assert "closed, 4 of 8 copies decided." in printed.splitlines()[0]
    assert "Rates with Wilson 95% intervals." in printed
    overall = next(line for line in printed.splitlines() if line.startswith("All seeded defects"))
    # Seeded 2 (decided), caught 1; ρ_catch 1/2 and FAR 1/2; the second queue's 2 are pending.
    assert overall.split()[3:5] == ["2", "1"]
    assert overall.count(wilson(1, 2)) == 2 and overall.rstrip().endswith("2")
    grader = next(line for line in printed.splitlines()[5:] if line.startswith("demo-grader"))
    assert grader.count(wilson(1, 2)) == 3
    assert f"False alarms (clean copies rejected): {wilson(1, 2)}" in printed


def test_status_json_is_what_the_results_endpoint_answers(grading_world, study):
    decide_first_queue(grading_world, study)
    data = json.loads(
        run(
            grading_world,
            "oversight_status",
            f"--study={study.public_id}",
            "--as=demo-reviewer",
            "--format=json",
        )
    )
    assert data == api_get(
        grading_world.reviewer,
        "api-grading-oversight-results",
        grading_world.use_case.key,
        study.public_id,
    )
    lo, hi = proportion_confint(1, 2, alpha=1 - data["confidence"], method="wilson")
    catch = data["overall"]["catch_rate"]
    assert (catch["successes"], catch["n"], catch["rate"]) == (1, 2, 0.5)
    assert catch["ci_low"] == pytest.approx(lo) and catch["ci_high"] == pytest.approx(hi)
    assert [(r["username"], r["items"], r["decided"]) for r in data["reviewers"]] == [
        ("demo-grader", 4, 4),
        ("grader-two", 4, 0),
    ]


@pytest.mark.parametrize(
    ("actor", "start"),
    [
        ("demo-grader", "--as: "),
        ("grader-two", "--as: "),
        ("demo-model-owner", "--as: "),
        ("outsider", "--as: outsider holds no role on "),
    ],
)
def test_graders_and_others_do_not_see_the_status(grading_world, study, actor, start):
    message = refused(
        grading_world, "oversight_status", f"--study={study.public_id}", f"--as={actor}"
    )
    assert message.startswith(start)


def test_a_bad_format_is_refused_by_the_parser(grading_world, study):
    with pytest.raises(CommandError) as error:
        run(
            grading_world,
            "oversight_status",
            f"--study={study.public_id}",
            "--as=demo-owner",
            "--format=csv",
        )
    assert "argument --format: invalid choice: 'csv'" in str(error.value)
