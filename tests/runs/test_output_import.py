"""Importing outputs made elsewhere: the line-numbered reader and the all-or-nothing service."""

from __future__ import annotations

import hashlib
import io
import json
import time
import tracemalloc
from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from audit.models import AuditEntry
from charters.models import Stage, UseCase
from charters.services.task_sets import task_set_import
from enterpriseval.errors import ServiceError
from runs.models import Output, Run, RunMode, RunStatus, Trajectory, Unit
from runs.output_import import OutputFileReader
from runs.segment import build_units
from runs.services import outputs as outputs_module
from runs.services.outputs import output_import

# A small catalogue for the pure reader: two tasks of the split, one task elsewhere.
TASKS = {"t1": frozenset({"c1", "c2"}), "t2": frozenset({"c3"})}
ELSEWHERE = {"d1": "dev"}
TRAJECTORY = {
    "tool_use": [{"at": 1, "summary": "Fetched the spreads", "tool": "spreads.get"}],
    "final_outcome": [{"at": 2, "summary": "Draft accepted"}],
}


def jsonl(*objects) -> bytes:
    return b"".join(
        (o if isinstance(o, bytes) else json.dumps(o).encode()) + b"\n" for o in objects
    )


def read(data: bytes, *, repeats: int = 2, **kwargs):
    reader = OutputFileReader(
        io.BytesIO(data), tasks=TASKS, repeats=repeats, elsewhere=ELSEWHERE, **kwargs
    )
    records = list(reader)
    return records, reader.report()


def line_fields(report) -> list[tuple[int, str]]:
    return [(error.line, error.field) for error in report.errors]


# The reader


def test_a_good_file_yields_every_output_with_its_fields():
    records, report = read(
        jsonl(
            {
                "task_id": "t1",
                "text": "Revenue was $203.9 million [c1]. Leverage was 2.4x [c2, c1].",
                "prompt_tokens": 812,
                "completion_tokens": 64,
                "cost_usd": 0.0123456,
                "latency_ms": 1450,
                "generation_seconds": 1.45,
                "success": True,
                "trajectory": TRAJECTORY,
            },
            {"task_id": "t1", "repeat": 1, "text": "Cash [c2].", "cited_chunk_ids": ["c1"]},
            {"task_id": "t2", "repeat": 0, "error": "timeout after 60 s", "cost_usd": None},
        )
    )
    assert report.ok and report.output_count == 3 and report.failed_count == 1
    first, second, third = records
    assert (first.line, first.task_id, first.repeat) == (1, "t1", 0)
    assert first.cited_chunk_ids == ("c1", "c2")  # from the inline citations, in order
    assert (first.prompt_tokens, first.completion_tokens, first.latency_ms) == (812, 64, 1450)
    assert first.cost_usd == Decimal("0.012346")  # six decimal places, half to even
    assert first.generation_seconds == 1.45 and first.success is True
    assert first.trajectory == TRAJECTORY and not first.failed
    assert second.repeat == 1 and second.cited_chunk_ids == ("c1",)  # the explicit list wins
    assert third.failed and third.text == ""
    assert third.error == "timeout after 60 s" and third.cost_usd is None


def test_the_report_hashes_the_bytes_as_uploaded():
    data = jsonl({"task_id": "t1", "text": "Cash [c1]."}) + b"\n  \n"
    _records, report = read(data)
    assert report.sha256 == hashlib.sha256(data).hexdigest()


