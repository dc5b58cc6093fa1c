"""The executor benchmark's peer: the same workload run by inspect_ai against the same server.

Runs in .venv-inspect (bench/requirements-inspect.txt), not in the product's environment.
Usage: ``python bench/inspect_peer.py BASE_URL CALLS CONCURRENCY``; prints one JSON line
with the wall time of ``eval`` (imports and task construction are not on the clock).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time


def main() -> int:
    base_url, calls, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.environ["FAKE_BASE_URL"] = base_url
    os.environ["FAKE_API_KEY"] = "bench"
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    samples = [
        Sample(input="Draft the source-of-repayment section.", target="x", id=i)
        for i in range(calls)
    ]
    task = Task(dataset=samples, solver=[generate()])
    with tempfile.TemporaryDirectory() as log_dir:
        started = time.perf_counter()
        logs = eval(
            task,
            model="openai-api/fake/fake",
            max_connections=concurrency,
            max_samples=concurrency,
            log_dir=log_dir,
            display="none",
            fail_on_error=False,
        )
        wall = time.perf_counter() - started
        completed = sum(1 for sample in (logs[0].samples or []) if sample.error is None)
    print(json.dumps({"wall": wall, "completed": completed, "status": logs[0].status}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
