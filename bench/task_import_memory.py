"""Task-set import at scale: wall time and peak memory against the number of lines.

``python -m bench.task_import_memory`` generates task files of 20,000 and 100,000 lines
(each task with 3 sources, 4 key elements and 2 guidance items) into a temporary folder and
imports each through ``task_set_import`` on the configured database engine (SQLite by
default, PostgreSQL with ``DATABASE_URL``), in a throwaway test database so nothing is left
behind. Each size runs in a fresh process, twice: once plain (wall time and the rise of the
peak resident set size) and once under ``tracemalloc`` (peak of Python allocations during
the import; slower, so its wall time is not the one reported).

If memory is bounded, the peaks barely move between 20,000 and 100,000 lines; the only
part that grows is the reader's cross-line index, about 70 bytes a task.

Options: ``--lines N`` (repeatable) and ``--single N [--tracemalloc]`` (one measurement in
this process; used by the runner).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "enterpriseval.test_settings")

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SIZES = (20_000, 100_000)
WORDS = (
    "revenue",
    "ebitda",
    "margin",
    "leverage",
    "covenant",
    "headroom",
    "liquidity",
    "revolver",
    "term",
    "loan",
    "cash",
    "flow",
    "capex",
    "interest",
    "cover",
    "borrower",
    "facility",
    "collateral",
    "valuation",
    "customers",
    "sector",
    "forecast",
    "audited",
    "filing",
    "quarter",
    "trailing",
    "twelve",
    "months",
    "net",
    "debt",
    "amortisation",
)


def write_task_file(path: Path, lines: int, *, seed: int = 0) -> int:
    """Write a valid task file of ``lines`` tasks (80 % graded, 10 % dev, 10 % stress).

    Each task has 3 sources, 4 key elements and 2 guidance items. Returns the file size.
    """
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for n in range(1, lines + 1):
            split = "dev" if n % 10 == 1 else "stress" if n % 10 == 2 else "graded"
            figures = [round(rng.uniform(10, 2500), 1) for _ in range(4)]
            words = " ".join(rng.choices(WORDS, k=18))
            task = {
                "id": f"t{n:07d}",
                "split": split,
                "input": f"Draft memo section {n % 13 + 1} for borrower {n}: {words}.",
                "sources": [
                    {
                        "id": f"c{k}",
                        "source": f"annual report p.{rng.randint(1, 120)}",
                        "text": f"Borrower {n} reported {WORDS[k]} of ${figures[k]} million "
                        f"in FY2024; {words}.",
                    }
                    for k in range(3)
                ],
                "key_elements": [
                    {"id": f"ke{k}", "text": f"{WORDS[k]} ${figures[k]} million (FY2024)"}
                    for k in range(4)
                ],
                "guidance": [
                    {"id": "CP-01", "text": "State the accounting period of every figure."},
                    {"id": "CP-05", "text": "State covenant headroom.", "mandatory": False},
                ],
                "reference": f"Reference draft for task {n}.",
                "expected_abstention": split == "stress" and n % 20 == 2,
                "metadata": {"section": n % 13 + 1, "borrower": n},
            }
            out.write(json.dumps(task) + "\n")
    return path.stat().st_size


def measure_one(lines: int, *, trace: bool) -> dict[str, float]:
    """Import a generated file of ``lines`` tasks in a fresh test database; return figures."""
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import setup_test_environment

    from charters.models import Role, Task
    from charters.services.task_sets import task_set_import
    from charters.services.use_cases import membership_grant, use_case_create

    settings.DEBUG = False  # a DEBUG connection keeps the SQL of every query in memory
    setup_test_environment()
    with tempfile.TemporaryDirectory(prefix="enterpriseval-bench-") as folder:
        # A database of its own: never the one a concurrent test run is using.
        if connection.vendor == "sqlite":
            test_db = str(Path(folder) / "bench.sqlite3")
        else:
            test_db = f"test_enterpriseval_bench_{os.getpid()}"
        settings.DATABASES["default"]["TEST"]["NAME"] = test_db
        test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
        try:
            path = Path(folder) / f"tasks-{lines}.jsonl"
            size = write_task_file(path, lines)
            owner = get_user_model().objects.create_user(username="bench-owner")
            use_case = use_case_create(
                actor=owner,
                key="BENCH",
                name="Task import bench",
                business_outcome="-",
                value_hypothesis="-",
                autonomy=1,
                consequence=2,
            )
            membership_grant(actor=owner, use_case=use_case, user=owner, role=Role.MODEL_OWNER)
            rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            if trace:
                tracemalloc.start()
            started = time.perf_counter()
            with path.open("rb") as fileobj:
                task_set = task_set_import(
                    actor=owner,
                    use_case=use_case,
                    name="bench",
                    fileobj=fileobj,
                    filename=path.name,
                )
            wall = time.perf_counter() - started
            traced_peak = tracemalloc.get_traced_memory()[1] if trace else 0
            if trace:
                tracemalloc.stop()
            rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            stored = Task.objects.filter(task_set=task_set).count()
            if stored != lines:
                raise RuntimeError(f"imported {stored} tasks, expected {lines}")
        finally:
            connection.creation.destroy_test_db(test_name, verbosity=0)
    return {
        "lines": lines,
        "file_mb": size / 2**20,
        "wall_s": wall,
        "rss_rise_mb": (rss_after - rss_before) / 1024,  # ru_maxrss is in KiB on Linux
        "traced_peak_mb": traced_peak / 2**20,
    }


def run_in_subprocess(lines: int, *, trace: bool) -> dict[str, float]:
    command = [sys.executable, "-m", "bench.task_import_memory", "--single", str(lines)]
    if trace:
        command.append("--tracemalloc")
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, action="append")
    parser.add_argument("--single", type=int)
    parser.add_argument("--tracemalloc", action="store_true")
    args = parser.parse_args(argv)
    if args.single:
        print(json.dumps(measure_one(args.single, trace=args.tracemalloc)))
        return 0
    from django.conf import settings

    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    print(f"task-set import on {engine}")
    print(
        f"{'lines':>8} {'file MB':>8} {'wall s':>8} {'tasks/s':>8} {'RSS rise MB':>12} "
        f"{'traced peak MB':>15}"
    )
    for lines in args.lines or DEFAULT_SIZES:
        plain = run_in_subprocess(lines, trace=False)
        traced = run_in_subprocess(lines, trace=True)
        print(
            f"{lines:>8,} {plain['file_mb']:>8.1f} {plain['wall_s']:>8.1f} "
            f"{lines / plain['wall_s']:>8,.0f} {plain['rss_rise_mb']:>12.1f} "
            f"{traced['traced_peak_mb']:>15.1f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