def test_a_file_with_several_bad_lines_reports_each_line_and_field():
    data = jsonl(
        {"task_id": "t1", "text": "Fine [c1]."},
        {"task_id": "nope", "repeat": 1, "text": "x"},
        {"task_id": "d1", "repeat": 2, "text": "x"},
        {"task_id": "t1", "text": "Again."},
        {"task_id": "t2", "repeat": 30, "text": "x"},
        {"task_id": "t2", "repeat": -1, "text": "x"},
        {"task_id": "t2", "repeat": "1", "text": "x"},
        {"task_id": "t2", "repeat": 8, "text": "Cites [c9]."},
        {"task_id": "t2", "repeat": 9, "text": "x", "cited_chunk_ids": ["c3", "c1"]},
        {"task_id": "t2", "repeat": 10, "text": "x", "cited_chunk_ids": "c3"},
        {"task_id": "t2", "repeat": 11, "text": "x", "prompt_tokens": "812"},
        {"task_id": "t2", "repeat": 12, "text": "x", "cost_usd": -0.1},
        b"{not json",
        b"[1, 2]",
        {"task_id": "t2", "repeat": 15, "text": "x", "notes": "?"},
        {"task_id": "t2", "repeat": 16, "text": "   "},
        {"task_id": "t2", "repeat": 17, "error": "boom", "success": True},
        {"task_id": "t2", "repeat": 18, "text": "x", "trajectory": {"planing": []}},
        {"task_id": "t2", "repeat": 19, "text": "nul \u0000 here"},
        {"task_id": "t2", "repeat": 20, "error": ""},
        {"repeat": 21, "text": "x"},
        {"task_id": "t2", "repeat": 22, "text": "x", "success": "yes"},
        {"task_id": "t2", "repeat": 23, "text": "x", "cited_chunk_ids": ["c3", "c3"]},
    )
    records, report = read(data, repeats=30)
    assert line_fields(report) == [
        (2, "task_id"),
        (3, "task_id"),
        (4, "task_id"),
        (5, "repeat"),
        (6, "repeat"),
        (7, "repeat"),
        (8, "text"),
        (9, "cited_chunk_ids[1]"),
        (10, "cited_chunk_ids"),
        (11, "prompt_tokens"),
        (12, "cost_usd"),
        (13, "line"),
        (14, "line"),
        (15, "notes"),
        (16, "text"),
        (17, "success"),
        (18, "trajectory.planing"),
        (18, "trajectory"),
        (19, "text"),
        (20, "error"),
        (21, "task_id"),
        (22, "success"),
        (23, "cited_chunk_ids[1]"),
    ]
    assert report.bad_line_count == 22 and report.error_count == 23
    messages = {(e.line, e.field): e.message for e in report.errors}
    assert 'unknown task id "nope"' in messages[(2, "task_id")]
    assert "it is a task of split dev" in messages[(3, "task_id")]
    assert "duplicate output: line 1" in messages[(4, "task_id")]
    assert "K = 30 repeat(s), numbered 0–29" in messages[(5, "repeat")]
    assert 'cites chunk "c9"' in messages[(8, "text")]
    assert "permitted: c3" in messages[(8, "text")]
    assert (
        'chunk "c1" is not among the permitted sources of task "t2"'
        in messages[(9, "cited_chunk_ids[1]")]
    )
    assert "NUL" in messages[(19, "text")]
    assert 'duplicate chunk id "c3"' in messages[(23, "cited_chunk_ids[1]")]
    assert [r.line for r in records] == [1]


def test_an_empty_file_is_an_error_about_the_whole_file():
    _records, report = read(b"\n \n")
    assert line_fields(report) == [(0, "file")]


def test_blank_lines_keep_their_numbers_in_errors():
    _records, report = read(b"\n\n" + jsonl({"task_id": "zz", "text": "x"}))
    assert line_fields(report) == [(3, "task_id")]


def test_has_errors_turns_true_at_the_first_bad_line():
    reader = OutputFileReader(
        io.BytesIO(jsonl({"task_id": "t1", "text": "A."}, {"task_id": "x", "text": "B."})),
        tasks=TASKS,
        repeats=1,
    )
    seen = []
    for record in reader:
        seen.append((record.line, reader.has_errors))
    assert seen == [(1, False)]
    assert reader.has_errors


def test_only_the_first_errors_by_line_are_kept_but_all_are_counted():
    data = jsonl(*({"task_id": f"x{n}", "text": "x"} for n in range(30)))
    _records, report = read(data, max_errors=5)
    assert [e.line for e in report.errors] == [1, 2, 3, 4, 5]
    assert report.error_count == 30


