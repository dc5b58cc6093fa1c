"""``enterpriseval session_create``: a seeded blinded sample per σ, through session_create."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry
from grading.models import Assignment, GradingSession


def create(world, actor: str = "demo-owner", *extra: str, sample: str = "3") -> str:
    out = io.StringIO()
    runs = [f"--run={run.pk}" for run in world.runs]
    call_command(
        "session_create",
        f"--use-case={world.use_case.key}",
        "--name=Round two",
        *runs,
        "--grader=demo-grader",
        "--grader=grader-two",
        "--adjudicator=demo-adjudicator",
        f"--sample-size={sample}",
        "--seed=99",
        f"--as={actor}",
        *extra,
        stdout=out,
    )
    return out.getvalue()


def test_it_draws_the_size_per_sigma_assigns_two_graders_and_records_it(grading_world):
    printed = create(grading_world)
    session = GradingSession.objects.get(name="Round two")
    assert (session.seed, session.population_size, session.sample_size) == (99, 24, 6)
    assert [(arm["population"], arm["sampled"]) for arm in session.arms] == [(12, 3), (12, 3)]
    for artefact in session.artefacts.all():
        assert artefact.inclusion_probability == pytest.approx(3 / 12)
        graders = Assignment.objects.filter(artefact=artefact).values_list(
            "grader__username", flat=True
        )
        assert sorted(graders) == ["demo-grader", "grader-two"]
    entry = AuditEntry.objects.filter(action="grading_session.create").latest("pk")
    assert entry.target_id == str(session.pk) and entry.payload["seed"] == "99"
    assert entry.actor.username == "demo-owner"
    assert f"Session {session.public_id} (Round two)" in printed
    assert "6 of 24 artefacts" in printed and "seed 99" in printed


def test_without_a_size_each_sigma_gets_the_charters_planned_n(grading_world):
    out = io.StringIO()
    call_command(
        "session_create",
        f"--use-case={grading_world.use_case.key}",
        "--name=Planned",
        *[f"--run={run.pk}" for run in grading_world.runs],
        "--grader=demo-grader",
        "--grader=grader-two",
        "--adjudicator=demo-adjudicator",
        "--as=demo-owner",
        "--format=json",
        stdout=out,
    )
    data = json.loads(out.getvalue())
    # The example charter plans far more than the 12 outputs of each σ: all are drawn.
    assert [(arm["planned"], arm["sampled"]) for arm in data["arms"]] == [(12, 12), (12, 12)]
    assert data["sample_size"] == 24 and len(data["artefacts"]) == 24


@pytest.mark.parametrize(
    ("extra", "start"),
    [
        (["--run=999999"], "--run: no run 999999 in"),
        (["--grader=nobody"], "--grader: no user 'nobody'"),
        (["--adjudicator=demo-grader"], "--adjudicator: demo-grader does not hold the adjudicator"),
        (["--graders-per-artefact=3"], "--grader: 3 graders per artefact need at least 3"),
    ],
)
def test_a_refusal_names_the_option_and_writes_nothing(grading_world, extra, start):
    before = GradingSession.objects.count()
    with pytest.raises(CommandError) as refused:
        create(grading_world, "demo-owner", *extra)
    assert refused.value.returncode == 2
    assert str(refused.value).startswith(start), str(refused.value)
    assert GradingSession.objects.count() == before


def test_a_sample_larger_than_a_sigma_is_refused(grading_world):
    with pytest.raises(CommandError) as refused:
        create(grading_world, sample="500")
    assert str(refused.value).startswith("--sample-size: ")
    assert "between 1 and the 12 outputs of σ" in str(refused.value)


@pytest.mark.parametrize(
    ("actor", "start"),
    [
        ("demo-reviewer", "--as: This needs one of these roles"),
        ("demo-grader", "--as: "),
        ("outsider", "--as: outsider holds no role on"),
    ],
)
def test_only_the_charter_owner_creates_sessions(grading_world, actor, start):
    with pytest.raises(CommandError) as refused:
        create(grading_world, actor)
    assert refused.value.returncode == 2 and str(refused.value).startswith(start)
    assert not GradingSession.objects.filter(name="Round two").exists()


def test_it_stratifies_within_each_run_by_a_task_metadata_key(grading_world):
    # The world's 12 graded tasks per run have 12 sections: one stratum per output, so with a
    # sample of 12 every output is drawn (π = 1) and labelled with its run and section.
    create(grading_world, "demo-owner", "--design=stratified", "--stratify-by=section", sample="12")
    session = GradingSession.objects.get(name="Round two")
    strata = set(session.artefacts.values_list("stratum", flat=True))
    run = grading_world.runs[0]
    assert f"run:{run.pk}|section=transaction_overview" in strata
    assert len(strata) == 24
    entry = AuditEntry.objects.filter(action="grading_session.create").latest("pk")
    assert entry.payload["stratify_by"] == "section"
