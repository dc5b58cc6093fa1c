"""Recording a decision reads the run's evidence in a fixed number of queries (issue 18).

The run's outputs, units and judge scores are read once for every metric (joined by run and
judge, no lists of ids), the session's final labels and agreement once: the query count of
``decision_create`` is pinned, and the same whether the run holds 12 outputs or four times as
many (each copied with its units and judge scores, ``demo.testing.tiling``).
"""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from charters.models import Charter
from demo.testing.decisions import make_decidable_world
from demo.testing.tiling import tile_run
from gates.services import decision_create
from runs.models import Output, Run

#: Queries of one decision on the decidable world (the session's reads, the evidence, the
#: record with its audit entry, and four for the run summary the scorecard reads from the record:
#: the tasks and outputs pass^k reads, the counts of tasks and outputs), by database (PostgreSQL
#: takes a few more for its locks and guards). A change here is a change in how a decision reads.
DECISION_CREATE = {"sqlite": 77, "postgresql": 80}


def _record(world, judge) -> int:
    run = Run.objects.get(pk=world.runs[0].pk)  # as a request finds it: no related rows cached
    with CaptureQueriesContext(connection) as queries, transaction.atomic():
        decision_create(
            actor=world.owner,
            charter=Charter.objects.get(use_case=world.use_case, version=1),
            run=run,
            session=world.session,
            judge=judge,
        )
        transaction.set_rollback(True)  # the same decision is recorded again below
    return len(queries.captured_queries)


@pytest.mark.django_db
def test_a_decision_reads_in_the_same_number_of_queries_at_four_times_the_outputs():
    world, judge = make_decidable_world()
    run = world.runs[0]
    before = Output.objects.filter(run=run).count()
    small = _record(world, judge)
    assert tile_run(run, original_k=run.repeats, size=4 * before) == 4 * before
    assert _record(world, judge) == small
    assert small == DECISION_CREATE[connection.vendor]
