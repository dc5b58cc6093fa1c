"""A decision reports σ's stress-split run beside it (SPEC §9), chosen in the form or the API.

E3 needs the stress set reported (SPEC §6.4): without a way to name the stress-split run, no
E3 scorecard could be signed off from the web UI.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from charters.models import Charter, CharterMetric
from charters.services.charters import charter_revise
from demo.testing.decisions import make_decidable_world
from enterpriseval.errors import ConflictError, ServiceError
from gates.models import Decision
from gates.services import decision_create
from metrics.selectors import charter_estimates
from runs.models import Run
from runs.services.outputs import output_import
from runs.services.runs import run_create

STRESS_TASKS = ("S1-covenants-missing-covenants", "S2-source_of_repayment-missing-spread")


@pytest.fixture
def decidable(db):
    return make_decidable_world()


def stress_run_of(world, run: Run, *, completed: bool = True) -> Run:
    """σ's run on two stress tasks (imported outputs), or one not finished yet."""
    if completed:
        lines = [
            {"task_id": task_id, "repeat": 0, "text": "Not determinable from the sources."}
            for task_id in STRESS_TASKS
        ]
        return output_import(
            actor=world.model_owner,
            use_case=world.use_case,
            configuration=run.configuration,
            task_set=run.task_set,
            split="stress",
            repeats=1,
            fileobj=io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode()),
            filename="stress.jsonl",
        )
    return run_create(
        actor=world.model_owner,
        use_case=world.use_case,
        configuration=run.configuration,
        task_set=run.task_set,
        split="stress",
        repeats=1,
    )


def record(world, judge, **extra):
    return decision_create(
        actor=world.owner,
        charter=Charter.objects.get(use_case=world.use_case, version=1),
        run=world.runs[0],
        session=world.session,
        judge=judge,
        **extra,
    )


def test_the_form_records_the_chosen_stress_run_beside_the_decision(client, decidable):
    world, judge = decidable
    stress = stress_run_of(world, world.runs[0])
    client.force_login(world.owner)
    page = client.get(reverse("decision-new", args=[world.use_case.key])).content.decode()
    assert 'name="stress_run"' in page and f'<option value="{stress.pk}">' in page

    response = client.post(
        reverse("decision-new", args=[world.use_case.key]),
        {
            "charter": "1",
            "run": str(world.runs[0].pk),
            "session": world.session.public_id,
            "judge": str(judge.pk),
            "stress_run": str(stress.pk),
        },
    )
    decision = Decision.objects.get()
    assert response.status_code == 302
    assert decision.record["stress"]["run"] == stress.pk


def test_the_api_records_the_stress_run(client, decidable):
    world, judge = decidable
    stress = stress_run_of(world, world.runs[0])
    client.force_login(world.owner)
    response = client.post(
        f"/api/v1/use-cases/{world.use_case.key}/decisions/",
        {
            "charter": 1,
            "run": world.runs[0].pk,
            "session": world.session.public_id,
            "judge": judge.pk,
            "stress_run": stress.pk,
        },
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert Decision.objects.get().record["stress"]["run"] == stress.pk


def decide(world, judge, stress: Run) -> None:
    call_command(
        "decide",
        "--use-case",
        world.use_case.key,
        "--charter",
        "1",
        "--run",
        str(world.runs[0].pk),
        "--session",
        world.session.public_id,
        "--judge",
        str(judge.pk),
        "--stress-run",
        str(stress.pk),
        "--as",
        world.owner.username,
        stdout=io.StringIO(),
    )


def test_the_cli_records_the_stress_run(decidable):
    world, judge = decidable
    stress = stress_run_of(world, world.runs[0])
    decide(world, judge, stress)
    assert Decision.objects.get().record["stress"]["run"] == stress.pk


def test_the_cli_refuses_another_sigmas_stress_run_with_status_2_naming_the_option(decidable):
    world, judge = decidable
    other_sigma = stress_run_of(world, world.runs[1])
    with pytest.raises(CommandError) as refused:
        decide(world, judge, other_sigma)
    assert refused.value.returncode == 2
    assert str(refused.value).startswith("--stress-run: ")
    assert f"Run {other_sigma.pk} is not a stress-split run of σ" in str(refused.value)
    assert not Decision.objects.exists()


def test_a_stress_run_of_another_sigma_or_split_is_refused_naming_the_field(decidable):
    world, judge = decidable
    other_sigma = stress_run_of(world, world.runs[1])
    for wrong in (other_sigma, world.runs[0]):
        with pytest.raises(ServiceError) as refused:
            record(world, judge, stress_run=wrong)
        assert refused.value.field == "stress_run"
        assert f"Run {wrong.pk} is not a stress-split run of σ" in refused.value.message
        assert "on the stress split, or none" in refused.value.message
    assert not Decision.objects.exists()


def test_an_unfinished_stress_run_is_refused(decidable):
    world, judge = decidable
    pending = stress_run_of(world, world.runs[0], completed=False)
    with pytest.raises(ConflictError) as refused:
        record(world, judge, stress_run=pending)
    assert refused.value.field == "stress_run"
    assert "once it has completed" in refused.value.message


def test_dispersion_on_a_run_of_one_repeat_is_missing_with_its_reason_not_a_crash(decidable):
    # An A2 charter must name dispersion (level 2); a K = 1 run (a stress run) has none.
    world, _judge = decidable
    signed = Charter.objects.get(use_case=world.use_case, version=1)
    charter = charter_revise(actor=world.owner, charter=signed, reason="add dispersion")
    CharterMetric.objects.create(
        charter=charter, metric_id="dispersion", treatment="informational", reason="r", position=99
    )
    estimate = charter_estimates(charter=charter, run=world.runs[0])["dispersion"]
    assert estimate.point is None and estimate.lo is None
    assert estimate.reason == "dispersion needs K ≥ 2 repeats per task; the run has K = 1"
