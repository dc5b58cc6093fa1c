"""``make bench-executor``: the run executor against a 200 ms loopback model.

4,000 calls at concurrency 64 through :class:`runs.executor.OpenAICompatibleClient`; the fake
provider runs in its own process so it does not share the executor's interpreter lock.
Prints wall time, the ideal N · latency / concurrency and their ratio (RECIPES.md reports
95–96 % of ideal for raw aiohttp on this kind of machine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from runs.executor import BudgetGuard, ItemResult, OpenAICompatibleClient, WorkItem, execute

PEER_PYTHON = Path(__file__).resolve().parents[1] / ".venv-inspect" / "bin" / "python"
SERVER = (
    "import sys, time\n"
    "from demo.testing.fakellm import FakeLLMServer\n"
    "with FakeLLMServer(latency=float(sys.argv[1])) as s:\n"
    "    print(s.base_url, flush=True)\n"
    "    sys.stdin.read()\n"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument(
        "--peer-python",
        default=str(PEER_PYTHON),
        help="Python of the environment with inspect_ai (made by `make bench`)",
    )
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        client = OpenAICompatibleClient(
            api_base=base_url, model="fake", concurrency=args.concurrency
        )
        messages = [{"role": "user", "content": "Draft the source-of-repayment section."}]
        items = [WorkItem(i, 0, messages) for i in range(args.calls)]
        results: list[ItemResult] = []
        cpu = time.process_time()
        started = time.perf_counter()
        execute(
            items,
            client=client,
            concurrency=args.concurrency,
            timeout_s=30,
            budget=BudgetGuard(),
            on_batch=results.extend,
        )
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu
        peer = run_peer(args, base_url)
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(10)
    ideal = args.calls * args.latency / args.concurrency
    failed = sum(not r.ok for r in results)
    print(
        f"executor: {args.calls} calls, {args.latency * 1000:.0f} ms latency, concurrency "
        f"{args.concurrency}: wall {wall:.2f} s, ideal {ideal:.2f} s, ideal/wall "
        f"{ideal / wall:.1%}, CPU {cpu / args.calls * 1000:.2f} ms per call, {failed} failed"
    )
    if peer is not None:
        print(
            f"inspect_ai (same server, same workload): wall {peer['wall']:.2f} s, "
            f"{peer['completed']} completed; ours/inspect_ai wall ratio {wall / peer['wall']:.2f}"
        )
    return 1 if failed or len(results) != args.calls else 0


def run_peer(args: argparse.Namespace, base_url: str) -> dict | None:
    """Run the workload with inspect_ai in its own environment; None if it is not set up."""
    if not Path(args.peer_python).exists():
        print(f"inspect_ai peer skipped: {args.peer_python} is missing (run `make bench`)")
        return None
    peer = Path(__file__).with_name("inspect_peer.py")
    result = subprocess.run(
        [args.peer_python, str(peer), base_url, str(args.calls), str(args.concurrency)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if result.returncode != 0:
        print(f"inspect_ai peer failed: {result.stderr.strip()[-2000:]}")
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    sys.exit(main())
