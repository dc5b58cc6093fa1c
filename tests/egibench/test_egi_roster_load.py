"""The seed 000 roster bundled in examples/egi_roster/: stated values only, loaded idempotently."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry
from egibench.aggregate import DEFAULT_EGI_WEIGHTS
from egibench.models import EgiResult
from egibench.selectors import latest_egi_for_model

ROOT = Path(__file__).resolve().parents[2]
ROSTER = ROOT / "examples" / "egi_roster" / "seed000_roster.json"


def load() -> str:
    out = io.StringIO()
    call_command("egi_load_roster", stdout=out)
    return out.getvalue()


def test_loading_the_roster_twice_stores_it_once(db):
    assert "12 models, 12 stored, 0 already stored" in load()
    assert "12 models, 0 stored, 12 already stored" in load()
    assert EgiResult.objects.filter(mode="published").count() == 12
    assert AuditEntry.objects.filter(action="egi.store").count() == 12


def test_the_roster_holds_the_values_the_paper_states(db):
    load()
    by_model = {row.model_id: row for row in EgiResult.objects.all()}
    top = by_model["gpt-5.5"]
    assert (top.egi, top.m1, top.m2, top.m3, top.m4, top.m5, top.m6) == (
        65.61,
        82.95,
        79.56,
        30.89,
        54.86,
        63.47,
        None,
    )
    sonnet = by_model["claude-sonnet-4-5"]
    assert (sonnet.egi, sonnet.m2, sonnet.m5) == (65.25, 87.17, 80.28)
    assert by_model["claude-haiku-4-5"].m6 == 61.28
    assert by_model["gpt-4o-mini"].egi == 39.6
    nano = by_model["gpt-5-nano"]
    assert nano.egi is None and (nano.m1, nano.m2, nano.m3) == (42.38, 72.05, 15.68)
    flash2 = by_model["gemini-2.0-flash"]
    assert flash2.egi is None and all(v is None for v in flash2.bucket_scores.values())


def test_only_sonnet_clears_both_floors_and_unstated_floors_are_missing(db):
    load()
    ready = set(EgiResult.objects.filter(release_ready=True).values_list("model_id", flat=True))
    assert ready == {"claude-sonnet-4-5"}
    assert EgiResult.objects.get(model_id="gpt-5.5").floors["M5"]["status"] == "below"
    assert EgiResult.objects.get(model_id="gpt-5-mini").floors["M5"]["status"] == "below"
    assert EgiResult.objects.get(model_id="gpt-5-nano").floors["M5"]["status"] == "missing"


def test_every_unstated_field_is_in_the_missing_list():
    for entry in json.loads(ROSTER.read_text(encoding="utf-8"))["results"]:
        unstated = {b for b, v in entry["buckets"].items() if v["score"] is None}
        if entry["egi"] is None:
            unstated.add("EGI")
        assert {m["field"] for m in entry["missing"]} == unstated, entry["model"]
        for field, quote in entry["stated"].items():
            if field in ("roster", "rank"):  # the rank: see the test below
                continue
            value = entry["egi"] if field == "EGI" else entry["buckets"][field]["score"]
            assert (f"{value:.2f}" in quote) or (str(value) in quote), (entry["model"], field)


# seed 000: "gpt-5.5 leads on overall EGI" (§5), "Claude Sonnet 4.5, second overall" (§6),
# "Claude Haiku 4.5 – ranked sixth on EGI" (§8), GPT-5 nano "second-from-last on overall EGI"
# (§6) and "EGI ranges from 39.6 (GPT-4o mini)" (abstract) among fourteen models.
STATED_RANKS = {
    "gpt-5.5": 1,
    "claude-sonnet-4-5": 2,
    "claude-haiku-4-5": 6,
    "gpt-5-nano": 13,
    "gpt-4o-mini": 14,
}


def test_the_roster_stores_the_ranks_the_paper_states_and_no_other(db):
    load()
    ranks = dict(EgiResult.objects.values_list("model_id", "stated_rank"))
    assert {m: r for m, r in ranks.items() if r is not None} == STATED_RANKS
    assert len(ranks) == 12  # the other seven are null: the text states no rank for them
    entries = json.loads(ROSTER.read_text(encoding="utf-8"))["results"]
    for entry in entries:
        assert ("rank" in entry["stated"]) == (entry["rank"] is not None), entry["model"]
    # The stated ranks agree with the stated EGIs: a better rank never has a lower EGI.
    ranked = sorted(
        (e["rank"], e["egi"]) for e in entries if e["rank"] is not None and e["egi"] is not None
    )
    assert [egi for _, egi in ranked] == sorted((egi for _, egi in ranked), reverse=True)
    # Exactly five stated EGIs lie above Haiku's 59.13, as sixth place requires.
    haiku = next(e for e in entries if e["model"] == "claude-haiku-4-5")
    assert sum(1 for e in entries if (e["egi"] or 0) > haiku["egi"]) == 5


def test_the_stated_values_of_gpt_5_5_imply_an_m6_inside_the_papers_band():
    entry = next(
        e
        for e in json.loads(ROSTER.read_text(encoding="utf-8"))["results"]
        if e["model"] == "gpt-5.5"
    )
    known = sum(
        DEFAULT_EGI_WEIGHTS[b] * entry["buckets"][b]["score"]
        for b in ("M1", "M2", "M3", "M4", "M5")
    )
    implied_m6 = (entry["egi"] - known) / DEFAULT_EGI_WEIGHTS["M6"]
    # By hand: (65.61 − 23.226 − 17.5032 − 4.9424 − 7.6804 − 8.8858) / 0.06 = 56.20;
    # seed 000 §6: M6 "is compressed into a 51–61 band".
    assert implied_m6 == pytest.approx(56.20, abs=0.01)
    assert 51 <= implied_m6 <= 61


def test_the_demo_sigma_links_to_gemini_2_5_pro(db):
    load()
    result = latest_egi_for_model("gemini/gemini-2.5-pro")
    assert result.display_name == "Gemini 2.5 Pro" and result.egi == 59.10 and result.m1 == 76.05


def test_a_broken_roster_file_names_the_entry_and_key(db, tmp_path):
    data = json.loads(ROSTER.read_text(encoding="utf-8"))
    data["results"][2]["buckets"]["M1"]["score"] = "78.45"
    broken = tmp_path / "roster.json"
    broken.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        CommandError, match=r"roster\.json: results\[2\]\): key 'buckets\.M1\.score'"
    ):
        call_command("egi_load_roster", file=broken, stdout=io.StringIO())


def test_import_results_stores_a_directory_and_reports_the_ones_already_stored(
    db, tmp_path, published
):
    (tmp_path / "a_quick.json").write_text(
        json.dumps(published("model-a", M1=60.0)), encoding="utf-8"
    )
    (tmp_path / "b_quick.json").write_text(json.dumps(published("model-b")), encoding="utf-8")
    out = io.StringIO()
    call_command("egi_import_results", str(tmp_path), stdout=out)
    assert "2 stored, 0 already stored." in out.getvalue()
    call_command("egi_import_results", str(tmp_path / "a_quick.json"), stdout=out)
    assert "0 stored, 1 already stored." in out.getvalue()
    assert EgiResult.objects.get(model_id="model-a").source == "a_quick.json"
    (tmp_path / "c.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(CommandError, match=r"c\.json: not valid JSON \(line 1"):
        call_command("egi_import_results", str(tmp_path / "c.json"), stdout=out)
