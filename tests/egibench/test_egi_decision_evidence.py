"""The decision page shows σ's model's EGI result as shortlisting evidence."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from demo.testing.decisions import decide
from demo.testing.grading import make_world


@pytest.fixture
def world(db):
    return make_world()


def page(world, decision) -> str:
    client = Client()
    client.force_login(world.owner)
    url = reverse("decision-detail", args=[world.use_case.key, decision.pk])
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_the_decision_page_shows_the_linked_egi_result_with_its_floors(world):
    call_command("egi_load_roster", stdout=io.StringIO())
    decision = decide(world, "gemini-2.5")
    assert decision.configuration.model_ref == "gemini/gemini-2.5-pro"
    html = page(world, decision)
    evidence = html.split("Model capability evidence (EGI-Bench)", 1)[1].split("</div>", 1)[0]
    assert "Gemini 2.5 Pro" in evidence and "(linked by provider prefix stripped)" in evidence
    assert "59.10" in evidence and "76.05" in evidence
    assert "not release-ready" in evidence
    assert "M2 has no score, so its floor 70 is not shown" in evidence
    assert "seed 000 published roster" in evidence
    assert "Benchmarks shortlist models; this evaluation decides the deployment." in evidence


def test_the_decision_page_says_so_when_no_result_is_linked(world):
    decision = decide(world, "llama-4")
    html = page(world, decision)
    assert "No EGI-Bench result is linked to σ's model" in html
    assert decision.configuration.model_ref in html


def test_the_evidence_costs_the_decision_page_one_query(world, django_assert_num_queries):
    call_command("egi_load_roster", stdout=io.StringIO())
    decision = decide(world, "gemini-2.5")
    client = Client()
    client.force_login(world.owner)
    url = reverse("decision-detail", args=[world.use_case.key, decision.pk])
    # The decision page's six (tests/gates/test_decision_pages.py) and the linked EGI result.
    with django_assert_num_queries(7):
        assert client.get(url).status_code == 200
