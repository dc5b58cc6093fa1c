"""The ``egi-bench`` console script: run harnesses, import, score, report and clean results.

Django-free (it reads files and calls :mod:`egibench.importers`,
:mod:`egibench.aggregate`, :mod:`egibench.harness` and :mod:`egibench.proxy`), SPEC §10:

- ``run`` drives the harnesses of a registry (``--harnesses``, default
  ``egibench/harnesses.yaml``) as external commands under the mode's runtime budget and
  imports what they wrote exactly as ``import`` does; a harness that fails drops only its
  sub-metrics. ``setup`` prepares each harness's directory and environment.
- ``import`` reads native result files people already have.
- ``proxy start|status|logs|stop`` manages a local LiteLLM proxy on 127.0.0.1.

Storage
-------
- ``<raw-dir>/<model>_<mode>_<stamp>/<benchmark>.json``: the imported sub-metric values
  ``{sub_metric: value}`` in the benchmark's native scale, plus ``manifest.json`` (model,
  mode, UTC timestamp, and per benchmark its source files with their SHA-256, or the error
  that dropped it).
- For ``run``, the same run directory also holds ``config.json`` (the registry, the budget and
  each benchmark's command and subset), ``subsets/<benchmark>.json`` (what the harness is
  given as ``{subset_file}``), ``native/<benchmark>/`` (its ``{output_dir}``) and
  ``logs/<benchmark>.log`` (its stdout and stderr).
- ``<results-dir>/<model>_<mode>_<stamp>.json``: the SPEC §10 artifact
  (:meth:`~egibench.aggregate.EGIResult.to_dict`) plus model, mode, timestamp, the weight
  override, the raw directory and the failed benchmarks; a rescore adds ``rescored_from``.

"Latest" is the greatest recorded ``timestamp``, never a file name: model names may hold
``_``. Exit status: 0 ok, 2 for a user error, reported as one stderr line naming the
option, file or key at fault.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import hashlib
import json
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TextIO

from egibench import harness as harnesses
from egibench import proxy
from egibench.aggregate import (
    BUCKET_NAMES,
    BUCKETS,
    DEFAULT_ROUTING,
    Routing,
    aggregate,
    check_routing,
    load_routing,
    parse_egi_weights,
)
from egibench.importers import IMPORTERS, import_results

__all__ = ["main"]

PROG = "egi-bench"
MANIFEST = "manifest.json"
RESULTS_DIR_ENV = "EGI_RESULTS_DIR"
DEFAULT_RESULTS_DIR = "./results_aggregated"
DEFAULT_RAW_DIR = "./results_raw"
_UNSAFE = re.compile(r"[^A-Za-z0-9.-]+")


class UserError(Exception):
    """A mistake the user can fix; ``main`` prints it on one line and exits 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix(PROG).strip()
        raise UserError(f"{command}: {message}" if command else message)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``egi-bench`` with ``argv`` (default ``sys.argv[1:]``) and return the exit status."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        status: int = args.handler(args)
    except UserError as error:
        print(f"{PROG}: error: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    return status


# --- parser --------------------------------------------------------------------------------


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Score EGI-Bench results (SPEC §10).")
    _add_storage_options(parser, suppress=False)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    imp = commands.add_parser("import", help="import native result files and aggregate them")
    _add_storage_options(imp, suppress=True)
    imp.add_argument("--model", required=True)
    imp.add_argument("--mode", required=True, choices=("quick", "deep"))
    imp.add_argument(
        "--benchmark",
        nargs=2,
        action="append",
        default=[],
        metavar=("B", "PATH"),
        help="a benchmark and its native result file or directory (repeatable)",
    )
    imp.add_argument(
        "--from",
        dest="from_",
        action="append",
        default=[],
        metavar="B=PATH",
        help="the same as --benchmark B PATH (repeatable)",
    )
    imp.add_argument(
        "--file-model",
        dest="file_models",
        action="append",
        default=[],
        metavar="B=NAME",
        help="the model's name inside benchmark B's result files, when it differs from "
        "--model (CRMArena, HERB, MCP-Universe, PersonaBench, LoCoBench, whose files name "
        "their model; repeatable, one per benchmark)",
    )
    _add_scoring_options(imp)
    imp.set_defaults(handler=_cmd_import)

    rep = commands.add_parser("report", help="print the latest aggregated result, or rescore")
    _add_storage_options(rep, suppress=True)
    rep.add_argument("--model")
    rep.add_argument("--mode", choices=("quick", "deep"))
    rep.add_argument("--format", choices=("table", "json"), default="table")
    rep.add_argument(
        "--rescore",
        action="store_true",
        help="re-derive the result from the latest stored raw values of --model/--mode",
    )
    _add_scoring_options(rep)
    rep.set_defaults(handler=_cmd_report)

    doc = commands.add_parser("doctor", help="check importers, routing, storage and API keys")
    _add_storage_options(doc, suppress=True)
    doc.add_argument("--harnesses", type=Path, metavar="FILE", help="harness registry YAML")
    doc.set_defaults(handler=_cmd_doctor)

    run = commands.add_parser("run", help="run the registered harnesses and aggregate them")
    _add_storage_options(run, suppress=True)
    run.add_argument("--model", required=True)
    run.add_argument("--mode", required=True, choices=("quick", "deep"))
    _add_registry_options(run)
    run.add_argument(
        "--parallel", action="store_true", help="run harnesses concurrently (--max-workers)"
    )
    run.add_argument("--max-workers", type=int, metavar="N", help="with --parallel (default 2)")
    run.add_argument(
        "--budget-minutes",
        type=float,
        metavar="X",
        help="runtime budget per benchmark, instead of the registry's for --mode",
    )
    run.add_argument(
        "--api-base",
        metavar="URL",
        help="the harnesses' OpenAI-compatible base URL (default: the running proxy's)",
    )
    run.add_argument(
        "--proxy-state-dir", type=Path, metavar="DIR", help="where `proxy start` recorded it"
    )
    _add_scoring_options(run)
    run.set_defaults(handler=_cmd_run)

    stp = commands.add_parser("setup", help="prepare each harness's directory and environment")
    _add_storage_options(stp, suppress=True)
    _add_registry_options(stp)
    stp.add_argument("--skip-data", action="store_true", help="skip the registry's data steps")
    stp.add_argument(
        "--timeout-minutes", type=float, default=60.0, metavar="X", help="per step (default 60)"
    )
    stp.set_defaults(handler=_cmd_setup)

    prx = commands.add_parser("proxy", help="a local LiteLLM proxy on 127.0.0.1")
    actions = prx.add_subparsers(dest="action", required=True, parser_class=_Parser)
    p_start = actions.add_parser("start", help="start it in the background")
    p_start.add_argument(
        "--config",
        type=Path,
        default=proxy.DEFAULT_CONFIG,
        metavar="FILE",
        help=f"LiteLLM model_list config (default {proxy.DEFAULT_CONFIG})",
    )
    p_start.add_argument("--port", type=int, default=proxy.DEFAULT_PORT, metavar="P")
    p_start.add_argument(
        "--wait", type=float, default=120.0, metavar="SECONDS", help="for it to answer"
    )
    p_status = actions.add_parser("status", help="is it running and healthy (exit 0) or not (3)")
    p_logs = actions.add_parser("logs", help="print the end of its log")
    p_logs.add_argument("--lines", "-n", type=int, default=50, metavar="N")
    p_logs.add_argument("--follow", "-f", action="store_true", help="keep printing new lines")
    p_stop = actions.add_parser("stop", help="stop it (SIGTERM, then SIGKILL) and clear its state")
    p_stop.add_argument("--grace", type=float, default=10.0, metavar="SECONDS")
    for sub in (p_start, p_status, p_logs, p_stop):
        sub.add_argument(
            "--state-dir",
            type=Path,
            default=None,
            metavar="DIR",
            help=f"pid, port, key and log (default ${proxy.STATE_DIR_ENV} or "
            f"{proxy.DEFAULT_STATE_DIR})",
        )
    prx.set_defaults(handler=_cmd_proxy)

    cln = commands.add_parser("clean", help="list (with --yes delete) stored result files")
    _add_storage_options(cln, suppress=True)
    cln.add_argument("--older-than", type=float, metavar="DAYS")
    cln.add_argument("--yes", action="store_true", help="delete what is listed")
    cln.set_defaults(handler=_cmd_clean)
    return parser


def _add_storage_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    # Accepted before or after the command; a sub-command only overrides what it is given.
    results = os.environ.get(RESULTS_DIR_ENV) or DEFAULT_RESULTS_DIR
    parser.add_argument(
        "--results-dir",
        type=Path,
        default=argparse.SUPPRESS if suppress else Path(results),
        help=f"aggregated results (default ${RESULTS_DIR_ENV} or {DEFAULT_RESULTS_DIR})",
    )
    parser.add_argument(
        "--raw-dir",
        type=Path,
        default=argparse.SUPPRESS if suppress else Path(DEFAULT_RAW_DIR),
        help=f"raw imported values (default {DEFAULT_RAW_DIR})",
    )


def _add_registry_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--harnesses",
        type=Path,
        default=harnesses.DEFAULT_REGISTRY,
        metavar="FILE",
        help="harness registry YAML (default: the one shipped in egibench/)",
    )
    parser.add_argument(
        "--benchmarks",
        nargs="+",
        default=None,
        metavar="B",
        help="only these benchmarks (names, or a,b,c)",
    )


