"""Linking σ's model to its latest EGI result: exact, provider prefix stripped, then alias."""

from __future__ import annotations

import json

import pytest

from egibench.model_names import (
    alias_table_from_mapping,
    load_aliases,
    name_key,
    strip_provider,
)
from egibench.selectors import (
    ALIAS,
    EXACT,
    PREFIX_STRIPPED,
    SHORTLIST_STATEMENT,
    egi_evidence_for,
    egi_match_for_model,
    latest_egi_for_model,
)
from egibench.services import egi_result_store


@pytest.fixture
def store(db, published):
    def store(model, *, stamp="2026-10-21T00:12:48+00:00", egi=50.0, **scores):
        return egi_result_store(
            result=published(model, stamp=stamp, egi=egi, **scores), source=f"{model}.json"
        )

    return store


def test_names_lose_their_provider_prefix_and_case():
    assert strip_provider("gemini/gemini-2.5-pro") == "gemini-2.5-pro"
    assert strip_provider("openrouter/anthropic/claude-sonnet-4-5") == "claude-sonnet-4-5"
    assert name_key(" Gemini  2.5 Pro ") == "gemini 2.5 pro"


def test_an_alias_table_key_given_twice_is_refused_naming_the_file_key_and_lines(tmp_path):
    path = tmp_path / "aliases.yaml"
    path.write_text("models:\n  - name: A\n    name: B\n", encoding="utf-8")
    with pytest.raises(ValueError) as raised:
        load_aliases(path)
    assert str(raised.value) == (
        f"{path}: not valid YAML (line 3: key 'models[0].name' appears twice, first on line 2; "
        "give each key once)"
    )


def test_an_exact_model_id_wins_over_the_stripped_and_alias_matches(store):
    store("gemini-2.5-pro", egi=10.0, stamp="2026-12-01T00:00:00+00:00")
    exact = store("gemini/gemini-2.5-pro", egi=20.0, stamp="2026-01-01T00:00:00+00:00")
    match = egi_match_for_model("gemini/gemini-2.5-pro")
    assert match.rule == EXACT and match.result.pk == exact.pk


def test_the_provider_prefix_is_stripped_case_insensitively(store):
    row = store("Gemini-2.5-Pro")
    match = egi_match_for_model("gemini/gemini-2.5-pro")
    assert match.rule == PREFIX_STRIPPED and match.result.pk == row.pk


def test_the_alias_table_links_a_provider_id_to_the_papers_name(store):
    row = store("Gemini 2.5 Pro")
    match = egi_match_for_model("gemini/gemini-2.5-pro")
    assert match.rule == ALIAS and match.result.pk == row.pk
    sonnet = store("claude-sonnet-4-5")
    assert latest_egi_for_model("anthropic/claude-sonnet-4-5-20250929").pk == sonnet.pk


def test_the_latest_result_of_the_winning_rule_is_returned(store):
    store("gemini-2.5-pro", egi=30.0, stamp="2026-10-21T00:00:00+00:00")
    newer = store("gemini-2.5-pro", egi=40.0, stamp="2026-11-30T00:00:00+00:00")
    store("gemini-2.5-pro", egi=35.0, stamp="2026-11-01T00:00:00+00:00")
    assert latest_egi_for_model("gemini/gemini-2.5-pro").pk == newer.pk


def test_an_unknown_or_empty_model_has_no_result(store):
    store("gemini-2.5-pro")
    assert latest_egi_for_model("meta/llama-4-maverick") is None
    assert latest_egi_for_model("   ") is None
    # A name that merely contains another is not a match.
    assert latest_egi_for_model("gemini/gemini-2.5-pro-max") is None


def test_the_link_is_one_query(store, django_assert_num_queries):
    store("Gemini 2.5 Pro")
    with django_assert_num_queries(1):
        assert egi_match_for_model("gemini/gemini-2.5-pro") is not None


def test_the_evidence_is_json_with_floors_sha256_and_the_statement(store):
    row = store("gemini-2.5-pro", egi=59.10, M1=76.05, M2=71.0, M5=65.0)

    class Sigma:
        model_ref = "gemini/gemini-2.5-pro"

    evidence = egi_evidence_for(Sigma())
    assert evidence["statement"] == SHORTLIST_STATEMENT
    assert evidence["sha256"] == row.sha256 and evidence["match_rule"] == PREFIX_STRIPPED
    assert evidence["egi"] == pytest.approx(59.10)
    assert evidence["buckets"]["M1"] == pytest.approx(76.05) and evidence["buckets"]["M3"] is None
    assert evidence["floors"]["M5"]["status"] == "below" and not evidence["release_ready"]
    assert evidence["release_reasons"] == ["M5 65.00 is below its floor 70"]
    json.dumps(evidence)  # JSON-able as it is


def test_an_alias_table_refuses_a_name_in_two_groups():
    with pytest.raises(
        ValueError, match=r"models\[1\] \(B\): 'x' is already an alias of models\[0\]"
    ):
        alias_table_from_mapping(
            {"models": [{"name": "A", "aliases": ["x"]}, {"name": "B", "aliases": ["X"]}]},
            source="aliases.yaml",
        )
