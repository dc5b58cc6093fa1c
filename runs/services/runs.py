"""Writes for executed runs: create a run of σ over a split × K, start it, execute its chunks.

A run is executed in chunks, one Celery task per chunk, each running an asyncio loop of model
calls (runs.executor) and writing outputs and progress in batches of ``WRITE_BATCH`` results
(a fixed number of queries per batch, never one per call). Each batch's outputs are split into
units in the segmenter's worker processes (runs/segment_pool.py), so the writing thread holds
the GIL no longer than the ORM work (the model calls run in another thread of the same
process), and are written with their units in one transaction: a run is complete only once
every output's units are stored. A chunk holds at least
``CHUNK_ITEMS_PER_SLOT`` × the run's concurrency items (and at least ``chunk_tasks`` tasks), so
one chunk can keep every slot busy and chunk boundaries are few; the first chunks of a run
ramp up from a quarter of that (still the run's concurrency in items) so that the processes
starting together reach their chunk ends at different times (``_chunks``).

On a Redis broker (``RUN_SLOTS_REDIS_URL``) a run is not cut into fixed chunks: its tasks are
cut into pieces of :data:`PIECE_ITEMS` items in a Redis list (runs.pieces) and a few Celery
tasks, *runners*, take pieces as their calls need them (:class:`_PieceFeed`), so the run's
last calls are spread over every process with slots instead of one process finishing a long
chunk alone (bench/cases_runs.py: two workers 1.73× one worker's throughput with fixed
chunks, 1.91× with pieces).

The run's concurrency holds for the run, not per chunk: on a Redis broker every call takes a
slot of the run's lease in Redis (runs.slots), shared by all chunks in all worker processes,
and a process keeps at most ``RUN_PROCESS_MAX_IN_FLIGHT`` calls of it in flight (a setting:
what one process's CPU sustains). The filesystem broker has no shared store: each chunk
keeps at most the run's concurrency in flight, so there run one worker process
(``--concurrency=1``) for the limit to hold for the run (README, RUN_SLOTS_REDIS_URL).

Every write is keyed by (run, task, repeat): a chunk executed twice (a redelivered task after
a lost worker, a second ``run_start``) skips what exists, and the UNIQUE(run, task,
repeat_index) constraint is the final guard, so a run never holds two outputs of one unit of work.

Counters, as for imported runs: ``items_done`` counts every output written (succeeded or
failed), ``items_failed`` those that failed; the run is complete when ``items_done`` equals
``items_total``.
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from audit.services import audit_record
from charters.models import Configuration, Role, SourceChunk, Stage, Task, TaskSet, UseCase
from charters.permissions import require_role
from charters.services.use_cases import use_case_advance
from enterpriseval.errors import ConflictError, ServiceError
from runs.executor import (
    BudgetGuard,
    InCaller,
    ItemResult,
    Message,
    ModelCallError,
    WorkItem,
    client_for,
    execute,
    timeout_for,
)
from runs.labels import LabelRead, LabelReader, label_reader
from runs.models import Output, OutputStatus, Run, RunMode, RunStatus
from runs.pieces import PieceQueue, run_pieces_key
from runs.prompting import TemplateError, check_prompts, cited_ids, render_messages
from runs.retrieval import DEFAULT_TOP_K, Chunk, retrieve
from runs.segment_pool import PendingUnits, Segmenter, UnitRow
from runs.services.outputs import (
    _check_run_inputs,
    _gold_of,
    _TaskGold,
    check_structured_inputs,
    run_sources_payload,
    segmenter_from_settings,
    units_insert,
)
from runs.slots import RedisSlots, run_slots_key

RUN_ROLES = (Role.CHARTER_OWNER, Role.MODEL_OWNER)
CHUNK_TASKS = 50
CHUNK_ITEMS_PER_SLOT = 4
CHUNK_RAMP = 4  # the first chunks hold 1/4, 2/4, 3/4 of a chunk (_chunks)
PROCESS_MAX_IN_FLIGHT = 128
# On a Redis broker (runs.pieces): items per piece, and slots of the run's concurrency per runner
PIECE_ITEMS = 8
STATUS_EVERY_S = 1.0  # a runner reads the run's status at most this often (_PieceFeed)
RUNNER_MIN_SLOTS = 32
WRITE_BATCH = 50
WRITE_WAIT_S = 1.0  # a smaller batch is written once its first result has waited this long
# A run's batch goes to the splitting processes only from this many characters of text. Measured
# (bench/cases_runs.py, 1,000 calls of 90-character answers, one worker, load 2–5): splitting in
# the processes 35.8 % of ideal, in the writing thread 77.7 %; the pool's own threads and round
# trips cost the process more than splitting a batch of short outputs does.
RUN_SPLIT_MIN_CHARS = 50_000
DEFAULT_CONCURRENCY = 8
MAX_CONCURRENCY = 256
FINISHED = (RunStatus.COMPLETED, RunStatus.BUDGET_EXHAUSTED, RunStatus.FAILED, RunStatus.CANCELLED)


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """What one chunk did: outputs written (of them failed), pairs already done, items left."""

    run_id: int
    written: int
    failed: int
    skipped: int
    not_started: int
    status: str


@transaction.atomic
def run_create(
    *,
    actor: AbstractBaseUser,
    use_case: UseCase,
    configuration: Configuration,
    task_set: TaskSet,
    split: str,
    repeats: int,
    concurrency: int | None = None,
    cost_budget_usd: Decimal | str | None = None,
) -> Run:
    """Create a pending executed run of σ over ``split`` × ``repeats``; move to stage 4."""
    require_role(actor, use_case, RUN_ROLES)
    _check_run_inputs(use_case, configuration, task_set, split, repeats)
    check_structured_inputs(
        use_case=use_case,
        configuration=configuration,
        task_set=task_set,
        split=split,
        executed=True,
    )
    try:
        check_prompts(configuration.document.get("prompts") or {})
    except TemplateError as error:
        raise ServiceError(
            f"configuration: σ {configuration.name} v{configuration.version}: {error}",
            field="configuration",
        ) from error
    concurrency = DEFAULT_CONCURRENCY if concurrency is None else concurrency
    if (
        isinstance(concurrency, bool)
        or not isinstance(concurrency, int)
        or not 1 <= concurrency <= MAX_CONCURRENCY
    ):
        raise ServiceError(
            f"concurrency: expected a whole number from 1 to {MAX_CONCURRENCY}, "
            f"got {concurrency!r}",
            field="concurrency",
        )
    budget = _budget(cost_budget_usd)
    tasks = Task.objects.filter(task_set=task_set, split=split).count()
    run = Run.objects.create(
        use_case=use_case,
        configuration=configuration,
        task_set=task_set,
        split=split,
        repeats=repeats,
        mode=RunMode.EXECUTED,
        status=RunStatus.PENDING,
        concurrency=concurrency,
        cost_budget_usd=budget,
        items_total=tasks * repeats,
        created_by=actor,
    )
    audit_record(
        actor=actor,
        action="run.create",
        target=run,
        use_case_id=use_case.pk,
        payload={
            "run": run.pk,
            **run_sources_payload(configuration, task_set),
            "split": split,
            "repeats": repeats,
            "items_total": run.items_total,
            "concurrency": concurrency,
            "cost_budget_usd": None if budget is None else str(budget),
        },
    )
    return run


@transaction.atomic
def run_start(
    *, actor: AbstractBaseUser, run: Run, chunk_tasks: int = CHUNK_TASKS, enqueue: bool = True
) -> list[list[int]]:
    """Enqueue one Celery task per chunk of tasks that still lack an output; return the chunks.

    A chunk holds ``chunk_tasks`` tasks, or more where needed for its items (tasks × repeats)
    to reach :data:`CHUNK_ITEMS_PER_SLOT` × the run's concurrency; from three chunks on, the
    first three hold ¼, ½ and ¾ of that (staggered ends, ``_chunks``).

    Where the run's slots are held in Redis (``RUN_SLOTS_REDIS_URL``; a Redis broker), the
    tasks are instead cut into pieces of :data:`PIECE_ITEMS` items, pushed to the run's list
    in Redis (runs.pieces), and a few *runners* are enqueued that take pieces as their calls
    need them (:func:`_runner_count`); the pieces are returned.

    Starting a running run again resumes it: only chunks with missing outputs are enqueued,
    and a chunk that runs twice writes nothing twice. ``enqueue=False`` only marks the run
    started and returns the chunks, for a caller that executes them in-process.
    """
    from runs.tasks import run_execute_chunk_task

    locked = Run.objects.select_for_update().get(pk=run.pk)
    require_role(actor, locked.use_case, RUN_ROLES)
    if locked.mode != RunMode.EXECUTED:
        raise ConflictError(f"run {locked.pk} was imported; only executed runs can be started")
    if locked.status in FINISHED:
        raise ConflictError(
            f"run {locked.pk} is {locked.get_status_display().lower()}; create a new run instead"
        )
    unfinished = _unfinished_task_pks(locked)
    queue = _piece_queue(locked) if enqueue else None
    if queue is None:
        chunks = _chunks(
            unfinished,
            chunk_size(
                chunk_tasks=chunk_tasks, repeats=locked.repeats, concurrency=locked.concurrency
            ),
        )
        runners: list[str] = []
    else:
        chunks = _chunks(unfinished, -(-PIECE_ITEMS // locked.repeats), ramp=False)
        runners = [uuid.uuid4().hex[:16] for _ in range(_runner_count(locked, len(chunks)))]
    if locked.status == RunStatus.PENDING:
        locked.status = RunStatus.RUNNING
        locked.started_at = timezone.now()
        locked.save(update_fields=["status", "started_at"])
    audit_record(
        actor=actor,
        action="run.start",
        target=locked,
        use_case_id=locked.use_case_id,
        payload={
            "run": locked.pk,
            "chunks": len(chunks),
            "runners": len(runners),
            "items_total": locked.items_total,
            "inline": not enqueue,
        },
    )
    if queue is not None:
        transaction.on_commit(lambda: _hand_out(queue, locked.pk, chunks, runners))
    for pks in chunks if enqueue and queue is None else []:
        transaction.on_commit(
            lambda pks=pks: run_execute_chunk_task.delay(locked.pk, pks)  # type: ignore[misc]
        )
    run.status, run.started_at = locked.status, locked.started_at
    return chunks


def run_execute_chunk(*, run_id: int, task_pks: Sequence[int], runner: str = "") -> ChunkResult:
    """Execute the (task, repeat) pairs of ``task_pks`` that have no output yet.

    With ``runner`` (``task_pks`` empty), execute the run's pieces in Redis instead, taken as
    the calls need them until none is left (:class:`_PieceFeed`, runs.pieces).

    Not one transaction: each batch of results is written, with the run's counters, in its
    own, so progress shows while the chunk runs and a lost worker loses only what is in
    flight. Stops scheduling once the run's cost budget is reached (in-flight calls finish).
    """
    run = Run.objects.select_related("configuration", "task_set").get(pk=run_id)
    if run.status in FINISHED:
        return ChunkResult(run_id, 0, 0, 0, 0, run.status)
    if run.status == RunStatus.PENDING:
        Run.objects.filter(pk=run_id, status=RunStatus.PENDING).update(
            status=RunStatus.RUNNING, started_at=timezone.now()
        )
    document = run.configuration.document
    work = _Work(run)
    feed: _PieceFeed | None = None
    in_flight = min(run.concurrency, _process_max_in_flight())
    if runner:
        queue = _piece_queue(run)
        if queue is None:
            raise ImproperlyConfigured("a run's runner needs RUN_SLOTS_REDIS_URL (runs.pieces)")
        feed = _PieceFeed(work, queue, runner, low_water=in_flight)
        pending_count = 1  # not known before the pieces are taken
    else:
        pending, sources = work.load(task_pks)
        if not pending:
            _complete_if_done(run_id)
            return ChunkResult(run_id, 0, 0, work.skipped, 0, _status(run_id))
        pending_count = len(pending)
    try:
        client = client_for(document["model"], concurrency=in_flight)
    except ModelCallError as error:
        _fail(run_id, f"cannot call the model: {error.reason}")
        return ChunkResult(run_id, 0, 0, work.skipped, pending_count, RunStatus.FAILED)
    # Rendered as the executor takes them: the first calls start without waiting for the rest.
    items = feed if feed is not None else _work_items(pending, sources, document)

    budget = BudgetGuard(limit=run.cost_budget_usd, spent=run.cost_usd)
    gold = work.gold
    segmenter = segmenter_from_settings(min_chars=RUN_SPLIT_MIN_CHARS)
    written = failed = 0
    labels = _OutputLabels(
        label_reader(
            (document.get("guardrails") or {}).get("output_format"), run.task_set.label_set
        ),
        work.task_ids,
    )

    # Batches being split while earlier ones are written: the thread waits on a split only
    # when the splitting processes fall behind.
    splitting: deque[tuple[list[ItemResult], PendingUnits]] = deque()

    def write_split(*, all_of_them: bool) -> None:
        nonlocal written, failed
        while splitting and (all_of_them or len(splitting) > 1 or splitting[0][1].done()):
            results, units = splitting.popleft()
            new = _write_batch(run, results, units.result(), labels)
            written += len(new)
            failed += sum(o.status == OutputStatus.FAILED for o in new)
            if budget.limit is not None:  # what the run's other chunks have spent
                budget.sync(Run.objects.values_list("cost_usd", flat=True).get(pk=run_id))

    def write(results: list[ItemResult]) -> None:
        splitting.append((results, _split(segmenter, results, gold)))
        write_split(all_of_them=False)

    try:
        summary = execute(
            items,
            client=client,
            concurrency=in_flight,
            timeout_s=timeout_for(document["model"]),
            budget=budget,
            on_batch=write,
            batch_size=WRITE_BATCH,
            batch_wait_s=WRITE_WAIT_S,
            slots=_run_slots(run, in_flight),
        )
        write_split(all_of_them=True)
        if feed is not None:
            feed.finish()  # every piece it took is written
    finally:
        if feed is not None:
            feed.close()
    if summary.budget_exhausted:
        _stop_on_budget(run_id)
    else:
        _complete_if_done(run_id)
    return ChunkResult(run_id, written, failed, work.skipped, summary.not_started, _status(run_id))


def chunk_size(*, chunk_tasks: int, repeats: int, concurrency: int) -> int:
    """Return the tasks per chunk: ``chunk_tasks``, raised until the chunk's items (tasks ×
    ``repeats``) reach :data:`CHUNK_ITEMS_PER_SLOT` × ``concurrency``."""
    if chunk_tasks < 1 or repeats < 1 or concurrency < 1:
        raise ValueError(
            f"chunk_tasks, repeats and concurrency must be ≥ 1, got {chunk_tasks}, {repeats}, "
            f"{concurrency}"
        )
    return max(chunk_tasks, -(-CHUNK_ITEMS_PER_SLOT * concurrency // repeats))


# -- helpers ----------------------------------------------------------------------------------


def _process_max_in_flight() -> int:
    value = int(getattr(settings, "RUN_PROCESS_MAX_IN_FLIGHT", PROCESS_MAX_IN_FLIGHT))
    if value < 1:
        raise ImproperlyConfigured(f"RUN_PROCESS_MAX_IN_FLIGHT must be ≥ 1, got {value}")
    return value


def _run_slots(run: Run, in_flight: int) -> Callable[[], RedisSlots] | None:
    """Return the maker of the run's shared slots when a Redis server holds them, else None."""
    url = getattr(settings, "RUN_SLOTS_REDIS_URL", "")
    if not url:
        return None
    key = run_slots_key(run.pk, str(connection.settings_dict["NAME"]))
    return lambda: RedisSlots(url=url, key=key, limit=run.concurrency, want_max=in_flight)


