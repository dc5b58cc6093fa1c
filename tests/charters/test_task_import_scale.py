"""Task-set import memory stays bounded as the file grows (bench/task_import_memory.py).

The bound, 40 MiB of Python allocations (tracemalloc peak) during an import:
- what is held at once is one batch of 2,000 tasks with their 18,000 children as records
  and as Django model instances, plus the SQL of one batched INSERT: about 12 MiB;
- plus the reader's cross-line index, about 45 bytes a task, 75 while it is sorted at the end
  of the checking read: 7 MiB at 100,000 tasks, and the writing read keeps no index;
- measured on this machine (``python -m bench.task_import_memory``): 11.9 MiB at 20,000
  lines and 12.0 MiB at 100,000 on SQLite, 13.5 and 13.6 MiB on PostgreSQL; the bound leaves
  room for driver buffers, other Python versions and a larger index at a few 100,000 tasks.
The 100,000-line file is about 149 MiB, so reading it whole — let alone parsing it whole
— would break the bound several times over.
"""

from __future__ import annotations

import tracemalloc

import pytest

from bench.task_import_memory import write_task_file
from charters.models import GuidanceItem, KeyElement, SourceChunk, Task
from charters.services.task_sets import task_set_import
from charters.task_import import check_task_file

MIB = 2**20
PEAK_BOUND = 40 * MIB
INDEX_BYTES_PER_TASK = 120  # ~75 measured at the peak (the final sort); slack for growth


def traced_peak(function) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = function()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def import_file(personas, path, name):
    with path.open("rb") as fileobj:
        return task_set_import(
            actor=personas.owner,
            use_case=personas.use_case,
            name=name,
            fileobj=fileobj,
            filename=path.name,
        )


def test_checking_a_file_five_times_larger_barely_raises_the_peak(tmp_path):
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    write_task_file(small, 2_000)
    large_size = write_task_file(large, 10_000)

    def check(path):
        with path.open("rb") as fileobj:
            return check_task_file(fileobj)

    small_report, small_peak = traced_peak(lambda: check(small))
    large_report, large_peak = traced_peak(lambda: check(large))
    assert small_report.ok and large_report.ok
    assert large_report.task_count == 10_000
    assert large_peak - small_peak < 8_000 * INDEX_BYTES_PER_TASK
    assert large_peak < large_size / 10


def test_two_thousand_lines_import_under_the_memory_bound(personas, tmp_path):
    path = tmp_path / "tasks.jsonl"
    write_task_file(path, 2_000)
    task_set, peak = traced_peak(lambda: import_file(personas, path, "fast"))
    assert task_set.line_count == 2_000
    assert Task.objects.filter(task_set=task_set).count() == 2_000
    assert peak < PEAK_BOUND


@pytest.mark.slow
def test_a_hundred_thousand_lines_import_under_the_memory_bound(personas, tmp_path):
    path = tmp_path / "tasks.jsonl"
    size = write_task_file(path, 100_000)
    task_set, peak = traced_peak(lambda: import_file(personas, path, "large"))
    assert task_set.line_count == 100_000
    assert task_set.split_counts == {"dev": 10_000, "graded": 80_000, "stress": 10_000}
    tasks = Task.objects.filter(task_set=task_set)
    assert tasks.count() == 100_000
    assert SourceChunk.objects.filter(task__task_set=task_set).count() == 300_000
    assert KeyElement.objects.filter(task__task_set=task_set).count() == 400_000
    assert GuidanceItem.objects.filter(task__task_set=task_set).count() == 200_000
    assert peak < PEAK_BOUND, f"peak {peak / MIB:.1f} MiB"
    assert peak < size / 3