@pytest.mark.parametrize("repeats", [0, -1, True, 1.5])
def test_the_reader_refuses_a_repeat_count_below_one(repeats):
    with pytest.raises(ValueError, match="repeats"):
        OutputFileReader(io.BytesIO(b""), tasks=TASKS, repeats=repeats)


def test_the_reader_yields_each_output_before_it_reads_the_next_line():
    class Recording(io.BytesIO):
        lines_read = 0

        def readline(self, *args):
            line = super().readline(*args)
            if line:
                Recording.lines_read += 1
            return line

    data = jsonl(*({"task_id": "t1", "repeat": n, "text": "Cash [c1]."} for n in range(5)))
    reader = OutputFileReader(Recording(data), tasks=TASKS, repeats=5)
    assert [(record.line, Recording.lines_read) for record in reader] == [
        (1, 1),
        (2, 2),
        (3, 3),
        (4, 4),
        (5, 5),
    ]


@pytest.mark.slow
def test_the_reader_streams_twenty_thousand_lines_in_bounded_memory():
    tasks = {f"t{n}": frozenset({"c1"}) for n in range(5000)}
    line = '{"task_id": "t%d", "repeat": %d, "text": "Cash was $13.0 million [c1]."}\n'
    data = "".join(line % (n % 5000, n // 5000) for n in range(20_000)).encode()
    stream = io.BytesIO(data)
    tracemalloc.start()
    try:
        reader = OutputFileReader(stream, tasks=tasks, repeats=4)
        count = sum(1 for _ in reader)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 20_000 and reader.report().ok
    # The file is ~1.4 MB and 20,000 records would take ~20 MB; the reader keeps one line
    # and 4 bytes per (task, repeat) slot: 80 kB here.
    assert len(data) > 1_300_000
    assert peak < 1_000_000, peak


# The service


def output_line(task, repeat: int = 0, **extra) -> dict:
    chunks = [chunk.chunk_id for chunk in task.source_chunks.all()]
    text = (
        f"Kestrel Logistics Group Ltd. reported revenue of $412.3 million, up 6.1% y/y "
        f"[{chunks[0]}]. Net leverage was 2.4x (covenant: 3.5x) [{chunks[0]}, {chunks[1]}]."
    )
    return {"task_id": task.external_id, "repeat": repeat, "text": text, **extra}


def import_file(world, data: bytes, *, actor=None, repeats: int = 2, split: str = "graded"):
    return output_import(
        actor=actor or world.model_owner,
        use_case=world.use_case,
        configuration=world.configuration,
        task_set=world.task_set,
        split=split,
        repeats=repeats,
        fileobj=io.BytesIO(data),
        filename="/tmp/gemini-outputs.jsonl",
    )


def test_a_good_import_stores_a_completed_run_with_outputs_units_and_trajectories(runs_world):
    tasks = runs_world.tasks("graded")
    first, second = tasks[0], tasks[1]
    data = jsonl(
        output_line(first, 0, cost_usd=0.25, trajectory=TRAJECTORY),
        output_line(first, 1, cost_usd=0.5),
        output_line(second, 0, error="rate limited", text=""),
    )
    run = import_file(runs_world, data)

    assert (run.mode, run.status) == (RunMode.IMPORTED, RunStatus.COMPLETED)
    assert (run.split, run.repeats) == ("graded", 2)
    assert run.items_total == 65 * 2
    assert (run.items_done, run.items_failed) == (3, 1)
    assert run.cost_usd == Decimal("0.75") and run.cost_unknown_items == 1
    assert run.source_filename == "gemini-outputs.jsonl"
    assert run.source_sha256 == hashlib.sha256(data).hexdigest()
    assert run.started_at is not None and run.finished_at >= run.started_at

    outputs = list(Output.objects.filter(run=run).order_by("pk"))
    assert [(o.task_id, o.repeat_index, o.status) for o in outputs] == [
        (first.pk, 0, "succeeded"),
        (first.pk, 1, "succeeded"),
        (second.pk, 0, "failed"),
    ]
    chunk_ids = [chunk.chunk_id for chunk in first.source_chunks.all()]
    assert outputs[0].cited_chunk_ids == chunk_ids[:2]
    # First task: 2 sentences + 3 cited chunks + 4 key elements + 3 guidance items = 12 units;
    # the failed output of the second task has its 4 key-element and 3 guidance units only.
    assert first.key_elements.count() == 4 and first.guidance_items.count() == 3
    assert [Unit.objects.filter(output=o).count() for o in outputs] == [12, 12, 7]
    assert sorted(Unit.objects.filter(output=outputs[0]).values_list("key", flat=True)) == sorted(
        [
            "s1",
            "s2",
            f"c1:{chunk_ids[0]}",
            f"c2:{chunk_ids[0]}",
            f"c2:{chunk_ids[1]}",
            *(f"k:{e.element_id}" for e in first.key_elements.all()),
            *(f"g:{g.item_id}" for g in first.guidance_items.all()),
        ]
    )
    assert Trajectory.objects.get().output_id == outputs[0].pk


def test_the_import_is_audited_and_moves_the_use_case_to_the_run_stage(runs_world):
    data = jsonl(output_line(runs_world.tasks()[0]))
    run = import_file(runs_world, data)
    entry = AuditEntry.objects.get(action="run.import")
    assert entry.actor_username == "model_owner"
    assert entry.target_id == str(run.pk)
    payload = entry.payload
    assert payload["sha256"] == hashlib.sha256(data).hexdigest()
    assert payload["configuration"]["sha256"] == runs_world.configuration.sha256
    assert payload["task_set"]["manifest_sha256"] == runs_world.task_set.manifest_sha256
    assert (payload["outputs"], payload["failed"], payload["missing"]) == (1, 0, 129)
    assert payload["units"] == Unit.objects.count()
    assert UseCase.objects.get().stage == Stage.RUN


def test_a_file_with_bad_lines_imports_nothing_and_lists_each_line(runs_world):
    task = runs_world.tasks("graded")[0]
    dev_task = runs_world.tasks("dev")[0]
    good = [output_line(t) for t in runs_world.tasks("graded")[1:]]
    data = jsonl(
        output_line(task),
        *good,
        output_line(task),
        output_line(dev_task),
        output_line(task, 2),
        {**output_line(task, 1), "text": "Cash [G9-nowhere]."},
        {**output_line(runs_world.tasks("graded")[1], 1), "latency_ms": 1.5},
    )
    with pytest.raises(ServiceError) as raised:
        import_file(runs_world, data)
    error = raised.value
    assert error.field == "file"
    assert "5 error(s) on 5 line(s); nothing was imported" in error.message
    assert [(d["line"], d["field"]) for d in error.details] == [
        (66, "task_id"),
        (67, "task_id"),
        (68, "repeat"),
        (69, "text"),
        (70, "latency_ms"),
    ]
    assert "split dev" in error.details[1]["message"]
    assert "G9-nowhere" in error.details[3]["message"]
    assert (Run.objects.count(), Output.objects.count(), Unit.objects.count()) == (0, 0, 0)
    assert not AuditEntry.objects.filter(action="run.import").exists()
    assert UseCase.objects.get().stage == Stage.GOLD_SET


def test_bad_lines_after_a_full_batch_still_leave_nothing_behind(runs_world, monkeypatch):
    monkeypatch.setattr("runs.services.outputs.OUTPUT_BATCH", 10)
    tasks = runs_world.tasks()
    data = jsonl(*(output_line(t) for t in tasks[:25]), {"task_id": "missing", "text": "x"})
    with pytest.raises(ServiceError):
        import_file(runs_world, data)
    assert (Run.objects.count(), Output.objects.count(), Unit.objects.count()) == (0, 0, 0)


def test_an_error_list_longer_than_the_cap_ends_with_a_count_of_the_rest(runs_world, monkeypatch):
    monkeypatch.setattr("runs.services.outputs.MAX_LISTED_ERRORS", 3)
    data = jsonl(*({"task_id": f"x{n}", "text": "x"} for n in range(7)))
    with pytest.raises(ServiceError) as raised:
        import_file(runs_world, data)
    assert [d["line"] for d in raised.value.details] == [1, 2, 3, None]
    assert raised.value.details[-1]["message"] == "and 4 more error(s) after line 3"


def test_a_stream_that_cannot_seek_is_read_once(runs_world):
    class OneWay(io.RawIOBase):
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

    stream = io.BufferedReader(OneWay(jsonl(*(output_line(t) for t in runs_world.tasks()[:3]))))
    run = output_import(
        actor=runs_world.owner,
        use_case=runs_world.use_case,
        configuration=runs_world.configuration,
        task_set=runs_world.task_set,
        split="graded",
        repeats=1,
        fileobj=stream,
        filename="outputs.jsonl",
    )
    assert run.items_done == 3


@pytest.mark.parametrize("persona", ["grader", "adjudicator", "reviewer", "outsider"])
def test_only_charter_and_model_owners_import(runs_world, persona):
    with pytest.raises(PermissionDenied):
        import_file(
            runs_world,
            jsonl(output_line(runs_world.tasks()[0])),
            actor=runs_world.by_name(persona),
        )
    assert Run.objects.count() == 0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"repeats": 0}, "repeats"),
        ({"repeats": 101}, "repeats"),
        ({"split": "test"}, "split"),
    ],
)
def test_the_run_inputs_are_checked_before_the_file(runs_world, kwargs, field):
    with pytest.raises(ServiceError) as raised:
        import_file(runs_world, jsonl(output_line(runs_world.tasks()[0])), **kwargs)
    assert raised.value.field == field


