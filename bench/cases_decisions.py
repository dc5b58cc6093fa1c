"""``make bench`` (decisions part): recording a decision at 1,000, 2,000 and 10,000 outputs.

Builds the demo's credit-memo example (both σ's runs judged offline, the simulated graders'
closed session, the oversight study) in a scratch database, then tiles the first σ's run to
each size: every output is copied at new repeat indices with its units and its judge scores,
so the judge has scored all N outputs and the humans graded the session's sample, as at a bank
where a calibrated judge scores everything and experts grade a few hundred (SPEC §5.2).

At each size, in each of ``--repeats`` repetitions, two cases run interleaved:

- ``decision``: ``gates.services.decision_create``, the service behind the web form, the REST
  API and ``enterpriseval decide`` (refusal checks, every charter metric estimated, the gate,
  the value model's Monte Carlo, the record with its hashes and audit entry), rolled back after
  each repetition so the same decision can be recorded again;
- ``floor``: reading the run's evidence once, the least any decision must do: the outputs, the
  units and the judge scores of the run, in one query each, into Python lists.

Prints per size the median and the range of the repetitions, the time per 1,000 outputs, the
query count of one decision and its peak Python memory (tracemalloc, in a separate untimed
pass), and the process CPU time (on SQLite the database works in the process, so CPU time is
what a decision costs when the machine is not shared). Targets (issue 18): < 2 s in all at
2,000 outputs, < 1 s per 1,000 outputs at 10,000. Exits 1 if a target is missed or the query
count grows with the size.

``--database-url postgres://…/NAME`` measures on PostgreSQL (a scratch ``test_NAME`` is created
and dropped); by default a scratch SQLite file.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "enterpriseval.test_settings")

#: size → target seconds for one decision (None: reported only).
TARGETS: dict[int, float | None] = {1000: None, 2000: 2.0, 10000: 10.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="repetitions (≥ 3)")
    parser.add_argument(
        "--sizes", default="1000,2000,10000", help="outputs in the tiled run, comma-separated"
    )
    parser.add_argument("--database-url", default="", help="postgres://… (default: SQLite)")
    options = parser.parse_args()
    if options.repeats < 3:
        parser.error("--repeats: at least 3 repetitions")
    sizes = sorted(int(size) for size in options.sizes.split(","))
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        os.environ["CACHE_URL"] = f"filecache://{scratch / 'cache'}?max_entries=5000"
        os.environ["ENTERPRISEVAL_VAR_DIR"] = str(scratch / "var")
        os.environ["DATABASE_URL"] = options.database_url or f"sqlite:///{scratch / 'x.sqlite3'}"
        import django

        django.setup()
        from django.db import connection

        if connection.vendor == "sqlite":
            connection.settings_dict["TEST"]["NAME"] = str(scratch / "bench.sqlite3")
        name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
        try:
            return run(options, sizes)
        finally:
            connection.creation.destroy_test_db(name, verbosity=0)


def build() -> dict[str, Any]:
    """Load the demo's example and return what a decision on the first σ's run needs."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from charters.models import Charter
    from demo.grading import demo_grading, demo_oversight
    from demo.loaders import demo_evaluation_object, demo_runs
    from runs.services.judging import judge_get_or_create

    started = time.perf_counter()
    example = Path(settings.BASE_DIR) / "examples" / "credit_memo"
    print("building the demo's example in a scratch database …", flush=True)

    def quiet(_line: str) -> None:
        pass

    objects = demo_evaluation_object(example_dir=example, log=quiet)
    runs = demo_runs(objects=objects, example_dir=example, log=quiet)
    grading = demo_grading(objects=objects, runs=runs, log=quiet)
    oversight = demo_oversight(objects=objects, runs=runs, log=quiet)
    print(f"built in {time.perf_counter() - started:.0f} s", flush=True)
    return {
        "actor": get_user_model().objects.get(username="demo-owner"),
        "charter": Charter.objects.frozen().filter(use_case=objects.use_case).latest("version"),
        "run": runs[0].run,
        "session": grading.session,
        "judge": judge_get_or_create(kind="offline"),
        "oversight_study": oversight.study,
    }


def floor(run: Any, judge: Any) -> int:
    """Read the run's outputs, units and judge scores once each (the evidence's floor)."""
    from runs.models import JudgeScore, Output, Unit

    outputs = list(Output.objects.filter(run=run).values_list("pk", "task_id", "success"))
    units = list(Unit.objects.filter(output__run=run).values_list("pk", "output_id", "kind"))
    scores = list(
        JudgeScore.objects.filter(judge=judge, unit__output__run=run).values_list(
            "unit_id", "criterion", "score"
        )
    )
    return len(outputs) + len(units) + len(scores)


def run(options: argparse.Namespace, sizes: list[int]) -> int:
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from demo.testing.tiling import tile_run
    from gates.services import decision_create

    objects = build()
    target = objects["run"]
    original_k = target.repeats
    load = os.getloadavg()
    print(f"{connection.vendor}; load average {load[0]:.1f} on {os.cpu_count()} CPUs", flush=True)

    def decide() -> Any:
        # Recorded, then rolled back: the next repetition records the same decision again
        # (an identical decision is otherwise refused as already recorded).
        with transaction.atomic():
            decision = decision_create(**objects)
            transaction.set_rollback(True)
        return decision

    cases: dict[str, Callable[[], Any]] = {
        "decision": decide,
        "floor": lambda: floor(target, objects["judge"]),
    }
    failed = False
    query_counts = []
    print(
        f"\n{'outputs':>8} {'units':>8} {'case':<9} {'median':>9} {'range':>19} "
        f"{'CPU':>8} {'per 1k':>8} {'queries':>8} {'peak MiB':>9} target"
    )
    for size in sizes:
        outputs = tile_run(target, original_k=original_k, size=size)
        from runs.models import Unit

        units = Unit.objects.filter(output__run=target).count()
        decide()  # warm-up: imports, matplotlib, caches
        times: dict[str, list[float]] = {name: [] for name in cases}
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(options.repeats):
            for name, case in cases.items():
                started, cpu_started = time.perf_counter(), time.process_time()
                case()
                times[name].append(time.perf_counter() - started)
                cpu[name].append(time.process_time() - cpu_started)
        with CaptureQueriesContext(connection) as captured:
            decision = decide()
        queries = len(captured.captured_queries)
        query_counts.append(queries)
        tracemalloc.start()
        decide()
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        for name in cases:
            median = statistics.median(times[name])
            low, high = min(times[name]), max(times[name])
            verdict = ""
            if name == "decision":
                goal = TARGETS.get(size)
                if goal is not None:
                    ok = median < goal
                    failed |= not ok
                    verdict = f"< {goal:.0f} s {'ok' if ok else 'MISSED'}"
            print(
                f"{outputs:>8} {units:>8} {name:<9} {median:8.3f}s "
                f"{low:8.3f}–{high:.3f} s {statistics.median(cpu[name]):7.3f}s "
                f"{median / outputs * 1000:7.3f}s "
                f"{queries if name == 'decision' else '':>8} "
                f"{f'{peak:9.1f}' if name == 'decision' else '':>9} {verdict}",
                flush=True,
            )
        print(f"{'':>8} decision {decision.pk}: {decision.status}", flush=True)
    if len(set(query_counts)) > 1:
        print(f"query count grows with the size: {query_counts}", file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
