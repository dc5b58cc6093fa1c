"""``make bench``: executed runs on the product path.

A real Celery worker on Redis (database 13 by default, ``--redis``; the integration tests use
12, 14 and 15) writing to PostgreSQL, against the loopback model (demo/testing/fakellm.py) in
its own process at 200 ms a call. Every case is repeated ``--repeat`` times, interleaved with
its reference, and printed as the median and range of wall times and the share of ideal
(N × latency / calls in flight), with the worker's CPU per call (user + system seconds of the
worker and all its processes, over the calls) and the mean calls in flight seen by the model
server while the run was executing:

- run, one worker: a run of ``--items`` tasks at concurrency 64 through one worker
  (``celery worker --concurrency=2``, as ``make worker``), timed from ``run_start`` to the run
  completed; reference: the executor alone on the same number of calls (no Celery, no
  database), in this process.
- run, one worker vs two: the same run with each worker process keeping at most 16 calls in
  flight (``RUN_PROCESS_MAX_IN_FLIGHT=16``), so one worker's two processes reach 32 of the
  run's 64 and a second worker adds the rest: two workers' throughput over one's, each
  repetition running one worker then two.

The judge's case is bench/cases_judge.py (the two share bench/workers.py).

Needs PostgreSQL (``--database``, default postgres://postgres@127.0.0.1:5432/ev_bench_runs,
dropped and created) and Redis on 127.0.0.1:6379 (only ``--redis``'s database is flushed).
Prints the load (``uptime``) beside the figures: on a shared machine they are noisy.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

from bench.workers import (
    ROOT,
    bench_use_case,
    graded_tasks,
    model_server,
    product_prepare,
    start_worker,
    stop,
    tree_cpu,
    uptime,
    walls_line,
)

REDIS_URL = "redis://127.0.0.1:6379/13"
DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/ev_bench_runs"
SERVER = """
import json, sys, threading, time
from demo.testing.fakellm import FakeLLMServer

def reply(request):
    messages = request.get("messages") or []
    if messages and "units" in str(messages[-1].get("content", ""))[:4000]:
        try:
            units = json.loads(messages[1]["content"])["units"]
        except (ValueError, KeyError, IndexError, TypeError):
            return "not a judge request"
        return {
            "sentences": [{"key": s["key"], "assertive": "Y", "supported": "fully",
                           "relevant": "Y"} for s in units["sentences"]],
            "cited_chunks": [{"key": c["key"], "citation": "strict"}
                             for c in units["cited_chunks"]],
            "key_elements": [{"key": k["key"], "key_element": "present_correct"}
                             for k in units["key_elements"]],
            "guidance": [{"key": g["key"], "flagged": "N"} for g in units["guidance"]],
        }
    return "The facility is a revolving credit facility [G1-termsheet]. Nothing else is known."

# "mark" starts sampling the calls in flight every 5 ms; "report" prints their mean and max.
samples = []
sampling = threading.Event()

def sample(server):
    while True:
        sampling.wait()
        samples.append(server.in_flight)
        time.sleep(0.005)