def test_a_configuration_of_another_use_case_is_refused(runs_world):
    from charters.services.configurations import configuration_upload
    from charters.services.use_cases import use_case_create

    other = use_case_create(
        actor=runs_world.owner,
        key="OTHER",
        name="Other",
        business_outcome="x",
        value_hypothesis="y",
        autonomy=1,
        consequence=1,
    )
    foreign = configuration_upload(
        actor=runs_world.owner,
        use_case=other,
        name="foreign",
        content=runs_world.configuration.canonical_json,
        filename="sigma.json",
    )
    with pytest.raises(ServiceError) as raised:
        output_import(
            actor=runs_world.owner,
            use_case=runs_world.use_case,
            configuration=foreign,
            task_set=runs_world.task_set,
            split="graded",
            repeats=1,
            fileobj=io.BytesIO(jsonl(output_line(runs_world.tasks()[0]))),
            filename="o.jsonl",
        )
    assert raised.value.field == "configuration"


def expected_units(output) -> list[tuple]:
    """The units of ``output`` split here, in this process (the reference)."""
    return sorted(
        (u.kind, u.key, u.position, u.text, u.ref_id, u.sentence_position)
        for u in build_units(
            output.text,
            key_element_ids=list(output.task.key_elements.values_list("element_id", flat=True)),
            guidance_item_ids=list(output.task.guidance_items.values_list("item_id", flat=True)),
        )
    )


