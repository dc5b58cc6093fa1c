"""Judging a run from its page: the form, its refusals, and the judgings with their progress."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from runs.models import Judging, JudgingStatus, Run, RunStatus


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def detail_url(world, run) -> str:
    return reverse("run-detail", args=[world.key, run.pk])


def judge_url(world, run) -> str:
    return reverse("run-judge", args=[world.key, run.pk])


def offline(**fields):
    return {"judge": "offline", "purpose": "gated", "rubric_version": "1", **fields}


def test_owners_see_the_judge_form_on_a_finished_run_and_readers_do_not(runs_world, finished_run):
    run = finished_run(1)
    html = browser(runs_world.model_owner).get(detail_url(runs_world, run)).content.decode()
    assert f'action="{judge_url(runs_world, run)}"' in html
    assert 'id="judge-form" data-show-when-finished>' in html
    for name in ("judge", "purpose", "model_ref", "api_base", "api_key_env", "concurrency"):
        assert f'name="{name}"' in html
    assert 'name="rubric_version"' in html and "Rubric version 1" in html
    assert "Not judged yet." in html
    reader = browser(runs_world.reviewer).get(detail_url(runs_world, run)).content.decode()
    assert judge_url(runs_world, run) not in reader


def test_the_form_waits_hidden_while_the_run_runs(runs_world, finished_run):
    run = finished_run(1)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    html = browser(runs_world.owner).get(detail_url(runs_world, run)).content.decode()
    assert 'id="judge-form" data-show-when-finished hidden>' in html
    assert '<p class="muted" data-hide-when-finished>A run is judged once it has finished.' in html


def test_judging_from_the_page_shows_the_judging_with_its_results(
    runs_world, finished_run, django_capture_on_commit_callbacks
):
    run = finished_run(2)
    client = browser(runs_world.model_owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(judge_url(runs_world, run), offline())
    judging = Judging.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"{detail_url(runs_world, run)}#judgings"
    html = client.get(detail_url(runs_world, run)).content.decode()
    api = reverse("api-run-judging", args=[runs_world.key, run.pk, judging.pk])
    assert f'id="judging-{judging.pk}" data-progress-url="{api}" data-status="completed"' in html
    assert f"Judging {judging.pk} of run {run.pk} by judge offline 1 requested." in html
    assert (
        '<span data-field="outputs_done">2</span> of <span data-field="outputs_total">2</span>'
        in html
    )
    assert 'class="counts judge-results"' in html
    assert '<td class="mono">key_element_captured</td><td>8</td><td>1.000</td>' in html
    assert "for a gated metric" in html


def test_an_llm_judge_on_the_systems_model_is_refused_on_the_page_naming_both_models(
    runs_world, finished_run
):
    run = finished_run(1)
    response = browser(runs_world.model_owner).post(
        judge_url(runs_world, run),
        offline(judge="litellm", model_ref="gemini-2.5-pro", api_key_env="GEMINI_API_KEY"),
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="id_judge_error"' in html
    assert "uses model gemini-2.5-pro and σ gemini-2-5 v1 uses model gemini/gemini-2.5-pro" in html
    assert "Choose a judge on another model" in html
    assert not Judging.objects.exists()


def test_an_llm_judge_at_the_fake_endpoint_is_judged_from_the_page(
    runs_world, finished_run, fake_judge, django_capture_on_commit_callbacks
):
    run = finished_run(2)
    with django_capture_on_commit_callbacks(execute=True):
        response = browser(runs_world.owner).post(
            judge_url(runs_world, run),
            offline(
                judge="litellm",
                model_ref="judge-model",
                api_base=fake_judge.base_url,
                concurrency="2",
            ),
        )
    assert response.status_code == 302
    judging = Judging.objects.get()
    assert (judging.status, judging.judge.model_ref, fake_judge.calls) == (
        JudgingStatus.COMPLETED,
        "judge-model",
        2,
    )


def test_a_key_typed_in_place_of_its_variable_is_refused_on_its_field(runs_world, finished_run):
    run = finished_run(1)
    response = browser(runs_world.model_owner).post(
        judge_url(runs_world, run),
        offline(judge="litellm", model_ref="judge-model", api_key_env="sk-live-abc123"),
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="id_api_key_env_error"' in html and "never the key itself" in html
    assert not Judging.objects.exists()


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("grader", 403), ("reviewer", 403), ("adjudicator", 403), ("outsider", 404)],
)
def test_only_owners_may_judge_from_the_page(runs_world, finished_run, persona, expected):
    run = finished_run(1)
    response = browser(runs_world.by_name(persona)).post(judge_url(runs_world, run), offline())
    assert response.status_code == expected
    assert not Judging.objects.exists()


def test_the_judge_address_leads_back_to_the_form(runs_world, finished_run):
    run = finished_run(1)
    response = browser(runs_world.owner).get(judge_url(runs_world, run))
    assert response.status_code == 302
    assert response["Location"] == f"{detail_url(runs_world, run)}#judge"


def test_the_judgings_of_a_run_take_two_queries(
    runs_world, finished_run, django_assert_num_queries
):
    from runs.selectors.runs import judging_list
    from runs.services.judging import run_judge_execute, run_judge_start

    run = finished_run(2)
    for name in ("offline", "offline-b"):
        judging = run_judge_start(
            actor=runs_world.owner,
            run=run,
            kind="offline",
            name=name,
            purpose="gated",
            enqueue=False,
        )
        run_judge_execute(judging_id=judging.pk)
    with django_assert_num_queries(2):
        rows = judging_list(run=run)
        assert [row.judging.judge.name for row in rows] == ["offline-b", "offline"]
        assert [row.judging.requested_by.username for row in rows] == ["owner", "owner"]
        assert all(row.results and row.percent == 100.0 for row in rows)