def _budget(value: Decimal | str | None) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        budget = Decimal(str(value))
    except InvalidOperation:
        budget = Decimal("NaN")
    if not budget.is_finite() or budget <= 0 or budget >= Decimal("1e6"):
        raise ServiceError(
            f"cost_budget_usd: expected an amount in US dollars above 0 and below 1,000,000, "
            f"got {value!r}",
            field="cost_budget_usd",
        )
    return budget.quantize(Decimal("0.000001"))


def _unfinished_task_pks(run: Run) -> list[int]:
    pks = list(
        Task.objects.filter(task_set_id=run.task_set_id, split=run.split)
        .order_by("line_number")
        .values_list("pk", flat=True)
    )
    counts: dict[int, int] = {}
    for task_pk in Output.objects.filter(run=run).values_list("task_id", flat=True):
        counts[task_pk] = counts.get(task_pk, 0) + 1
    return [pk for pk in pks if counts.get(pk, 0) < run.repeats]


def _piece_queue(run: Run) -> PieceQueue | None:
    """Return the run's pieces in Redis when a Redis server holds its slots, else None."""
    url = getattr(settings, "RUN_SLOTS_REDIS_URL", "")
    if not url:
        return None
    return PieceQueue(url=url, key=run_pieces_key(run.pk, str(connection.settings_dict["NAME"])))