def stored_units(output) -> list[tuple]:
    return sorted(
        Unit.objects.filter(output=output).values_list(
            "kind", "key", "position", "text", "ref_id", "sentence_position"
        )
    )


@pytest.mark.parametrize("processes", [0, 2])
def test_units_split_in_worker_processes_are_those_split_in_this_one(
    runs_world, settings, monkeypatch, processes
):
    settings.SEGMENT_PROCESSES = processes
    monkeypatch.setattr("runs.segment_pool.DEFAULT_MIN_CHARS", 0)  # every batch to the pool
    monkeypatch.setattr("runs.services.outputs.OUTPUT_BATCH", 7)
    monkeypatch.setattr("runs.services.outputs.PENDING_BATCHES", 2)
    tasks = runs_world.tasks()
    lines = [output_line(t, r) for t in tasks[:20] for r in range(2)]
    for n, (task, line) in enumerate(zip(tasks[:20], lines[::2], strict=True)):
        if n % 3 == 0:  # some longer outputs, with lists and an abbreviation pysbd splits at
            chunk = task.source_chunks.all()[0].chunk_id
            line["text"] += f"\n\n- Item {n} approx. 3.2x [{chunk}].\n- Second item."
    lines[3] = {"task_id": tasks[1].external_id, "repeat": 1, "error": "timeout", "text": ""}
    run = import_file(runs_world, jsonl(*lines))
    outputs = list(Output.objects.filter(run=run).select_related("task").order_by("pk"))
    assert [(o.task.external_id, o.repeat_index) for o in outputs] == [
        (line["task_id"], line["repeat"]) for line in lines
    ]
    for output in outputs:
        assert stored_units(output) == expected_units(output), output
    assert run.items_done == 40 and Unit.objects.count() == sum(
        len(expected_units(o)) for o in outputs
    )


