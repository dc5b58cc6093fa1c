"""A run's concurrency shared by every worker process: a counting lease held in Redis.

A run may be executed by several chunks at once, in the processes of one Celery worker or of
many. Each process holds a *lease* of some of the run's ``limit`` slots, recorded in Redis under
the run's key: a hash of holder → slots and a sorted set of holder → expiry. One Lua script
(atomic in Redis) drops the expired leases, then grants a holder ``min(want, limit − held by
the others)``. So the slots held by all processes never exceed the run's concurrency, and a
worker killed mid-run leaks nothing for longer than the lease's time to live (``ttl_s``):
a live process renews its lease every ``ttl_s / 3`` seconds. Time is Redis's own clock
(``TIME``), so the hosts' clocks need not agree.

Inside a process the lease is handed out call by call without a round trip: a call takes a
slot the process holds, or waits in line; one manager coroutine asks Redis for more slots when
calls wait, gives back the slots no call needs (a chunk's tail), and renews the lease. A
process that cannot get a slot asks again every ``poll_s`` seconds.

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
local holders, expiry = KEYS[1], KEYS[2]
local holder = ARGV[1]
local want, limit, ttl = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', expiry, '-inf', now)) do
  redis.call('HDEL', holders, gone)
  redis.call('ZREM', expiry, gone)
end
local others = 0
local all = redis.call('HGETALL', holders)
for i = 1, #all, 2 do
  if all[i] ~= holder then others = others + tonumber(all[i + 1]) end
end
local grant = math.min(want, math.max(0, limit - others))
if grant > 0 then
  redis.call('HSET', holders, holder, grant)
  redis.call('ZADD', expiry, now + ttl, holder)
  redis.call('PEXPIRE', holders, 2 * ttl)
  redis.call('PEXPIRE', expiry, 2 * ttl)
else
  redis.call('HDEL', holders, holder)
  redis.call('ZREM', expiry, holder)
end
return grant
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
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit must be ≥ 1, got {limit}")
        if ttl_s <= 0 or poll_s <= 0:
            raise ValueError(f"ttl_s and poll_s must be > 0, got {ttl_s} and {poll_s}")
        self.url = url
        self.keys = [key, f"{key}:expiry"]
        self.limit = limit
        self.want_max = min(limit, want_max or limit)
        self.ttl_s = ttl_s
        self.poll_s = poll_s
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self.granted = 0
        self.in_use = 0
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
        self._closing = True
        if self._manager is not None:
            self._manager.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._manager
        try:
            await self._lease(0)
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

    async def _lease(self, want: int) -> None:
        if want < self.granted:
            # Stop handing out the slots being given back before Redis hears of it: a call
            # taking one while the script runs would hold a slot another process is granted.
            self.granted = max(want, self.in_use)
        granted = await self._script(
            keys=self.keys, args=[self.holder, want, self.limit, round(self.ttl_s * 1000)]
        )
        self.granted = int(granted)
        self._dispatch()

    async def _manage(self) -> None:
        loop = asyncio.get_running_loop()
        renewed = loop.time()
        await asyncio.sleep(self.poll_s)  # the calls take their slots before any counting
        while not self._closing:
            want = min(self.want_max, self.in_use + len(self._waiters))
            # Never ask for fewer than the calls in flight hold.
            want = max(want, self.in_use)
            if want != self.granted or loop.time() - renewed > self.ttl_s / 3:
                await self._lease(want)
                renewed = loop.time()
            if self._waiters and self.granted < want:
                await asyncio.sleep(self.poll_s)  # the others hold the slots: ask again soon
                continue
            self._wake.clear()
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can lose a cancellation
            # that arrives as the event is set, and the manager would never stop.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.ttl_s / 3):
                    await self._wake.wait()
            # Let a finished call's coroutine take its next item before counting what is
            # wanted, so a steady run makes no round trip per call.
            await asyncio.sleep(self.poll_s)