def _add_scoring_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--egi-weights", metavar="M1=0.20,M5=0.30")
    parser.add_argument("--routing", type=Path, metavar="FILE", help="routing YAML")


# --- import --------------------------------------------------------------------------------


def _cmd_import(args: argparse.Namespace) -> int:
    weights = _weights(args.egi_weights)
    routing = _routing(args.routing)
    sources = _sources(args.benchmark, args.from_)
    file_models = _file_models(args.file_models, [b for b, _ in sources])
    stamp = _now()
    model, mode = _model(args.model), args.mode

    raw: dict[str, dict[str, float]] = {}
    manifest: dict[str, Any] = {}
    for index, (benchmark, path) in enumerate(sources, start=1):
        entry: dict[str, Any] = {"source": str(path.resolve()), "files": _file_hashes(path)}
        try:
            in_file = file_models.get(benchmark, model)
            values = _import_one(benchmark, path, model=in_file, routing=routing)
        except ValueError as error:
            entry.update(status="failed", error=str(error))
            _progress(index, len(sources), f"{benchmark}: FAILED: {error}")
        else:
            raw[benchmark] = values
            entry.update(status="imported", sub_metrics=len(values))
            _progress(index, len(sources), f"{benchmark}: {len(values)} sub-metric(s) from {path}")
        manifest[benchmark] = entry
    if not raw:
        raise UserError("every importer failed; nothing stored")

    name = _run_name(model, mode, stamp)
    raw_dir = args.raw_dir / name
    raw_dir.mkdir(parents=True, exist_ok=False)
    _finish(
        raw,
        manifest,
        model=model,
        mode=mode,
        stamp=stamp,
        routing=routing,
        weights=weights,
        raw_dir=raw_dir,
        results_dir=args.results_dir,
    )
    return 0


def _run_name(model: str, mode: str, stamp: dt.datetime) -> str:
    return f"{_UNSAFE.sub('-', model)}_{mode}_{_file_stamp(stamp)}"


def _import_one(
    benchmark: str, path: Path, *, model: str | None, routing: Routing
) -> dict[str, float]:
    """Import one benchmark's native output; a value the routing refuses fails it too."""
    values = import_results(benchmark, path, model=model)
    # Isolate a value the routing refuses (out of scale) to its benchmark.
    aggregate({benchmark: values}, routing=routing)
    return values


