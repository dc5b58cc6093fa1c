"""task_set_import: versions, all-or-nothing, batches, audit, lifecycle and roles."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, transaction

from audit.models import AuditEntry
from bench.task_import_memory import write_task_file
from charters.models import GuidanceItem, KeyElement, SourceChunk, Stage, Task, TaskSet
from charters.services import task_sets as service
from charters.services.task_sets import task_set_import
from enterpriseval.errors import ConflictError, ServiceError


def line(n: int, split: str = "graded", **extra) -> dict:
    return {
        "id": f"t{n}",
        "split": split,
        "input": f"Draft section {n} for borrower {n}.",
        "sources": [
            {"id": f"c{n}a", "text": f"task {n} chunk a", "source": "10-K"},
            {"id": f"c{n}b", "text": f"task {n} chunk b"},
        ],
        "key_elements": [{"id": "k1", "text": f"task {n} element"}],
        "guidance": [
            {"id": "g1", "text": f"task {n} rule"},
            {"id": "g2", "text": "advisory", "mandatory": False},
        ],
        **extra,
    }


def jsonl(*objects) -> bytes:
    return b"".join(
        (o if isinstance(o, bytes) else json.dumps(o).encode()) + b"\n" for o in objects
    )


def import_(personas, data: bytes, *, name: str = "memo-tasks", actor=None) -> TaskSet:
    return task_set_import(
        actor=actor or personas.owner,
        use_case=personas.use_case,
        name=name,
        fileobj=io.BytesIO(data),
        filename="tasks.jsonl",
    )


def test_it_imports_tasks_with_their_children_and_a_manifest(personas):
    data = jsonl(line(1, "dev"), line(2), line(3), line(4, "stress", expected_abstention=True))
    task_set = import_(personas, data)
    assert (task_set.name, task_set.version) == ("memo-tasks", 1)
    assert task_set.source_filename == "tasks.jsonl"
    assert task_set.manifest_sha256 == hashlib.sha256(data).hexdigest()
    assert task_set.line_count == 4
    assert task_set.split_counts == {"dev": 1, "graded": 2, "stress": 1}
    assert task_set.created_by == personas.owner
    tasks = list(Task.objects.filter(task_set=task_set).order_by("line_number"))
    assert [(t.external_id, t.split, t.line_number) for t in tasks] == [
        ("t1", "dev", 1),
        ("t2", "graded", 2),
        ("t3", "graded", 3),
        ("t4", "stress", 4),
    ]
    assert tasks[3].expected_abstention is True
    assert tasks[1].input_sha256 == hashlib.sha256(b"Draft section 2 for borrower 2.").hexdigest()
    chunks = SourceChunk.objects.filter(task=tasks[1]).order_by("chunk_id")
    assert [(c.chunk_id, c.source, c.text) for c in chunks] == [
        ("c2a", "10-K", "task 2 chunk a"),
        ("c2b", "", "task 2 chunk b"),
    ]
    assert list(KeyElement.objects.filter(task=tasks[2]).values_list("text", flat=True)) == [
        "task 3 element"
    ]
    assert list(GuidanceItem.objects.filter(task=tasks[0]).values_list("item_id", "mandatory")) == [
        ("g1", True),
        ("g2", False),
    ]


def test_importing_the_same_name_again_makes_the_next_version(personas):
    first = import_(personas, jsonl(line(1)))
    second = import_(personas, jsonl(line(1), line(2)), actor=personas.model_owner)
    other = import_(personas, jsonl(line(1)), name="other-set")
    assert (first.version, second.version, other.version) == (1, 2, 1)
    assert second.line_count == 2
    assert Task.objects.filter(task_set=first).count() == 1


def test_a_bad_line_writes_nothing_and_every_bad_line_is_listed(personas):
    data = jsonl(line(1, "dev"), line(2, "gold"), b"{not json", line(1), line(5, extra=1))
    with pytest.raises(ServiceError) as caught:
        import_(personas, data)
    error = caught.value
    assert error.field == "file"
    assert error.message.startswith("tasks.jsonl: 5 error(s) on 4 line(s); nothing was imported")
    # Line 4 repeats line 1: its id, and as a graded task, the input of dev task 1.
    assert [(d["line"], d["field"]) for d in error.details] == [
        (2, "split"),
        (3, "line"),
        (4, "id"),
        (4, "input"),
        (5, "extra"),
    ]
    assert error.details[2]["message"] == "duplicate id: line 1 has the same id; ids must be unique"
    assert TaskSet.objects.count() == 0
    assert Task.objects.count() == 0
    assert not AuditEntry.objects.filter(action="taskset.import").exists()
    personas.use_case.refresh_from_db()
    assert personas.use_case.stage == Stage.CHARTER


def test_the_error_list_stops_at_1000_with_an_and_n_more_entry(personas):
    data = jsonl(*[line(n, "nope") for n in range(1, 1251)])
    with pytest.raises(ServiceError) as caught:
        import_(personas, data)
    details = caught.value.details
    assert len(details) == 1001
    assert details[0] == {
        "line": 1,
        "field": "split",
        "message": 'expected one of dev, graded, stress, got "nope"',
    }
    assert details[999]["line"] == 1000
    assert details[-1] == {
        "line": None,
        "field": "file",
        "message": "and 250 more error(s) after line 1000",
    }
    assert "1250 error(s) on 1250 line(s)" in caught.value.message


def test_an_empty_file_is_refused(personas):
    with pytest.raises(ServiceError) as caught:
        import_(personas, b"")
    assert caught.value.details == [
        {
            "line": 0,
            "field": "file",
            "message": "the file holds no tasks: expected one JSON object per line",
        }
    ]


def test_the_import_is_audited_with_name_version_hash_and_counts(personas):
    data = jsonl(line(1, "dev"), line(2), line(3))
    task_set = import_(personas, data, actor=personas.model_owner)
    entry = AuditEntry.objects.get(action="taskset.import")
    assert entry.actor == personas.model_owner
    assert entry.use_case_id == personas.use_case.pk
    assert entry.target_id == str(task_set.pk)
    assert entry.payload == {
        "name": "memo-tasks",
        "version": 1,
        "filename": "tasks.jsonl",
        "manifest_sha256": hashlib.sha256(data).hexdigest(),
        "task_count": 3,
        "split_counts": {"dev": 1, "graded": 2, "stress": 0},
    }


def test_the_import_moves_the_use_case_to_the_gold_set_stage(personas):
    import_(personas, jsonl(line(1)))
    personas.use_case.refresh_from_db()
    assert personas.use_case.stage == Stage.GOLD_SET
    stages = list(personas.use_case.stage_events.values_list("stage", flat=True))
    assert stages[-1] == Stage.GOLD_SET


@pytest.mark.parametrize("persona", ["grader", "adjudicator", "reviewer", "outsider"])
def test_only_charter_and_model_owners_may_import(personas, persona):
    with pytest.raises(PermissionDenied):
        import_(personas, jsonl(line(1)), actor=personas.by_name(persona))
    assert TaskSet.objects.count() == 0


@pytest.mark.parametrize("name", ["", "has space", "x" * 81, "semi;colon", "ünï"])
def test_a_bad_name_is_refused(personas, name):
    with pytest.raises(ServiceError) as caught:
        import_(personas, jsonl(line(1)), name=name)
    assert caught.value.field == "name"


def test_the_stored_filename_is_the_base_name(personas):
    task_set = task_set_import(
        actor=personas.owner,
        use_case=personas.use_case,
        name="set",
        fileobj=io.BytesIO(jsonl(line(1))),
        filename="C:/Users/analyst/../memo tasks.jsonl",
    )
    assert task_set.source_filename == "memo tasks.jsonl"


def test_a_file_that_cannot_seek_is_copied_and_imported(personas):
    class Pipe(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self._inner = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def seekable(self) -> bool:
            return False

        def readinto(self, buffer) -> int:
            chunk = self._inner.read(len(buffer))
            buffer[: len(chunk)] = chunk
            return len(chunk)

    data = jsonl(line(1), line(2))
    task_set = task_set_import(
        actor=personas.owner,
        use_case=personas.use_case,
        name="piped",
        fileobj=io.BufferedReader(Pipe(data)),
        filename="tasks.jsonl",
    )
    assert task_set.line_count == 2
    assert task_set.manifest_sha256 == hashlib.sha256(data).hexdigest()


def test_a_file_that_changes_between_the_check_and_the_write_writes_nothing(personas):
    class Changing(io.BytesIO):
        seeks = 0

        def seek(self, *args):
            self.seeks += 1
            if self.seeks == 2:  # the rewind before the write
                self.write(b'{"id": "t9", "split": "dev", "input": "swapped"}\n')
            return super().seek(*args)

    with pytest.raises(ConflictError, match="the file changed while it was being imported"):
        task_set_import(
            actor=personas.owner,
            use_case=personas.use_case,
            name="set",
            fileobj=Changing(jsonl(line(1), line(2))),
            filename="tasks.jsonl",
        )
    assert TaskSet.objects.count() == 0 and Task.objects.count() == 0


@pytest.mark.parametrize("batch", [1, 3, 7])
def test_children_land_on_their_own_task_across_batches(personas, monkeypatch, batch):
    monkeypatch.setattr(service, "TASK_BATCH", batch)
    monkeypatch.setattr(service, "CHILD_BATCH", 2)
    task_set = import_(personas, jsonl(*[line(n) for n in range(1, 11)]))
    tasks = Task.objects.filter(task_set=task_set)
    assert tasks.count() == 10
    for task in tasks:
        n = task.external_id[1:]
        assert sorted(task.source_chunks.values_list("text", flat=True)) == [
            f"task {n} chunk a",
            f"task {n} chunk b",
        ]
        assert list(task.key_elements.values_list("text", flat=True)) == [f"task {n} element"]
        assert task.guidance_items.get(item_id="g1").text == f"task {n} rule"


def test_imported_tasks_cannot_be_changed_in_the_database(personas):
    task_set = import_(personas, jsonl(line(1)))
    with pytest.raises(DatabaseError), transaction.atomic():
        Task.objects.filter(task_set=task_set).update(split="dev")
    with pytest.raises(DatabaseError), transaction.atomic():
        TaskSet.objects.filter(pk=task_set.pk).update(line_count=99)


def test_two_thousand_lines_import_in_batched_inserts_not_a_query_per_row(
    personas, tmp_path, django_assert_max_num_queries
):
    path = tmp_path / "tasks.jsonl"
    write_task_file(path, 2000)
    # 20,000 rows. PostgreSQL needs one INSERT per table and batch; SQLite splits them further
    # (Django keeps each under 999 parameters): 105 statements here. A query per row would
    # be 20,000.
    with path.open("rb") as fileobj, django_assert_max_num_queries(120):
        task_set = task_set_import(
            actor=personas.owner,
            use_case=personas.use_case,
            name="bulk",
            fileobj=fileobj,
            filename=path.name,
        )
    assert task_set.line_count == 2000
    assert task_set.split_counts == {"dev": 200, "graded": 1600, "stress": 200}
    assert Task.objects.filter(task_set=task_set).count() == 2000
    assert SourceChunk.objects.filter(task__task_set=task_set).count() == 6000
    assert KeyElement.objects.filter(task__task_set=task_set).count() == 8000
    assert GuidanceItem.objects.filter(task__task_set=task_set).count() == 4000
    assert task_set.manifest_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
