"""The scorecard page reads in a fixed number of queries, cold or warm, signed or draft, whatever
the number of outputs its decision's run holds or of metrics the decision records (the same
counts on SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from charters.models import Charter
from demo.testing.decisions import (
    decide,
    decide_on_a_larger_run,
    estimates_with_informational,
    make_decidable_world,
)
from demo.testing.grading import make_world
from demo.testing.scorecards import COMMITTEE_FIELDS, draft_scorecard, final_scorecard
from demo.testing.tiling import tile_run
from gates.services import decision_create
from runs.models import Output
from scorecards.models import Scorecard
from scorecards.services import scorecard_create, scorecard_sign_off, scorecard_update

# session, user, use case, roles, the scorecard with its decision, the re-evaluation flags,
# the roles again for editing and for signing off
SIGNED_PAGE = 8
# the same and, to assemble the content now, nine more: members, the charter's informational
# metrics, the run's outputs and three counts of them (pass^k, sample sizes), deviations,
# σ's model's latest EGI result, the decision.record audit entry (and one more, the session's
# grading_session.create entry, when the decision rests on a grading session)
DRAFT_PAGE = 17
# A draft of a decision recorded from the evidence (decision_create, on a closed session): the
# run's pass^k and counts read from the decision's record instead of the run's outputs (four
# fewer), and the session's grading_session.create entry. Whatever the outputs.
COMPUTED_DRAFT_PAGE = 14


@pytest.fixture
def world(db):
    cache.clear()
    yield make_world()
    cache.clear()


def views(client: Client, scorecard: Scorecard, count: int, assert_queries) -> None:
    url = f"/use-cases/{scorecard.use_case.key}/scorecards/{scorecard.pk}/"
    cache.clear()
    for _cold_then_warm in range(2):
        with assert_queries(count):
            assert client.get(url).status_code == 200


def test_a_signed_scorecards_page_reads_in_the_same_queries_cold_and_warm(
    world, django_assert_num_queries
):
    client = Client()
    client.force_login(world.reviewer)
    views(client, final_scorecard(world), SIGNED_PAGE, django_assert_num_queries)


def test_a_drafts_page_reads_in_the_same_queries_whatever_its_run_and_record_hold(
    world, django_assert_num_queries
):
    client = Client()
    client.force_login(world.reviewer)
    small = draft_scorecard(world, decide(world))
    larger_run = draft_scorecard(world, decide_on_a_larger_run(world))
    more = draft_scorecard(
        world, decide(world, "llama-4", estimates=estimates_with_informational())
    )
    assert larger_run.decision.run.items_done == 5 * small.decision.run.items_done
    for scorecard in (small, larger_run, more):
        views(client, scorecard, DRAFT_PAGE, django_assert_num_queries)


def test_scorecard_pages_read_in_the_same_queries_at_four_times_the_outputs(
    db, django_assert_num_queries
):
    """Signed and draft scorecards of decisions recorded from the evidence on both runs,
    before and after the runs are tiled to four times their outputs (each with its units and
    judge scores)."""
    world, judge = make_decidable_world()
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    before = Output.objects.filter(run=world.runs[0]).count()
    client = Client()
    client.force_login(world.reviewer)
    for size in (before, 4 * before):
        decisions = []
        for run in world.runs:
            assert tile_run(run, original_k=world.runs[0].repeats, size=size) == size
            decisions.append(
                decision_create(
                    actor=world.owner, charter=charter, run=run, session=world.session, judge=judge
                )
            )
        signed = scorecard_create(actor=world.reviewer, decision=decisions[0])
        signed = scorecard_update(actor=world.reviewer, scorecard=signed, changes=COMMITTEE_FIELDS)
        signed = scorecard_sign_off(actor=world.reviewer, scorecard=signed)
        views(client, signed, SIGNED_PAGE, django_assert_num_queries)
        draft = scorecard_create(actor=world.reviewer, decision=decisions[1])
        views(client, draft, COMPUTED_DRAFT_PAGE, django_assert_num_queries)
