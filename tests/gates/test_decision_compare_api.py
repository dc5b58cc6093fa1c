"""GET /api/v1/use-cases/<key>/decisions/compare/?a=&b=: the comparison page as data."""

from __future__ import annotations

from pathlib import Path

import pytest
from rest_framework.test import APIClient

from charters.configurations import ATTRIBUTABLE, IDENTICAL
from demo.testing.decisions import decide, load_example_estimates
from demo.testing.grading import make_world
from gates.decision_file import load_decision_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"


@pytest.fixture
def world(db):
    return make_world()


def compare(world, user, a, b):
    client = APIClient()
    client.force_authenticate(user)
    return client.get(f"/api/v1/use-cases/{world.use_case.key}/decisions/compare/?a={a}&b={b}")


def test_two_sigmas_differing_only_in_the_model_side_by_side(world):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    response = compare(world, world.model_owner, gemini.pk, llama.pk)
    assert response.status_code == 200, response.json()
    data = response.json()
    assert (data["a"]["id"], data["b"]["id"]) == (gemini.pk, llama.pk)
    assert data["verdict"] == ATTRIBUTABLE and data["attributable_to_model_alone"] is True
    assert data["parity"]["differing_components"] == ["model"]
    assert data["run_differences"] == []
    # Each metric is as each decision's record has it, in charter order.
    assert [m["id"] for m in data["metrics"]] == [m["id"] for m in gemini.record["gate"]["metrics"]]
    records = {
        "a": {m["id"]: m for m in gemini.record["gate"]["metrics"]},
        "b": {m["id"]: m for m in llama.record["gate"]["metrics"]},
    }
    for row in data["metrics"]:
        for side in ("a", "b"):
            assert row[side]["status"] == records[side][row["id"]]["status"]
    # The intervals are the example files' (an independent source of the same numbers).
    for model, side in (("gemini-2.5", "a"), ("llama-4", "b")):
        by_id = {row["id"]: row[side] for row in data["metrics"]}
        for metric in load_decision_file(EXAMPLES / f"{model}.yaml").gate_input.metrics:
            assert by_id[metric.id]["ci"] == pytest.approx(list(metric.ci))


def test_two_decisions_on_one_sigma_are_identical_configurations(world):
    first = decide(world, "gemini-2.5")
    second = decide(world, "gemini-2.5", estimates=load_example_estimates("gemini-2.5")[:-1])
    data = compare(world, world.owner, first.pk, second.pk).json()
    assert data["verdict"] == IDENTICAL and data["parity"]["identical"] is True


def test_a_refused_comparison_names_the_side_at_fault(world):
    decision = decide(world)
    same = compare(world, world.owner, decision.pk, decision.pk)
    assert same.status_code == 400 and same.json()["error"]["field"] == "b"
    missing = compare(world, world.owner, decision.pk, 999999)
    assert missing.status_code == 400 and missing.json()["error"]["field"] == "b"
    assert "there is no decision 999999" in missing.json()["error"]["message"]
    bad = compare(world, world.owner, "x", decision.pk)
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "a"


@pytest.mark.parametrize(("persona", "status"), [("graders", 403), ("outsider", 404)])
def test_graders_and_outsiders_are_refused(world, persona, status):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    user = world.graders[0] if persona == "graders" else world.outsider
    assert compare(world, user, gemini.pk, llama.pk).status_code == status


def test_the_schema_documents_the_comparison_cancel_and_download_endpoints(world):
    from django.core.management import call_command

    client = APIClient()
    client.force_authenticate(world.owner)
    schema = client.get("/api/schema/").content
    for path in (
        b"/api/v1/use-cases/{key}/decisions/compare/",
        b"/api/v1/use-cases/{key}/runs/{run_id}/judgings/{judging_id}/cancel/",
        b"/api/v1/use-cases/{key}/scorecards/{id}/scorecard.pdf",
        b"/api/v1/use-cases/{key}/scorecards/{id}/evidence.zip",
    ):
        assert path in schema, path
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")
