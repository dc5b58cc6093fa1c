"""Every plot on the decision, comparison, scorecard and sequential session pages is drawn on
the page's first view only: a second view draws no figure at all and shows the same plots
(issue 18: the pages read what was recorded, plots cached by content hash)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from matplotlib.figure import Figure

from charters.models import Charter
from demo.testing.grading import grade_all_open, make_world, sequential_session
from demo.testing.scorecards import draft_scorecard, final_scorecard, recorded_decision
from demo.testing.structured import labelled_run, labelled_task_set
from gates.services import decision_compute
from runs.services.judging import judge_get_or_create, judge_run

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')
IMG = re.compile(r'src="(data:image/svg\+xml;base64,[A-Za-z0-9+/=]+)"')
DECISION_PLOTS = (
    "Metric estimates against their thresholds",
    "ν profile",
    "Efficacy Index and its weight-sensitivity range",
    "Value interval (",
)
CONFUSION = "Confusion matrix of the structured judgement"
LABELS = ["compliant", "partially compliant", "non-compliant"]


@pytest.fixture
def world(db):
    cache.clear()
    yield make_world()
    cache.clear()


@contextmanager
def figures_saved() -> Iterator[list[int]]:
    """Count figures saved: every plot's SVG is drawn by ``Figure.savefig`` (figure_svg)."""
    saved: list[int] = []
    original = Figure.savefig

    def spy(figure, *args, **kwargs):
        saved.append(1)
        return original(figure, *args, **kwargs)

    Figure.savefig = spy
    try:
        yield saved
    finally:
        Figure.savefig = original


def views(client: Client, url: str) -> tuple[str, int, str, int]:
    """View ``url`` twice; return each page (CSRF token removed) with the figures it drew."""
    pages = []
    for _first_then_second in range(2):
        with figures_saved() as saved:
            response = client.get(url)
        assert response.status_code == 200, url
        pages += [CSRF.sub("", response.content.decode()), len(saved)]
    return pages[0], pages[1], pages[2], pages[3]


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_every_decision_plot_is_drawn_on_the_first_view_only(world):
    valued = recorded_decision(world)
    task_set = labelled_task_set(world, labels=LABELS, gold={"C-1": LABELS[0], "C-2": LABELS[1]})
    labelled = decision_compute(
        actor=world.owner,
        charter=Charter.objects.get(use_case=world.use_case, version=1),
        run=labelled_run(world, task_set, {"C-1": [LABELS[0]], "C-2": [LABELS[0]]}),
    )
    client = client_of(world.reviewer)
    for decision, titles in ((valued, DECISION_PLOTS), (labelled, (CONFUSION,))):
        url = reverse("decision-detail", args=[world.use_case.key, decision.pk])
        first, drawn, second, drawn_again = views(client, url)
        for title in titles:
            assert title in first
        plots = set(IMG.findall(first))
        assert drawn == len(plots) >= len(titles)  # each plot drawn once, none twice
        assert drawn_again == 0
        assert second == first


def test_the_comparison_page_draws_nothing(world):
    a = recorded_decision(world)
    b = recorded_decision(world, "llama-4", grade=False)
    url = reverse("decision-compare", args=[world.use_case.key]) + f"?a={a.pk}&b={b.pk}"
    first, drawn, _second, drawn_again = views(client_of(world.model_owner), url)
    assert (drawn, drawn_again) == (0, 0) and not IMG.findall(first)
    assert "<h2>Gated metrics</h2>" in first  # the comparison itself, not an error


def test_a_scorecards_plots_signed_or_draft_are_drawn_on_the_first_view_only(world):
    client = client_of(world.reviewer)
    signed = final_scorecard(world)
    draft = draft_scorecard(world, recorded_decision(world, "llama-4", grade=False))
    for scorecard in (signed, draft):
        url = f"/use-cases/{world.use_case.key}/scorecards/{scorecard.pk}/"
        cache.clear()
        first, drawn, second, drawn_again = views(client, url)
        plots = set(IMG.findall(first))
        assert "pass^k by k" in first
        assert drawn == len(plots) >= len(DECISION_PLOTS) + 1  # the decision's and pass^k
        assert drawn_again == 0
        assert second == first


def test_a_sequential_sessions_plots_are_drawn_on_the_first_view_only(world):
    judge = judge_get_or_create(kind="offline")
    judge_run(actor=world.model_owner, run=world.runs[0], judge=judge, purpose="gated")
    session = sequential_session(world, budget=5, agreement_size=2, seed=7, judge=judge)
    grade_all_open(session)
    url = f"/use-cases/{world.use_case.key}/grading/{session.public_id}/"
    first, drawn, second, drawn_again = views(client_of(world.owner), url)
    assert 'class="card sequence-plot"' in first
    assert drawn == len(set(IMG.findall(first))) >= 1
    assert drawn_again == 0
    assert second == first
