"""Split many outputs into units at once, in a pool of worker processes.

Pure: no Django import. Splitting an output into sentences (:mod:`runs.segment`, pysbd) costs
about 3 ms of CPU per output, in Python: done in the thread that writes results it holds the
GIL against the thread that calls the model, and done in one process it bounds an import to
one core. :class:`Segmenter` hands a batch of outputs to worker processes instead (one per
core by default) and returns a :class:`PendingUnits` at once, so the caller can read, check or
call the model while the batch is split, and collect the units (as plain row tuples, cheap to
send between processes) when it writes them.

The pool is started once per process (``forkserver``: its workers are forked from a clean
server that has pysbd loaded, never from a caller that runs threads) and reused by every
later batch. A batch of less than ``min_chars`` characters of text is split in the calling
process: sending it would cost more than splitting it. ``processes=0`` splits everything in
the calling process, and so does a daemonic process, which may not start children (a Celery
worker's children are made non-daemonic when they start, enterpriseval/celery.py). The units
are the same either way (the same function runs).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from runs.segment import build_units

UnitRow = tuple[str, str, int, str, str, int | None]
"""A unit as stored: kind, key, position, text, ref_id, sentence_position (``UnitSpec``)."""

SegmentJob = tuple[str, Sequence[str], Sequence[str]]
"""An output to split: its text, its task's key-element ids and guidance-item ids."""

logger = logging.getLogger(__name__)
DEFAULT_MIN_CHARS = 2_000  # about 8 ms of splitting; a round trip to a worker costs ~1 ms

_pools: dict[tuple[int, int], ProcessPoolExecutor] = {}  # by (pid, processes)
_pools_lock = threading.Lock()


def unit_rows(
    text: str, key_element_ids: Sequence[str], guidance_item_ids: Sequence[str]
) -> list[UnitRow]:
    """Return the units of one output as row tuples (see :func:`runs.segment.build_units`)."""
    return [
        (u.kind, u.key, u.position, u.text, u.ref_id, u.sentence_position)
        for u in build_units(
            text, key_element_ids=key_element_ids, guidance_item_ids=guidance_item_ids
        )
    ]


def unit_rows_of(jobs: Sequence[SegmentJob]) -> list[list[UnitRow]]:
    """Return the unit rows of each job, in order (what a worker process runs)."""
    return [unit_rows(*job) for job in jobs]


def default_processes() -> int:
    """Return the number of cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class PendingUnits:
    """The units of a batch being split; :meth:`result` waits for them."""

    def __init__(
        self,
        parts: list[tuple[list[SegmentJob], Future[list[list[UnitRow]]]]] | None = None,
        inline: Sequence[SegmentJob] = (),
    ) -> None:
        self._parts = parts or []
        self._inline = inline

    def result(self) -> list[list[UnitRow]]:
        """Return the unit rows of every job of the batch, in the order submitted.

        A part whose worker died (killed, out of memory) is split here instead.
        """
        if not self._parts:
            return unit_rows_of(self._inline)
        rows: list[list[UnitRow]] = []
        for jobs, part in self._parts:
            try:
                rows.extend(part.result())
            except BrokenProcessPool:
                logger.warning("a sentence-splitting process died; its part is split here")
                rows.extend(unit_rows_of(jobs))
        return rows

    def done(self) -> bool:
        """Return whether :meth:`result` would return without waiting on a process."""
        return all(part.done() for _jobs, part in self._parts)

    def cancel(self) -> None:
        """Drop the batch: parts not started yet are never split."""
        for _jobs, part in self._parts:
            part.cancel()


class Segmenter:
    """Split batches of outputs in ``processes`` worker processes (0: in this process)."""

    def __init__(self, processes: int | None = None, *, min_chars: int | None = None) -> None:
        if processes is None:
            processes = default_processes()
        if min_chars is None:
            min_chars = DEFAULT_MIN_CHARS
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 0:
            raise ValueError(f"processes must be a whole number ≥ 0, got {processes!r}")
        if min_chars < 0:
            raise ValueError(f"min_chars must be ≥ 0, got {min_chars!r}")
        self.processes = processes
        self.min_chars = min_chars

    def submit(self, jobs: Sequence[SegmentJob]) -> PendingUnits:
        """Start splitting ``jobs``; return at once (small batches are split on ``result``)."""
        jobs = list(jobs)
        if (
            not jobs
            or self.processes == 0
            or sum(len(job[0]) for job in jobs) < self.min_chars
            or multiprocessing.current_process().daemon  # may not start children
        ):
            return PendingUnits(inline=jobs)
        try:
            return PendingUnits(self._submit(_pool(self.processes), jobs))
        except BrokenProcessPool:  # a worker died (killed, out of memory): start a new pool
            return PendingUnits(self._submit(_pool(self.processes, renew=True), jobs))
        except Exception:  # the pool is a speed-up only: the units are the same without it
            logger.exception("cannot start the sentence-splitting processes; splitting here")
            return PendingUnits(inline=jobs)

    def _submit(
        self, pool: ProcessPoolExecutor, jobs: list[SegmentJob]
    ) -> list[tuple[list[SegmentJob], Future[list[list[UnitRow]]]]]:
        # One part per process, cut by characters so that the parts take about as long.
        slices: list[list[SegmentJob]] = []
        target = sum(len(job[0]) for job in jobs) / self.processes
        start = size = 0
        for index, job in enumerate(jobs):
            size += len(job[0])
            if size >= target and len(slices) < self.processes - 1:
                slices.append(jobs[start : index + 1])
                start, size = index + 1, 0
        if start < len(jobs):
            slices.append(jobs[start:])
        return [(part, pool.submit(unit_rows_of, part)) for part in slices]

    def warm(self) -> None:
        """Start the worker processes now (a worker at start-up), not on a run's clock."""
        if self.processes:
            pool = _pool(self.processes)
            for future in [pool.submit(unit_rows_of, []) for _ in range(self.processes)]:
                future.result()


def _pool(processes: int, *, renew: bool = False) -> ProcessPoolExecutor:
    """Return this process's pool of ``processes`` workers, started on first use.

    Keyed by process id too: a pool inherited through a fork belongs to the parent.
    """
    key = (os.getpid(), processes)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is not None and renew:
            pool.shutdown(wait=False, cancel_futures=True)
            pool = None
        if pool is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["runs.segment"])
            pool = ProcessPoolExecutor(max_workers=processes, mp_context=context)
            _pools[key] = pool
        return pool


def shutdown_pools() -> None:
    """Stop every pool of this process (tests; a process that exits stops them itself)."""
    with _pools_lock:
        for (pid, _processes), pool in list(_pools.items()):
            if pid == os.getpid():
                pool.shutdown(wait=True, cancel_futures=True)
        _pools.clear()
