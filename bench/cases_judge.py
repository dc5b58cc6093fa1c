"""``make bench``: judging a run with the LLM judge on the product path (issue 18, Deliver 4).

Ours: ``run_judge_start`` → a real Celery worker (``celery worker --concurrency=2``, as ``make
worker``) on Redis (``--redis``, database 8 by default; only that database is flushed) →
PostgreSQL (``--database``, dropped and created) → the judging completed, timed by polling its
status. The run holds exactly ``--outputs`` outputs (the example's outputs tiled, imported with
``output_import``, so their units are the product's), every one judged in each repetition (a
new judge name per repetition: nothing is skipped). The judge calls the loopback model
(demo/testing/fakellm.py, in its own process, ``--latency`` seconds a call) at the judging's
concurrency (``--concurrency``; the product's default is 32).

Reference, interleaved with ours in each of ``--repeat`` repetitions: the same judge's calls
alone, ``LLMJudge.ascore_many`` on the same items at the same concurrency, no Celery and no
database. Ideal: outputs × latency / concurrency. Printed: median and range of wall times,
share of ideal (target ≥ 90 %), and CPU seconds per judged output — the worker's process tree
for ours, this process for the reference, the model server's beside them — since the machine
is shared and wall times are noisy (``uptime`` is printed before and after).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from bench import workers

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/ev_bench_judge"
DEFAULT_REDIS = "redis://127.0.0.1:6379/8"
TARGET = 0.9


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float  # seconds, the judging side (worker tree or this process)
    server_cpu: float  # seconds, the model server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, default=2000, help="outputs judged per judging")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call")
    parser.add_argument("--concurrency", type=int, default=32, help="the judging's calls in flight")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database", default=DEFAULT_DATABASE)
    parser.add_argument("--redis", default=DEFAULT_REDIS)
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        return _serve(args.serve)
    workers.product_prepare(database=args.database, redis=args.redis)
    argv = [sys.executable, "-m", "bench.cases_judge", "--serve", str(args.latency)]
    with workers.model_server(argv) as (server, base_url):
        world = World(args.outputs)
        worker = workers.start_worker("judge", {})
        ours, reference = [], []
        try:
            for repetition in range(args.repeat):
                ours.append(world.judge_through_worker(repetition, base_url, args, worker, server))
                reference.append(world.judge_alone(base_url, args, server))
        finally:
            workers.stop([worker])
    ideal = args.outputs * args.latency / args.concurrency
    _report(
        f"judge through the worker ({args.outputs} outputs, concurrency {args.concurrency})",
        ours,
        ideal,
        args.outputs,
    )
    alone = "  reference: the same judge's calls alone (no database)"
    _report(alone, reference, ideal, args.outputs)
    print(f"load after: {workers.uptime()}", flush=True)
    return 0


class World:
    """A use case, σ, a task set and one imported run of ``outputs`` outputs to judge."""

    def __init__(self, outputs: int) -> None:
        from charters.services.configurations import configuration_upload
        from charters.services.task_sets import task_set_import
        from runs.models import Output, OutputStatus, Unit
        from runs.services.outputs import output_import

        owner, self.actor, use_case = workers.bench_use_case(
            key="BENCH-JUDGE", name="Judge benchmark"
        )
        sigma = configuration_upload(
            actor=self.actor,
            use_case=use_case,
            name="bench",
            content=(workers.EXAMPLE / "sigma-gemini-2.5.yaml").read_text(),
        )
        graded = workers.graded_tasks()
        example = {}
        lines = (workers.EXAMPLE / "outputs-gemini-2-5.jsonl").read_text().splitlines()
        for record in map(json.loads, lines):
            example.setdefault(record["task_id"], record)
        tasks, records = [], []
        for n in range(outputs):
            task = dict(graded[n % len(graded)])
            records.append({**example[task["id"]], "task_id": f"{task['id']}~{n}", "repeat": 0})
            task["id"] = f"{task['id']}~{n}"
            tasks.append(task)
        task_set = task_set_import(
            actor=owner,
            use_case=use_case,
            name="bench",
            fileobj=io.BytesIO("\n".join(map(json.dumps, tasks)).encode()),
            filename="tasks.jsonl",
        )
        self.run = output_import(
            actor=self.actor,
            use_case=use_case,
            configuration=sigma,
            task_set=task_set,
            split="graded",
            repeats=1,
            fileobj=io.BytesIO("\n".join(map(json.dumps, records)).encode()),
            filename="outputs.jsonl",
        )
        judged = Output.objects.filter(run=self.run, status=OutputStatus.SUCCEEDED)
        if judged.count() != outputs or judged.filter(units__isnull=True).exists():
            raise RuntimeError(f"run {self.run.pk}: expected {outputs} outputs, all with units")
        units = Unit.objects.filter(output__run=self.run).count()
        print(f"run {self.run.pk}: {outputs} outputs, {units} units to judge", flush=True)
        self.items = self._items()

    def judge_through_worker(
        self,
        repetition: int,
        base_url: str,
        args: argparse.Namespace,
        worker: subprocess.Popen[bytes],
        server: subprocess.Popen[str],
    ) -> Sample:
        """Judge every output through the worker; return the wall time and CPU it took."""
        from runs.models import Judging, JudgingStatus
        from runs.services.judging import run_judge_start

        worker_cpu, server_cpu = workers.tree_cpu([worker.pid]), workers.tree_cpu([server.pid])
        started = time.perf_counter()
        judging = run_judge_start(
            actor=self.actor,
            run=self.run,
            kind="llm",
            purpose="informational",
            model_ref="openai/bench-judge",
            name=f"bench-judge-{repetition}",
            api_base=base_url,
            concurrency=args.concurrency,
        )
        active = (JudgingStatus.PENDING, JudgingStatus.RUNNING)
        while Judging.objects.values_list("status", flat=True).get(pk=judging.pk) in active:
            time.sleep(0.02)
        wall = time.perf_counter() - started
        sample = Sample(
            wall,
            workers.tree_cpu([worker.pid]) - worker_cpu,
            workers.tree_cpu([server.pid]) - server_cpu,
        )
        judging.refresh_from_db()
        if judging.status != JudgingStatus.COMPLETED or judging.outputs_judged != args.outputs:
            raise RuntimeError(
                f"judging {judging.pk} ended {judging.status} with {judging.outputs_judged} of "
                f"{args.outputs} outputs judged: {judging.error}"
            )
        return sample

    def judge_alone(
        self, base_url: str, args: argparse.Namespace, server: subprocess.Popen[str]
    ) -> Sample:
        """Make the same judge's calls on the same items, without Celery or the database."""
        from runs.judges.llm import JudgeResult, LLMJudge

        judge = LLMJudge("openai/bench-judge", api_base=base_url)
        server_cpu, cpu = workers.tree_cpu([server.pid]), time.process_time()
        started = time.perf_counter()
        replies = asyncio.run(judge.ascore_many(self.items, concurrency=args.concurrency))
        wall = time.perf_counter() - started
        sample = Sample(
            wall, time.process_time() - cpu, workers.tree_cpu([server.pid]) - server_cpu
        )
        failed = sum(not isinstance(reply, JudgeResult) for reply in replies)
        if failed or len(replies) != args.outputs:
            raise RuntimeError(f"reference: {failed} of {len(replies)} calls failed")
        return sample

    def _items(self) -> list[Any]:
        from runs.models import Output
        from runs.services.judging import _load_batch, judge_get_or_create

        ids = list(Output.objects.filter(run=self.run).values_list("pk", flat=True))
        judge = judge_get_or_create(kind="llm", model_ref="openai/bench-judge", name="bench-items")
        return _load_batch(ids, judge)[1]


def _serve(latency: float) -> int:
    """Serve the loopback model, answering judge requests with a valid reply; print its URL."""
    from demo.testing.fakellm import FakeLLMServer
    from runs.judges.rubric import QUESTIONS_BY_KIND, REPLY_SECTIONS

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        units = json.loads(request["messages"][-1]["content"])["units"]
        return {
            section: [
                {"key": unit["key"], **{q.name: q.labels[0] for q in QUESTIONS_BY_KIND[kind]}}
                for unit in units[section]
            ]
            for kind, section in REPLY_SECTIONS.items()
        }

    with FakeLLMServer(responder=reply, latency=latency) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()
    return 0


def _report(name: str, samples: list[Sample], ideal: float, outputs: int) -> None:
    walls = [s.wall for s in samples]
    per_output = [1e3 * s.cpu / outputs for s in samples]
    server = [1e3 * s.server_cpu / outputs for s in samples]
    print(
        workers.walls_line(name, walls, ideal, f"; target ≥ {TARGET:.0%}") + "\n"
        f"{'':<4}CPU per output: {statistics.median(per_output):.2f} ms "
        f"(range {min(per_output):.2f}–{max(per_output):.2f}); model server "
        f"{statistics.median(server):.2f} ms",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
