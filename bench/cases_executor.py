"""``make bench-executor``: the run executor against a 200 ms loopback model.

4,000 calls at concurrency 64 through :class:`runs.executor.OpenAICompatibleClient`; the fake
provider runs in its own process so it does not share the executor's interpreter lock. The
peer, inspect_ai, runs the same workload against the same server in its own environment.
In each of ``--repetitions`` (≥ 3) repetitions ours and the peer run back to back, in
alternating order (ours first, then the peer first, …: ``bench.harness.interleaved_order``).
Prints, as median (min–max) over the repetitions, each side's wall time, the ideal
N · latency / concurrency over our wall time (RECIPES.md reports 95–96 % of ideal for raw
aiohttp on this kind of machine), our CPU per call and the wall ratio ours/inspect_ai.
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

from bench.harness import MIN_REPETITIONS, OURS, Spread, interleaved_order
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
    parser.add_argument("--repetitions", type=int, default=3, help="interleaved repetitions")
    args = parser.parse_args()
    if args.repetitions < MIN_REPETITIONS:
        parser.error(f"--repetitions: at least {MIN_REPETITIONS}")
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    ours: list[tuple[float, float, list[ItemResult]]] = []
    peers: list[float] = []
    load = os.getloadavg()[0]
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        peer_ready = Path(args.peer_python).exists()
        if not peer_ready:
            print(f"inspect_ai peer skipped: {args.peer_python} is missing (run `make bench`)")
        for first, second in interleaved_order(args.repetitions):
            for side in (first, second):
                if side == OURS:
                    ours.append(run_ours(args, base_url))
                elif peer_ready:
                    peer = run_peer(args, base_url)
                    if peer is not None:
                        peers.append(peer["wall"])
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(10)
    load = (load + os.getloadavg()[0]) / 2
    ideal = args.calls * args.latency / args.concurrency
    walls = Spread.of([wall for wall, _cpu, _results in ours])
    shares = Spread.of([ideal / wall for wall, _cpu, _results in ours])
    cpu = Spread.of([cpu / args.calls for _wall, cpu, _results in ours])
    failed = sum(not r.ok for _wall, _cpu, results in ours for r in results)
    print(
        f"executor: {args.calls} calls, {args.latency * 1000:.0f} ms latency, concurrency "
        f"{args.concurrency}, {len(ours)} repetitions, load average {load:.1f} on "
        f"{os.cpu_count()} CPUs; median (min–max):\n"
        f"  wall {walls.median:.2f} s ({walls.low:.2f}–{walls.high:.2f}), ideal {ideal:.2f} s, "
        f"ideal/wall {shares.median:.1%} ({shares.low:.1%}–{shares.high:.1%}), CPU "
        f"{cpu.median * 1000:.2f} ms per call ({cpu.low * 1000:.2f}–{cpu.high * 1000:.2f}), "
        f"{failed} failed"
    )
    if len(peers) == len(ours):
        peer_walls = Spread.of(peers)
        ratios = Spread.of([wall / peer for (wall, _c, _r), peer in zip(ours, peers, strict=True)])
        print(
            f"inspect_ai (same server, same workload): wall {peer_walls.median:.2f} s "
            f"({peer_walls.low:.2f}–{peer_walls.high:.2f}); ours/inspect_ai wall ratio "
            f"{ratios.median:.2f} ({ratios.low:.2f}–{ratios.high:.2f})"
        )
    complete = all(len(results) == args.calls for _wall, _cpu, results in ours)
    return 1 if failed or not complete else 0


def run_ours(args: argparse.Namespace, base_url: str) -> tuple[float, float, list[ItemResult]]:
    """Run the workload through our executor; return its wall and CPU seconds and results."""
    client = OpenAICompatibleClient(api_base=base_url, model="fake", concurrency=args.concurrency)
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
    return time.perf_counter() - started, time.process_time() - cpu, results


def run_peer(args: argparse.Namespace, base_url: str) -> dict | None:
    """Run the workload with inspect_ai in its own environment; None if it failed."""
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