def test_a_bad_last_line_after_batches_were_written_leaves_nothing(
    runs_world, settings, monkeypatch
):
    settings.SEGMENT_PROCESSES = 2
    monkeypatch.setattr("runs.segment_pool.DEFAULT_MIN_CHARS", 0)
    monkeypatch.setattr("runs.services.outputs.OUTPUT_BATCH", 5)
    monkeypatch.setattr("runs.services.outputs.PENDING_BATCHES", 0)  # write every batch at once
    written: list[int] = []
    write_batch = outputs_module._write_batch

    def recording(run, records, *args):
        write_batch(run, records, *args)
        written.append(Unit.objects.filter(output__run=run).count())

    monkeypatch.setattr("runs.services.outputs._write_batch", recording)
    tasks = runs_world.tasks()
    data = jsonl(
        *(output_line(t) for t in tasks[:30]), {"task_id": tasks[0].external_id, "repeat": 1}
    )
    with pytest.raises(ServiceError) as raised:
        import_file(runs_world, data)
    assert len(written) == 6 and written[-1] > 0  # units were written, then rolled back
    assert [(d["line"], d["field"]) for d in raised.value.details] == [(31, "text")]
    assert (Run.objects.count(), Output.objects.count(), Unit.objects.count()) == (0, 0, 0)
    assert not AuditEntry.objects.filter(action="run.import").exists()


def test_outputs_and_units_are_written_by_copy_on_postgresql_and_in_bulk_on_sqlite(
    runs_world, monkeypatch
):
    monkeypatch.setattr("runs.services.outputs.OUTPUT_BATCH", 4)
    data = jsonl(*(output_line(t) for t in runs_world.tasks()[:10]))
    with CaptureQueriesContext(connection) as queries:
        run = import_file(runs_world, data)
    unit_writes = [q["sql"] for q in queries if '"runs_unit"' in q["sql"]]
    output_writes = [q["sql"] for q in queries if q["sql"].startswith('COPY "runs_output"')]
    if connection.vendor == "postgresql":
        assert len(output_writes) == 3  # outputs too, with ids drawn from their sequence
        assert all(sql.startswith('COPY "runs_unit"') for sql in unit_writes), unit_writes
    else:
        # Django records an executemany as "N times: INSERT …": one statement, N rows.
        assert all(' times: INSERT INTO "runs_unit"' in sql for sql in unit_writes), unit_writes
    assert len(unit_writes) == 3  # batches of 4, 4 and 2 outputs
    outputs = Output.objects.filter(run=run).select_related("task")
    assert Unit.objects.filter(output__run=run).count() == sum(
        len(expected_units(o)) for o in outputs
    )


