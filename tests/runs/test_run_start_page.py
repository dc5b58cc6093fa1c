"""Starting a run from the web UI: the form, its refusals, and the links to it in stage order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from django.test import Client
from django.urls import reverse

from audit.models import AuditEntry
from charters.services.configurations import configuration_upload
from demo.testing.fakellm import FakeLLMServer
from runs.executor import load_litellm
from runs.models import Output, Run, RunStatus

SIGMA_FILE = (
    Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "sigma-gemini-2.5.yaml"
)
GRADED = 65


@pytest.fixture(autouse=True, scope="module")
def _cost_map_loaded():
    load_litellm()


def reply(request: dict) -> str:
    user = request["messages"][-1]["content"]
    first_id = user.split("[", 1)[1].split("]", 1)[0]
    return f"The facility is a revolving credit facility [{first_id}]."


@pytest.fixture
def fake_sigma(runs_world):
    with FakeLLMServer(responder=reply) as server:
        document = yaml.safe_load(SIGMA_FILE.read_text())
        document["model"] = {
            "provider": "openai_compatible",
            "id": "fake-model",
            "api_base": server.base_url,
            "parameters": {"temperature": 0},
        }
        configuration = configuration_upload(
            actor=runs_world.model_owner,
            use_case=runs_world.use_case,
            name="fake-sigma",
            content=json.dumps(document),
            filename="sigma.json",
        )
        yield configuration, server


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def start_url(world) -> str:
    return reverse("run-start", args=[world.key])


def form(world, configuration, **fields):
    return {
        "configuration": configuration.pk,
        "task_set": world.task_set.pk,
        "split": "graded",
        "repeats": 2,
        "concurrency": 8,
        "cost_budget_usd": "",
        **fields,
    }


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("owner", 200),
        ("model_owner", 200),
        ("grader", 403),
        ("adjudicator", 403),
        ("reviewer", 403),
        ("outsider", 404),
    ],
)
def test_the_start_form_answers_each_persona_as_the_api_does(runs_world, persona, expected):
    response = browser(runs_world.by_name(persona)).get(start_url(runs_world))
    assert response.status_code == expected


def test_the_form_offers_the_use_cases_sigma_and_task_sets_and_every_option(runs_world):
    html = browser(runs_world.model_owner).get(start_url(runs_world)).content.decode()
    assert "gemini-2-5 v1 (gemini/gemini-2.5-pro)" in html
    assert "credit-memo v1 (dev 12, graded 65, stress 12)" in html
    for name in ("split", "repeats", "concurrency", "cost_budget_usd"):
        assert f'name="{name}"' in html
    assert "never typed here or stored" in html


def test_a_run_started_from_the_page_executes_and_the_page_follows_it(
    runs_world, fake_sigma, django_capture_on_commit_callbacks
):
    configuration, server = fake_sigma
    client = browser(runs_world.model_owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            start_url(runs_world), form(runs_world, configuration, cost_budget_usd="5")
        )
    run = Run.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("run-detail", args=[runs_world.key, run.pk])
    assert (run.status, run.items_total, run.concurrency) == (RunStatus.COMPLETED, GRADED * 2, 8)
    assert str(run.cost_budget_usd) == "5.000000"
    assert Output.objects.filter(run=run).count() == server.calls == GRADED * 2
    assert AuditEntry.objects.filter(action="run.start", target_id=str(run.pk)).exists()
    page = client.get(response["Location"]).content.decode()
    assert f"Run {run.pk} started: {GRADED * 2} items." in page
    assert 'id="run-progress"' in page


def test_a_refused_run_is_shown_on_the_form_and_nothing_is_created(runs_world, fake_sigma):
    configuration, _server = fake_sigma
    response = browser(runs_world.model_owner).post(
        start_url(runs_world), form(runs_world, configuration, repeats=0, concurrency=999)
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "Ensure this value is greater than or equal to 1." in html
    assert "Ensure this value is less than or equal to 256." in html
    assert not Run.objects.exists()


def test_a_refusal_of_the_service_is_shown_next_to_its_field(runs_world):
    document = yaml.safe_load(SIGMA_FILE.read_text())
    document["prompts"]["user_template"] = "Borrower: {borrower_name}\n{input}\n{sources}"
    configuration = configuration_upload(
        actor=runs_world.model_owner,
        use_case=runs_world.use_case,
        name="bad-template",
        content=json.dumps(document),
        filename="sigma.json",
    )
    response = browser(runs_world.model_owner).post(
        start_url(runs_world), form(runs_world, configuration)
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert (
        'id="id_configuration_error"><li>configuration: σ bad-template v1: σ '
        "prompts.user_template: unknown field {borrower_name}" in html
    )
    assert not Run.objects.exists()


def test_the_run_list_links_the_start_form_for_owners_only(runs_world):
    url = reverse("run-list", args=[runs_world.key])
    assert start_url(runs_world) in browser(runs_world.model_owner).get(url).content.decode()
    assert start_url(runs_world) not in browser(runs_world.reviewer).get(url).content.decode()


@pytest.mark.parametrize(
    ("persona", "runs", "start"),
    [
        ("owner", True, True),
        ("model_owner", True, True),
        ("reviewer", True, False),
        ("adjudicator", True, False),
        ("grader", False, False),
    ],
)
def test_the_use_case_page_links_runs_at_the_run_stage(runs_world, persona, runs, start):
    html = browser(runs_world.by_name(persona)).get(
        reverse("use-case-detail", args=[runs_world.key])
    )
    html = html.content.decode()
    assert (reverse("run-list", args=[runs_world.key]) in html) is runs
    assert (start_url(runs_world) in html) is start
    if runs:
        stage_four = html.index('<span class="visually-hidden">Stage 4: </span>')
        stage_five = html.index('<span class="visually-hidden">Stage 5: </span>')
        assert stage_four < html.index('id="run-stage-actions"') < stage_five
