"""``make bench``: executed runs and the LLM judge on the product path.

A real Celery worker on Redis (database 13; the integration tests use 12, 14 and 15) writing to
PostgreSQL, against the loopback model (demo/testing/fakellm.py) in its own process at 200 ms a
call. Every case is repeated ``--repeat`` times, interleaved with its reference, and printed as
the median and range of wall times and the share of ideal (N × latency / calls in flight):

- run, one worker: a run of ``--items`` tasks at concurrency 64 through one worker
  (``celery worker --concurrency=2``, as ``make worker``), timed from ``run_start`` to the run
  completed; reference: the executor alone on the same calls (no Celery, no database).
- run, one worker vs two: the same run with each worker process keeping at most 16 calls in
  flight (``RUN_PROCESS_MAX_IN_FLIGHT=16``), so one worker's two processes reach 32 of the
  run's 64 and a second worker adds the rest: two workers' throughput over one's.
- judge: judging a run of ``--judge-outputs`` outputs with an LLM judge at concurrency 32
  through the worker (``run_judge_start`` to the judging completed); reference: the same
  judge's calls alone (``LLMJudge.ascore_many``, no database).

Needs PostgreSQL (``--database``, default postgres://postgres@127.0.0.1:5432/ev_bench_runs,
dropped and created) and Redis on 127.0.0.1:6379. Prints the load (``uptime``) beside the
figures: on a shared machine they are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REDIS_URL = "redis://127.0.0.1:6379/13"
DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/ev_bench_runs"
SERVER = """
import json, sys
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

