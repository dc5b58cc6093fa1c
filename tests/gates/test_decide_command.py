"""``enterpriseval decide``: record a decision from the command line; a refusal exits 2."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from demo.testing.decisions import make_decidable_world
from gates.models import Decision
from grading.models import Assignment, AssignmentStatus


@pytest.fixture
def decidable(db):
    return make_decidable_world()


def decide(world, judge, *extra: str, actor: str | None = None) -> str:
    out = io.StringIO()
    call_command(
        "decide",
        "--use-case",
        world.use_case.key,
        "--charter",
        "1",
        "--run",
        str(world.runs[0].pk),
        "--session",
        world.session.public_id,
        "--judge",
        str(judge.pk),
        "--as",
        actor or world.owner.username,
        *extra,
        stdout=out,
    )
    return out.getvalue()


def test_it_records_a_decision_and_prints_the_gate(decidable):
    world, judge = decidable
    printed = decide(world, judge)
    decision = Decision.objects.get()
    assert f"decision {decision.pk} of {world.use_case.key}" in printed
    assert decision.sha256 in printed and "hallucination_rate" in printed
    # SPEC §6.3 on the command line too: the median, its interval, each source labelled
    value = decision.record["value"]
    assert (
        f"value: V_annual GBP {value['point']:,.0f} per year (median of the Monte Carlo draws, "
        f"10,000 draws, seed {value['seed']}); 90% interval GBP {value['lo']:,.0f} to "
        f"GBP {value['hi']:,.0f}; estimated"
    ) in printed
    assert "  t_manual: [charter range] charter range 2–5 h, mode 3" in printed
    assert "weight-sensitivity range:" in printed


def test_json_is_the_decision_as_the_api_gives_it(decidable):
    world, judge = decidable
    data = json.loads(decide(world, judge, "--format", "json"))
    decision = Decision.objects.get()
    assert data["id"] == decision.pk and data["sha256"] == decision.sha256
    assert data["record"]["run"] == world.runs[0].pk


def test_an_open_session_is_refused_with_status_2_naming_the_option(decidable, triggers_lifted):
    world, judge = decidable
    # A submitted assignment cannot be reopened (audit/db_guards.py): leave work open as a
    # session that was never finished would.
    with triggers_lifted("grading_assignment"):
        Assignment.objects.filter(pk=Assignment.objects.filter(session=world.session)[0].pk).update(
            status=AssignmentStatus.IN_PROGRESS
        )
    with pytest.raises(CommandError) as refused:
        decide(world, judge)
    assert refused.value.returncode == 2
    assert str(refused.value).startswith("--session: Grading session")
    assert "still open" in str(refused.value)
    assert not Decision.objects.exists()


def test_a_grader_is_refused_with_status_2(decidable):
    world, judge = decidable
    with pytest.raises(CommandError) as refused:
        decide(world, judge, actor=world.graders[0].username)
    assert refused.value.returncode == 2 and str(refused.value).startswith("--as: ")