def _finish(
    raw: Mapping[str, Mapping[str, float]],
    manifest: Mapping[str, Any],
    *,
    model: str,
    mode: str,
    stamp: dt.datetime,
    routing: Routing,
    weights: Mapping[str, float] | None,
    raw_dir: Path,
    results_dir: Path,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Store raw values, manifest and the aggregated artifact; print the report."""
    for benchmark, values in raw.items():
        _write_json(raw_dir / f"{benchmark}.json", values)
    _write_json(
        raw_dir / MANIFEST,
        {
            "model": model,
            "mode": mode,
            "timestamp": stamp.isoformat(),
            **(extra or {}),
            "benchmarks": manifest,
        },
    )
    artifact = _score(
        raw,
        model=model,
        mode=mode,
        stamp=stamp,
        routing=routing,
        weights=weights,
        raw_dir=raw_dir,
        failed=_failed(manifest),
    )
    path = _store(artifact, results_dir=results_dir, name=raw_dir.name)
    store_result_hook(artifact, path=path)
    _print_report(artifact, path=path, fmt="table", out=sys.stdout)
    return path


def store_result_hook(artifact: Mapping[str, Any], *, path: Path) -> None:
    """Store an aggregated result in the app's database as well as under results_aggregated/.

    Called once per stored artifact by ``import`` and ``run`` (not by a rescore). Uses the
    app's settings (``DJANGO_SETTINGS_MODULE``, default ``enterpriseval.settings``, and its
    ``DATABASE_URL``); ``EGI_BENCH_DB=0`` turns it off. The file is the primary copy: if the
    database cannot take the result, a warning names why and the command goes on.
    """
    if os.environ.get("EGI_BENCH_DB", "1") == "0":
        return
    try:
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "enterpriseval.settings")
        django.setup()
        from egibench.services import egi_result_store

        row = egi_result_store(result=artifact, source=path.name)
    except Exception as error:  # the file is stored; say why the database copy is not
        print(
            f"warning: {path.name} is not stored in the database: {error} "
            "(run `enterpriseval egi_import_results` later, or set EGI_BENCH_DB=0)",
            file=sys.stderr,
        )
        return
    print(f"stored in the database: EGI result {row.pk} (SHA-256 {row.sha256[:12]}…)")


def _sources(pairs: list[list[str]], from_: list[str]) -> list[tuple[str, Path]]:
    given = [(b, p) for b, p in pairs]
    for text in from_:
        benchmark, sep, path = text.partition("=")
        if not sep or not benchmark or not path:
            raise UserError(f"--from {text!r}: expected B=PATH")
        given.append((benchmark, path))
    if not given:
        raise UserError("import: give at least one --benchmark B PATH (or --from B=PATH)")
    seen: set[str] = set()
    for benchmark, _ in given:
        if benchmark not in IMPORTERS:
            known = ", ".join(IMPORTERS)
            raise UserError(f"--benchmark {benchmark!r}: no importer (known: {known})")
        if benchmark in seen:
            raise UserError(f"--benchmark {benchmark!r}: given more than once")
        seen.add(benchmark)
    return [(b, Path(p)) for b, p in given]


def _file_models(given: list[str], benchmarks: list[str]) -> dict[str, str]:
    """Return ``{benchmark: in-file model name}`` from ``--file-model B=NAME`` options."""
    names: dict[str, str] = {}
    for text in given:
        benchmark, sep, name = text.partition("=")
        benchmark, name = benchmark.strip(), name.strip()
        if not sep or not benchmark or not name:
            raise UserError(
                f"--file-model {text!r}: expected B=NAME (the model's name inside benchmark "
                "B's result files)"
            )
        if benchmark not in benchmarks:
            listed = ", ".join(benchmarks)
            raise UserError(
                f"--file-model {text!r}: benchmark {benchmark!r} is not imported here "
                f"(imported: {listed})"
            )
        if benchmark in names:
            raise UserError(f"--file-model {text!r}: {benchmark} is given more than once")
        names[benchmark] = name
    return names


def _file_hashes(path: Path) -> list[dict[str, str]]:
    """Return every regular file at ``path`` (recursively for a directory) with its SHA-256."""
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())
    else:
        return []
    return [{"path": str(f.resolve()), "sha256": _sha256_file(f)} for f in files]


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _failed(manifest: Mapping[str, Any]) -> list[dict[str, str]]:
    return [
        {"benchmark": name, "source": entry["source"], "error": entry["error"]}
        for name, entry in manifest.items()
        if entry.get("status") == "failed"
    ]


def _progress(index: int, total: int, text: str) -> None:
    print(f"[{index}/{total}] {text}", file=sys.stderr)


# --- run -----------------------------------------------------------------------------------

DEFAULT_API_BASE = f"http://{proxy.HOST}:{proxy.DEFAULT_PORT}/v1"
DEFAULT_MAX_WORKERS = 2  # seed 000 Appendix E: --parallel --max-workers 2
CONFIG = "config.json"
# The harness gets these from the caller's environment, its declared `env` names and its
# `set_env`; nothing else leaks in (other secrets stay out of third-party code).
_BASE_ENV = (
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
)  # fmt: skip


@dataclass
class _Plan:
    """One benchmark of a run: what to execute and where its outputs go."""

    harness: harnesses.Harness
    subset: harnesses.Subset | None
    skipped: dict[str, str]
    commands: list[list[str]]
    env: dict[str, str]
    cwd: Path | None
    output: Path
    stdout: Path | None
    file_model: str | None
    log: Path
    subset_file: Path
    missing_env: list[str]
    error: str | None = None


def _cmd_run(args: argparse.Namespace) -> int:
    weights = _weights(args.egi_weights)
    routing = _routing(args.routing)
    registry = _registry(args.harnesses, routing)
    selected = _select(registry, args.benchmarks, needs_output=True)
    workers = _workers(args.parallel, args.max_workers)
    if args.budget_minutes is not None and not args.budget_minutes > 0:
        raise UserError(f"--budget-minutes {args.budget_minutes:g}: expected minutes > 0")
    model, mode = _model(args.model), args.mode
    state_dir = args.proxy_state_dir or _proxy_state_dir(None)
    api_base, key = _endpoint(args.api_base, registry, state_dir)
    coverage = harnesses.bucket_coverage([(r.benchmark, r.bucket) for r in routing.routes])

    stamp = _now()
    name = _run_name(model, mode, stamp)
    run_dir = (args.raw_dir / name).resolve()
    run_dir.mkdir(parents=True, exist_ok=False)
    plans = [
        _plan(h, model=model, mode=mode, run_dir=run_dir, api_base=api_base, key=key,
              budget=args.budget_minutes, coverage=coverage)
        for h in selected
    ]  # fmt: skip
    _write_json(
        run_dir / CONFIG,
        {
            "model": model,
            "mode": mode,
            "timestamp": stamp.isoformat(),
            "registry": {
                "path": str(registry.path.resolve()),
                "sha256": _sha256_file(registry.path),
            },
            "routing_sha256": routing.sha256,
            "api_base": api_base,
            "seed": harnesses.DEFAULT_SEED,
            "budget_minutes_override": args.budget_minutes,
            "parallel": workers,
            "benchmarks": {p.harness.name: _plan_record(p) for p in plans},
        },
    )
    print(f"Run {name}: {len(plans)} benchmark(s), model {model}, mode {mode}, via {api_base}")
    executions = _execute_all(plans, workers=workers)

    raw: dict[str, dict[str, float]] = {}
    manifest: dict[str, Any] = {}
    for plan in plans:
        entry, values = _outcome(plan, executions.get(plan.harness.name), routing=routing)
        manifest[plan.harness.name] = entry
        if values is not None:
            raw[plan.harness.name] = values
    extra = {"config": CONFIG, "api_base": api_base}
    if not raw:
        _write_json(
            run_dir / MANIFEST,
            {"model": model, "mode": mode, "timestamp": stamp.isoformat(), **extra,
             "benchmarks": manifest},
        )  # fmt: skip
        for benchmark, entry in manifest.items():
            print(f"Failed benchmark {benchmark}: {entry['error']}", file=sys.stderr)
        print(
            f"{PROG}: every harness failed; no aggregated result (see {run_dir})", file=sys.stderr
        )
        return 1
    _finish(
        raw,
        manifest,
        model=model,
        mode=mode,
        stamp=stamp,
        routing=routing,
        weights=weights,
        raw_dir=run_dir,
        results_dir=args.results_dir,
        extra=extra,
    )
    return 0


def _registry(path: Path, routing: Routing) -> harnesses.Registry:
    routes = [(r.benchmark, r.sub_metric, r.bucket) for r in routing.routes]
    try:
        return harnesses.load_registry(path, routes=routes)
    except harnesses.RegistryError as error:
        raise UserError(str(error)) from None


def _select(
    registry: harnesses.Registry, given: list[str] | None, *, needs_output: bool
) -> list[harnesses.Harness]:
    names = list(registry.harnesses)
    if given is not None:
        names = [n.strip() for item in given for n in item.split(",") if n.strip()]
        if not names:
            raise UserError("--benchmarks: empty")
        for n in names:
            if n not in registry.harnesses:
                known = ", ".join(registry.harnesses)
                raise UserError(f"--benchmarks {n!r}: not in {registry.path} (known: {known})")
        if len(set(names)) != len(names):
            raise UserError("--benchmarks: a benchmark is given more than once")
    chosen = [registry.harnesses[n] for n in names]
    if needs_output:
        for h in chosen:
            if h.name not in IMPORTERS:
                raise UserError(
                    f"{registry.path}: key benchmarks.{h.name}: no importer reads its output "
                    f"(known: {', '.join(IMPORTERS)})"
                )
            if h.output is None:
                raise UserError(f"{registry.path}: key benchmarks.{h.name}.output: missing")
    if not chosen:
        raise UserError(f"{registry.path}: no benchmarks registered")
    return chosen


def _workers(parallel: bool, max_workers: int | None) -> int:
    if max_workers is not None and not parallel:
        raise UserError("--max-workers applies only with --parallel")
    if not parallel:
        return 1
    workers = DEFAULT_MAX_WORKERS if max_workers is None else max_workers
    if workers < 1:
        raise UserError(f"--max-workers {workers}: expected N ≥ 1")
    return workers


def _endpoint(
    given: str | None, registry: harnesses.Registry, state_dir: Path
) -> tuple[str, str | None]:
    """Return the harnesses' base URL and key: --api-base, the running proxy, the registry."""
    try:
        found = proxy.status(state_dir)
    except proxy.ProxyError as error:
        raise UserError(str(error)) from None
    key = proxy.api_key(state_dir) if found.alive else os.environ.get("LITELLM_MASTER_KEY")
    if given is not None:
        return given, key
    if found.alive and found.state is not None:
        return found.state.api_base, key
    base = registry.api_base or DEFAULT_API_BASE
    print(
        f"{PROG}: warning: no proxy running in {state_dir}; harnesses will call {base} "
        "(start one with `egi-bench proxy start`)",
        file=sys.stderr,
    )
    return base, key


