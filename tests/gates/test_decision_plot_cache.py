"""A decision's plots are drawn on its first view and read from the cache on every view after."""

from __future__ import annotations

import re
import types
from unittest import mock

import pytest
from django.core.cache import cache
from django.test import Client, override_settings
from django.urls import reverse

from demo.testing.decisions import decide, load_example_estimates
from demo.testing.grading import make_world
from enterpriseval.plot_cache import code_digest
from gates.selectors import decision_plots, gate_result_from_dict, value_estimate_from_dict

DRAWN_BY = (
    "gates.selectors.threshold_bands_svg",
    "gates.selectors.nu_profile_svg",
    "gates.selectors.ei_band_svg",
)
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')
IMG = re.compile(r'<img src="(data:image/svg\+xml;base64,[A-Za-z0-9+/=]+)"')
NO_CACHE = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}


@pytest.fixture
def world(db):
    cache.clear()
    yield make_world()
    cache.clear()


def page(world, decision) -> str:
    client = Client()
    client.force_login(world.owner)
    response = client.get(reverse("decision-detail", args=[world.use_case.key, decision.pk]))
    assert response.status_code == 200
    return CSRF.sub("", response.content.decode())


def spies():
    """Patch each drawing function with a spy that still draws."""
    import gates.selectors

    return {
        name: mock.patch(name, wraps=getattr(gates.selectors, name.rsplit(".", 1)[1]))
        for name in DRAWN_BY
    }


def test_a_second_view_draws_no_plot_and_shows_the_same_plots(world):
    decision = decide(world)
    patches = spies()
    calls = {name: patch.start() for name, patch in patches.items()}
    try:
        first = page(world, decision)
        assert {name: spy.call_count for name, spy in calls.items()} == dict.fromkeys(DRAWN_BY, 1)
        second = page(world, decision)
        assert {name: spy.call_count for name, spy in calls.items()} == dict.fromkeys(DRAWN_BY, 1)
    finally:
        mock.patch.stopall()
    assert len(IMG.findall(first)) == 3
    assert IMG.findall(second) == IMG.findall(first)


def test_the_page_is_the_same_cold_warm_and_without_a_cache(world):
    decision = decide(world)
    with override_settings(CACHES=NO_CACHE):
        uncached = page(world, decision)
    cold = page(world, decision)
    warm = page(world, decision)
    assert cold == uncached
    assert warm == uncached


def test_the_cached_plots_are_identical_to_freshly_drawn_ones(world):
    decision = decide(world)
    page(world, decision)
    fresh = decision_plots(
        gate_result_from_dict(decision.record["gate"]),
        value_estimate_from_dict(decision.record.get("value")),
    )
    with mock.patch("gates.selectors.threshold_bands_svg", side_effect=AssertionError):
        cached = IMG.findall(page(world, decision))
    assert cached == [plot.uri for plot in fresh]


def test_two_decisions_each_get_their_own_plots(world):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    assert IMG.findall(page(world, gemini)) != IMG.findall(page(world, llama))
    with override_settings(CACHES=NO_CACHE):
        assert IMG.findall(page(world, llama)) == IMG.findall(page(world, llama))
        uncached = IMG.findall(page(world, gemini))
    assert IMG.findall(page(world, gemini)) == uncached


def test_the_file_cache_keeps_the_plots_across_a_restart(world, tmp_path):
    decision = decide(world)
    files = {"default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache"}}
    files["default"]["LOCATION"] = str(tmp_path / "cache")
    with override_settings(CACHES=files):
        drawn = page(world, decision)
    assert list((tmp_path / "cache").iterdir())  # the plots were written to disk
    # A new process (or another gunicorn worker) opens the same folder: nothing is drawn.
    with override_settings(CACHES=files), mock.patch(DRAWN_BY[0], side_effect=AssertionError):
        assert page(world, decision) == drawn


def test_a_failing_cache_costs_speed_not_plots(world, caplog):
    decision = decide(world)
    with (
        mock.patch("enterpriseval.plot_cache.cache.get", side_effect=OSError("disk full")),
        mock.patch("enterpriseval.plot_cache.cache.set", side_effect=OSError("disk full")),
    ):
        html = page(world, decision)
    assert len(IMG.findall(html)) == 3
    assert "plot cache: reading" in caplog.text and "plot cache: writing" in caplog.text


def test_an_undetermined_decision_caches_the_plots_it_has(world):
    estimates = load_example_estimates("gemini-2.5")[:-1]
    decision = decide(world, estimates=estimates)
    first = page(world, decision)
    with mock.patch(DRAWN_BY[1], side_effect=AssertionError):
        assert page(world, decision) == first
    assert len(IMG.findall(first)) == 2  # no EI band without EI


def test_the_code_digest_changes_when_the_drawing_code_does(tmp_path):
    source = tmp_path / "drawing.py"
    module = types.ModuleType("drawing_for_digest")
    module.__file__ = str(source)
    source.write_text("COLOUR = 'blue'\n")
    before = code_digest.__wrapped__((module,))
    source.write_text("COLOUR = 'red'\n")
    assert code_digest.__wrapped__((module,)) != before
    assert len(before) == 16
