"""Writes for task sets: importing a JSONL task file as a new, immutable version (SPEC §2)."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import BinaryIO

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max

from audit.services import audit_record
from charters.models import (
    GuidanceItem,
    KeyElement,
    Role,
    SourceChunk,
    Stage,
    Task,
    TaskSet,
    UseCase,
)
from charters.permissions import require_role
from charters.services.use_cases import use_case_advance
from charters.task_import import TaskFileReader, TaskRecord, check_task_file
from enterpriseval.errors import ConflictError, ServiceError
from enterpriseval.jsonl import DEFAULT_MAX_ERRORS
from enterpriseval.limits import UploadKind, upload_stream

IMPORT_ROLES = (Role.CHARTER_OWNER, Role.MODEL_OWNER)
TASK_BATCH = 2000
CHILD_BATCH = 5000
MAX_LISTED_ERRORS = DEFAULT_MAX_ERRORS
NAME_PATTERN = re.compile(r"[-a-zA-Z0-9_]{1,80}")
_SPOOL_CHUNK = 1024 * 1024


@transaction.atomic
def task_set_import(
    *,
    actor: AbstractBaseUser,
    use_case: UseCase,
    name: str,
    fileobj: BinaryIO,
    filename: str,
) -> TaskSet:
    """Import a task file as version n + 1 of the task set ``name``; all or nothing.

    The file is read twice, a line at a time: first to check every line (nothing is
    written if any line is bad: the ServiceError lists each bad line), then to write the
    tasks and their sources, key elements and guidance items in batches.
    """
    require_role(actor, use_case, IMPORT_ROLES)
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ServiceError(
            f"name: {name!r} is not a valid task-set name: 1–80 letters, digits, - or _",
            field="name",
        )
    filename = os.path.basename(filename or "")[:255] or "upload.jsonl"
    fileobj = upload_stream(kind=UploadKind.TASK_SET, fileobj=fileobj, filename=filename)
    with _seekable(fileobj) as stream:
        checked = check_task_file(stream, max_errors=MAX_LISTED_ERRORS)
        if not checked.ok:
            raise ServiceError(checked.refusal(filename), field="file", details=checked.details())
        locked = UseCase.objects.select_for_update().get(pk=use_case.pk)
        latest = TaskSet.objects.filter(use_case=locked, name=name).aggregate(Max("version"))
        task_set = TaskSet.objects.create(
            use_case=locked,
            name=name,
            version=(latest["version__max"] or 0) + 1,
            source_filename=filename,
            manifest_sha256=checked.sha256,
            line_count=checked.task_count,
            split_counts=checked.split_counts,
            label_set=list(checked.label_set) or None,
            created_by=actor,
        )
        stream.seek(0)
        writer = TaskFileReader(stream, max_errors=MAX_LISTED_ERRORS, cross_line_checks=False)
        _write_tasks(task_set, writer)
        written = writer.report()
        if written.sha256 != checked.sha256 or not written.ok:
            raise ConflictError(
                f"{filename}: the file changed while it was being imported; nothing was "
                "imported. Import it again.",
                field="file",
            )
    audit_record(
        actor=actor,
        action="taskset.import",
        target=task_set,
        use_case_id=use_case.pk,
        payload={
            "name": task_set.name,
            "version": task_set.version,
            "filename": filename,
            "manifest_sha256": task_set.manifest_sha256,
            "task_count": task_set.line_count,
            "split_counts": task_set.split_counts,
            **({"label_set": task_set.label_set} if task_set.label_set else {}),
        },
    )
    use_case_advance(
        actor=actor,
        use_case=use_case,
        stage=Stage.GOLD_SET,
        note=f"task set {task_set.name} v{task_set.version} imported",
    )
    return task_set


def _write_tasks(task_set: TaskSet, records: Iterable[TaskRecord]) -> None:
    batch: list[TaskRecord] = []
    for record in records:
        batch.append(record)
        if len(batch) == TASK_BATCH:
            _write_batch(task_set, batch)
            batch = []
    if batch:
        _write_batch(task_set, batch)


def _write_batch(task_set: TaskSet, records: list[TaskRecord]) -> None:
    tasks = Task.objects.bulk_create(
        [
            Task(
                task_set=task_set,
                external_id=record.id,
                split=record.split,
                input=record.input,
                input_sha256=record.input_sha256,
                reference=record.reference,
                expected_abstention=record.expected_abstention,
                gold_label=record.gold_label or None,
                metadata=record.metadata,
                line_number=record.line,
            )
            for record in records
        ],
        batch_size=TASK_BATCH,
    )
    # PostgreSQL and SQLite ≥ 3.35 return the new primary keys from a bulk insert; the
    # children below need them.
    if tasks[0].pk is None:
        raise RuntimeError(
            "the database did not return primary keys from a bulk insert; task import needs "
            "PostgreSQL or SQLite 3.35 or later"
        )
    SourceChunk.objects.bulk_create(
        [
            SourceChunk(task_id=task.pk, chunk_id=s.id, source=s.source, text=s.text)
            for task, record in zip(tasks, records, strict=True)
            for s in record.sources
        ],
        batch_size=CHILD_BATCH,
    )
    KeyElement.objects.bulk_create(
        [
            KeyElement(task_id=task.pk, element_id=k.id, text=k.text)
            for task, record in zip(tasks, records, strict=True)
            for k in record.key_elements
        ],
        batch_size=CHILD_BATCH,
    )
    GuidanceItem.objects.bulk_create(
        [
            GuidanceItem(task_id=task.pk, item_id=g.id, text=g.text, mandatory=g.mandatory)
            for task, record in zip(tasks, records, strict=True)
            for g in record.guidance
        ],
        batch_size=CHILD_BATCH,
    )


@contextmanager
def _seekable(fileobj: BinaryIO) -> Iterator[BinaryIO]:
    """Yield a file that can be read twice: the file itself, or a temporary copy of it."""
    seekable = getattr(fileobj, "seekable", None)
    if seekable is not None and seekable():
        fileobj.seek(0)
        yield fileobj
        return
    with tempfile.TemporaryFile() as copy:
        shutil.copyfileobj(fileobj, copy, _SPOOL_CHUNK)
        copy.seek(0)
        yield copy
