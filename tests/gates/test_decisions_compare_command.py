"""``enterpriseval decisions_compare``: the compare endpoint from the command line, as --as."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from charters.configurations import ATTRIBUTABLE
from demo.testing.decisions import decide, load_example_estimates
from demo.testing.grading import make_world
from gates.decision_file import load_decision_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"


@pytest.fixture
def world(db):
    return make_world()


def compare(world, ids, actor: str, *extra: str) -> str:
    out = io.StringIO()
    decisions = [arg for pk in ids for arg in ("--decision", str(pk))]
    call_command(
        "decisions_compare",
        "--use-case",
        world.use_case.key,
        *decisions,
        "--as",
        actor,
        *extra,
        stdout=out,
    )
    return out.getvalue()


def api_compare(world, user, a: int, b: int):
    client = APIClient()
    client.force_authenticate(user)
    return client.get(f"/api/v1/use-cases/{world.use_case.key}/decisions/compare/?a={a}&b={b}")


def test_json_is_the_api_answer_for_the_same_user(world):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    for user in (world.owner, world.model_owner, world.reviewer, world.adjudicator):
        data = json.loads(compare(world, [gemini.pk, llama.pk], user.username, "--format", "json"))
        response = api_compare(world, user, gemini.pk, llama.pk)
        assert response.status_code == 200 and data == response.json()
    assert (data["a"]["id"], data["b"]["id"]) == (gemini.pk, llama.pk)
    assert data["verdict"] == ATTRIBUTABLE
    assert data["parity"]["differing_components"] == ["model"]


def test_the_table_reads_each_metric_as_each_decision_did(world):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    printed = compare(world, [gemini.pk, llama.pk], world.reviewer.username)
    assert f"A: decision {gemini.pk}  σ gemini-2-5:1  run {gemini.run_id}  Reject" in printed
    assert f"B: decision {llama.pk}  σ llama-4:1" in printed
    assert f"charter v1; verdict: {ATTRIBUTABLE}" in printed
    assert "σ components that differ: model" in printed
    rows = {line.split()[0]: line for line in printed.splitlines() if line.strip()}
    # The intervals are the example files' (an independent source of the same numbers).
    files = {
        side: {m.id: m for m in load_decision_file(EXAMPLES / f"{model}.yaml").gate_input.metrics}
        for side, model in (("a", "gemini-2.5"), ("b", "llama-4"))
    }
    for metric_id, a in files["a"].items():
        b = files["b"][metric_id]
        row = rows[metric_id]
        ci_a = f"[{a.ci[0]:.1f}, {a.ci[1]:.1f}]"
        ci_b = f"[{b.ci[0]:.1f}, {b.ci[1]:.1f}]"
        assert ci_a in row and ci_b in row
        assert row.index(ci_a) < row.rindex(ci_b)
    sign = {"higher": ">", "lower": "<"}
    for metric in files["a"].values():
        to = sign[metric.direction]
        expected = [f"{to}{metric.theta_out:g}", f"{to}{metric.theta_in:g}"]
        assert rows[metric.id].split()[1:3] == expected


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("grader", "--as: Graders do not see decisions of {key}"),
        ("outsider", "--as: {user} holds no role on {key}"),
    ],
)
def test_a_grader_and_an_outsider_are_refused_as_the_api_refuses_them(world, persona, expected):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    user = world.graders[0] if persona == "grader" else world.outsider
    assert api_compare(world, user, gemini.pk, llama.pk).status_code in (403, 404)
    with pytest.raises(CommandError) as raised:
        compare(world, [gemini.pk, llama.pk], user.username)
    assert raised.value.returncode == 2
    assert str(raised.value).startswith(expected.format(key=world.use_case.key, user=user.username))


def test_an_unknown_or_repeated_decision_is_named_as_the_api_names_a_or_b(world):
    gemini = decide(world, "gemini-2.5")
    missing = gemini.pk + 1000
    response = api_compare(world, world.owner, gemini.pk, missing)
    assert response.status_code == 400 and response.json()["error"]["field"] == "b"
    with pytest.raises(CommandError) as raised:
        compare(world, [gemini.pk, missing], "demo-owner")
    assert raised.value.returncode == 2
    assert str(raised.value) == (
        f"--decision: B: there is no decision {missing} in {world.use_case.key}; a comparison "
        "needs two decisions of the same use case."
    )
    with pytest.raises(CommandError) as raised:
        compare(world, [gemini.pk, gemini.pk], "demo-owner")
    assert str(raised.value) == "--decision: Choose two different decisions to compare."
    for ids in ([gemini.pk], [gemini.pk, missing, missing + 1]):
        with pytest.raises(CommandError) as raised:
            compare(world, ids, "demo-owner")
        assert raised.value.returncode == 2
        assert str(raised.value) == (
            f"--decision: give exactly two decisions, A then B (got {len(ids)})"
        )


def test_queries_do_not_grow_with_the_decisions(world, django_assert_num_queries):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    with django_assert_num_queries(QUERIES):
        compare(world, [gemini.pk, llama.pk], "demo-owner", "--format", "json")
    decide(world, "gemini-2.5", estimates=load_example_estimates("gemini-2.5")[:-1])
    with django_assert_num_queries(QUERIES):
        compare(world, [gemini.pk, llama.pk], "demo-owner", "--format", "json")
    with django_assert_num_queries(QUERIES):
        compare(world, [gemini.pk, llama.pk], "demo-owner")


# user, use case named, the check (use case, roles), both decisions with their relations, and
# each σ's uploader for the parity block (ParityOutput, as the API reads it too)
QUERIES = 7
