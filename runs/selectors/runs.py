"""Reads for runs: who may see them, the list, a run with its progress, outputs, one output."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.db.models import Avg, Count, Q, QuerySet
from django.utils import timezone

from charters.models import Role, UseCase
from charters.permissions import use_case_for, user_roles
from enterpriseval.values import seconds_text
from runs.models import (
    JudgeScore,
    Judging,
    JudgingStatus,
    Output,
    OutputStatus,
    Run,
    RunStatus,
    Unit,
    UnitKind,
)
from runs.segment import Passage, split_sentences
from runs.segment import passages as text_passages
from runs.trajectory import TimelinePhase, trajectory_problems, trajectory_timeline

READ_ROLES = (Role.CHARTER_OWNER, Role.MODEL_OWNER, Role.ADJUDICATOR, Role.REVIEWER)
WRITE_ROLES = (Role.CHARTER_OWNER, Role.MODEL_OWNER)
GRADER_REFUSAL = (
    "Graders do not see runs: a run names its configuration σ and so the model that "
    "produced the outputs being graded (SPEC §1, §5.1)."
)
OUTPUT_PAGE_SIZE = 50
MAX_OUTPUT_PAGE_SIZE = 500
MAX_LISTED_LABEL_ERRORS = 20


def run_access(
    user: AbstractBaseUser | AnonymousUser, key: str, *, write: bool = False
) -> tuple[UseCase, set[str]]:
    """Return the use case whose runs ``user`` may see (``write``: start, import, judge) and roles.

    Outsiders get 404. Anyone holding the grader role gets 403 even with another role: a
    run reveals provenance.
    """
    use_case = use_case_for(user, key)
    held = user_roles(user, use_case)
    if Role.GRADER in held:
        raise PermissionDenied(GRADER_REFUSAL)
    needed = WRITE_ROLES if write else READ_ROLES
    if not held & {str(role) for role in needed}:
        labels = ", ".join(sorted(role.label for role in needed))
        action = "start, import or judge runs" if write else "see runs"
        raise PermissionDenied(f"To {action} of {use_case.key} you need one of: {labels}.")
    return use_case, held


def can_write(roles: set[str]) -> bool:
    """Return whether these roles allow importing (and starting) runs."""
    return Role.GRADER not in roles and bool(roles & {str(role) for role in WRITE_ROLES})


@dataclass(frozen=True)
class RunProgress:
    status: str
    items_total: int
    items_done: int
    items_failed: int
    cost_usd: Decimal
    cost_unknown_items: int
    started_at: datetime | None
    finished_at: datetime | None
    throughput_per_second: float | None
    eta_seconds: float | None

    @property
    def percent(self) -> float:
        if not self.items_total:
            return 0.0
        return round(100 * min(self.items_done / self.items_total, 1.0), 1)

    @property
    def missing(self) -> int:
        """Units of work (task, repeat) with no output, once the run has stopped."""
        return max(self.items_total - self.items_done, 0)


@dataclass(frozen=True)
class RunDetail:
    run: Run
    progress: RunProgress
    outputs_by_status: dict[str, int]
    units_by_kind: dict[str, int]
    trajectories: int
    labelled: int = 0
    label_errors: list[str] = field(default_factory=list)
    label_error_count: int = 0

    @property
    def outputs(self) -> int:
        return sum(self.outputs_by_status.values())


@dataclass(frozen=True)
class OutputPage:
    outputs: list[Output]
    total: int
    offset: int
    limit: int

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
        return self.offset + 1 if self.outputs else 0

    @property
    def last_number(self) -> int:
        return self.offset + len(self.outputs)


@dataclass(frozen=True)
class CitedChunk:
    chunk_id: str
    source: str
    text: str
    permitted: bool


@dataclass(frozen=True)
class OutputView:
    output: Output
    passages: list[Passage]
    units: dict[str, list[Unit]]
    cited_chunks: list[CitedChunk]
    key_elements: dict[str, str]
    guidance_items: dict[str, str]
    timeline: list[TimelinePhase]
    trajectory: dict[str, object] | None

    @property
    def generation_text(self) -> str:
        """The output's generation time, rounded for display."""
        return seconds_text(self.output.generation_seconds)