def _plan(
    h: harnesses.Harness,
    *,
    model: str,
    mode: str,
    run_dir: Path,
    api_base: str,
    key: str | None,
    budget: float | None,
    coverage: Mapping[str, int],
) -> _Plan:
    error: str | None = None
    output_dir = run_dir / "native" / h.name
    output_dir.mkdir(parents=True)
    subset_file = run_dir / "subsets" / f"{h.name}.json"
    subset_file.parent.mkdir(parents=True, exist_ok=True)
    subset = None
    skipped = {
        c.name: "not set: " + ", ".join(v for v in c.env if not os.environ.get(v))
        for c in h.categories
        if not all(os.environ.get(v) for v in c.env)
    }
    categories = [c for c in h.categories if c.name not in skipped]
    if h.categories and not categories:
        error = "every category is skipped for missing environment: " + "; ".join(
            f"{name} ({why})" for name, why in skipped.items()
        )
    if categories:
        subset = harnesses.subset_tasks(
            categories,
            budget_minutes=budget if budget is not None else h.budget(mode),
            coverage=coverage,
            benchmark=h.name,
        )
        _write_json(subset_file, {**subset.to_dict(), "skipped_categories": skipped})
    else:
        _write_json(
            subset_file,
            {"benchmark": h.name, "categories": None, "note": "no categories registered: "
             "the harness runs its upstream configuration"},
        )  # fmt: skip
    cwd = h.workdir
    python = sys.executable
    if h.python is not None:
        python = str(Path(h.python) if cwd is None else cwd / h.python)
    kept = list(subset.kept) if subset else []
    values = {
        "model": model,
        "mode": mode,
        "api_base": api_base,
        "output_dir": str(output_dir),
        "subset_file": str(subset_file),
        "categories": ",".join(kept),
        "tasks_per_category": str(subset.tasks_per_category) if subset else "",
        "total_tasks": str(subset.total_tasks) if subset else "",
        "workdir": str(cwd) if cwd is not None else os.getcwd(),
        "python": python,
        "steps": str(harnesses.STEPS_DIR),
    }
    commands = [harnesses.expand_command(c, values, kept) for c in h.commands]
    output = Path(harnesses.expand_template(h.output or "", values))
    if not output.is_absolute():
        output = output_dir / output
    stdout = None
    if h.stdout is not None:
        stdout = Path(harnesses.expand_template(h.stdout, values))
        stdout = stdout if stdout.is_absolute() else output_dir / stdout
    # Files holding several models are read for the model under test unless the registry
    # names it differently inside them; a file for another model is refused.
    file_model = model if h.file_model is None else harnesses.expand_template(h.file_model, values)

    env = {k: os.environ[k] for k in _BASE_ENV if k in os.environ}
    missing = [v for v in h.env if not os.environ.get(v)]
    env.update({v: os.environ[v] for v in h.env if os.environ.get(v)})
    env.update(
        {
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "OPENAI_API_BASE": api_base,
            "OPENAI_BASE_URL": api_base,
            "EGI_MODEL": model,
            "EGI_MODE": mode,
            "EGI_OUTPUT_DIR": str(output_dir),
            "EGI_SUBSET_FILE": str(subset_file),
        }
    )
    secret = {**values, "proxy_key": key or ""}
    env.update({k: harnesses.expand_template(v, secret) for k, v in h.set_env.items()})
    if key and not env.get("OPENAI_API_KEY"):
        env["OPENAI_API_KEY"] = key
    if error is None and cwd is not None and not cwd.is_dir():
        error = f"workdir {cwd} does not exist (run `egi-bench setup`)"
    return _Plan(
        harness=h,
        subset=subset,
        skipped=skipped,
        commands=commands,
        env=env,
        cwd=cwd,
        output=output,
        stdout=stdout,
        file_model=file_model,
        log=run_dir / "logs" / f"{h.name}.log",
        subset_file=subset_file,
        missing_env=missing,
        error=error,
    )


