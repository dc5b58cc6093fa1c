"""The decision and comparison pages read in a fixed number of queries, cold or warm, whatever
the number of metrics a decision records or of outputs its run holds."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from charters.models import Charter
from demo.testing.decisions import decide, load_example_estimates
from demo.testing.grading import first_tasks_file, make_world
from gates.algorithm import gate_evaluate
from gates.services import decision_record, gate_input_for
from runs.services.outputs import output_import

# session, user, use case, roles, the decision with its relations and scorecard,
# the charter's informational metrics, σ's model's latest EGI result
DECISION_PAGE = 7
# session, user, use case, roles, the decision list of the form, the two decisions
COMPARISON_PAGE = 6


@pytest.fixture
def world(db):
    cache.clear()
    yield make_world()
    cache.clear()


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def more_metrics():
    """The example's estimates and three informational ones the charter does not gate."""
    estimates = load_example_estimates("gemini-2.5")
    extra = [
        replace(estimates[0], metric_id=metric_id, point=50.0, lo=40.0, hi=60.0)
        for metric_id in ("citation_precision_strict", "refusal_rate", "cost_per_task")
    ]
    return [*estimates, *extra]


def decision_on_a_larger_run(world):
    """Record the example's decision on a run of 60 outputs (the world's runs hold 12)."""
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    run = output_import(
        actor=world.model_owner,
        use_case=world.use_case,
        configuration=world.runs[0].configuration,
        task_set=world.runs[0].task_set,
        split="graded",
        repeats=1,
        fileobj=first_tasks_file("gemini-2-5", 60),
        filename="outputs-gemini-2-5.jsonl",
    )
    estimates = load_example_estimates("gemini-2.5")
    gate = gate_evaluate(
        gate_input_for(charter=charter, estimates={e.metric_id: e for e in estimates}),
        mode="conservative",
    )
    return decision_record(
        actor=world.owner,
        charter=charter,
        run=run,
        estimates=estimates,
        gate=gate,
        evidence={"charter_sha256": charter.sha256, "run_source_sha256": run.source_sha256},
    )


def test_the_decision_page_reads_in_the_same_queries_cold_warm_and_at_any_size(
    world, django_assert_num_queries
):
    small = decide(world, estimates=load_example_estimates("gemini-2.5")[:3])
    large = decide(world, estimates=more_metrics())
    larger_run = decision_on_a_larger_run(world)
    assert larger_run.run.items_done == 60 and small.run.items_done == 12
    assert len(large.record["estimates"]) == len(small.record["estimates"]) + 6
    client = client_of(world.reviewer)
    for decision in (small, large, larger_run):
        url = reverse("decision-detail", args=[world.use_case.key, decision.pk])
        for _cold_then_warm in range(2):
            with django_assert_num_queries(DECISION_PAGE):
                assert client.get(url).status_code == 200


def test_the_comparison_reads_in_the_same_queries_whatever_the_decisions_hold(
    world, django_assert_num_queries
):
    small = decide(world, estimates=load_example_estimates("gemini-2.5")[:3])
    large = decide(world, estimates=more_metrics())
    llama = decide(world, "llama-4")
    larger_run = decision_on_a_larger_run(world)
    client = client_of(world.model_owner)
    base = reverse("decision-compare", args=[world.use_case.key])
    for a, b in ((small, llama), (large, llama), (larger_run, large)):
        with django_assert_num_queries(COMPARISON_PAGE):
            assert client.get(f"{base}?a={a.pk}&b={b.pk}").status_code == 200