def test_imported_units_are_refused_any_change_by_the_database(runs_world):
    run = import_file(runs_world, jsonl(output_line(runs_world.tasks()[0])))
    unit = Unit.objects.filter(output__run=run).first()
    with pytest.raises(DatabaseError), transaction.atomic():
        Unit.objects.filter(pk=unit.pk).update(text="rewritten")
    with pytest.raises(DatabaseError), transaction.atomic():
        Unit.objects.filter(pk=unit.pk)._raw_delete(connection.alias)
    assert Unit.objects.get(pk=unit.pk).text == unit.text


@pytest.mark.slow
def test_twenty_thousand_outputs_import_in_batches_in_bounded_memory(runs_world):
    task_file = jsonl(
        *(
            {
                "id": f"T{n}",
                "split": "graded",
                "input": f"Draft section {n}.",
                "sources": [
                    {"id": "c1", "text": "Cash was $13.0 million."},
                    {"id": "c2", "text": "x"},
                ],
                "key_elements": [{"id": "k1", "text": "cash"}, {"id": "k2", "text": "debt"}],
                "guidance": [{"id": "g1", "text": "Cite every number."}],
            }
            for n in range(5000)
        )
    )
    task_set = task_set_import(
        actor=runs_world.owner,
        use_case=runs_world.use_case,
        name="large",
        fileobj=io.BytesIO(task_file),
        filename="large.jsonl",
    )
    line = (
        '{"task_id": "T%d", "repeat": %d, "text": "Cash was $13.0 million [c1].", '
        '"cost_usd": 0.001}'
    )
    data = "\n".join(line % (n % 5000, n // 5000) for n in range(20_000)).encode() + b"\n"
    started = time.perf_counter()
    tracemalloc.start()
    try:
        run = output_import(
            actor=runs_world.model_owner,
            use_case=runs_world.use_case,
            configuration=runs_world.configuration,
            task_set=task_set,
            split="graded",
            repeats=4,
            fileobj=io.BytesIO(data),
            filename="large-outputs.jsonl",
        )
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    elapsed = time.perf_counter() - started
    assert (run.items_total, run.items_done, run.items_failed) == (20_000, 20_000, 0)
    # Each output: 1 sentence + 1 cited chunk + 2 key elements + 1 guidance item = 5 units.
    assert Unit.objects.filter(output__run=run).count() == 100_000
    assert run.cost_usd == Decimal("20.000000")
    # Holding 20,000 outputs and 100,000 units as model instances would take well over
    # 100 MB; the import holds one batch of 500 outputs and their units.
    assert peak < 40_000_000, f"peak {peak / 1e6:.1f} MB in {elapsed:.1f} s"


# --- labels (SPEC §4.1) ----------------------------------------------------------------------

LABEL_SET = ("compliant", "partially compliant", "non-compliant")


def test_an_output_label_is_kept_and_null_or_absent_is_unknown():
    records, report = read(
        jsonl(
            {"task_id": "t1", "text": "x", "label": "compliant"},
            {"task_id": "t2", "text": "y", "label": None},
            {"task_id": "t1", "repeat": 1, "text": "z"},
        ),
        label_set=LABEL_SET,
    )
    assert report.ok
    assert [r.label for r in records] == ["compliant", None, None]


def test_a_label_outside_the_set_or_without_one_names_the_line_and_field():
    _records, report = read(
        jsonl({"task_id": "t1", "text": "x"}, {"task_id": "t2", "text": "y", "label": "ok"}),
        label_set=LABEL_SET,
    )
    assert line_fields(report) == [(2, "label")]
    assert report.errors[0].message.startswith('"ok" is not in the task set\'s label set')
    _records, report = read(jsonl({"task_id": "t1", "text": "x", "label": "compliant"}))
    assert line_fields(report) == [(1, "label")]
    assert "declares no label set" in report.errors[0].message
    _records, report = read(jsonl({"task_id": "t1", "text": "x", "label": 3}), label_set=LABEL_SET)
    assert line_fields(report) == [(1, "label")]
