"""A run's concurrency shared by every worker process: a counting lease held in Redis.

A run may be executed by several chunks at once, in the processes of one Celery worker or of
many. Each process holds a *lease* of some of the run's ``limit`` slots, recorded in Redis under
the run's key: a hash of holder → slots held, a hash of holder → slots wanted and a sorted set
of holder → expiry. One Lua script (atomic in Redis) drops the expired holders, records what
the caller wants, computes its fair share and grants it ``min(fair share, limit − held by the
others)``. The fair shares are max–min fair (water-filling: the holders' wants taken from the
smallest up, each given at most an equal part of what is left), so two processes that both
want all of a run's 64 slots get 32 each, and one that wants 10 leaves 54 to the other. The
record never drops below the slots the caller has in use, so the slots held by all processes
never exceed the run's concurrency; a holder over its share (another process has just asked)
stops handing out slots and gives them back as its calls finish. A worker killed mid-run leaks
nothing for longer than the lease's time to live (``ttl_s``): a live process renews its lease
every ``ttl_s / 3`` seconds. Time is Redis's own clock (``TIME``), so the hosts' clocks need
not agree.

Inside a process the lease is handed out call by call without a round trip: a call takes a
slot the process holds, or waits in line; one manager coroutine asks Redis for more slots when
calls wait (every ``poll_s`` seconds until granted), gives back the slots no call needs (a
chunk's tail), and, while it holds slots, asks again every ``rebalance_s`` seconds so that a
process that starts later gets its share within about one call's latency.

No Django import: :mod:`runs.executor` uses it through :class:`SlotLimiter`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from collections import deque
from typing import Any, Protocol

LEASE_SCRIPT = """
local holders, expiry, wants = KEYS[1], KEYS[2], KEYS[3]
local holder = ARGV[1]
local want, limit = tonumber(ARGV[2]), tonumber(ARGV[3])
local ttl, in_use = tonumber(ARGV[4]), tonumber(ARGV[5])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', expiry, '-inf', now)) do
  redis.call('HDEL', holders, gone)
  redis.call('HDEL', wants, gone)
  redis.call('ZREM', expiry, gone)
end
if want > 0 then
  redis.call('HSET', wants, holder, want)
else
  redis.call('HDEL', wants, holder)
