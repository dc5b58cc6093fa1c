"""A run's work handed out on demand: pieces of tasks in a Redis list, taken by runners.

On a Redis broker an executed run is not cut into fixed chunks, one per Celery task: its
unfinished tasks are cut into small *pieces* (a few tasks each) pushed to a list in Redis, and
a few Celery tasks — *runners* — each take pieces as their calls need them until the list is
empty. A runner whose process has slots free takes the next piece; none waits at a chunk's end
while another still has a long chunk to go, and the run's last calls are spread over every
process that has slots (bench/cases_runs.py: the tail of a run of fixed chunks left one of
four processes working alone).

A piece is moved atomically (``LMOVE``) from the run's list to the runner's own list, so a
runner that dies loses nothing: its Celery task is delivered again (``acks_late``,
``reject_on_worker_lost``) and the new runner with the same name first takes back the pieces
of its own list; what was written is skipped (writes are keyed by run, task and repeat).
A runner that ends normally has written every piece it took and deletes its list.

No Django import: :mod:`runs.services.runs` uses it.
"""

from __future__ import annotations

import json
from typing import Any

#: Seconds the lists live in Redis without a push (a run abandoned mid-way cleans up itself).
TTL_S = 7 * 24 * 3600


# KEYS: the run's list, the runner's list; ARGV: how many pieces, the TTL in seconds.
TAKE_SCRIPT = """
local taken = {}
for i = 1, tonumber(ARGV[1]) do
  local piece = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not piece then break end
  taken[#taken + 1] = piece
end
if #taken > 0 then redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2])) end
return taken
"""


def run_pieces_key(run_id: int, database: str) -> str:
    """Return the Redis key prefix of a run's pieces (``database`` as :func:`run_slots_key`)."""
    return f"enterpriseval:{database}:run:{run_id}:pieces"


class PieceQueue:
    """The pieces of one run in Redis: ``push`` them, ``take`` one per call, ``forget`` at
    the end. Each piece is a list of task primary keys."""

    def __init__(self, *, url: str, key: str) -> None:
        import redis

        self.todo = f"{key}:todo"
        self.key = key
        self._redis: Any = redis.Redis.from_url(url)
        self._take = self._redis.register_script(TAKE_SCRIPT)

    def push(self, pieces: list[list[int]]) -> None:
        """Replace the pieces still to take with ``pieces`` (a run started again)."""
        pipe = self._redis.pipeline(transaction=True)
        pipe.delete(self.todo)
        if pieces:
            pipe.rpush(self.todo, *(json.dumps(piece) for piece in pieces))
            pipe.expire(self.todo, TTL_S)
        pipe.execute()

    def taken(self, runner: str) -> list[list[int]]:
        """Return the pieces ``runner`` took before (a runner delivered again)."""
        return [json.loads(raw) for raw in self._redis.lrange(self._doing(runner), 0, -1)]

    def take(self, runner: str, count: int = 1) -> list[list[int]]:
        """Move up to ``count`` pieces to ``runner``'s own list (one round trip, atomic) and
        return them; an empty list when none is left."""
        raws = self._take(keys=[self.todo, self._doing(runner)], args=[count, TTL_S])
        return [list(json.loads(raw)) for raw in raws]

    def tasks_left(self) -> int:
        """Return how many tasks are in the pieces no runner has taken yet."""
        return sum(len(json.loads(raw)) for raw in self._redis.lrange(self.todo, 0, -1))

    def forget(self, runner: str) -> None:
        """Drop ``runner``'s list: every piece it took is written."""
        self._redis.delete(self._doing(runner))

    def close(self) -> None:
        self._redis.close()

    def _doing(self, runner: str) -> str:
        return f"{self.key}:doing:{runner}"
