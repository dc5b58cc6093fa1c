"""Reads for task sets: versions with their split counts, and pages of tasks."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from charters.models import Task, TaskSet, UseCase
from charters.models.tasks import Split
from charters.validation import TaskSetSupply

TASK_PAGE_SIZE = 50
MAX_TASK_PAGE_SIZE = 500


@dataclass(frozen=True)
class TaskPage:
    tasks: list[Task]
    total: int
    offset: int
    limit: int
    split: str | None

    @property
    def has_next(self) -> bool:
        return self.offset + self.limit < self.total

    @property
    def has_previous(self) -> bool:
        return self.offset > 0

    @property
    def next_offset(self) -> int:
        return self.offset + self.limit

    @property
    def previous_offset(self) -> int:
        return max(self.offset - self.limit, 0)

    @property
    def first_number(self) -> int:
        return self.offset + 1 if self.tasks else 0

    @property
    def last_number(self) -> int:
        return self.offset + len(self.tasks)


def task_set_list(*, use_case: UseCase) -> QuerySet[TaskSet]:
    """Return the task sets of ``use_case``, newest version of each name first.

    The counts per split are stored on the task set at import, so no count query runs.
    """
    return (
        TaskSet.objects.filter(use_case=use_case)
        .select_related("created_by", "use_case")
        .order_by("name", "-version")
    )


def task_set_get(*, use_case: UseCase, name: str, version: int) -> TaskSet | None:
    """Return one version of a task set of ``use_case``, or None."""
    return (
        TaskSet.objects.filter(use_case=use_case, name=name, version=version)
        .select_related("created_by", "use_case")
        .first()
    )


def task_set_tasks(
    *,
    task_set: TaskSet,
    offset: int = 0,
    limit: int = TASK_PAGE_SIZE,
    split: Split | str | None = None,
) -> TaskPage:
    """Return a page of tasks in file order, with their sources, key elements and guidance.

    Four queries whatever the page size: the tasks and one per kind of child. The total
    comes from the counts stored at import.
    """
    offset = max(int(offset), 0)
    limit = min(max(int(limit), 1), MAX_TASK_PAGE_SIZE)
    tasks = Task.objects.filter(task_set=task_set)
    if split:
        split = Split(split).value
        tasks = tasks.filter(split=split)
        total = int(task_set.split_counts.get(split, 0))
    else:
        total = task_set.line_count
    page = list(
        tasks.order_by("line_number").prefetch_related(
            "source_chunks", "key_elements", "guidance_items"
        )[offset : offset + limit]
    )
    return TaskPage(tasks=page, total=total, offset=offset, limit=limit, split=split or None)


def task_set_supply(*, use_case: UseCase) -> list[TaskSetSupply]:
    """Return what each task set of ``use_case`` supplies to the metrics; one query."""
    rows = TaskSet.objects.filter(use_case=use_case).annotate(
        graded=Count("tasks", filter=Q(tasks__split=Split.GRADED)),
        graded_unlabelled=Count(
            "tasks", filter=Q(tasks__split=Split.GRADED, tasks__gold_label__isnull=True)
        ),
        key_elements=Count("tasks__key_elements"),
    )
    return [
        TaskSetSupply(
            name=f"{row.name} v{row.version}",
            label_set=bool(row.label_set),
            gold_labels=bool(row.label_set) and row.graded > 0 and row.graded_unlabelled == 0,
            key_elements=row.key_elements > 0,
        )
        for row in rows
    ]