end
-- max-min fair share (water-filling): wants from the smallest up, each at most an equal part
-- of what is left; ties in holder order, so every caller computes the same shares.
local wanted = {}
local all_wants = redis.call('HGETALL', wants)
for i = 1, #all_wants, 2 do
  wanted[#wanted + 1] = {all_wants[i], tonumber(all_wants[i + 1])}
end
table.sort(wanted, function(a, b)
  if a[2] ~= b[2] then return a[2] < b[2] end
  return a[1] < b[1]
end)
local left, share = limit, 0
for i, entry in ipairs(wanted) do
  local part = math.min(entry[2], math.floor(left / (#wanted - i + 1)))
  left = left - part
  if entry[1] == holder then share = part end
end
local others = 0
local all = redis.call('HGETALL', holders)
for i = 1, #all, 2 do
  if all[i] ~= holder then others = others + tonumber(all[i + 1]) end
end
local grant = math.min(share, math.max(0, limit - others))
-- never record fewer than the slots in use: they are given back as the calls finish
local held = math.max(grant, in_use)
if held > 0 then
  redis.call('HSET', holders, holder, held)
else
  redis.call('HDEL', holders, holder)
end
if held > 0 or want > 0 then
  redis.call('ZADD', expiry, now + ttl, holder)
  redis.call('PEXPIRE', holders, 2 * ttl)
  redis.call('PEXPIRE', wants, 2 * ttl)
  redis.call('PEXPIRE', expiry, 2 * ttl)
else
  redis.call('ZREM', expiry, holder)
end
return {grant, held}
"""


class SlotLimiter(Protocol):
    """Slots for model calls: ``acquire`` before a call, ``release`` after it."""

    async def acquire(self) -> None:
        """Wait for a slot and take it."""
        ...

    def release(self) -> None:
        """Give back a slot taken by :meth:`acquire`."""
        ...


def run_slots_key(run_id: int, database: str) -> str:
    """Return the Redis key of a run's lease; ``database`` names the run's database, so
    deployments (and test databases) sharing one Redis server never share a lease."""
    return f"enterpriseval:{database}:run:{run_id}:slots"


class RedisSlots:
    """This process's share of ``limit`` slots held under ``key`` in Redis (see the module).

    Use as an async context manager inside the event loop that makes the calls; leaving it
    gives every slot back. ``want_max`` caps what this process asks for (its own capacity).
    ``granted`` is what this process may have in use; ``held`` what Redis records for it
    (more than ``granted`` only while calls over its fair share finish).
    """

    def __init__(
        self,
        *,
        url: str,
        key: str,
        limit: int,
        want_max: int | None = None,
        ttl_s: float = 30.0,
        poll_s: float = 0.02,
        rebalance_s: float = 0.1,
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit must be ≥ 1, got {limit}")
        if ttl_s <= 0 or poll_s <= 0 or rebalance_s <= 0:
            raise ValueError(
                f"ttl_s, poll_s and rebalance_s must be > 0, got {ttl_s}, {poll_s} and "
                f"{rebalance_s}"
            )
        self.url = url
        self.keys = [key, f"{key}:expiry", f"{key}:wants"]
        self.limit = limit
        self.want_max = min(limit, want_max or limit)
        self.ttl_s = ttl_s
        self.poll_s = poll_s
        self.rebalance_s = rebalance_s
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self.granted = 0
        self.held = 0
        self.in_use = 0
        self._leased_at = 0.0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._wake = asyncio.Event()
        self._redis: Any = None
        self._script: Any = None
        self._manager: asyncio.Task[None] | None = None
        self._closing = False

    async def __aenter__(self) -> RedisSlots:
        import redis.asyncio

        self._redis = redis.asyncio.from_url(self.url)
        self._script = self._redis.register_script(LEASE_SCRIPT)
        await self._lease(self.want_max)
        self._manager = asyncio.create_task(self._manage(), name="run-slots")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        # The manager is asked to stop, and cancelled only if it does not: a cancellation
        # that arrives while it waits on Redis can be lost, and it would then sleep out its
        # renewal period (ttl_s / 3: 10 s at the end of every chunk, bench/cases_runs.py).
        self._closing = True
        self._wake.set()
        try:
            if self._manager is not None:
                done, _ = await asyncio.wait({self._manager}, timeout=1.0 + 10 * self.poll_s)
                if not done:
                    self._manager.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._manager
        finally:
            try:
                await self._lease(0, in_use=0)
            finally:
                await self._redis.aclose()

    async def acquire(self) -> None:
        """Take a slot this process holds, or wait in line for one."""
        if not self._waiters and self.in_use < self.granted:
            self.in_use += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self._wake.set()
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a slot while being cancelled: give it back
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        """Give back a slot; the next call in line takes it, or the manager returns it."""
        self.in_use -= 1
        self._dispatch()
        self._wake.set()

    def _dispatch(self) -> None:
        while self._waiters and self.in_use < self.granted:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_use += 1
                waiter.set_result(None)

    async def _lease(self, want: int, *, in_use: int | None = None) -> None:
        # No slot is handed out while Redis decides, so the count of slots in use it records
        # is exact: a call taking one meanwhile could hold a slot another process is granted.
        before = self.granted
        self.granted = min(self.granted, self.in_use)
        try:
            grant, held = await self._script(
                keys=self.keys,
                args=[
                    self.holder,
                    want,
                    self.limit,
                    round(self.ttl_s * 1000),
                    self.in_use if in_use is None else in_use,
                ],
            )
        except BaseException:
            self.granted = before  # what Redis still records for this process
            raise
        self.granted, self.held = int(grant), int(held)
        self._leased_at = asyncio.get_running_loop().time()
        self._dispatch()

    async def _manage(self) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(self.poll_s)  # the calls take their slots before any counting
        while not self._closing:
            # Cleared before counting: a call that waits or ends from here on wakes the wait
            # below, so no change goes unseen while Redis is asked.
            self._wake.clear()
            want = min(self.want_max, self.in_use + len(self._waiters))
            # Holding slots, ask again every rebalance_s: another process may want its share.
            period = self.rebalance_s if self.held else self.ttl_s / 3
            if (
                want != self.granted
                or self.held > self.granted
                or loop.time() - self._leased_at >= period
            ):
                await self._lease(want)
            if self._closing:
                break
            if (self._waiters and self.granted < want) or self.held > self.granted:
                # Calls wait on slots the others hold, or calls over this process's share are
                # finishing: ask again soon.
                await asyncio.sleep(self.poll_s)
                continue
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can lose a cancellation
            # that arrives as the event is set, and the manager would never stop.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.rebalance_s if self.held else self.ttl_s / 3):
                    await self._wake.wait()
            if self._closing:
                break
            # Let a finished call's coroutine take its next item before counting what is
            # wanted, so a steady run makes no round trip per call.
            await asyncio.sleep(self.poll_s)
