"""Writes for outputs: importing a run made elsewhere, and building the units of outputs."""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, BinaryIO

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.utils import timezone

from audit.services import audit_record
from charters.catalogue import SUCCESS_LABEL_EQUALS_GOLD
from charters.models import (
    Charter,
    Configuration,
    GuidanceItem,
    KeyElement,
    Role,
    SourceChunk,
    Stage,
    Task,
    TaskSet,
    UseCase,
)
from charters.models.charters import Treatment
from charters.models.tasks import Split
from charters.permissions import require_role
from charters.services.use_cases import use_case_advance
from charters.validation import LABEL_METRICS
from enterpriseval.bulk import ids_reserve, rows_insert
from enterpriseval.errors import ServiceError
from enterpriseval.jsonl import DEFAULT_MAX_ERRORS
from enterpriseval.limits import UploadKind, upload_stream
from runs.models import Output, OutputStatus, Run, RunMode, RunStatus, Trajectory, Unit
from runs.output_import import OutputFileReader, OutputRecord
from runs.segment_pool import PendingUnits, Segmenter, SegmentJob, UnitRow

IMPORT_ROLES = (Role.CHARTER_OWNER, Role.MODEL_OWNER)
MAX_REPEATS = 100
OUTPUT_BATCH = 500
PENDING_BATCHES = 4
# The columns an import writes besides id, run and created_at, in _output_fields's order.
OUTPUT_FIELDS = (
    "task_id",
    "repeat_index",
    "status",
    "text",
    "cited_chunk_ids",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "latency_ms",
    "generation_seconds",
    "attempts",
    "success",
    "label",
    "label_error",
    "error",
)
JSON_FIELDS = frozenset({"cited_chunk_ids"})
UNIT_COLUMNS = ("output_id", "kind", "key", "position", "text", "ref_id", "sentence_position")
MAX_LISTED_ERRORS = DEFAULT_MAX_ERRORS
MAX_RUN_COST = Decimal("99999999.999999")


@dataclass(frozen=True, slots=True)
class _TaskGold:
    pk: int
    key_element_ids: tuple[str, ...]
    guidance_item_ids: tuple[str, ...]


