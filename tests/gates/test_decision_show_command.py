"""``enterpriseval decision_show``: the detail endpoint from the command line, as --as."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from audit.canonical import canonical_json, sha256_hex
from demo.testing.decisions import decide, load_example_estimates
from demo.testing.grading import make_world
from gates.decision_file import load_decision_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"


@pytest.fixture
def world(db):
    return make_world()


def show(world, decision_id: int, actor: str, *extra: str) -> str:
    out = io.StringIO()
    call_command(
        "decision_show",
        "--use-case",
        world.use_case.key,
        "--decision",
        str(decision_id),
        "--as",
        actor,
        *extra,
        stdout=out,
    )
    return out.getvalue()


def api_detail(world, user, decision_id: int) -> dict:
    client = APIClient()
    client.force_authenticate(user)
    response = client.get(f"/api/v1/use-cases/{world.use_case.key}/decisions/{decision_id}/")
    assert response.status_code == 200, response.json()
    return response.json()


def test_json_is_the_api_answer_for_the_same_user(world):
    decision = decide(world, "gemini-2.5")
    for user in (world.owner, world.model_owner, world.reviewer, world.adjudicator):
        data = json.loads(show(world, decision.pk, user.username, "--format", "json"))
        assert data == api_detail(world, user, decision.pk)
    # The hash anyone can recompute from the answer.
    document = {"record": data["record"], "evidence": data["evidence"]}
    assert sha256_hex(canonical_json(document)) == data["sha256"] == decision.sha256
    recall = next(m for m in data["record"]["gate"]["metrics"] if m["id"] == "guidance_recall")
    assert recall["ci"] == [66.46, 93.54] and recall["status"] == "Reject"


def test_the_table_gives_the_decision_each_metric_and_the_record_hash(world):
    decision = decide(world, "gemini-2.5")
    printed = show(world, decision.pk, world.reviewer.username)
    assert printed.startswith(
        f"decision {decision.pk} of {world.use_case.key}: σ gemini-2-5:1 run {decision.run_id}, "
        "charter v1, recorded by demo-owner"
    )
    assert f"record SHA-256 {decision.sha256}" in printed
    assert "decision: Reject    binding metric: guidance_recall" in printed
    rows = {line.split()[0]: line for line in printed.splitlines() if line.strip()}
    # Each gated metric's estimate and interval are the example file's (independent of the
    # record), to the table's one decimal.
    for metric in load_decision_file(EXAMPLES / "gemini-2.5.yaml").gate_input.metrics:
        row = rows[metric.id]
        assert f"[{metric.ci[0]:.1f}, {metric.ci[1]:.1f}]" in row
        assert f"{metric.estimate:.1f}" in row
    assert rows["guidance_recall"].split()[-1] == "Reject"


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("grader", "--as: Graders do not see decisions of {key}"),
        ("outsider", "--as: {user} holds no role on {key}"),
    ],
)
def test_a_grader_and_an_outsider_are_refused_as_the_api_refuses_them(world, persona, expected):
    decision = decide(world)
    user = world.graders[0] if persona == "grader" else world.outsider
    with pytest.raises(CommandError) as raised:
        show(world, decision.pk, user.username)
    assert raised.value.returncode == 2
    assert str(raised.value).startswith(expected.format(key=world.use_case.key, user=user.username))


def test_an_unknown_decision_is_named(world):
    decision = decide(world)
    missing = decision.pk + 1000
    with pytest.raises(CommandError) as raised:
        show(world, missing, "demo-owner")
    assert raised.value.returncode == 2
    assert str(raised.value) == f"--decision: no decision {missing} in {world.use_case.key}"


def test_queries_do_not_grow_with_the_decisions(world, django_assert_num_queries):
    decision = decide(world)
    # user, use case named, the check (use case, roles), the decision with its relations
    with django_assert_num_queries(QUERIES):
        show(world, decision.pk, "demo-owner", "--format", "json")
    decide(world, "llama-4")
    decide(world, "gemini-2.5", estimates=load_example_estimates("gemini-2.5")[:-1])
    with django_assert_num_queries(QUERIES):
        show(world, decision.pk, "demo-owner", "--format", "json")
    with django_assert_num_queries(QUERIES):
        show(world, decision.pk, "demo-owner")


QUERIES = 5
