"""The decision and comparison pages read in a fixed number of queries, cold or warm, whatever
the number of metrics a decision records or of outputs its run holds (the same counts on
SQLite and PostgreSQL: the pages read the decision's record, never the run's evidence)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from charters.models import Charter
from demo.testing.decisions import (
    decide,
    decide_on_a_larger_run,
    estimates_with_informational,
    load_example_estimates,
    make_decidable_world,
)
from demo.testing.grading import make_world
from demo.testing.tiling import tile_run
from gates.services import decision_create
from runs.models import Output

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


def test_the_decision_page_reads_in_the_same_queries_cold_warm_and_at_any_size(
    world, django_assert_num_queries
):
    small = decide(world, estimates=load_example_estimates("gemini-2.5")[:3])
    large = decide(world, estimates=estimates_with_informational())
    larger_run = decide_on_a_larger_run(world)
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
    large = decide(world, estimates=estimates_with_informational())
    llama = decide(world, "llama-4")
    larger_run = decide_on_a_larger_run(world)
    client = client_of(world.model_owner)
    base = reverse("decision-compare", args=[world.use_case.key])
    for a, b in ((small, llama), (large, llama), (larger_run, large)):
        with django_assert_num_queries(COMPARISON_PAGE):
            assert client.get(f"{base}?a={a.pk}&b={b.pk}").status_code == 200


def test_the_decision_page_reads_in_the_same_queries_at_four_times_the_outputs(
    db, django_assert_num_queries
):
    """Decisions recorded from the evidence (``decision_create``), before and after the run is
    tiled to four times its outputs, each with its units and judge scores."""
    world, judge = make_decidable_world()
    run = world.runs[0]
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    before = Output.objects.filter(run=run).count()
    client = client_of(world.reviewer)
    decisions = []
    for size in (before, 4 * before):
        assert tile_run(run, original_k=world.runs[0].repeats, size=size) == size
        decisions.append(
            decision_create(
                actor=world.owner, charter=charter, run=run, session=world.session, judge=judge
            )
        )
    assert decisions[0].sha256 != decisions[1].sha256
    for decision in decisions:
        url = reverse("decision-detail", args=[world.use_case.key, decision.pk])
        cache.clear()
        for _cold_then_warm in range(2):
            with django_assert_num_queries(DECISION_PAGE):
                assert client.get(url).status_code == 200