with FakeLLMServer(responder=reply, latency=float(sys.argv[1])) as server:
    threading.Thread(target=sample, args=(server,), daemon=True).start()
    print(server.base_url, flush=True)
    for line in sys.stdin:
        if line.strip() == "mark":
            sampling.clear()
            samples.clear()
            sampling.set()
        elif line.strip() == "report":
            sampling.clear()
            time.sleep(0.01)
            taken = list(samples)
            # the mean in flight over each 250 ms (50 samples), for --timeline
            timeline = [round(sum(taken[i:i + 50]) / len(taken[i:i + 50]))
                        for i in range(0, len(taken), 50)]
            print(json.dumps({"mean": sum(taken) / max(1, len(taken)),
                              "max": max(taken, default=0), "timeline": timeline}), flush=True)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database", default=DEFAULT_DATABASE)
    parser.add_argument("--redis", default=REDIS_URL, help="the broker: redis://host:port/db")
    parser.add_argument(
        "--cases", default="one,two", help="comma-separated: one (one worker), two (one vs two)"
    )
    parser.add_argument(
        "--timeline", action="store_true", help="print the calls in flight every 250 ms"
    )
    args = parser.parse_args()
    os.environ.pop("RUN_SLOTS_REDIS_URL", None)  # the lease lives on the broker
    product_prepare(database=args.database, redis=args.redis)
    workers: list[subprocess.Popen[bytes]] = []
    cases = set(args.cases.split(","))
    with model_server([sys.executable, "-c", SERVER, str(args.latency)]) as (server, base_url):
        try:
            bench = Bench(args, server, base_url)
            if "one" in cases:
                workers.append(start_worker("a", {}))
                bench.one_worker(workers)
                stop(workers)
            if "two" in cases:
                bench.one_vs_two_workers(workers)
                stop(workers)
        finally:
            stop(workers)
    print(f"load after: {uptime()}", flush=True)
    return 0


@dataclass(frozen=True)
class Measure:
    """One timed run: wall seconds, the worker's CPU seconds, the mean calls in flight."""

    wall: float
    cpu: float
    in_flight: float


