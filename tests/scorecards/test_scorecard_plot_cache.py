"""A scorecard's plots: a signed one's drawn once, a draft's following its content."""

from __future__ import annotations

import copy
import re
from unittest import mock

import pytest
from django.core.cache import cache
from django.test import Client, override_settings

from demo.testing.grading import make_world
from demo.testing.scorecards import draft_scorecard, final_scorecard
from scorecards.selectors import plots_for, scorecard_view

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')
IMG = re.compile(r'src="(data:image/svg\+xml;base64,[A-Za-z0-9+/=]+)"')
NO_CACHE = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
DRAWN_BY = (
    "gates.selectors.threshold_bands_svg",
    "gates.selectors.nu_profile_svg",
    "gates.selectors.ei_band_svg",
    "gates.selectors.value_interval_svg",
    "scorecards.selectors.pass_k_svg",
)


@pytest.fixture
def world(db):
    cache.clear()
    yield make_world()
    cache.clear()


def page(world, scorecard) -> str:
    client = Client()
    client.force_login(world.reviewer)
    response = client.get(f"/use-cases/{scorecard.use_case.key}/scorecards/{scorecard.pk}/")
    assert response.status_code == 200
    return CSRF.sub("", response.content.decode())


def spied():
    import gates.selectors
    import scorecards.selectors

    modules = {"gates": gates.selectors, "scorecards": scorecards.selectors}
    return {
        name: mock.patch(name, wraps=getattr(modules[name.split(".")[0]], name.rsplit(".")[-1]))
        for name in DRAWN_BY
    }


def test_a_signed_scorecards_second_view_draws_no_plot(world):
    scorecard = final_scorecard(world)
    cache.clear()  # sign-off rendered the PDF, which drew the plots
    spies = {name: patch.start() for name, patch in spied().items()}
    try:
        first = page(world, scorecard)
        assert all(spy.call_count == 1 for spy in spies.values()), spies
        second = page(world, scorecard)
        assert all(spy.call_count == 1 for spy in spies.values()), spies
    finally:
        mock.patch.stopall()
    assert len(set(IMG.findall(first))) == len(DRAWN_BY)
    assert second == first


def test_the_scorecard_page_is_the_same_cold_warm_and_without_a_cache(world):
    scorecard = final_scorecard(world)
    with override_settings(CACHES=NO_CACHE):
        uncached = page(world, scorecard)
    cache.clear()
    assert page(world, scorecard) == uncached  # cold
    assert page(world, scorecard) == uncached  # warm


def test_the_decision_page_and_its_scorecard_share_the_decisions_plots(world):
    scorecard = draft_scorecard(world)
    client = Client()
    client.force_login(world.reviewer)
    url = f"/use-cases/{scorecard.use_case.key}/decisions/{scorecard.decision_id}/"
    decision_plots = IMG.findall(client.get(url).content.decode())
    with mock.patch(DRAWN_BY[0], side_effect=AssertionError):
        scorecard_plots = IMG.findall(page(world, scorecard))
    assert set(decision_plots) <= set(scorecard_plots)


def test_a_drafts_pass_k_plot_follows_its_content(world):
    scorecard = draft_scorecard(world)
    view = scorecard_view(scorecard=scorecard)
    before = plots_for(view.content, scorecard.decision)
    changed = copy.deepcopy(view.content)
    row = next(row for row in changed["reliability"]["pass_k"].values() if row)
    row["point"] = row["point"] / 2
    with mock.patch(DRAWN_BY[0], side_effect=AssertionError):
        after = plots_for(changed, scorecard.decision)  # the decision's plots: from the cache
    assert [plot.title for plot in after] == [plot.title for plot in before]
    assert after[:-1] == before[:-1]
    assert after[-1].title == "pass^k by k" and after[-1].uri != before[-1].uri
    # the same content again: the cached plot, identical to the one first drawn
    with mock.patch(DRAWN_BY[-1], side_effect=AssertionError):
        assert plots_for(view.content, scorecard.decision) == before


def test_editing_a_drafts_committee_fields_redraws_no_plot(world):
    scorecard = draft_scorecard(world)
    first = IMG.findall(page(world, scorecard))
    from scorecards.services import scorecard_update

    scorecard = scorecard_update(
        actor=world.owner, scorecard=scorecard, changes={"failure_modes": "Two memos omit."}
    )
    with mock.patch(DRAWN_BY[-1], side_effect=AssertionError):
        html = page(world, scorecard)
    assert "Two memos omit." in html
    assert IMG.findall(html) == first
