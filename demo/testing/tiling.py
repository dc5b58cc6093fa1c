"""Tile a run to bank sizes for benchmarks and query-count tests (issue 18).

Every original output of the run is copied at new repeat indices with its units and its judge
scores, so the judge has scored all N outputs while the grading session's sample (of the
original outputs) stays what it was: as at a bank where a calibrated judge scores everything
and experts grade a few hundred outputs (SPEC §5.2).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from runs.models import JudgeScore, Output, Run, Unit


@transaction.atomic
def tile_run(run: Run, *, original_k: int, size: int) -> int:
    """Copy the run's outputs with repeat index below ``original_k`` until it has ``size``.

    Copies take repeat indices from ``original_k`` on, so (run, task, repeat) stays unique;
    the run's K grows to match. Returns the number of outputs the run has afterwards.
    """
    originals = list(Output.objects.filter(run=run, repeat_index__lt=original_k).order_by("pk"))
    units = list(Unit.objects.filter(output__in=originals).order_by("pk"))
    units_of: dict[int, list[Unit]] = {}
    for unit in units:
        units_of.setdefault(unit.output_id, []).append(unit)
    scores_of: dict[int, list[JudgeScore]] = {}
    for score in JudgeScore.objects.filter(unit__in=units).order_by("pk"):
        scores_of.setdefault(score.unit_id, []).append(score)
    old_units = [u for o in originals for u in units_of.get(o.pk, [])]
    have = Output.objects.filter(run=run).count()
    copy = have // len(originals)
    while have + len(originals) <= size:
        made = Output.objects.bulk_create(
            [_clone(o, repeat_index=o.repeat_index + copy * original_k) for o in originals],
            batch_size=500,
        )
        new_units = [
            _clone(u, output_id=target.pk)
            for source, target in zip(originals, made, strict=True)
            for u in units_of.get(source.pk, [])
        ]
        created = Unit.objects.bulk_create(new_units, batch_size=2000)
        JudgeScore.objects.bulk_create(
            [
                _clone(s, unit_id=target.pk)
                for source, target in zip(old_units, created, strict=True)
                for s in scores_of.get(source.pk, [])
            ],
            batch_size=5000,
        )
        have += len(originals)
        copy += 1
    Run.objects.filter(pk=run.pk).update(
        repeats=copy * original_k, items_total=have, items_done=have
    )
    run.refresh_from_db()
    return have


def _clone(instance: Any, **changes: Any) -> Any:
    fields = {
        f.attname: getattr(instance, f.attname)
        for f in instance._meta.concrete_fields
        if not f.primary_key
    }
    fields.update(changes)
    return type(instance)(**fields)
