"""enterpriseval.bulk.rows_insert_missing: new rows written, rows whose key is taken skipped."""

from __future__ import annotations

from datetime import UTC, datetime

from test_judging_service import make_run

from enterpriseval.bulk import rows_insert_missing
from runs.models import Judge, JudgeScore, Unit
from runs.services.judging import SCORE_COLUMNS, judge_get_or_create

WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_it_writes_new_rows_skips_taken_keys_and_counts_only_what_it_wrote(runs_world):
    run = make_run(runs_world, outputs=1)
    judge: Judge = judge_get_or_create(kind="offline")
    first, second = Unit.objects.filter(output__run=run).order_by("pk")[:2]
    JudgeScore.objects.create(
        judge=judge, unit=first, criterion="supported", score=0.0, label="theirs"
    )
    rows = [
        (judge.pk, first.pk, "supported", 1.0, "ours", "", WHEN),  # key taken: skipped
        (judge.pk, first.pk, "relevant", 1.0, "ours", "why, with 'quotes' and é", WHEN),
        (judge.pk, second.pk, "supported", 0.25, "ours", "", WHEN),
    ]
    assert rows_insert_missing(model=JudgeScore, columns=SCORE_COLUMNS, rows=rows) == 2
    stored = {
        (s.unit_id, s.criterion): (s.score, s.label, s.rationale, s.created_at)
        for s in JudgeScore.objects.filter(judge=judge)
    }
    assert len(stored) == 3
    assert stored[(first.pk, "supported")][:2] == (0.0, "theirs")
    assert stored[(first.pk, "relevant")] == (1.0, "ours", "why, with 'quotes' and é", WHEN)
    assert stored[(second.pk, "supported")] == (0.25, "ours", "", WHEN)
    assert rows_insert_missing(model=JudgeScore, columns=SCORE_COLUMNS, rows=rows) == 0
    assert rows_insert_missing(model=JudgeScore, columns=SCORE_COLUMNS, rows=[]) == 0