def _runner_count(run: Run, pieces: int) -> int:
    """Return how many runners take a run's pieces: the processes it may keep busy.

    As many as fixed chunks of :data:`CHUNK_ITEMS_PER_SLOT` × concurrency items would have
    been, at least two (a second process takes the first one's slots while it writes) and at
    least one per :data:`RUNNER_MIN_SLOTS` of the run's concurrency; never more than the
    pieces. A runner that starts once every piece is taken ends at once.
    """
    by_items = -(-run.items_total // (CHUNK_ITEMS_PER_SLOT * run.concurrency))
    by_slots = -(-run.concurrency // RUNNER_MIN_SLOTS)
    return max(1, min(pieces, max(2, by_items, by_slots)))


def _hand_out(queue: PieceQueue, run_id: int, pieces: list[list[int]], runners: list[str]) -> None:
    """Push the run's pieces, then enqueue its runners (after the run's start is committed)."""
    from runs.tasks import run_execute_chunk_task

    try:
        queue.push(pieces)
    finally:
        queue.close()
    for runner in runners:
        run_execute_chunk_task.delay(run_id, [], runner)  # type: ignore[misc]


def _chunks(pks: list[int], size: int, *, ramp: bool = True) -> list[list[int]]:
    """Cut ``pks`` into chunks of ``size``; from three chunks on, the first ones ramp up.

    The first chunks hold ¼, ½ and ¾ of a chunk (:data:`CHUNK_RAMP`), then whole ones. The
    ramp staggers the processes that take the first chunks at once (two, three or four of
    them): they reach their chunks' ends at different times, so while one finishes a chunk
    (its last calls, its last write, reading the next chunk) the others have calls to make and
    take the run's slots it gives back (runs.slots: fair shares), instead of all leaving the
    slots idle together. Every chunk still holds at least ¼ of ``size`` (the run's
    concurrency in items, :func:`chunk_size`).
    """
    lengths = (
        [-(-size * step // CHUNK_RAMP) for step in range(1, CHUNK_RAMP)]
        if ramp and len(pks) > 2 * size
        else []
    )
    chunks, start = [], 0
    for length in lengths:
        chunks.append(pks[start : start + length])
        start += length
    return chunks + [pks[i : i + size] for i in range(start, len(pks), size)]


class _Work:
    """A run's tasks read piece by piece: the (task, repeat) pairs still without an output,
    and the gold and task ids their results are written with (filled as pieces are read,
    always before their items are handed out)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.gold: dict[int, _TaskGold] = {}
        self.task_ids: dict[int, str] = {}
        self.skipped = 0  # pairs found already written

    def load(
        self, task_pks: Sequence[int]
    ) -> tuple[list[tuple[Task, int]], dict[int, list[Chunk]]]:
        """Return the pairs of ``task_pks`` without an output and their tasks' sources."""
        run = self.run
        tasks = list(
            Task.objects.filter(
                pk__in=list(task_pks), task_set_id=run.task_set_id, split=run.split
            ).order_by("line_number")
        )
        done = set(
            Output.objects.filter(run_id=run.pk, task_id__in=[t.pk for t in tasks]).values_list(
                "task_id", "repeat_index"
            )
        )
        self.skipped += len(done)
        pending = [(t, r) for t in tasks for r in range(run.repeats) if (t.pk, r) not in done]
        if not pending:
            return [], {}
        needed = list({task.pk: task for task, _ in pending}.values())
        self.gold.update(_gold_of(task.pk for task in needed))
        self.task_ids.update({task.pk: task.external_id for task in needed})
        return pending, _sources_of(needed)


class _PieceFeed:
    """The items of the run's pieces in Redis, handed to the executor as its calls need them.

    Pieces are taken (Redis, one round trip) and read (the database, one set of queries, in
    the thread that called the executor: its ``in_caller``) once fewer than half of
    ``low_water`` items — the calls this process keeps in flight — are in hand, as many at once
    as bring them back to ``low_water``: a call rarely waits for a read (milliseconds, against
    hundreds for a call), reads are few, and a process holds no more than one round of calls
    beyond those in flight, so the run's last pieces go to whichever process has slots.
    Prompts are rendered as the calls take their items, in the event loop's thread, as for a
    chunk. A runner delivered again first takes back the pieces it took before.
    """

    def __init__(self, work: _Work, queue: PieceQueue, runner: str, *, low_water: int) -> None:
        self.work = work
        self.queue = queue
        self.runner = runner
        self.document = work.run.configuration.document
        self.low_water = max(1, low_water)
        # each piece read: its items (rendered as taken) and how many are left of them
        self._pieces: deque[tuple[Iterator[WorkItem], list[int]]] = deque()
        self._in_hand = 0
        self._again: deque[list[int]] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._arrived: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._exhausted = False
        self._checked = -math.inf  # when the run's status was last read

    async def take(self, in_caller: InCaller) -> WorkItem | None:
        while not self._in_hand:
            if self._error is not None:
                raise self._error
            if self._exhausted:
                return None
            arrived = self._arrival()
            self._read_ahead(in_caller)
            await arrived.wait()
        items, count = self._pieces[0]
        item = next(items)
        count[0] -= 1
        self._in_hand -= 1
        if not count[0]:
            self._pieces.popleft()
        if 2 * self._in_hand < self.low_water:
            self._read_ahead(in_caller)
        return item

    def left(self) -> int:
        again = sum(len(piece) for piece in self._again or ())
        return self._in_hand + (again + self.queue.tasks_left()) * self.work.run.repeats

    def finish(self) -> None:
        """Forget the pieces taken: every one of them is written."""
        self.queue.forget(self.runner)

    def close(self) -> None:
        self.queue.close()

    def _arrival(self) -> asyncio.Event:
        if self._arrived is None:
            self._arrived = asyncio.Event()
        return self._arrived

    def _wake(self) -> None:
        if self._arrived is not None:
            self._arrived.set()
            self._arrived = None

    def _read_ahead(self, in_caller: InCaller) -> None:
        if self._reader is None and not self._exhausted and self._error is None:
            self._reader = asyncio.get_running_loop().create_task(self._read(in_caller))

    async def _read(self, in_caller: InCaller) -> None:
        try:
            while self._in_hand < self.low_water and not self._exhausted:
                want = self.low_water - self._in_hand
                read = await in_caller(lambda want=want: self._next_pieces(want))  # type: ignore[misc]
                if read is None:
                    self._exhausted = True
                else:
                    pending, sources = read
                    self._pieces.append(
                        (_work_items(pending, sources, self.document), [len(pending)])
                    )
                    self._in_hand += len(pending)
                self._wake()
        except Exception as error:  # raised to the calls waiting for items
            self._error = error
            self._wake()
        finally:
            self._reader = None

    def _next_pieces(
        self, want: int
    ) -> tuple[list[tuple[Task, int]], dict[int, list[Chunk]]] | None:
        """Take pieces holding at least ``want`` pairs and read those left to call (one read
        for all of them); None once no piece is left or the run has ended (budget, failure).
        Runs in the executor's calling thread."""
        if self._again is None:
            self._again = deque(self.queue.taken(self.runner))
        now = time.monotonic()
        if now - self._checked >= STATUS_EVERY_S:  # a run stopped (budget, failure) ends here
            self._checked = now
            if _status(self.work.run.pk) != RunStatus.RUNNING:
                return None
        repeats = self.work.run.repeats
        while True:
            task_pks: list[int] = []
            while self._again and len(task_pks) * repeats < want:
                task_pks.extend(self._again.popleft())
            if (need := want - len(task_pks) * repeats) > 0:
                for piece in self.queue.take(self.runner, -(-need // PIECE_ITEMS)):
                    task_pks.extend(piece)
            if not task_pks:
                return None
            pending, sources = self.work.load(task_pks)
            if pending:
                return pending, sources


def _sources_of(tasks: list[Task]) -> dict[int, list[Chunk]]:
    """Return each task's source chunks, in their stored order (one query)."""
    sources: dict[int, list[Chunk]] = {task.pk: [] for task in tasks}
    rows = (
        SourceChunk.objects.filter(task_id__in=list(sources))
        .order_by("task_id", "pk")
        .values_list("task_id", "chunk_id", "text")
    )
    for task_pk, chunk_id, text in rows:
        sources[task_pk].append(Chunk(chunk_id, text))
    return sources


def _work_items(
    pending: list[tuple[Task, int]], sources: dict[int, list[Chunk]], document: dict
) -> Iterator[WorkItem]:
    """Yield the work item of each (task, repeat), rendering a task's messages once."""
    prompts = document.get("prompts") or {}
    top_k = int((document.get("retrieval") or {}).get("top_k") or DEFAULT_TOP_K)
    rendered: tuple[int, list[Message]] | None = None
    for task, repeat in pending:
        if rendered is None or rendered[0] != task.pk:
            messages = render_messages(
                prompts,
                task_id=task.external_id,
                task_input=task.input,
                chunks=retrieve(task.input, sources[task.pk], top_k=top_k),
            )
            rendered = (task.pk, messages)
        yield WorkItem(task.pk, repeat, rendered[1])


@dataclass(frozen=True)
class _OutputLabels:
    """σ's label reader (None: outputs carry no label) and the task ids for its messages."""

    reader: LabelReader | None
    task_ids: dict[int, str]

    def read(self, result: ItemResult) -> LabelRead:
        if self.reader is None or not result.ok:
            return LabelRead(None, "")
        return self.reader.read(
            result.text, task_id=self.task_ids[result.task_pk], repeat=result.repeat
        )


def _output(run: Run, result: ItemResult, labels: _OutputLabels) -> Output:
    read = labels.read(result)
    return Output(
        run_id=run.pk,
        task_id=result.task_pk,
        repeat_index=result.repeat,
        status=OutputStatus.SUCCEEDED if result.ok else OutputStatus.FAILED,
        text=result.text,
        cited_chunk_ids=cited_ids(result.text) if result.ok else [],
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        cost_usd=result.cost_usd,
        latency_ms=result.latency_ms,
        generation_seconds=result.generation_seconds,
        attempts=result.attempts,
        label=read.label,
        label_error=read.problem or None,
        error=result.error,
    )


def _split(
    segmenter: Segmenter, results: list[ItemResult], gold: dict[int, _TaskGold]
) -> PendingUnits:
    """Start splitting the succeeded results into units (in the segmenter's processes)."""
    return segmenter.submit(
        [
            (r.text, gold[r.task_pk].key_element_ids, gold[r.task_pk].guidance_item_ids)
            for r in results
            if r.ok
        ]
    )


@transaction.atomic
def _write_batch(
    run: Run, results: list[ItemResult], unit_rows: list[list[UnitRow]], labels: _OutputLabels
) -> list[Output]:
    """Write the outputs not written yet, their units and the counts; return the new outputs.

    ``unit_rows`` are the units of each succeeded result, in order (split before the run's
    lock is taken). Outputs and their units are written in one transaction, so the run is
    complete only once every output's units are written.
    """
    # The run's row lock serialises the batches of all chunks of this run, so the existing
    # pairs read below are exact and the counters count each output once.
    Run.objects.select_for_update().filter(pk=run.pk).values_list("pk", flat=True).get()
    pairs = {(r.task_pk, r.repeat) for r in results}
    existing = set(
        Output.objects.filter(run_id=run.pk, task_id__in={task for task, _ in pairs}).values_list(
            "task_id", "repeat_index"
        )
    )
    fresh = [_output(run, r, labels) for r in results if (r.task_pk, r.repeat) not in existing]
    if not fresh:
        return []
    try:
        with transaction.atomic():
            new = Output.objects.bulk_create(fresh)
    except IntegrityError:
        # Only a writer that ignores the run lock can get here; the constraint keeps one.
        Output.objects.bulk_create(fresh, ignore_conflicts=True)
        ours = {(o.task_id, o.repeat_index) for o in fresh}
        new = [
            o
            for o in Output.objects.filter(run_id=run.pk, task_id__in={t for t, _ in ours})
            if (o.task_id, o.repeat_index) in ours
        ]
    succeeded = [o for o in new if o.status == OutputStatus.SUCCEEDED]
    known = [o.cost_usd for o in new if o.cost_usd is not None]
    Run.objects.filter(pk=run.pk).update(
        items_done=F("items_done") + len(new),
        items_failed=F("items_failed") + len(new) - len(succeeded),
        cost_usd=F("cost_usd") + sum(known, Decimal(0)),
        cost_unknown_items=F("cost_unknown_items") + sum(o.cost_usd is None for o in succeeded),
    )
    rows_of = dict(zip([(r.task_pk, r.repeat) for r in results if r.ok], unit_rows, strict=True))
    units_insert(
        output_pks=[o.pk for o in succeeded],
        rows=[rows_of[(o.task_id, o.repeat_index)] for o in succeeded],
    )
    _finish_if_done(run.pk)
    return new


@transaction.atomic
def _complete_if_done(run_id: int) -> None:
    _finish_if_done(run_id)


def _finish_if_done(run_id: int) -> None:
    """Mark the run completed once every item has an output (inside the caller's transaction)."""
    finished = Run.objects.filter(
        pk=run_id,
        status=RunStatus.RUNNING,
        items_total=F("items_done"),
    ).update(status=RunStatus.COMPLETED, finished_at=timezone.now())
    if finished:
        run = Run.objects.select_related("use_case", "created_by").get(pk=run_id)
        audit_record(
            actor=None,
            action="run.complete",
            target=run,
            use_case_id=run.use_case_id,
            payload={
                "run": run_id,
                "items_done": run.items_done,
                "items_failed": run.items_failed,
                "cost_usd": str(run.cost_usd),
                "cost_unknown_items": run.cost_unknown_items,
            },
        )
        # A run enters stage 4 when it completes, not when it is created: a failed or
        # stopped run is no evidence to grade (SPEC §3).
        use_case_advance(
            actor=run.created_by,
            use_case=run.use_case,
            stage=Stage.RUN,
            note=f"run {run.pk} completed",
        )


@transaction.atomic
def _stop_on_budget(run_id: int) -> None:
    run = Run.objects.select_for_update().get(pk=run_id)
    if run.status != RunStatus.RUNNING:
        return
    run.status = RunStatus.BUDGET_EXHAUSTED
    run.finished_at = timezone.now()
    unknown = (
        f"; {run.cost_unknown_items} item(s) of unknown cost not counted"
        if (run.cost_unknown_items)
        else ""
    )
    run.stop_reason = (
        f"Cost budget of {run.cost_budget_usd} USD reached: {run.cost_usd} USD spent on "
        f"{run.items_done} of {run.items_total} items{unknown}; "
        f"{run.items_total - run.items_done} item(s) not run."
    )
    run.save(update_fields=["status", "finished_at", "stop_reason"])
    audit_record(
        actor=None,
        action="run.budget_exhausted",
        target=run,
        use_case_id=run.use_case_id,
        payload={"run": run_id, "cost_usd": str(run.cost_usd), "reason": run.stop_reason},
    )


@transaction.atomic
def _fail(run_id: int, reason: str) -> None:
    run = Run.objects.select_for_update().get(pk=run_id)
    if run.status in FINISHED:
        return
    run.status = RunStatus.FAILED
    run.finished_at = timezone.now()
    run.stop_reason = reason
    run.save(update_fields=["status", "finished_at", "stop_reason"])
    audit_record(
        actor=None,
        action="run.fail",
        target=run,
        use_case_id=run.use_case_id,
        payload={"run": run_id, "reason": reason},
    )


def _status(run_id: int) -> str:
    return Run.objects.values_list("status", flat=True).get(pk=run_id)