def _plan_record(plan: _Plan) -> dict[str, Any]:
    h = plan.harness
    return {
        "commands": plan.commands,
        "workdir": None if plan.cwd is None else str(plan.cwd),
        "env": sorted(plan.env),  # names only: values may be keys
        "missing_env": plan.missing_env,
        "output": str(plan.output),
        "log": str(plan.log),
        "timeout_minutes": h.timeout_minutes,
        "subset_file": str(plan.subset_file),
        "stdout": None if plan.stdout is None else str(plan.stdout),
        "subset": None if plan.subset is None else plan.subset.to_dict(),
        "skipped_categories": plan.skipped,
    }


def _execute_all(plans: list[_Plan], *, workers: int) -> dict[str, harnesses.Execution]:
    runnable = [p for p in plans if p.error is None]
    total = len(plans)
    index = {p.harness.name: i for i, p in enumerate(plans, start=1)}
    for p in plans:
        if p.error is not None:
            _progress(index[p.harness.name], total, f"{p.harness.name}: FAILED: {p.error}")

    def launch(p: _Plan) -> harnesses.Execution:
        tasks = "all tasks" if p.subset is None else f"{p.subset.total_tasks} task(s)"
        estimate = "" if p.subset is None else f", est. {p.subset.estimated_minutes:g} min"
        note = f"; missing env {', '.join(p.missing_env)}" if p.missing_env else ""
        _progress(
            index[p.harness.name], total, f"{p.harness.name}: started ({tasks}{estimate}){note}"
        )
        return harnesses.execute(
            p.commands,
            cwd=p.cwd,
            env=p.env,
            log_path=p.log,
            timeout_seconds=p.harness.timeout_minutes * 60,
            stdout_path=p.stdout,
        )

    done: dict[str, harnesses.Execution] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(launch, p): p for p in runnable}
        for future in concurrent.futures.as_completed(futures):
            p = futures[future]
            result = future.result()
            done[p.harness.name] = result
            state = "finished" if result.ok else "FAILED"
            _progress(
                index[p.harness.name],
                total,
                f"{p.harness.name}: {state} in {result.seconds:.1f} s"
                + ("" if result.ok else f": {_execution_error(result, p)}"),
            )
    return done


def _execution_error(result: harnesses.Execution, plan: _Plan) -> str:
    step = f"command {result.step + 1} of {len(plan.commands)}: " if len(plan.commands) > 1 else ""
    if result.error is not None:
        return f"{step}{result.error} (log {plan.log})"
    if result.timed_out:
        return f"{step}timed out after {plan.harness.timeout_minutes * 60:g} s (log {plan.log})"
    return f"{step}exit status {result.returncode} (log {plan.log})"


def _resolve_output(pattern: Path, since: float) -> Path | None:
    """Return the output path; a glob resolves to its newest match written since ``since``."""
    text = str(pattern)
    if not any(ch in text for ch in "*?["):
        return pattern if pattern.exists() else None
    anchor = Path(pattern.anchor)
    matches = [p for p in anchor.glob(text[len(pattern.anchor) :]) if p.stat().st_mtime >= since]
    return max(matches, key=lambda p: (p.stat().st_mtime, p.name), default=None)


def _outcome(
    plan: _Plan, result: harnesses.Execution | None, *, routing: Routing
) -> tuple[dict[str, Any], dict[str, float] | None]:
    entry: dict[str, Any] = {
        "source": str(plan.output),
        "log": str(plan.log),
        "subset": None
        if plan.subset is None
        else {"total_tasks": plan.subset.total_tasks, "dropped": list(plan.subset.dropped)},
        "missing_env": plan.missing_env,
    }
    if result is not None:
        entry.update(returncode=result.returncode, seconds=round(result.seconds, 3))
    error = plan.error
    if error is None and result is not None and not result.ok:
        error = _execution_error(result, plan)
    output = None
    if error is None and result is not None:
        # A second's slack: some file systems keep coarse modification times.
        output = _resolve_output(plan.output, since=result.started_at - 1.0)
        if output is None:
            error = f"output missing: {plan.output} (log {plan.log})"
        else:
            entry["source"] = str(output)
    entry["files"] = [] if output is None else _file_hashes(output)
    if error is None and output is not None:
        try:
            values = _import_one(plan.harness.name, output, model=plan.file_model, routing=routing)
        except ValueError as exc:
            error = f"import: {exc}"
        else:
            entry.update(status="imported", sub_metrics=len(values))
            return entry, values
    entry.update(status="failed", error=error)
    return entry, None