@transaction.atomic
def output_import(
    *,
    actor: AbstractBaseUser,
    use_case: UseCase,
    configuration: Configuration,
    task_set: TaskSet,
    split: str,
    repeats: int,
    fileobj: BinaryIO,
    filename: str,
) -> Run:
    """Import a JSONL file of outputs of σ on ``split`` of ``task_set`` as a completed run.

    All or nothing, in one transaction: the file is read once, a line at a time; outputs,
    their trajectories and their units are written in batches while every line so far is
    valid; if any line is bad, nothing is kept and the ServiceError lists every bad line
    (line, field, message). Each batch is split into sentences in the segmenter's worker
    processes while the next lines are read; up to ``PENDING_BATCHES`` batches wait to be
    written, so memory stays bounded whatever the file's length. Moves the use case to
    stage 4 (run).
    """
    require_role(actor, use_case, IMPORT_ROLES)
    _check_run_inputs(use_case, configuration, task_set, split, repeats)
    check_structured_inputs(
        use_case=use_case,
        configuration=configuration,
        task_set=task_set,
        split=split,
        executed=False,
    )
    filename = os.path.basename(filename or "")[:255] or "outputs.jsonl"
    fileobj = upload_stream(kind=UploadKind.OUTPUTS, fileobj=fileobj, filename=filename)
    gold, permitted, elsewhere = _task_catalogue(task_set, split)

    now = timezone.now()
    run = Run.objects.create(
        use_case=use_case,
        configuration=configuration,
        task_set=task_set,
        split=split,
        repeats=repeats,
        mode=RunMode.IMPORTED,
        status=RunStatus.RUNNING,
        items_total=len(gold) * repeats,
        source_filename=filename,
        created_by=actor,
        started_at=now,
    )
    reader = OutputFileReader(
        fileobj,
        tasks=permitted,
        repeats=repeats,
        scope=f"task set {task_set.name} v{task_set.version}, split {split}",
        elsewhere=elsewhere,
        label_set=tuple(task_set.label_set or ()),
        max_errors=MAX_LISTED_ERRORS,
    )
    totals = _Totals()
    segmenter = segmenter_from_settings()
    # Batches being split in the segmenter's processes while the next lines are read.
    pending: deque[tuple[list[OutputRecord], PendingUnits]] = deque()
    batch: list[OutputRecord] = []
    for record in reader:
        if reader.has_errors:
            batch.clear()  # nothing more is written; the transaction will roll back
            _drop(pending)
            continue
        batch.append(record)
        if len(batch) == OUTPUT_BATCH:
            pending.append((batch, segmenter.submit(_jobs(batch, gold))))
            batch = []
            if len(pending) > PENDING_BATCHES:
                records, units = pending.popleft()
                _write_batch(run, records, units.result(), gold, totals)
    report = reader.report()
    if not report.ok:
        _drop(pending)
        raise ServiceError(report.refusal(filename), field="file", details=report.details())
    if batch:
        pending.append((batch, segmenter.submit(_jobs(batch, gold))))
    while pending:
        records, units = pending.popleft()
        _write_batch(run, records, units.result(), gold, totals)
    if totals.cost > MAX_RUN_COST:
        raise ServiceError(
            f"{filename}: the outputs cost {totals.cost} US dollars in all, more than a run "
            f"can record ({MAX_RUN_COST}); nothing was imported.",
            field="file",
        )

    run.status = RunStatus.COMPLETED
    run.items_done = totals.outputs
    run.items_failed = totals.failed
    run.cost_usd = totals.cost
    run.cost_unknown_items = totals.cost_unknown
    run.source_sha256 = report.sha256
    run.finished_at = timezone.now()
    run.save(
        update_fields=[
            "status",
            "items_done",
            "items_failed",
            "cost_usd",
            "cost_unknown_items",
            "source_sha256",
            "finished_at",
        ]
    )
    audit_record(
        actor=actor,
        action="run.import",
        target=run,
        use_case_id=use_case.pk,
        payload={
            "run": run.pk,
            **run_sources_payload(configuration, task_set),
            "split": split,
            "repeats": repeats,
            "filename": filename,
            "sha256": report.sha256,
            "outputs": totals.outputs,
            "failed": totals.failed,
            "labelled": totals.labelled,
            "missing": run.items_total - totals.outputs,
            "units": totals.units,
            "trajectories": totals.trajectories,
            "cost_usd": totals.cost,
            "cost_unknown_items": totals.cost_unknown,
        },
    )
    use_case_advance(
        actor=actor,
        use_case=use_case,
        stage=Stage.RUN,
        note=f"run {run.pk} imported ({totals.outputs} outputs)",
    )
    return run


def segmenter_from_settings(*, min_chars: int | None = None) -> Segmenter:
    """Return the segmenter of ``SEGMENT_PROCESSES`` worker processes (unset: one per core)."""
    processes = getattr(settings, "SEGMENT_PROCESSES", None)
    if processes is not None and (isinstance(processes, bool) or processes < 0):
        raise ImproperlyConfigured(f"SEGMENT_PROCESSES must be ≥ 0 or unset, got {processes!r}")
    return Segmenter(processes, min_chars=min_chars)


def units_insert(*, output_pks: Sequence[int], rows: Sequence[Sequence[UnitRow]]) -> int:
    """Write the units of each output (``rows[i]`` of ``output_pks[i]``); return how many.

    COPY on PostgreSQL, one INSERT statement on SQLite (enterpriseval.bulk): the rows go
    straight from the segmenter's tuples to the database, no model instance per unit.
    """
    return rows_insert(
        model=Unit,
        columns=UNIT_COLUMNS,
        rows=(
            (output_pk, *row)
            for output_pk, output_rows in zip(output_pks, rows, strict=True)
            for row in output_rows
        ),
    )


@dataclass
class _Totals:
    outputs: int = 0
    failed: int = 0
    units: int = 0
    trajectories: int = 0
    labelled: int = 0
    cost: Decimal = Decimal(0)
    cost_unknown: int = 0


def _check_run_inputs(
    use_case: UseCase, configuration: Configuration, task_set: TaskSet, split: str, repeats: int
) -> None:
    if configuration.use_case_id != use_case.pk:
        raise ServiceError(
            f"configuration: σ {configuration.name} v{configuration.version} belongs to "
            f"another use case, not {use_case.key}",
            field="configuration",
        )
    if task_set.use_case_id != use_case.pk:
        raise ServiceError(
            f"task_set: task set {task_set.name} v{task_set.version} belongs to another use "
            f"case, not {use_case.key}",
            field="task_set",
        )
    if split not in Split.values:
        raise ServiceError(
            f"split: expected one of {', '.join(Split.values)}, got {split!r}", field="split"
        )
    if not task_set.split_counts.get(split):
        raise ServiceError(
            f"split: task set {task_set.name} v{task_set.version} has no {split} tasks",
            field="split",
        )
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= MAX_REPEATS:
        raise ServiceError(
            f"repeats: expected a whole number K from 1 to {MAX_REPEATS}, got {repeats!r}",
            field="repeats",
        )