def run_list(*, use_case: UseCase) -> QuerySet[Run]:
    """Return the runs of ``use_case``, newest first, with σ, task set and creator; one query."""
    return Run.objects.filter(use_case=use_case).select_related(
        "configuration", "task_set", "created_by", "use_case"
    )


def run_get(*, use_case: UseCase, run_id: int) -> Run | None:
    """Return run ``run_id`` of ``use_case``, or None."""
    return (
        Run.objects.filter(use_case=use_case, pk=run_id)
        .select_related("configuration", "task_set", "created_by", "use_case")
        .first()
    )


def run_progress(run: Run, *, now: datetime | None = None) -> RunProgress:
    """Return the run's counters and, while it runs, its throughput and time to finish.

    Throughput = items done / seconds since it started; ETA = items left / throughput. Both
    are None unless the run is running, has started and has done at least one item.
    """
    throughput = eta = None
    if run.status == RunStatus.RUNNING and run.started_at is not None and run.items_done:
        elapsed = ((now or timezone.now()) - run.started_at).total_seconds()
        if elapsed > 0:
            throughput = run.items_done / elapsed
            eta = max(run.items_total - run.items_done, 0) / throughput
    return RunProgress(
        status=run.status,
        items_total=run.items_total,
        items_done=run.items_done,
        items_failed=run.items_failed,
        cost_usd=run.cost_usd,
        cost_unknown_items=run.cost_unknown_items,
        started_at=run.started_at,
        finished_at=run.finished_at,
        throughput_per_second=throughput,
        eta_seconds=eta,
    )


def run_detail(*, run: Run, now: datetime | None = None) -> RunDetail:
    """Return the run with its progress and counts of outputs, units and trajectories.

    Two queries: outputs by status (with trajectories and labels), units by kind; a third
    lists the first label parse errors when there are any.
    """
    counts = Output.objects.filter(run=run).aggregate(
        succeeded=Count("pk", filter=Q(status=OutputStatus.SUCCEEDED)),
        failed=Count("pk", filter=Q(status=OutputStatus.FAILED)),
        trajectories=Count("trajectory"),
        labelled=Count("pk", filter=Q(label__isnull=False)),
        label_errors=Count("pk", filter=~Q(label_error="")),
    )
    # SPEC §4.1: an output whose label could not be parsed is named, never silently dropped.
    label_errors = (
        list(
            Output.objects.filter(run=run)
            .exclude(label_error="")
            .order_by("task__line_number", "repeat_index")
            .values_list("label_error", flat=True)[:MAX_LISTED_LABEL_ERRORS]
        )
        if counts["label_errors"]
        else []
    )
    by_kind = dict.fromkeys(UnitKind.values, 0)
    for kind, count in (
        Unit.objects.filter(output__run=run)
        .order_by()
        .values_list("kind")
        .annotate(count=Count("pk"))
    ):
        by_kind[kind] = count
    return RunDetail(
        run=run,
        progress=run_progress(run, now=now),
        outputs_by_status={
            OutputStatus.SUCCEEDED.value: counts["succeeded"],
            OutputStatus.FAILED.value: counts["failed"],
        },
        units_by_kind=by_kind,
        trajectories=counts["trajectories"],
        labelled=counts["labelled"],
        label_errors=label_errors,
        label_error_count=counts["label_errors"],
    )


def run_outputs(
    *,
    run: Run,
    offset: int = 0,
    limit: int = OUTPUT_PAGE_SIZE,
    status: OutputStatus | str | None = None,
) -> OutputPage:
    """Return a page of the run's outputs by task (file order) then repeat, with unit counts.

    Two queries whatever the page size: the count and the page (task id and per-kind unit
    counts annotated).
    """
    offset = max(int(offset), 0)
    limit = min(max(int(limit), 1), MAX_OUTPUT_PAGE_SIZE)
    outputs = Output.objects.filter(run=run)
    if status:
        outputs = outputs.filter(status=OutputStatus(status).value)
    total = outputs.count()
    page = list(
        outputs.select_related("task")
        .only(
            "pk",
            "run_id",
            "repeat_index",
            "status",
            "text",
            "cited_chunk_ids",
            "prompt_tokens",
            "completion_tokens",
            "cost_usd",
            "latency_ms",
            "generation_seconds",
            "success",
            "error",
            "created_at",
            "task__external_id",
            "task__line_number",
        )
        .annotate(
            sentence_units=Count("units", filter=Q(units__kind=UnitKind.SENTENCE)),
            cited_chunk_units=Count("units", filter=Q(units__kind=UnitKind.CITED_CHUNK)),
        )
        .order_by("task__line_number", "repeat_index")[offset : offset + limit]
    )
    return OutputPage(outputs=page, total=total, offset=offset, limit=limit)