# --- setup ---------------------------------------------------------------------------------


def _cmd_setup(args: argparse.Namespace) -> int:
    routing = _routing(None)
    registry = _registry(args.harnesses, routing)
    selected = _select(registry, args.benchmarks, needs_output=False)
    if not args.timeout_minutes > 0:
        raise UserError(f"--timeout-minutes {args.timeout_minutes:g}: expected minutes > 0")
    for directory in (args.results_dir, args.raw_dir):
        directory.mkdir(parents=True, exist_ok=True)
    print(f"Results directories: {args.results_dir}, {args.raw_dir}")
    log_dir = (args.raw_dir / "_setup").resolve()
    failures = 0
    for number, h in enumerate(selected, start=1):
        lines, ok = _setup_one(h, log_dir=log_dir, skip_data=args.skip_data,
                               timeout=args.timeout_minutes * 60)  # fmt: skip
        failures += not ok
        print(f"[{number}/{len(selected)}] {h.name}: {'ready' if ok else 'NOT ready'}")
        for line in lines:
            print(f"  {line}")
    return 1 if failures else 0


def _setup_one(
    h: harnesses.Harness, *, log_dir: Path, skip_data: bool, timeout: float
) -> tuple[list[str], bool]:
    lines: list[str] = []
    ok = True
    cwd = h.workdir
    existed = cwd is not None and cwd.is_dir()
    # Steps run in the workdir's parent, so a first step can clone into the workdir.
    step_dir = None if cwd is None else cwd.parent
    if step_dir is not None:
        step_dir.mkdir(parents=True, exist_ok=True)
    python = (
        sys.executable
        if h.python is None
        else str(Path(h.python) if cwd is None else cwd / h.python)
    )
    values = {"workdir": str(cwd) if cwd else os.getcwd(), "python": python}
    steps = [("setup", s) for s in h.setup] + ([] if skip_data else [("data", s) for s in h.data])
    if not steps:
        lines.append("steps: none registered")
    env = {k: os.environ[k] for k in _BASE_ENV if k in os.environ}
    env.update({v: os.environ[v] for v in h.env if os.environ.get(v)})
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    log = log_dir / f"{h.name}.log"
    for kind, step in steps:
        argv = [harnesses.expand_template(t, values) for t in shlex.split(step.run)]
        if step.creates is not None:
            target = Path(harnesses.expand_template(step.creates, values))
            target = target if target.is_absolute() or step_dir is None else step_dir / target
            if target.exists():
                lines.append(f"{kind}: skipped, {target} exists ({shlex.join(argv)})")
                continue
        result = harnesses.execute(
            [argv], cwd=step_dir, env=env, log_path=log, timeout_seconds=timeout
        )
        if result.ok:
            lines.append(f"{kind}: ok ({shlex.join(argv)})")
            continue
        reason = (
            result.error
            if result.error
            else "timed out"
            if result.timed_out
            else f"exit status {result.returncode}"
        )
        lines.append(f"{kind}: FAILED, {reason} ({shlex.join(argv)}); log {log}")
        ok = False
        break
    if skip_data and h.data:
        lines.append(f"data: skipped ({len(h.data)} step(s))")
    if cwd is None:
        lines.append("workdir: none registered (runs in the current directory)")
    elif existed:
        lines.append(f"workdir: {cwd} exists")
    elif cwd.is_dir():
        lines.append(f"workdir: {cwd} created by the setup steps")
    else:
        lines.append(f"missing: workdir {cwd} (the setup steps did not create it)")
        ok = False
    if h.python is not None and not Path(python).exists():
        lines.append(f"missing: interpreter {python}")
        ok = False
    program = shlex.split(h.commands[0])[0]
    if "{" not in program and not _program_found(program, cwd):
        lines.append(f"missing: program {program!r} (not on PATH or in the workdir)")
        ok = False
    missing = [v for v in h.env if not os.environ.get(v)]
    if missing:
        lines.append(f"missing environment (needed at run time): {', '.join(missing)}")
    return lines, ok


def _program_found(program: str, cwd: Path | None) -> bool:
    if os.sep in program:
        path = Path(program)
        return (path if path.is_absolute() or cwd is None else cwd / path).exists()
    return shutil.which(program) is not None


# --- proxy ---------------------------------------------------------------------------------


def _proxy_state_dir(given: Path | None) -> Path:
    if given is not None:
        return given
    return Path(os.environ.get(proxy.STATE_DIR_ENV) or proxy.DEFAULT_STATE_DIR)


def _cmd_proxy(args: argparse.Namespace) -> int:
    state_dir = _proxy_state_dir(args.state_dir)
    try:
        if args.action == "start":
            started = time.monotonic()
            state = proxy.start(
                config=args.config, port=args.port, state_dir=state_dir, wait_seconds=args.wait
            )
            print(
                f"Proxy started: pid {state.pid}, {state.api_base} "
                f"(healthy after {time.monotonic() - started:.1f} s)"
            )
            print(f"config {state.config}\nlog {state.log}\nstate {state_dir}")
            return 0
        if args.action == "status":
            found = proxy.status(state_dir)
            if found.state is None:
                print(f"Proxy stopped ({found.detail} in {state_dir})")
                return 3
            where = f"pid {found.state.pid}, {found.state.api_base}"
            if found.running:
                print(f"Proxy running: {where}, {found.detail}")
                print(f"config {found.state.config}\nlog {found.state.log}")
                return 0
            print(f"Proxy not running: {where}: {found.detail}")
            return 3
        if args.action == "logs":
            return _proxy_logs(state_dir, lines=args.lines, follow=args.follow)
        stopped = proxy.stop(state_dir, grace_seconds=args.grace)
        if stopped is None:
            print(f"Proxy stopped (none recorded in {state_dir})")
        else:
            print(f"Proxy stopped: pid {stopped.pid}, port {stopped.port}")
        return 0
    except proxy.ProxyError as error:
        raise UserError(f"proxy {args.action}: {error}") from None