class Bench:
    def __init__(
        self, args: argparse.Namespace, server: subprocess.Popen[str], base_url: str
    ) -> None:
        from charters.services.configurations import configuration_upload
        from charters.services.task_sets import task_set_import

        self.args = args
        self.server = server
        self.base_url = base_url
        owner, self.actor, self.use_case = bench_use_case(key="BENCH-RUNS", name="Runs benchmark")
        import yaml

        document = yaml.safe_load((ROOT / "examples/credit_memo/sigma-gemini-2.5.yaml").read_text())
        document["model"] = {"provider": "openai_compatible", "id": "fake", "api_base": base_url}
        document["prompts"]["user_template"] = "{input}\n\nSources:\n{sources}\n"
        self.sigma = configuration_upload(
            actor=self.actor, use_case=self.use_case, name="bench", content=json.dumps(document)
        )
        graded = graded_tasks()
        lines = []
        for n in range(args.items):
            task = dict(graded[n % len(graded)])
            task["id"] = f"{task['id']}-{n}"
            lines.append(json.dumps(task))
        self.task_set = task_set_import(
            actor=owner,
            use_case=self.use_case,
            name="bench",
            fileobj=io.BytesIO("\n".join(lines).encode()),
            filename="tasks.jsonl",
        )

    # -- runs ------------------------------------------------------------------------------

    def product_run(self, items: int, workers: list[subprocess.Popen[bytes]]) -> Measure:
        from charters.models import Task
        from runs.models import Run, RunStatus
        from runs.services.runs import run_create, run_start

        run = run_create(
            actor=self.actor,
            use_case=self.use_case,
            configuration=self.sigma,
            task_set=self.task_set,
            split="graded",
            repeats=1,
            concurrency=self.args.concurrency,
        )
        cpu = tree_cpu(w.pid for w in workers if w.poll() is None)
        self._server("mark")
        started = time.perf_counter()
        run_start(actor=self.actor, run=run)
        while True:
            status = Run.objects.values_list("status", flat=True).get(pk=run.pk)
            if status != RunStatus.RUNNING:
                break
            time.sleep(0.01)
        wall = time.perf_counter() - started
        report = json.loads(self._server("report"))
        if self.args.timeline:
            print(f"    in flight every 250 ms: {report['timeline']}", flush=True)
        cpu = tree_cpu(w.pid for w in workers if w.poll() is None) - cpu
        run.refresh_from_db()
        if run.status != RunStatus.COMPLETED or run.items_failed:
            raise RuntimeError(f"run {run.pk} ended {run.status}: {run.stop_reason}")
        assert Task.objects.filter(task_set=self.task_set).count() == run.items_done == items
        return Measure(wall, cpu, report["mean"])

    def executor_alone(self, items: int) -> Measure:
        from runs.executor import BudgetGuard, OpenAICompatibleClient, WorkItem, execute

        client = OpenAICompatibleClient(
            api_base=self.base_url, model="fake", concurrency=self.args.concurrency
        )
        messages = [{"role": "user", "content": "Draft the source-of-repayment section."}]
        results: list[object] = []
        cpu = time.process_time()
        self._server("mark")
        started = time.perf_counter()
        execute(
            [WorkItem(i, 0, messages) for i in range(items)],
            client=client,
            concurrency=self.args.concurrency,
            timeout_s=30,
            budget=BudgetGuard(),
            on_batch=results.extend,
        )
        wall = time.perf_counter() - started
        in_flight = json.loads(self._server("report"))["mean"]
        assert len(results) == items
        return Measure(wall, time.process_time() - cpu, in_flight)

    def one_worker(self, workers: list[subprocess.Popen[bytes]]) -> None:
        items, ideal = self.args.items, self._ideal(self.args.items, self.args.concurrency)
        ours, reference = [], []
        for _ in range(self.args.repeat):
            ours.append(self.product_run(items, workers))
            reference.append(self.executor_alone(items))
        _report(
            f"run, 1 worker ({items} calls, concurrency {self.args.concurrency})",
            [m.wall for m in ours],
            ideal,
        )
        _details(ours, items)
        _report("  reference: the executor alone, same calls", [m.wall for m in reference], ideal)
        _details(reference, items)

    def one_vs_two_workers(self, workers: list[subprocess.Popen[bytes]]) -> None:
        items = self.args.items
        limited = {"RUN_PROCESS_MAX_IN_FLIGHT": "16"}
        workers.append(start_worker("b", limited))
        one, two = [], []
        for _ in range(self.args.repeat):
            one.append(self.product_run(items, workers))
            workers.append(start_worker("c", limited))
            two.append(self.product_run(items, workers))
            stop(workers[-1:])
            workers.pop()
        ideal_one = self._ideal(items, 32)
        ideal_two = self._ideal(items, self.args.concurrency)
        _report(
            f"run, 1 worker × 2 processes × 16 in flight ({items} calls)",
            [m.wall for m in one],
            ideal_one,
        )
        _details(one, items)
        _report(
            f"run, 2 workers × 2 processes × 16 in flight ({items} calls)",
            [m.wall for m in two],
            ideal_two,
        )
        _details(two, items)
        ratios = [a.wall / b.wall for a, b in zip(one, two, strict=True)]
        print(
            f"  two workers' throughput over one's: median {statistics.median(ratios):.2f}× "
            f"(range {min(ratios):.2f}–{max(ratios):.2f}×; target ≥ 1.8×)",
            flush=True,
        )

    def _server(self, command: str) -> str:
        """Send the model server a command ("mark", "report"); return its answer to a report."""
        assert self.server.stdin is not None and self.server.stdout is not None
        self.server.stdin.write(command + "\n")
        self.server.stdin.flush()
        return self.server.stdout.readline() if command == "report" else ""

    def _ideal(self, calls: int, in_flight: int) -> float:
        return calls * self.args.latency / in_flight


def _report(name: str, walls: list[float], ideal: float) -> None:
    print(walls_line(name, walls, ideal), flush=True)


def _details(measures: list[Measure], calls: int) -> None:
    """Print the CPU per call and the mean calls in flight: medians and ranges."""
    cpu = [1000 * m.cpu / calls for m in measures]
    flight = [m.in_flight for m in measures]
    print(
        f"{'':<4}CPU per call median {statistics.median(cpu):.2f} ms "
        f"(range {min(cpu):.2f}–{max(cpu):.2f}); calls in flight at the model: mean "
        f"{statistics.median(flight):.1f} (range {min(flight):.1f}–{max(flight):.1f})",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
