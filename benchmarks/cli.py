"""The ``egi-bench`` console script: import, score, report and clean EGI-Bench results.

Django-free (it reads files and calls :mod:`benchmarks.importers` and
:mod:`benchmarks.aggregate`). This slice works from result files people already have; it
runs no harness and starts no proxy (SPEC §10).

Storage
-------
- ``<raw-dir>/<model>_<mode>_<stamp>/<benchmark>.json``: the imported sub-metric values
  ``{sub_metric: value}`` in the benchmark's native scale, plus ``manifest.json`` (model,
  mode, UTC timestamp, and per benchmark its source files with their SHA-256, or the error
  that dropped it).
- ``<results-dir>/<model>_<mode>_<stamp>.json``: the SPEC §10 artifact
  (:meth:`~benchmarks.aggregate.EGIResult.to_dict`) plus model, mode, timestamp, the weight
  override, the raw directory and the failed benchmarks; a rescore adds ``rescored_from``.

"Latest" is the greatest recorded ``timestamp``, never a file name: model names may hold
``_``. Exit status: 0 ok, 2 for a user error, reported as one stderr line naming the
option, file or key at fault.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

import yaml

from benchmarks.aggregate import (
    BUCKET_NAMES,
    BUCKETS,
    DEFAULT_ROUTING,
    Routing,
    aggregate,
    check_routing,
    load_routing,
    parse_egi_weights,
)
from benchmarks.importers import IMPORTERS, import_results

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
        metavar="NAME",
        help="the model's key inside files that hold several (PersonaBench, LoCoBench)",
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


def _add_scoring_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--egi-weights", metavar="M1=0.20,M5=0.30")
    parser.add_argument("--routing", type=Path, metavar="FILE", help="routing YAML")


# --- import --------------------------------------------------------------------------------


def _cmd_import(args: argparse.Namespace) -> int:
    weights = _weights(args.egi_weights)
    routing = _routing(args.routing)
    sources = _sources(args.benchmark, args.from_)
    stamp = _now()
    model, mode = _model(args.model), args.mode

    raw: dict[str, dict[str, float]] = {}
    manifest: dict[str, Any] = {}
    for index, (benchmark, path) in enumerate(sources, start=1):
        entry: dict[str, Any] = {"source": str(path.resolve()), "files": _file_hashes(path)}
        try:
            values = import_results(benchmark, path, model=args.file_model)
            # Isolate a value the routing refuses (out of scale) to its benchmark.
            aggregate({benchmark: values}, routing=routing)
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

    name = f"{_UNSAFE.sub('-', model)}_{mode}_{_file_stamp(stamp)}"
    raw_dir = args.raw_dir / name
    raw_dir.mkdir(parents=True, exist_ok=False)
    for benchmark, values in raw.items():
        _write_json(raw_dir / f"{benchmark}.json", values)
    _write_json(
        raw_dir / MANIFEST,
        {"model": model, "mode": mode, "timestamp": stamp.isoformat(), "benchmarks": manifest},
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
    path = _store(artifact, results_dir=args.results_dir, name=name)
    _print_report(artifact, path=path, fmt="table", out=sys.stdout)
    return 0


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
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UserError(f"--harnesses {path}: cannot read ({error.strerror})") from None
    except yaml.YAMLError as error:
        raise UserError(f"--harnesses {path}: not valid YAML ({error})") from None
    benchmarks = data.get("benchmarks") if isinstance(data, dict) else None
    if not isinstance(benchmarks, dict):
        raise UserError(f"{path}: key benchmarks: expected a mapping {{name: {{command, env}}}}")
    registry: dict[str, list[str]] = {}
    for name, entry in benchmarks.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
            raise UserError(f"{path}: key benchmarks.{name}.command: expected a string")
        variables = entry.get("env", [])
        if not isinstance(variables, list) or not all(isinstance(v, str) for v in variables):
            raise UserError(f"{path}: key benchmarks.{name}.env: expected a list of names")
        registry[str(name)] = variables
    return registry


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