def _proxy_logs(state_dir: Path, *, lines: int, follow: bool) -> int:
    if lines < 0:
        raise UserError(f"--lines {lines}: expected N ≥ 0")
    log = state_dir / proxy.LOG_FILE
    if not log.is_file():
        raise UserError(f"proxy logs: no log at {log} (start the proxy first)")
    text = proxy.log_tail(log, lines)
    if text:
        print(text)
    if not follow:
        return 0
    with log.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        try:
            while True:
                chunk = handle.read()
                if chunk:
                    sys.stdout.write(chunk.decode("utf-8", errors="replace"))
                    sys.stdout.flush()
                else:
                    time.sleep(0.5)
        except KeyboardInterrupt:
            return 0


# --- report and rescore --------------------------------------------------------------------


def _cmd_report(args: argparse.Namespace) -> int:
    if args.rescore:
        return _rescore(args)
    for option, value in (("--egi-weights", args.egi_weights), ("--routing", args.routing)):
        if value is not None:
            raise UserError(f"{option} applies only with --rescore")
    model = None if args.model is None else _model(args.model)
    path, artifact = _latest_artifact(args.results_dir, model=model, mode=args.mode)
    _print_report(artifact, path=path, fmt=args.format, out=sys.stdout)
    return 0


def _rescore(args: argparse.Namespace) -> int:
    if args.model is None or args.mode is None:
        raise UserError("report --rescore needs --model and --mode")
    weights = _weights(args.egi_weights)
    routing = _routing(args.routing)
    model = _model(args.model)
    raw_dir, manifest = _latest_raw(args.raw_dir, model=model, mode=args.mode)
    entries = _manifest_benchmarks(manifest, raw_dir)
    raw: dict[str, dict[str, float]] = {}
    for benchmark, entry in entries.items():
        if entry.get("status") == "imported":
            raw[benchmark] = _read_raw(raw_dir / f"{benchmark}.json")
    stamp = _now()
    try:
        artifact = _score(
            raw,
            model=model,
            mode=args.mode,
            stamp=stamp,
            routing=routing,
            weights=weights,
            raw_dir=raw_dir,
            failed=_failed(entries),
        )
    except ValueError as error:
        raise UserError(f"{raw_dir}: {error}") from None
    artifact["rescored_from"] = str(raw_dir)
    name = f"{_UNSAFE.sub('-', model)}_{args.mode}_{_file_stamp(stamp)}"
    path = _store(artifact, results_dir=args.results_dir, name=name)
    if args.format == "json":
        _print_report(artifact, path=path, fmt="json", out=sys.stdout)
        return 0
    shown = "  ".join(f"{b}={w:.4f}" for b, w in artifact["egi_weights"].items())
    print(f"Effective EGI weights: {shown}  (sum {sum(artifact['egi_weights'].values()):.4f})")
    print(f"Rescored from {raw_dir}")
    _print_report(artifact, path=path, fmt="table", out=sys.stdout)
    return 0


def _manifest_benchmarks(manifest: Mapping[str, Any], raw_dir: Path) -> dict[str, Any]:
    benchmarks = manifest.get("benchmarks")
    if not isinstance(benchmarks, dict) or not all(
        isinstance(entry, dict) for entry in benchmarks.values()
    ):
        raise UserError(f"{raw_dir / MANIFEST}: key benchmarks: expected a mapping of entries")
    return benchmarks


def _read_raw(path: Path) -> dict[str, float]:
    values = _read_json(path)
    if not isinstance(values, dict):
        raise UserError(f"{path}: expected an object {{sub_metric: value}}")
    return values


def _print_report(artifact: Mapping[str, Any], *, path: Path, fmt: str, out: TextIO) -> None:
    if fmt == "json":
        print(json.dumps({"path": str(path), **artifact}, indent=2), file=out)
        return
    egi = f"EGI {artifact['egi']:.2f}"
    if artifact["partial"]:
        egi += f"  (partial: buckets present cover {artifact['egi_weight_covered']:.2f} of weight)"
    lines = [
        f"{egi}",
        f"model {artifact['model']}  mode {artifact['mode']}  at {artifact['timestamp']}",
        f"file {path}",
        "",
        f"{'bucket':<7}{'name':<32}{'weight':>7}{'score':>9}  contributors",
    ]
    for bucket in BUCKETS:
        row = artifact["buckets"][bucket]
        rows = row["contributors"]
        available = sum(1 for c in rows if c["available"])
        score = "missing" if row["score"] is None else f"{row['score']:.2f}"
        weight = artifact["egi_weights"][bucket]
        lines.append(
            f"{bucket:<7}{BUCKET_NAMES[bucket]:<32}{weight:>7.4f}{score:>9}  "
            f"{available}/{len(rows)}"
        )
        lines += [_contributor_line(c) for c in rows]
    missing = artifact["missing"]
    lines += ["", f"Missing sub-metrics: {len(missing)}"]
    lines += [
        f"  {m['benchmark']}.{m['sub_metric']} ({m['bucket']}): {m['reason']}" for m in missing
    ]
    for failure in artifact.get("failed", []):
        lines.append(f"Failed benchmark {failure['benchmark']}: {failure['error']}")
    floors = [
        f"{bucket} {row['floor']:g} → {row['status']}"
        + ("" if row["score"] is None else f" ({row['score']:.2f})")
        for bucket, row in artifact["floors"].items()
    ]
    lines.append("Floors: " + ("; ".join(floors) if floors else "none"))
    ready = "release-ready" if artifact["release_ready"] else "not release-ready"
    lines.append(f"Release readiness: {ready}")
    if artifact.get("rescored_from"):
        lines.append(f"Rescored from: {artifact['rescored_from']}")
    print("\n".join(lines), file=out)


def _contributor_line(row: Mapping[str, Any]) -> str:
    """One routed sub-metric under its bucket: native value, normalised score, weight."""
    name = f"{row['benchmark']}.{row['sub_metric']}"
    if not row["available"]:
        return f"         {name:<46}{'missing':>12}"
    return (
        f"         {name:<46}{row['raw']:>12.6g} -> {row['normalised']:6.2f}"
        f"  x {row['effective_weight']:.4f}"
    )


# --- doctor --------------------------------------------------------------------------------