def output_get(*, run: Run, output_id: int) -> OutputView | None:
    """Return one output of ``run`` with its units, cited chunks, gold ids and trajectory.

    Five queries: the output (with task and trajectory), its units, and the task's source
    chunks, key elements and guidance items.
    """
    output = (
        Output.objects.filter(run=run, pk=output_id)
        .select_related("task", "trajectory")
        .prefetch_related("units", "task__source_chunks", "task__key_elements")
        .prefetch_related("task__guidance_items")
        .first()
    )
    if output is None:
        return None
    units: dict[str, list[Unit]] = {kind: [] for kind in UnitKind.values}
    for unit in sorted(output.units.all(), key=lambda u: (u.kind, u.position)):
        units[unit.kind].append(unit)
    chunks = {chunk.chunk_id: chunk for chunk in output.task.source_chunks.all()}
    cited = [
        CitedChunk(
            chunk_id=chunk_id,
            source=chunks[chunk_id].source if chunk_id in chunks else "",
            text=chunks[chunk_id].text if chunk_id in chunks else "",
            permitted=chunk_id in chunks,
        )
        for chunk_id in _cited_ids(output)
    ]
    try:
        record = output.trajectory.record
    except ObjectDoesNotExist:
        record = None
    timeline = trajectory_timeline(record) if record and not trajectory_problems(record) else []
    return OutputView(
        output=output,
        passages=text_passages(output.text, split_sentences(output.text)),
        units=units,
        cited_chunks=cited,
        key_elements={e.element_id: e.text for e in output.task.key_elements.all()},
        guidance_items={g.item_id: g.text for g in output.task.guidance_items.all()},
        timeline=timeline,
        trajectory=record,
    )


def _cited_ids(output: Output) -> Sequence[str]:
    ids = list(output.cited_chunk_ids or [])
    for unit in output.units.all():
        if unit.kind == UnitKind.CITED_CHUNK and unit.ref_id not in ids:
            ids.append(unit.ref_id)
    return ids


@dataclass(frozen=True)
class CriterionResult:
    criterion: str
    scores: int
    mean: float


@dataclass(frozen=True)
class JudgingRow:
    judging: Judging
    results: list[CriterionResult]

    @property
    def percent(self) -> float:
        return judging_percent(self.judging)

    @property
    def active(self) -> bool:
        return self.judging.status in (JudgingStatus.PENDING, JudgingStatus.RUNNING)


def judging_percent(judging: Judging) -> float:
    """Return the share of the run's succeeded outputs the judging has been through, in %."""
    if not judging.outputs_total:
        return 100.0 if judging.finished_at else 0.0
    return round(100 * min(judging.outputs_done / judging.outputs_total, 1.0), 1)


def judging_list(*, run: Run) -> list[JudgingRow]:
    """Return the judgings of ``run``, newest first, each with its judge's mean per criterion.

    Two queries: the judgings (with judge and requester) and the scores by judge and criterion.
    """
    judgings = list(
        Judging.objects.filter(run=run).select_related("judge", "requested_by", "run__use_case")
    )
    results: dict[int, list[CriterionResult]] = {}
    if judgings:
        for judge_id, criterion, count, mean in (
            JudgeScore.objects.filter(
                judge_id__in={j.judge_id for j in judgings}, unit__output__run=run
            )
            .order_by()
            .values_list("judge_id", "criterion")
            .annotate(count=Count("pk"), mean=Avg("score"))
            .order_by("judge_id", "criterion")
        ):
            results.setdefault(judge_id, []).append(CriterionResult(criterion, count, mean))
    return [JudgingRow(judging, results.get(judging.judge_id, [])) for judging in judgings]


def judging_get(*, run: Run, judging_id: int) -> Judging | None:
    """Return judging ``judging_id`` of ``run`` with its judge and requester, or None."""
    return (
        Judging.objects.filter(run=run, pk=judging_id)
        .select_related("judge", "requested_by", "run__use_case")
        .first()
    )
