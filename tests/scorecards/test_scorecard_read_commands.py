"""``scorecards_list`` and ``scorecard_show`` answer as the API answers the same user."""

from __future__ import annotations

import pytest

from audit.canonical import canonical_json, sha256_hex
from demo.testing.grading import make_world
from demo.testing.reads import SITE, queries, read, refusals_for_personas, refused
from demo.testing.scorecards import draft_scorecard, final_scorecard, recorded_decision
from scorecards.models import Scorecard


@pytest.fixture
def world(db):
    return make_world()


@pytest.fixture
def final(world) -> Scorecard:
    return final_scorecard(world)


@SITE
def test_json_is_the_api_answer_and_graders_and_outsiders_are_refused(world, final):
    key = world.use_case.key
    base = f"/api/v1/use-cases/{key}/scorecards/"
    uc = ["--use-case", key]
    refused_by_the_api = {"grader": 403, "outsider": 404}
    assert refusals_for_personas(world, base, "scorecards_list", *uc) == refused_by_the_api
    assert (
        refusals_for_personas(
            world, f"{base}{final.pk}/", "scorecard_show", *uc, "--scorecard", str(final.pk)
        )
        == refused_by_the_api
    )


def test_the_tables_give_the_signed_sha256_of_the_canonical_content(world, final):
    key = world.use_case.key
    final.refresh_from_db()
    assert final.sha256 == sha256_hex(canonical_json(final.content))
    lines = read("scorecards_list", "--use-case", key, "--as", "demo-owner").splitlines()
    assert lines[0] == f"1 scorecard(s) of {key}."
    assert lines[3].split()[:4] == [str(final.pk), str(final.decision_id), "final", final.sha256]
    shown = read(
        "scorecard_show", "--use-case", key, "--scorecard", str(final.pk), "--as", "demo-reviewer"
    ).splitlines()
    assert shown[0].startswith(f"scorecard {final.pk} of {key}: final, signed off by demo-reviewer")
    assert shown[1] == f"SHA-256 {final.sha256}"


def test_a_draft_lists_the_fields_still_missing(world):
    draft = draft_scorecard(world)
    shown = read(
        "scorecard_show", "--use-case", world.use_case.key, "--scorecard", str(draft.pk), "--as",
        "demo-owner",
    )  # fmt: skip
    assert f"scorecard {draft.pk} of {world.use_case.key}: draft, not signed off" in shown
    assert "\nmissing " in shown and "failure_modes" in shown


def test_an_unknown_scorecard_is_named(world, final):
    message = refused(
        "scorecard_show", "--use-case", world.use_case.key, "--scorecard", "999", "--as",
        "demo-owner",
    )  # fmt: skip
    assert message == f"--scorecard: No scorecard 999 in {world.use_case.key}."


def test_list_queries_do_not_grow_with_the_scorecards(world, final):
    uc = ["--use-case", world.use_case.key, "--as", "demo-owner"]
    one = queries("scorecards_list", *uc)
    draft_scorecard(world, recorded_decision(world, "llama-4", grade=False))
    assert Scorecard.objects.count() == 2
    assert queries("scorecards_list", *uc) == one
