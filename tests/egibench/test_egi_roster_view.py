"""Roster, model and result pages: staff and non-grading members; a missing value shows so."""

from __future__ import annotations

import base64
import io
import re
import xml.etree.ElementTree as ET

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from egibench.models import EgiResult
from egibench.services import egi_result_store

IMG = re.compile(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)"')


def ids_of(svg: str, prefix: str) -> list[str]:
    root = ET.fromstring(svg)
    return [e.get("id") for e in root.iter() if (e.get("id") or "").startswith(prefix)]


@pytest.fixture
def reader(db):
    client = Client()
    # Staff with no grader role anywhere: who reads the benchmark pages (docs/operations.md).
    client.force_login(get_user_model().objects.create_user("reader", is_staff=True))
    return client


@pytest.fixture
def roster(db):
    call_command("egi_load_roster", stdout=io.StringIO())


def test_an_anonymous_visitor_is_sent_to_sign_in(db):
    for url in (
        reverse("egi-roster"),
        reverse("egi-model", args=["gpt-5.5"]),
        reverse("egi-result", args=[1]),
    ):
        response = Client().get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_roster_lists_every_model_by_egi_with_its_plots(reader, roster):
    html = reader.get(reverse("egi-roster")).content.decode()
    names = re.findall(r'<a href="/benchmarks/models/[^"]+/">([^<]+)</a>', html)
    assert names[:4] == [
        "gpt-5.5",
        "Claude Sonnet 4.5",
        "Gemini 3.1 Pro Preview",
        "Claude Opus 4.5",
    ]
    # GPT-5 nano has no stated EGI but a stated rank, 13th: just above GPT-4o mini (14th).
    assert len(names) == 12 and names[-3:] == ["GPT-5 nano", "GPT-4o mini", "Gemini 2.0 Flash"]
    assert "Benchmarks shortlist models; this evaluation decides the deployment." in html
    plots = [base64.b64decode(data).decode() for data, _ in IMG.findall(html)]
    assert len(plots) == 3
    heatmap, bars, radar = plots
    assert len(ids_of(heatmap, "cell-")) + len(ids_of(heatmap, "missing-")) == 12 * 6
    # Stated bucket values: gpt-5.5 5, Sonnet 2, Gemini 3.1 1, Haiku 1, Gemini 2.5 Pro 1,
    # GPT-5 mini 2, Gemini 2.5 Flash 1, GPT-5 nano 3: 16 drawn cells, 56 missing ones.
    assert len(ids_of(heatmap, "cell-")) == 16
    assert len(ids_of(heatmap, "missing-")) == 56
    assert len(ids_of(bars, "bar-")) == 16 and len(ids_of(bars, "missing-bar-")) == 56
    # Top 5 by EGI among full EGIs: gpt-5.5, Sonnet, Gemini 3.1, Opus, GPT-4o.
    assert len(ids_of(radar, "radar-")) == 5


def test_a_missing_score_is_shown_as_missing_never_as_zero(reader, roster):
    html = reader.get(reverse("egi-roster")).content.decode()
    row = html.split("Gemini 2.0 Flash</a>", 1)[1].split("</tr>", 1)[0]
    assert row.count("missing") >= 7  # EGI and M1–M6
    assert ">0.00<" not in html and ">0<" not in row


def test_the_roster_page_runs_a_fixed_number_of_queries(
    reader, roster, published, django_assert_num_queries
):
    url = reverse("egi-roster")
    with django_assert_num_queries(4):  # session, user, the reader's roles, the roster
        reader.get(url)
    for index in range(5):
        egi_result_store(result=published(f"extra-{index}", M1=40.0 + index), source="x.json")
    with django_assert_num_queries(4):
        assert reader.get(url).status_code == 200


def test_the_roster_shows_each_models_latest_result_only(reader, published):
    egi_result_store(result=published("m", egi=40.0, stamp="2026-01-01T00:00:00+00:00"), source="a")
    egi_result_store(result=published("m", egi=45.0, stamp="2026-02-01T00:00:00+00:00"), source="b")
    html = reader.get(reverse("egi-roster")).content.decode()
    assert "45.00" in html and "40.00" not in html


def test_the_model_page_shows_the_breakdown_of_a_measured_run(reader, measured, egi_raw):
    egi_raw["herb"]["content_correctness"] = None
    old = egi_result_store(result=measured(egi_raw, stamp="2026-10-01T00:00:00+00:00"), source="a")
    new = egi_result_store(result=measured(egi_raw), source="gemini-2.5-pro_quick_x.json")
    html = reader.get(reverse("egi-model", args=["gemini-2.5-pro"])).content.decode()
    assert "63.50" not in html  # content_correctness missing changes M4
    # M4 without content_correctness: mean(80, 60, 50, 60) = 62.5.
    assert "62.50" in html
    assert "named_entity_disambiguation" in html and "policy_violation_identification" in html
    assert "herb.content_correctness" in html and "sub-metric missing: content_correctness" in html
    assert new.routing_sha256 in html and "gemini-2.5-pro_quick_x.json" in html
    assert reverse("egi-result", args=[old.pk]) in html
    old_html = reader.get(reverse("egi-result", args=[old.pk])).content.decode()
    assert "not the latest result of this model" in old_html


def test_an_unknown_model_or_result_is_404(reader):
    assert reader.get(reverse("egi-model", args=["nobody"])).status_code == 404
    assert reader.get(reverse("egi-result", args=[999])).status_code == 404


def test_a_published_model_page_quotes_where_each_value_is_stated(reader, roster):
    html = reader.get(reverse("egi-model", args=["gpt-5.5"])).content.decode()
    assert "65.61" in html and "not release-ready" in html
    assert "M5 63.47 is below its floor 70" in html
    assert "gpt-5.5 leads on overall EGI (65.61)" in html
    assert "the paper's text states bucket scores and EGI only" in html
    assert EgiResult.objects.get(model_id="gpt-5.5").sha256 in html


def test_the_roster_shows_the_rank_the_paper_states(reader, roster):
    html = reader.get(reverse("egi-roster")).content.decode()
    assert "Rank (stated)" in html
    rows = {
        name: row
        for row in html.split("<tr>")[2:]
        for name in re.findall(r'<a href="/benchmarks/models/[^"]+/">([^<]+)</a>', row)
    }
    cells = {name: re.findall(r"<td>([^<]*)</td>", row)[0].strip() for name, row in rows.items()}
    assert cells["gpt-5.5"] == "1" and cells["Claude Sonnet 4.5"] == "2"
    assert cells["Claude Haiku 4.5"] == "6" and cells["GPT-5 nano"] == "13"
    assert cells["GPT-4o mini"] == "14"
    assert cells["Claude Opus 4.5"] == ""  # the text states no rank for it