with FakeLLMServer(responder=reply, latency=float(sys.argv[1])) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--judge-outputs", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--judge-concurrency", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database", default=DEFAULT_DATABASE)
    args = parser.parse_args()
    os.environ.update(
        DJANGO_SETTINGS_MODULE="enterpriseval.settings",
        ENTERPRISEVAL_ENV="development",
        DATABASE_URL=args.database,
        CELERY_BROKER_URL=REDIS_URL,
        CELERY_TASK_ALWAYS_EAGER="False",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    _recreate_database(args.database)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    _flush_redis()
    print(f"load before: {_uptime()}", flush=True)
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    workers: list[subprocess.Popen[bytes]] = []
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        bench = Bench(args, base_url)
        workers.append(_start_worker("a", {}))
        bench.one_worker(workers)
        _stop(workers)
        bench.one_vs_two_workers(workers)
        _stop(workers)
        workers.append(_start_worker("judge", {}))
        bench.judge()
    finally:
        _stop(workers)
        if server.stdin is not None:
            server.stdin.close()
        server.wait(10)
    print(f"load after: {_uptime()}", flush=True)
    return 0


class Bench:
    def __init__(self, args: argparse.Namespace, base_url: str) -> None:
        from django.contrib.auth import get_user_model

        from charters.models import Role
        from charters.services.configurations import configuration_upload
        from charters.services.task_sets import task_set_import
        from charters.services.use_cases import membership_grant, use_case_create

        self.args = args
        self.base_url = base_url
        users = get_user_model()
        owner = users.objects.create_user(username="bench-owner", password="x")
        self.actor = users.objects.create_user(username="bench-model-owner", password="x")
        self.use_case = use_case_create(
            actor=owner,
            key="BENCH-RUNS",
            name="Runs benchmark",
            business_outcome="Throughput.",
            value_hypothesis="Near ideal.",
            autonomy=1,
            consequence=3,
        )
        membership_grant(
            actor=owner, use_case=self.use_case, user=self.actor, role=Role.MODEL_OWNER
        )
        import yaml

        document = yaml.safe_load((ROOT / "examples/credit_memo/sigma-gemini-2.5.yaml").read_text())
        document["model"] = {"provider": "openai_compatible", "id": "fake", "api_base": base_url}
        document["prompts"]["user_template"] = "{input}\n\nSources:\n{sources}\n"
        self.sigma = configuration_upload(
            actor=self.actor, use_case=self.use_case, name="bench", content=json.dumps(document)
        )
        graded = [
            json.loads(line)
            for line in (ROOT / "examples/credit_memo/tasks.jsonl").read_text().splitlines()
            if json.loads(line)["split"] == "graded"
        ]
        lines = []
        for n in range(max(args.items, args.judge_outputs)):
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
        self.judge_run = None

    # -- runs ------------------------------------------------------------------------------

    def product_run(self, items: int) -> float:
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
        started = time.perf_counter()
        run_start(actor=self.actor, run=run)
        while True:
            status = Run.objects.values_list("status", flat=True).get(pk=run.pk)
            if status != RunStatus.RUNNING:
                break
            time.sleep(0.01)
        wall = time.perf_counter() - started
        run.refresh_from_db()
        if run.status != RunStatus.COMPLETED or run.items_failed:
            raise RuntimeError(f"run {run.pk} ended {run.status}: {run.stop_reason}")
        assert Task.objects.filter(task_set=self.task_set).count() == run.items_done == items
        self.judge_run = run
        return wall

    def executor_alone(self, items: int) -> float:
        from runs.executor import BudgetGuard, OpenAICompatibleClient, WorkItem, execute

        client = OpenAICompatibleClient(
            api_base=self.base_url, model="fake", concurrency=self.args.concurrency
        )
        messages = [{"role": "user", "content": "Draft the source-of-repayment section."}]
        results: list[object] = []
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
        assert len(results) == items
        return wall

    def one_worker(self, workers: list[subprocess.Popen[bytes]]) -> None:
        items, ideal = self.args.items, self._ideal(self.args.items, self.args.concurrency)
        ours, reference = [], []
        for _ in range(self.args.repeat):
            ours.append(self.product_run(items))
            reference.append(self.executor_alone(items))
        _report(
            f"run, 1 worker ({items} calls, concurrency {self.args.concurrency})",
            ours,
            ideal,
        )
        _report("  reference: the executor alone, same calls", reference, ideal)

    def one_vs_two_workers(self, workers: list[subprocess.Popen[bytes]]) -> None:
        items = self.args.items
        limited = {"RUN_PROCESS_MAX_IN_FLIGHT": "16"}
        workers.append(_start_worker("b", limited))
        one, two = [], []
        for _ in range(self.args.repeat):
            one.append(self.product_run(items))
            workers.append(_start_worker("c", limited))
            two.append(self.product_run(items))
            _stop(workers[-1:])
            workers.pop()
        ideal_one = self._ideal(items, 32)
        ideal_two = self._ideal(items, self.args.concurrency)
        _report(f"run, 1 worker × 2 processes × 16 in flight ({items} calls)", one, ideal_one)
        _report(f"run, 2 workers × 2 processes × 16 in flight ({items} calls)", two, ideal_two)
        ratios = [a / b for a, b in zip(one, two, strict=True)]
        print(
            f"  two workers' throughput over one's: median {statistics.median(ratios):.2f}× "
            f"(range {min(ratios):.2f}–{max(ratios):.2f}×; target ≥ 1.8×)",
            flush=True,
        )

    # -- judge -----------------------------------------------------------------------------

    def judge(self) -> None:
        from runs.models import Judging, JudgingStatus, Output
        from runs.services.judging import judge_get_or_create, run_judge_start

        run = self.judge_run
        assert run is not None
        outputs = list(Output.objects.filter(run=run).order_by("pk")[self.args.judge_outputs :])
        # Judge only the first --judge-outputs outputs: the others are marked failed.
        Output.objects.filter(pk__in=[o.pk for o in outputs]).update(status="failed")
        concurrency = self.args.judge_concurrency
        n = Output.objects.filter(run=run, status="succeeded").count()
        ideal = self._ideal(n, concurrency)
        ours, reference = [], []
        items = self._judge_items(run)
        for repetition in range(self.args.repeat):
            judge = judge_get_or_create(
                kind="llm", model_ref="openai/bench-judge", name=f"bench-judge-{repetition}"
            )
            started = time.perf_counter()
            judging = run_judge_start(
                actor=self.actor,
                run=run,
                kind="llm",
                purpose="informational",
                model_ref=judge.model_ref,
                name=judge.name,
                api_base=self.base_url,
                concurrency=concurrency,
            )
            while Judging.objects.values_list("status", flat=True).get(pk=judging.pk) in (
                JudgingStatus.PENDING,
                JudgingStatus.RUNNING,
            ):
                time.sleep(0.01)
            ours.append(time.perf_counter() - started)
            judging.refresh_from_db()
            if judging.status != JudgingStatus.COMPLETED or judging.outputs_judged != n:
                raise RuntimeError(f"judging ended {judging.status}: {judging.error}")
            reference.append(self._judge_alone(items, concurrency))
        _report(f"judge through the worker ({n} outputs, concurrency {concurrency})", ours, ideal)
        _report("  reference: the same judge's calls alone (no database)", reference, ideal)

    def _judge_items(self, run: object) -> list[object]:
        from runs.judges.llm import LLMJudge  # noqa: F401
        from runs.models import Output
        from runs.services.judging import _load_batch, judge_get_or_create

        ids = list(Output.objects.filter(run=run, status="succeeded").values_list("pk", flat=True))
        _, items, _ = _load_batch(ids, judge_get_or_create(kind="llm", model_ref="openai/x"))
        return list(items)

    def _judge_alone(self, items: list[object], concurrency: int) -> float:
        from runs.judges.llm import LLMJudge

        judge = LLMJudge("bench-judge", api_base=self.base_url)
        started = time.perf_counter()
        replies = asyncio.run(judge.ascore_many(items, concurrency=concurrency))  # type: ignore[arg-type]
        wall = time.perf_counter() - started
        assert len(replies) == len(items)
        return wall

    def _ideal(self, calls: int, in_flight: int) -> float:
        return calls * self.args.latency / in_flight


def _report(name: str, walls: list[float], ideal: float) -> None:
    median = statistics.median(walls)
    print(
        f"{name:<72} median {median:6.2f} s (range {min(walls):.2f}–{max(walls):.2f}), "
        f"ideal {ideal:.2f} s, share of ideal {ideal / median:6.1%} "
        f"(range {ideal / max(walls):.1%}–{ideal / min(walls):.1%})",
        flush=True,
    )


def _start_worker(name: str, extra: dict[str, str]) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUN_")}
    env.update(extra)
    log = Path(ROOT / "var" / f"bench-worker-{name}.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    handle = log.open("w")
    worker = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("celery")),
            "-A",
            "enterpriseval",
            "worker",
            "--loglevel=INFO",
            "--concurrency=2",
            "-n",
            f"bench-{name}@%h",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 180
    while " ready." not in log.read_text() and time.monotonic() < deadline:
        if worker.poll() is not None:
            raise RuntimeError(f"worker {name} exited: {log.read_text()[-2000:]}")
        time.sleep(0.1)
    return worker


def _stop(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(60)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
    workers.clear()


def _recreate_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


def _flush_redis() -> None:
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
