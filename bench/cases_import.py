"""``make bench-import``: output import on the product path, beside its floors.

The worked example's graded tasks are tiled to ``--tasks`` tasks (5,000 by default) and its
outputs (examples/credit_memo/outputs-gemini-2-5.jsonl) to K repeats of each: 20,000 outputs
(about 350,000 units) at K = 4. Each repetition, interleaved, times:

- ours: ``output_import`` of the file, whole (read, check, split, write), and its write phase
  (the time inside the writes of the batches, outputs, trajectories and units);
- the serial floor: the product's splitter (``runs.segment.build_units``) over the same texts
  in this one process, plus a Django ``bulk_create`` of the same Output and Unit rows, into
  another run; its ``bulk_create`` alone is the write floor on SQLite;
- on PostgreSQL, a COPY of the same rows (outputs with ids drawn from their sequence, then
  units): the write floor there.

Targets (issue 18, Deliver 2): whole import ≤ 0.8× the serial floor; write phase ≤ 1.2×
``bulk_create`` on SQLite and ≤ 2× COPY on PostgreSQL. Then memory: imports of 20,000
outputs (K = 4) and of about 1,000,000 units (K = 12, 60,000 outputs), each in a fresh
process, report the importing process's peak resident set size during the import less its
size just before; flat memory means the two rises are about equal (the splitting
processes hold one part of a batch each).

Runs on SQLite by default (a file in a temporary folder) or on PostgreSQL with
``--database postgres://…`` (the database is dropped and created). Prints the load average
beside the figures: on a shared machine they are noisy.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench.workers import recreate_database

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "credit_memo"
MILLION_REPEATS = 12


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=4, help="K: outputs per task")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of each case")
    parser.add_argument("--database", default="", help="postgres://…; default: SQLite")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--memory-import", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    folder = Path(os.environ.get("BENCH_IMPORT_DIR") or tempfile.mkdtemp(prefix="ev-bench-import-"))
    url = args.database or f"sqlite:///{folder / 'bench.sqlite3'}"
    os.environ.update(
        DJANGO_SETTINGS_MODULE="enterpriseval.settings",
        ENTERPRISEVAL_ENV="development",
        DATABASE_URL=url,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        BENCH_IMPORT_DIR=str(folder),
    )
    if args.memory_import:
        print(json.dumps(_memory_import(folder, args.memory_import)))
        return 0
    if args.database:
        recreate_database(url)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    settings.DEBUG = False
    call_command("migrate", verbosity=0)
    world = World(args.tasks, folder)
    path = world.outputs_file(args.repeats)
    print(
        f"output import on {connection.vendor}: {args.tasks:,} tasks × K = {args.repeats} = "
        f"{args.tasks * args.repeats:,} outputs ({path.stat().st_size / 2**20:.1f} MB); "
        f"load {_load()}",
        flush=True,
    )
    walls: dict[str, list[float]] = {}
    units = 0
    for _ in range(args.repeat):
        for name, seconds in world.ours(path, args.repeats).items():
            walls.setdefault(name, []).append(seconds)
        for name, seconds in world.serial_floor(path).items():
            walls.setdefault(name, []).append(seconds)
        if connection.vendor == "postgresql":
            walls.setdefault("copy", []).append(world.copy_floor(path))
        units = world.units_last
    print(f"{units:,} units per import; load {_load()}", flush=True)
    _row("ours: whole import", walls["whole"])
    _row("serial floor: split in one process + bulk_create", walls["serial"])
    _ratio("whole import / serial floor", walls["whole"], walls["serial"], 0.8)
    _row("ours: write phase", walls["write"])
    _row("bulk_create of the same rows", walls["bulk_create"])
    _ratio("write phase / bulk_create", walls["write"], walls["bulk_create"], 1.2)
    if connection.vendor == "postgresql":
        _row("COPY of the same rows", walls["copy"])
        _ratio("write phase / COPY", walls["write"], walls["copy"], 2.0)
    if not args.skip_memory:
        print("memory (a fresh process per import; peak RSS rise of the importing process):")
        for repeats in (args.repeats, MILLION_REPEATS):
            figures = _memory_in_subprocess(folder, repeats, args.database)
            print(
                f"  {figures['outputs']:>8,} outputs {figures['units']:>10,} units: "
                f"{figures['wall_s']:7.1f} s, peak RSS rise {figures['rss_rise_mb']:7.1f} MB",
                flush=True,
            )
    return 0


class World:
    """A use case with σ and a task set of ``tasks`` tiled example tasks."""

    def __init__(self, tasks: int, folder: Path) -> None:
        from django.contrib.auth import get_user_model

        from charters.models import Configuration, Role, TaskSet, UseCase
        from charters.services.configurations import configuration_upload
        from charters.services.task_sets import task_set_import
        from charters.services.use_cases import membership_grant, use_case_create

        self.folder = folder
        self.tasks = tasks
        self.units_last = 0
        users = get_user_model()
        existing = UseCase.objects.filter(key="BENCH-IMPORT").first()
        if existing is not None:  # a memory run in a fresh process: the same database
            self.use_case = existing
            self.actor = users.objects.get(username="bench-model-owner")
            self.sigma = Configuration.objects.get(use_case=existing)
            self.task_set = TaskSet.objects.get(use_case=existing)
            return
        owner = users.objects.create_user(username="bench-owner", password="x")
        self.actor = users.objects.create_user(username="bench-model-owner", password="x")
        self.use_case = use_case_create(
            actor=owner,
            key="BENCH-IMPORT",
            name="Import benchmark",
            business_outcome="Throughput.",
            value_hypothesis="Near the floor.",
            autonomy=1,
            consequence=3,
        )
        membership_grant(
            actor=owner, use_case=self.use_case, user=self.actor, role=Role.MODEL_OWNER
        )
        self.sigma = configuration_upload(
            actor=self.actor,
            use_case=self.use_case,
            name="bench",
            content=(EXAMPLE / "sigma-gemini-2.5.yaml").read_text(),
        )
        lines = [json.dumps(task) for task in self._graded(tasks)]
        self.task_set = task_set_import(
            actor=owner,
            use_case=self.use_case,
            name="bench",
            fileobj=io.BytesIO("\n".join(lines).encode()),
            filename="tasks.jsonl",
        )

    def _graded(self, tasks: int) -> list[dict[str, Any]]:
        graded = [
            json.loads(line)
            for line in (EXAMPLE / "tasks.jsonl").read_text().splitlines()
            if json.loads(line)["split"] == "graded"
        ]
        tiled = []
        for n in range(tasks):
            task = dict(graded[n % len(graded)])
            task["id"] = f"{task['id']}~{n}"
            tiled.append(task)
        return tiled

    def outputs_file(self, repeats: int) -> Path:
        """Write K outputs of every task (the example's outputs, tiled); return the path."""
        path = self.folder / f"outputs-k{repeats}.jsonl"
        if path.exists():
            return path
        example = {}
        for line in (EXAMPLE / "outputs-gemini-2-5.jsonl").read_text().splitlines():
            record = json.loads(line)
            example.setdefault(record["task_id"], record)
        with path.open("w", encoding="utf-8") as out:
            for repeat in range(repeats):
                for task in self._graded(self.tasks):
                    record = dict(example[task["id"].split("~")[0]])
                    record.update(task_id=task["id"], repeat=repeat)
                    out.write(json.dumps(record) + "\n")
        return path

    def ours(self, path: Path, repeats: int) -> dict[str, float]:
        """Import the file through the service; return its whole and write-phase times."""
        import runs.services.outputs as outputs_module
        from runs.models import Unit
        from runs.services.outputs import output_import

        write_batch = outputs_module._write_batch
        writing = [0.0]

        def timed(*args: Any) -> None:
            started = time.perf_counter()
            write_batch(*args)
            writing[0] += time.perf_counter() - started

        outputs_module._write_batch = timed  # type: ignore[assignment]
        try:
            started = time.perf_counter()
            with path.open("rb") as fileobj:
                run = output_import(
                    actor=self.actor,
                    use_case=self.use_case,
                    configuration=self.sigma,
                    task_set=self.task_set,
                    split="graded",
                    repeats=repeats,
                    fileobj=fileobj,
                    filename=path.name,
                )
            whole = time.perf_counter() - started
        finally:
            outputs_module._write_batch = write_batch  # type: ignore[assignment]
        self.units_last = Unit.objects.filter(output__run=run).count()
        return {"whole": whole, "write": writing[0]}

    def serial_floor(self, path: Path) -> dict[str, float]:
        """Split every text in this process, then bulk_create the same rows into a new run."""
        from django.db import transaction

        from runs.models import Output, Unit
        from runs.segment import build_units

        records, gold = self._records(path)
        started = time.perf_counter()
        specs = [build_units(r["text"], **gold[r["task_id"]][1]) for r in records]
        split = time.perf_counter() - started
        with transaction.atomic():
            run = self._run(len(records))
            started = time.perf_counter()
            outputs = Output.objects.bulk_create(
                [Output(run=run, **self._output_fields(r, gold)) for r in records],
                batch_size=500,
            )
            Unit.objects.bulk_create(
                [
                    Unit(
                        output_id=output.pk,
                        kind=u.kind,
                        key=u.key,
                        position=u.position,
                        text=u.text,
                        ref_id=u.ref_id,
                        sentence_position=u.sentence_position,
                    )
                    for output, units in zip(outputs, specs, strict=True)
                    for u in units
                ],
                batch_size=5000,
            )
            write = time.perf_counter() - started
        return {"serial": split + write, "bulk_create": write}

    def copy_floor(self, path: Path) -> float:
        """COPY the same rows into a new run (PostgreSQL): ids from the sequence, then units."""
        from django.db import connection, transaction

        from runs.segment_pool import unit_rows

        records, gold = self._records(path)
        rows = [unit_rows(r["text"], *gold[r["task_id"]][1].values()) for r in records]
        with transaction.atomic(), connection.cursor() as cursor:
            run = self._run(len(records))
            started = time.perf_counter()
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence('runs_output', 'id')) "
                "FROM generate_series(1, %s)",
                [len(records)],
            )
            ids = [row[0] for row in cursor.fetchall()]
            now = time.strftime("%Y-%m-%d %H:%M:%S+00", time.gmtime())
            columns = (
                "id, run_id, task_id, repeat_index, status, text, cited_chunk_ids, "
                "prompt_tokens, completion_tokens, cost_usd, latency_ms, generation_seconds, "
                "attempts, success, error, created_at"
            )
            with cursor.cursor.copy(f"COPY runs_output ({columns}) FROM STDIN") as copy:
                for pk, record in zip(ids, records, strict=True):
                    fields = self._output_fields(record, gold)
                    copy.write_row(
                        (
                            pk,
                            run.pk,
                            fields["task_id"],
                            fields["repeat_index"],
                            fields["status"],
                            fields["text"],
                            json.dumps(fields["cited_chunk_ids"]),
                            fields["prompt_tokens"],
                            fields["completion_tokens"],
                            fields["cost_usd"],
                            fields["latency_ms"],
                            fields["generation_seconds"],
                            1,
                            fields["success"],
                            fields["error"],
                            now,
                        )
                    )
            with cursor.cursor.copy(
                "COPY runs_unit (output_id, kind, key, position, text, ref_id, "
                "sentence_position) FROM STDIN"
            ) as copy:
                for pk, output_rows in zip(ids, rows, strict=True):
                    for row in output_rows:
                        copy.write_row((pk, *row))
            return time.perf_counter() - started

    # -- helpers ---------------------------------------------------------------------------

    def _records(self, path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        from runs.services.outputs import _task_catalogue

        gold, _permitted, _elsewhere = _task_catalogue(self.task_set, "graded")
        ids = {
            task_id: (
                g.pk,
                {"key_element_ids": g.key_element_ids, "guidance_item_ids": g.guidance_item_ids},
            )
            for task_id, g in gold.items()
        }
        records = [json.loads(line) for line in path.read_text().splitlines()]
        return records, ids

    def _output_fields(self, record: dict[str, Any], gold: dict[str, Any]) -> dict[str, Any]:
        from runs.segment import cited_chunk_ids

        cost = record.get("cost_usd")
        return {
            "task_id": gold[record["task_id"]][0],
            "repeat_index": record["repeat"],
            "status": "succeeded",
            "text": record["text"],
            "cited_chunk_ids": list(cited_chunk_ids(record["text"])),
            "prompt_tokens": record.get("prompt_tokens"),
            "completion_tokens": record.get("completion_tokens"),
            "cost_usd": None if cost is None else Decimal(repr(cost)),
            "latency_ms": record.get("latency_ms"),
            "generation_seconds": record.get("generation_seconds"),
            "success": record.get("success"),
            "error": "",
        }

    def _run(self, items: int) -> Any:
        from runs.models import Run, RunMode, RunStatus

        return Run.objects.create(
            use_case=self.use_case,
            configuration=self.sigma,
            task_set=self.task_set,
            split="graded",
            repeats=items // self.tasks,
            mode=RunMode.IMPORTED,
            status=RunStatus.COMPLETED,
            items_total=items,
            created_by=self.actor,
        )


def _memory_import(folder: Path, repeats: int) -> dict[str, float]:
    """Import K outputs of every task in this fresh process; return the peak RSS rise."""
    import django

    django.setup()
    from django.conf import settings

    settings.DEBUG = False
    from charters.models import TaskSet

    tasks = TaskSet.objects.get(use_case__key="BENCH-IMPORT").tasks.count()
    world = World(tasks, folder)
    path = world.outputs_file(repeats)
    before = _current_rss_kib()
    started = time.perf_counter()
    figures = world.ours(path, repeats)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "outputs": tasks * repeats,
        "units": world.units_last,
        "wall_s": wall,
        "import_s": figures["whole"],
        "rss_rise_mb": (after - before) / 1024,  # ru_maxrss is in KiB on Linux
    }


def _current_rss_kib() -> int:
    """Return this process's resident set size now (Linux), in KiB like ru_maxrss."""
    with open("/proc/self/statm") as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") // 1024


def _memory_in_subprocess(folder: Path, repeats: int, database: str) -> dict[str, float]:
    command = [sys.executable, "-m", "bench.cases_import", "--memory-import", str(repeats)]
    if database:
        command += ["--database", database]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def _row(name: str, walls: list[float]) -> None:
    print(
        f"  {name:<52} median {statistics.median(walls):7.2f} s "
        f"(range {min(walls):.2f}–{max(walls):.2f}, {len(walls)} runs)",
        flush=True,
    )


def _ratio(name: str, ours: list[float], floor: list[float], target: float) -> None:
    # Each repetition's ratio: ours and its floor ran one after the other.
    ratios = [a / b for a, b in zip(ours, floor, strict=True)]
    median = statistics.median(ratios)
    verdict = "met" if median <= target else "NOT met"
    print(
        f"  {name:<52} median {median:7.2f}× (range {min(ratios):.2f}–{max(ratios):.2f}×; "
        f"target ≤ {target}×: {verdict})",
        flush=True,
    )


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