def check_structured_inputs(
    *,
    use_case: UseCase,
    configuration: Configuration,
    task_set: TaskSet,
    split: str,
    executed: bool,
) -> None:
    """Refuse a run the use case's signed charter cannot read, naming the missing field.

    SPEC §4.1: a charter that gates classification accuracy or macro-F1 needs the split's
    gold labels; a ``label_equals_gold`` success rule needs a label set, and an executed σ
    that gives labels (``guardrails.output_format`` of kind ``label``). Checked at run start
    (here) and again at decision time (the metric's reason).
    """
    charter = Charter.objects.frozen().filter(use_case=use_case).order_by("-version").first()
    if charter is None:
        return
    gated = set(
        charter.metrics.filter(treatment=Treatment.GATED).values_list("metric_id", flat=True)
    )
    needs_gold = sorted(gated & set(LABEL_METRICS))
    by_label = charter.success_rule == SUCCESS_LABEL_EQUALS_GOLD
    if not needs_gold and not by_label:
        return
    where = f"task set {task_set.name} v{task_set.version}"
    if not task_set.label_set:
        wanted = ", ".join([*needs_gold, *(["success_rule label_equals_gold"] if by_label else [])])
        raise ServiceError(
            f"task_set: {where} declares no label_set, but charter v{charter.version} needs gold "
            f"labels ({wanted}); import a task set whose first line is "
            '{"label_set": [...]} and whose tasks carry gold_label',
            field="task_set",
        )
    unlabelled = Task.objects.filter(task_set=task_set, split=split, gold_label__isnull=True)
    if needs_gold and split != Split.STRESS and unlabelled.exists():
        raise ServiceError(
            f"task_set: {unlabelled.count()} {split} task(s) of {where} have no gold_label, "
            f"which charter v{charter.version} gates ({', '.join(needs_gold)}) needs",
            field="task_set",
        )
    output_format = (configuration.document.get("guardrails") or {}).get("output_format")
    if executed and not (isinstance(output_format, dict) and output_format.get("kind") == "label"):
        raise ServiceError(
            f"configuration: σ {configuration.name} v{configuration.version} gives no label "
            "(its guardrails.output_format is not {kind: label, pattern: ...}), so no executed "
            f"output could be scored by charter v{charter.version}'s "
            + ("label_equals_gold success rule" if by_label else ", ".join(needs_gold)),
            field="configuration",
        )


def _task_catalogue(
    task_set: TaskSet, split: str
) -> tuple[dict[str, _TaskGold], dict[str, frozenset[str]], dict[str, str]]:
    """Return, for the split's tasks by id: their gold ids and permitted chunk ids; and the
    split of every other task of the set (for messages). Five queries."""
    rows = list(Task.objects.filter(task_set=task_set).values_list("pk", "external_id", "split"))
    in_split = {pk: external_id for pk, external_id, task_split in rows if task_split == split}
    elsewhere = {external_id: s for _pk, external_id, s in rows if s != split}
    chunks: dict[int, list[str]] = {pk: [] for pk in in_split}
    for task_pk, chunk_id in SourceChunk.objects.filter(
        task__task_set=task_set, task__split=split
    ).values_list("task_id", "chunk_id"):
        chunks[task_pk].append(chunk_id)
    gold_by_pk = _gold_of(in_split, task_set=task_set, split=split)
    gold = {external_id: gold_by_pk[pk] for pk, external_id in in_split.items()}
    permitted = {external_id: frozenset(chunks[pk]) for pk, external_id in in_split.items()}
    return gold, permitted, elsewhere


def _gold_of(
    task_pks: Iterable[int], *, task_set: TaskSet | None = None, split: str | None = None
) -> dict[int, _TaskGold]:
    """Return the key-element and guidance-item ids of each task, in task-file order."""
    pks = list(task_pks)
    elements: dict[int, list[str]] = {pk: [] for pk in pks}
    items: dict[int, list[str]] = {pk: [] for pk in pks}
    if task_set is not None:
        element_rows = KeyElement.objects.filter(task__task_set=task_set, task__split=split)
        item_rows = GuidanceItem.objects.filter(task__task_set=task_set, task__split=split)
    else:
        element_rows = KeyElement.objects.filter(task_id__in=pks)
        item_rows = GuidanceItem.objects.filter(task_id__in=pks)
    for task_pk, element_id in element_rows.order_by("pk").values_list("task_id", "element_id"):
        elements[task_pk].append(element_id)
    for task_pk, item_id in item_rows.order_by("pk").values_list("task_id", "item_id"):
        items[task_pk].append(item_id)
    return {pk: _TaskGold(pk, tuple(elements[pk]), tuple(items[pk])) for pk in pks}