def _cmd_doctor(args: argparse.Namespace) -> int:
    harnesses = None if args.harnesses is None else _read_harnesses(args.harnesses)
    print("Importers: " + ", ".join(IMPORTERS))
    routing = _routing(None)
    violations = check_routing(routing)
    state = "well-posed" if not violations else "NOT well-posed: " + "; ".join(violations)
    print(f"Default routing {routing.source}: {state}")
    unread = [name for name in routing.benchmarks if name not in IMPORTERS]
    if unread:
        print("  routed benchmarks without an importer: " + ", ".join(unread))
    results = _json_files(args.results_dir)
    runs = _raw_runs(args.raw_dir)
    print(f"Aggregated results: {args.results_dir} ({len(results)} file(s))")
    print(f"Raw results: {args.raw_dir} ({len(runs)} run(s))")
    if harnesses is None:
        print("Harness registry: none given (--harnesses FILE)")
        return 0
    print(f"Harness registry: {args.harnesses}")
    for name, variables in harnesses.items():
        if not variables:
            print(f"  {name}: no API key needed")
            continue
        states = [f"{var} {'set' if os.environ.get(var) else 'NOT set'}" for var in variables]
        print(f"  {name}: " + ", ".join(states))
    return 0


def _read_harnesses(path: Path) -> dict[str, list[str]]:
    """Return ``{benchmark: [env var, ...]}`` from a harness registry YAML."""
    registry = _registry(path, _routing(None))
    return {name: list(h.env) for name, h in registry.harnesses.items()}


# --- clean ---------------------------------------------------------------------------------


def _cmd_clean(args: argparse.Namespace) -> int:
    if args.older_than is not None and not args.older_than >= 0:
        raise UserError(f"--older-than {args.older_than:g}: expected a number of days ≥ 0")
    cutoff = None
    if args.older_than is not None:
        cutoff = dt.datetime.now(dt.UTC).timestamp() - args.older_than * 86400
    # Only our own entries directly inside the two directories: never a symlink, never a
    # path outside them.
    targets = [*_json_files(args.results_dir), *_raw_runs(args.raw_dir)]
    if cutoff is not None:
        targets = [t for t in targets if t.stat().st_mtime < cutoff]
    verb = "Deleting" if args.yes else "Would delete (pass --yes)"
    print(f"{verb}: {len(targets)} stored result(s)")
    for target in targets:
        print(f"  {target}")
        if args.yes:
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink()
    return 0


def _json_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob("*.json") if p.is_file() and not p.is_symlink())


def _raw_runs(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(
        p
        for p in directory.iterdir()
        if p.is_dir() and not p.is_symlink() and (p / MANIFEST).is_file()
    )


# --- shared --------------------------------------------------------------------------------


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _file_stamp(stamp: dt.datetime) -> str:
    return stamp.strftime("%Y%m%dT%H%M%S_%fZ")


def _model(text: str) -> str:
    if not text.strip():
        raise UserError("--model: empty")
    return text.strip()


def _weights(text: str | None) -> dict[str, float] | None:
    if text is None:
        return None
    try:
        return parse_egi_weights(text)
    except ValueError as error:
        raise UserError(f"--egi-weights: {str(error).removeprefix('egi_weights: ')}") from None


def _routing(path: Path | None) -> Routing:
    try:
        return load_routing(DEFAULT_ROUTING if path is None else path)
    except ValueError as error:
        raise UserError(f"--routing: {error}") from None


def _score(
    raw: Mapping[str, Mapping[str, float]],
    *,
    model: str,
    mode: str,
    stamp: dt.datetime,
    routing: Routing,
    weights: Mapping[str, float] | None,
    raw_dir: Path,
    failed: list[dict[str, str]],
) -> dict[str, Any]:
    result = aggregate(raw, routing=routing, weights=weights)
    return {
        "model": model,
        "mode": mode,
        "timestamp": stamp.isoformat(),
        **result.to_dict(),
        "egi_weights_override": None if weights is None else dict(weights),
        "raw_dir": str(raw_dir),
        "failed": failed,
    }


def _store(artifact: Mapping[str, Any], *, results_dir: Path, name: str) -> Path:
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{name}.json"
    _write_json(path, artifact)
    return path


def _write_json(path: Path, data: Any) -> None:
    partial = path.with_name(path.name + ".part")
    partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    partial.replace(path)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UserError(f"{path}: cannot read ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise UserError(f"{path}: not valid JSON (line {error.lineno}: {error.msg})") from None


def _when(record: Mapping[str, Any], path: Path) -> dt.datetime:
    try:
        when = dt.datetime.fromisoformat(str(record["timestamp"]))
    except (KeyError, ValueError):
        raise UserError(f"{path}: key timestamp: missing or not ISO 8601") from None
    if when.tzinfo is None:
        raise UserError(f"{path}: key timestamp: has no time zone")
    return when


def _matches(record: Mapping[str, Any], *, model: str | None, mode: str | None) -> bool:
    return (model is None or record.get("model") == model) and (
        mode is None or record.get("mode") == mode
    )


def _latest_artifact(
    results_dir: Path, *, model: str | None, mode: str | None
) -> tuple[Path, dict[str, Any]]:
    found = []
    for path in _json_files(results_dir):
        record = _read_json(path)
        if isinstance(record, dict) and _matches(record, model=model, mode=mode):
            found.append((_when(record, path), path, record))
    if not found:
        raise UserError(f"--results-dir {results_dir}: no aggregated result{_for(model, mode)}")
    _, path, record = max(found, key=lambda item: (item[0], item[1].name))
    return path, record


def _latest_raw(raw_dir: Path, *, model: str, mode: str) -> tuple[Path, dict[str, Any]]:
    found = []
    for run in _raw_runs(raw_dir):
        manifest = _read_json(run / MANIFEST)
        if isinstance(manifest, dict) and _matches(manifest, model=model, mode=mode):
            found.append((_when(manifest, run / MANIFEST), run, manifest))
    if not found:
        raise UserError(f"--raw-dir {raw_dir}: no raw result{_for(model, mode)}")
    _, run, manifest = max(found, key=lambda item: (item[0], item[1].name))
    return run, manifest


def _for(model: str | None, mode: str | None) -> str:
    parts = [f"model {model!r}" if model else "", f"mode {mode!r}" if mode else ""]
    shown = ", ".join(p for p in parts if p)
    return f" for {shown}" if shown else ""


if __name__ == "__main__":
    sys.exit(main())
