"""The decision and comparison pages read in a fixed number of queries, cold or warm, whatever
the number of metrics a decision records or of outputs its run holds."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from demo.testing.decisions import (
    decide,
    decide_on_a_larger_run,
    estimates_with_informational,
    load_example_estimates,
)
from demo.testing.grading import make_world

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