def _jobs(records: list[OutputRecord], gold: dict[str, _TaskGold]) -> list[SegmentJob]:
    return [
        (
            record.text,
            gold[record.task_id].key_element_ids,
            gold[record.task_id].guidance_item_ids,
        )
        for record in records
    ]


def _drop(pending: deque[tuple[list[OutputRecord], PendingUnits]]) -> None:
    for _records, units in pending:
        units.cancel()
    pending.clear()


def _write_batch(
    run: Run,
    records: list[OutputRecord],
    unit_rows: list[list[UnitRow]],
    gold: dict[str, _TaskGold],
    totals: _Totals,
) -> None:
    pks = _outputs_insert(run, [_output_fields(record, gold) for record in records])
    trajectories = [
        Trajectory(output_id=pk, record=record.trajectory)
        for pk, record in zip(pks, records, strict=True)
        if record.trajectory is not None
    ]
    Trajectory.objects.bulk_create(trajectories, batch_size=OUTPUT_BATCH)
    units = units_insert(output_pks=pks, rows=unit_rows)
    totals.outputs += len(records)
    totals.failed += sum(record.failed for record in records)
    totals.units += units
    totals.trajectories += len(trajectories)
    totals.labelled += sum(record.label is not None for record in records)
    for record in records:
        if record.cost_usd is None:
            totals.cost_unknown += 1
        else:
            totals.cost += record.cost_usd


def _output_fields(record: OutputRecord, gold: dict[str, _TaskGold]) -> dict[str, Any]:
    """Return the stored fields of an imported output (the columns of OUTPUT_FIELDS)."""
    return {
        "task_id": gold[record.task_id].pk,
        "repeat_index": record.repeat,
        "status": (OutputStatus.FAILED if record.failed else OutputStatus.SUCCEEDED).value,
        "text": record.text,
        "cited_chunk_ids": list(record.cited_chunk_ids),
        "prompt_tokens": record.prompt_tokens,
        "completion_tokens": record.completion_tokens,
        "cost_usd": record.cost_usd,
        "latency_ms": record.latency_ms,
        "generation_seconds": record.generation_seconds,
        "attempts": 1,
        "success": record.success,
        "label": record.label,
        "label_error": None,
        "error": record.error,
    }


def _outputs_insert(run: Run, outputs: list[dict[str, Any]]) -> list[int]:
    """Write the outputs of ``run``; return their primary keys in order.

    PostgreSQL: ids drawn from the table's sequence, then one COPY; elsewhere a bulk insert
    that returns the keys (SQLite ≥ 3.35).
    """
    if connection.vendor == "postgresql":
        pks = ids_reserve(model=Output, count=len(outputs))
        now = timezone.now()
        rows_insert(
            model=Output,
            columns=("id", "run_id", *OUTPUT_FIELDS, "created_at"),
            rows=(
                (
                    pk,
                    run.pk,
                    *(
                        json.dumps(fields[f]) if f in JSON_FIELDS else fields[f]
                        for f in OUTPUT_FIELDS
                    ),
                    now,
                )
                for pk, fields in zip(pks, outputs, strict=True)
            ),
        )
        return pks
    created = Output.objects.bulk_create(
        [Output(run=run, **fields) for fields in outputs], batch_size=OUTPUT_BATCH
    )
    if created and created[0].pk is None:
        raise RuntimeError(
            "the database did not return primary keys from a bulk insert; output import "
            "needs PostgreSQL or SQLite 3.35 or later"
        )
    return [output.pk for output in created]


def run_sources_payload(configuration: Configuration, task_set: TaskSet) -> dict[str, Any]:
    """Return what a run's audit entries record of the σ and task set it rests on."""
    return {
        "configuration": {
            "name": configuration.name,
            "version": configuration.version,
            "sha256": configuration.sha256,
        },
        "task_set": {
            "name": task_set.name,
            "version": task_set.version,
            "manifest_sha256": task_set.manifest_sha256,
        },
    }
