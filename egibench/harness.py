"""EGI-Bench harness registry, runtime-budget subsetting and the subprocess runner.

Pure: no Django import. The registry (YAML, default ``harnesses.yaml`` next to this module)
declares each benchmark's harness as an external command run in its own working directory
and environment, with the categories its tasks fall into, a runtime estimate per task and a
per-mode runtime budget. :func:`subset_tasks` applies SPEC §10's subsetting rules (seed 000
Appendix E) to fit a benchmark under its budget; :func:`execute` runs one harness command as
a subprocess with a log file and a timeout.

Registry keys, per benchmark (``benchmarks.<name>``; ``<name>`` is an importer's name):

- ``command`` (required): the harness command line, or a list of them run in order (each
  must succeed), split with :func:`shlex.split` and never run through a shell.
  Placeholders: see :data:`PLACEHOLDERS`. A whole argument ``{*categories}`` expands into
  one argument per kept category.
- ``stdout``: a file (template) that gets the harness's stdout, for harnesses that only print
  their results (Benchforce); stderr still goes to the log.
- ``env``: names of variables (API keys) passed through from the caller's environment.
- ``set_env``: ``{NAME: template}`` set for the harness (templates as in ``command``).
- ``workdir``: the harness's directory (``~`` and ``$VAR`` expanded; relative to the
  registry file). ``python``: its interpreter, relative to ``workdir`` (default: the one
  running egi-bench), the ``{python}`` placeholder.
- ``setup``, ``data``: command lines ``egi-bench setup`` runs in order, in ``workdir``'s
  parent directory (so the first can clone the harness into ``workdir``); a step given as
  ``{run: ..., creates: path}`` is skipped when ``path`` exists, so setup can be rerun.
- ``output``: where the harness writes what the importer reads (template; relative paths are
  inside ``{output_dir}``). With ``*``, ``?`` or ``[`` it is a glob: the newest match written
  since the harness started. ``file_model``: the model key inside files holding several.
- ``timeout_minutes`` (default 240), ``minutes_per_task``, ``budget_minutes: {quick, deep}``
  (``null``: no budget, every task runs).
- ``categories``: ``{name: {tasks: N | [ids], buckets: [M1, ...] | sub_metrics: [...],
  minutes_per_task: optional override, env: [names the category needs]}}``; ``tasks: N``
  stands for the harness's first N tasks in its native order (ids ``0`` … ``N-1``). A
  category whose ``env`` is not all set is skipped before subsetting, with a note.
"""

from __future__ import annotations

import contextlib
import os
import random
import shlex
import signal
import string
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from enterpriseval.documents import config_data
from enterpriseval.values import finite_number

__all__ = [
    "DEFAULT_REGISTRY",
    "DEFAULT_SEED",
    "MODES",
    "PLACEHOLDERS",
    "Category",
    "Execution",
    "Harness",
    "Registry",
    "RegistryError",
    "Step",
    "Subset",
    "bucket_coverage",
    "execute",
    "expand_command",
    "expand_template",
    "load_registry",
    "subset_tasks",
]

DEFAULT_REGISTRY = Path(__file__).with_name("harnesses.yaml")
STEPS_DIR = Path(__file__).resolve().with_name("harness_steps")
"""Scripts a harness runs in its own environment (standard library only), as ``{steps}``."""
DEFAULT_SEED = 42  # seed 000 Appendix G: sample_seed 42
DEFAULT_TIMEOUT_MINUTES = 240.0
MODES = ("quick", "deep")
BUCKETS = ("M1", "M2", "M3", "M4", "M5", "M6")
PLACEHOLDERS = frozenset(
    {
        "model",  # the --model under test
        "mode",  # quick | deep
        "api_base",  # the OpenAI-compatible base URL of the LiteLLM proxy (…/v1)
        "output_dir",  # an empty directory for this harness's native outputs
        "subset_file",  # JSON: the kept tasks per category (Subset.to_dict)
        "categories",  # kept categories, comma-separated
        "tasks_per_category",  # the most tasks kept in any one category
        "total_tasks",  # tasks kept in all
        "workdir",  # the harness's working directory
        "python",  # the harness's interpreter
        "steps",  # egibench's harness_steps/ directory: scripts run in a harness's environment
        "proxy_key",  # the proxy's key (set_env only; never recorded)
    }
)
_STAR_CATEGORIES = "{*categories}"  # a whole argument: one argument per kept category
SETUP_PLACEHOLDERS = frozenset({"workdir", "python"})
_EPSILON = 1e-9
_BENCHMARK_KEYS = frozenset(
    {
        "command",
        "env",
        "set_env",
        "workdir",
        "python",
        "setup",
        "data",
        "output",
        "file_model",
        "timeout_minutes",
        "minutes_per_task",
        "budget_minutes",
        "categories",
        "description",
        "stdout",
    }
)


class RegistryError(ValueError):
    """A harness registry that cannot be used: the file, the key at fault and why."""


# --- subsetting ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Category:
    """One task category of a benchmark: its task ids, the buckets it feeds, its cost."""

    name: str
    tasks: tuple[str, ...]
    buckets: tuple[str, ...]
    minutes_per_task: float
    env: tuple[str, ...] = ()


@dataclass(frozen=True)
class Subset:
    """The tasks a benchmark runs under a budget (what is recorded in the run's config)."""

    benchmark: str
    budget_minutes: float | None
    seed: int
    kept: dict[str, tuple[str, ...]]
    dropped: tuple[str, ...]
    full_minutes: float
    estimated_minutes: float
    over_budget: bool = False

    @property
    def total_tasks(self) -> int:
        """Return the number of tasks kept."""
        return sum(len(tasks) for tasks in self.kept.values())

    @property
    def tasks_per_category(self) -> int:
        """Return the most tasks kept in any one category."""
        return max((len(tasks) for tasks in self.kept.values()), default=0)

    def to_dict(self) -> dict[str, Any]:
        """Return the subset as JSON types."""
        return {
            "benchmark": self.benchmark,
            "budget_minutes": self.budget_minutes,
            "seed": self.seed,
            "categories": {name: list(tasks) for name, tasks in self.kept.items()},
            "dropped_categories": list(self.dropped),
            "total_tasks": self.total_tasks,
            "full_minutes": self.full_minutes,
            "estimated_minutes": self.estimated_minutes,
            "over_budget": self.over_budget,
        }


def bucket_coverage(routes: Sequence[tuple[str, str]]) -> dict[str, int]:
    """Return, per bucket M1–M6, how many routed sub-metrics cover it.

    ``routes`` holds ``(benchmark, bucket)`` pairs, one per route of the routing config.
    """
    coverage = dict.fromkeys(BUCKETS, 0)
    for _, bucket in routes:
        coverage[bucket] = coverage.get(bucket, 0) + 1
    return coverage


def subset_tasks(
    categories: Sequence[Category],
    *,
    budget_minutes: float | None,
    coverage: Mapping[str, int],
    seed: int = DEFAULT_SEED,
    benchmark: str = "",
) -> Subset:
    """Choose the tasks a benchmark runs within ``budget_minutes`` (SPEC §10, seed 000 App. E).

    Parameters
    ----------
    categories
        The benchmark's categories in declared order (ties go to the earlier one).
    budget_minutes
        The runtime budget; ``None`` keeps every task.
    coverage
        Sub-metrics routed into each bucket (:func:`bucket_coverage`).
    seed
        Seeds which tasks are kept; the same seed gives the same subset.

    Returns
    -------
    Subset
        The kept task ids per category (in their declared order) and the dropped categories.

    Notes
    -----
    1. If every task fits, every task is kept ("fast enough" benchmarks keep their upstream
       configuration).
    2. Categories are cut before any is dropped: while even one task per category does not
       fit, drop the category whose bucket is most redundantly covered, i.e. the largest
       ``min(coverage[b] for b in its buckets)`` over the sub-metrics still covering each
       bucket; ties drop the costlier task first, then the later-declared category. A dropped
       category no longer counts towards its buckets' coverage. The last category is never
       dropped: if its one task exceeds the budget it runs anyway, flagged ``over_budget``.
    3. Then every category keeps ``min(n_c, k)`` tasks for the largest ``k`` that fits; the
       remaining budget adds one more task to categories, in declared order, while it fits.
    4. Category ``c`` keeps a uniform sample drawn with ``random.Random(f"{seed}:{c}")``,
       listed in declared order.
    """
    if budget_minutes is not None and not budget_minutes > 0:
        raise ValueError(f"budget_minutes: expected a number > 0, got {budget_minutes!r}")
    for category in categories:
        if not category.tasks:
            raise ValueError(f"categories.{category.name}.tasks: no tasks")
        if not category.minutes_per_task > 0:
            raise ValueError(f"categories.{category.name}.minutes_per_task: expected > 0")
    full = sum(len(c.tasks) * c.minutes_per_task for c in categories)
    if budget_minutes is None or full <= budget_minutes + _EPSILON:
        return Subset(
            benchmark=benchmark,
            budget_minutes=budget_minutes,
            seed=seed,
            kept={c.name: c.tasks for c in categories},
            dropped=(),
            full_minutes=full,
            estimated_minutes=full,
        )

    # Rule 2: drop categories only while one task each does not fit.
    active = list(categories)
    left = dict(coverage)
    dropped: list[str] = []
    while len(active) > 1 and sum(c.minutes_per_task for c in active) > budget_minutes + _EPSILON:
        order = {c.name: i for i, c in enumerate(active)}
        victim = max(
            active,
            key=lambda c: (
                min((left.get(b, 0) for b in c.buckets), default=0),
                c.minutes_per_task,
                order[c.name],
            ),
        )
        active.remove(victim)
        dropped.append(victim.name)
        for bucket in victim.buckets:
            left[bucket] = left.get(bucket, 0) - 1

    # Rule 3: the largest even cut per category, then the leftover in declared order.
    def cost(cap: int) -> float:
        return sum(min(len(c.tasks), cap) * c.minutes_per_task for c in active)

    cap = 1
    while cap < max(len(c.tasks) for c in active) and cost(cap + 1) <= budget_minutes + _EPSILON:
        cap += 1
    counts = {c.name: min(len(c.tasks), cap) for c in active}
    spent = cost(cap)
    for c in active:
        if len(c.tasks) > cap and spent + c.minutes_per_task <= budget_minutes + _EPSILON:
            counts[c.name] += 1
            spent += c.minutes_per_task

    kept: dict[str, tuple[str, ...]] = {}
    for c in active:
        n = counts[c.name]
        if n >= len(c.tasks):
            kept[c.name] = c.tasks
            continue
        rng = random.Random(f"{seed}:{c.name}")  # noqa: S311 - reproducible sampling, not crypto
        chosen = sorted(rng.sample(range(len(c.tasks)), n))
        kept[c.name] = tuple(c.tasks[i] for i in chosen)
    return Subset(
        benchmark=benchmark,
        budget_minutes=budget_minutes,
        seed=seed,
        kept=kept,
        dropped=tuple(dropped),
        full_minutes=full,
        estimated_minutes=spent,
        over_budget=spent > budget_minutes + _EPSILON,
    )


# --- registry ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """A setup or data step: a command line, skipped when the path ``creates`` exists."""

    run: str
    creates: str | None = None


@dataclass(frozen=True)
class Harness:
    """One registered benchmark harness (see the module docstring for the keys)."""

    name: str
    commands: tuple[str, ...]
    env: tuple[str, ...] = ()
    set_env: dict[str, str] = field(default_factory=dict)
    workdir: Path | None = None
    python: str | None = None
    setup: tuple[Step, ...] = ()
    data: tuple[Step, ...] = ()
    output: str | None = None
    stdout: str | None = None
    file_model: str | None = None
    timeout_minutes: float = DEFAULT_TIMEOUT_MINUTES
    minutes_per_task: float | None = None
    budget_minutes: dict[str, float | None] = field(default_factory=dict)
    categories: tuple[Category, ...] = ()
    description: str = ""

    def budget(self, mode: str) -> float | None:
        """Return the runtime budget in minutes for ``mode`` (``None``: no budget)."""
        return self.budget_minutes.get(mode)


@dataclass(frozen=True)
class Registry:
    """A validated harness registry."""

    path: Path
    harnesses: dict[str, Harness]
    api_base: str | None = None


def load_registry(path: Path, *, routes: Sequence[tuple[str, str, str]] = ()) -> Registry:
    """Read and validate a harness registry YAML.

    ``routes`` holds the routing's ``(benchmark, sub_metric, bucket)`` triples, used to
    resolve a category's ``sub_metrics`` to buckets. Raises :class:`RegistryError` naming the
    file and the key at fault.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise RegistryError(f"--harnesses {path}: cannot read ({error.strerror})") from None
    data = config_data(text, f"--harnesses {path}", error=RegistryError)
    benchmarks = data.get("benchmarks") if isinstance(data, dict) else None
    if not isinstance(benchmarks, dict):
        raise RegistryError(
            f"{path}: key benchmarks: expected a mapping {{name: {{command, env}}}}"
        )
    api_base = None
    proxy = data.get("proxy")
    if proxy is not None:
        if not isinstance(proxy, dict) or not isinstance(proxy.get("api_base", ""), str):
            raise RegistryError(f"{path}: key proxy.api_base: expected a URL string")
        api_base = proxy.get("api_base")
    harnesses = {
        str(name): _harness(path, str(name), entry, routes) for name, entry in benchmarks.items()
    }
    return Registry(path=path, harnesses=harnesses, api_base=api_base)


def _harness(path: Path, name: str, entry: Any, routes: Sequence[tuple[str, str, str]]) -> Harness:
    where = f"benchmarks.{name}"

    def fail(key: str, message: str) -> RegistryError:
        return RegistryError(f"{path}: key {where}.{key}: {message}")

    raw_command = entry.get("command") if isinstance(entry, dict) else None
    commands = [raw_command] if isinstance(raw_command, str) else raw_command
    if (
        not isinstance(entry, dict)
        or not isinstance(commands, list)
        or not commands
        or not all(isinstance(c, str) for c in commands)
    ):
        raise fail("command", "expected a string (a command line) or a list of them")
    unknown = sorted(set(map(str, entry)) - _BENCHMARK_KEYS)
    if unknown:
        raise fail(unknown[0], f"unknown key (known: {', '.join(sorted(_BENCHMARK_KEYS))})")
    for index, command in enumerate(commands):
        key = "command" if isinstance(raw_command, str) else f"command[{index}]"
        try:
            tokens = shlex.split(command)
        except ValueError as error:
            raise fail(key, f"cannot split ({error})") from None
        if not tokens:
            raise fail(key, "empty")
        for token in tokens:
            _check_template(token, lambda m, k=key: fail(k, m), allow_star=True)

    variables = entry.get("env", [])
    if not isinstance(variables, list) or not all(isinstance(v, str) for v in variables):
        raise fail("env", "expected a list of names")
    set_env = entry.get("set_env", {})
    if not isinstance(set_env, dict) or not all(
        isinstance(k, str) and isinstance(v, str | int | float) for k, v in set_env.items()
    ):
        raise fail("set_env", "expected a mapping {NAME: value}")
    for key, value in set_env.items():
        _check_template(str(value), lambda m, k=key: fail(f"set_env.{k}", m), allowed=PLACEHOLDERS)

    workdir = None
    if entry.get("workdir") is not None:
        if not isinstance(entry["workdir"], str) or not entry["workdir"].strip():
            raise fail("workdir", "expected a path")
        workdir = Path(os.path.expandvars(os.path.expanduser(entry["workdir"])))
        if not workdir.is_absolute():
            workdir = path.parent / workdir
    python = _optional_str(entry, "python", fail)
    steps = {key: _steps(entry, key, fail) for key in ("setup", "data")}
    output = _optional_str(entry, "output", fail)
    if output is not None:
        _check_template(output, lambda m: fail("output", m))
    stdout = _optional_str(entry, "stdout", fail)
    if stdout is not None:
        _check_template(stdout, lambda m: fail("stdout", m))
    file_model = _optional_str(entry, "file_model", fail)
    if file_model is not None:
        _check_template(file_model, lambda m: fail("file_model", m))
    timeout = _positive(
        entry.get("timeout_minutes", DEFAULT_TIMEOUT_MINUTES), "timeout_minutes", fail
    )
    per_task = entry.get("minutes_per_task")
    if per_task is not None:
        per_task = _positive(per_task, "minutes_per_task", fail)

    budgets_raw = entry.get("budget_minutes", {})
    if not isinstance(budgets_raw, dict) or set(map(str, budgets_raw)) - set(MODES):
        raise fail("budget_minutes", "expected a mapping {quick: minutes, deep: minutes|null}")
    budgets: dict[str, float | None] = {}
    for mode, value in budgets_raw.items():
        budgets[str(mode)] = (
            None if value is None else _positive(value, f"budget_minutes.{mode}", fail)
        )

    categories = _categories(entry.get("categories"), name, per_task, routes, fail)
    if budgets and any(v is not None for v in budgets.values()) and not categories:
        raise fail("categories", "a budget needs categories to subset")
    description = entry.get("description", "")
    return Harness(
        name=name,
        commands=tuple(commands),
        env=tuple(variables),
        set_env={str(k): str(v) for k, v in set_env.items()},
        workdir=workdir,
        python=python,
        setup=steps["setup"],
        data=steps["data"],
        output=output,
        stdout=stdout,
        file_model=file_model,
        timeout_minutes=timeout,
        minutes_per_task=per_task,
        budget_minutes=budgets,
        categories=categories,
        description=str(description),
    )


def _categories(
    raw: Any,
    benchmark: str,
    per_task: float | None,
    routes: Sequence[tuple[str, str, str]],
    fail: Any,
) -> tuple[Category, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not raw:
        raise fail("categories", "expected a mapping {name: {tasks, buckets | sub_metrics}}")
    routed = {(b, s): bucket for b, s, bucket in routes}
    categories = []
    for name, spec in raw.items():
        key = f"categories.{name}"
        if not isinstance(spec, dict):
            raise fail(key, "expected a mapping {tasks, buckets | sub_metrics}")
        tasks = spec.get("tasks")
        if isinstance(tasks, bool) or not (
            (isinstance(tasks, int) and tasks >= 1)
            or (isinstance(tasks, list) and tasks and all(isinstance(t, str | int) for t in tasks))
        ):
            raise fail(f"{key}.tasks", "expected a count ≥ 1 or a non-empty list of task ids")
        ids = tuple(str(t) for t in (range(tasks) if isinstance(tasks, int) else tasks))
        if len(set(ids)) != len(ids):
            raise fail(f"{key}.tasks", "task ids repeat")
        buckets: list[str] = []
        if "buckets" in spec:
            given = spec["buckets"]
            if not isinstance(given, list) or not given or not all(b in BUCKETS for b in given):
                raise fail(f"{key}.buckets", "expected a non-empty list of M1..M6")
            buckets = [str(b) for b in given]
        elif "sub_metrics" in spec:
            given = spec["sub_metrics"]
            if not isinstance(given, list) or not given:
                raise fail(f"{key}.sub_metrics", "expected a non-empty list of sub-metric keys")
            for sub_metric in given:
                bucket = routed.get((benchmark, str(sub_metric)))
                if bucket is None:
                    raise fail(
                        f"{key}.sub_metrics", f"{sub_metric!r} is not routed for {benchmark}"
                    )
                buckets.append(bucket)
        else:
            raise fail(key, "expected buckets or sub_metrics")
        needs = spec.get("env", [])
        if not isinstance(needs, list) or not all(isinstance(v, str) for v in needs):
            raise fail(f"{key}.env", "expected a list of names")
        minutes = spec.get("minutes_per_task", per_task)
        if minutes is None:
            raise fail(f"{key}.minutes_per_task", "missing (set it here or for the benchmark)")
        minutes = _positive(minutes, f"{key}.minutes_per_task", fail)
        categories.append(
            Category(
                name=str(name),
                tasks=ids,
                buckets=tuple(dict.fromkeys(buckets)),
                minutes_per_task=minutes,
                env=tuple(needs),
            )
        )
    return tuple(categories)


def _optional_str(entry: Mapping[str, Any], key: str, fail: Any) -> str | None:
    value = entry.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise fail(key, "expected a non-empty string")
    return value


def _steps(entry: Mapping[str, Any], key: str, fail: Any) -> tuple[Step, ...]:
    raw = entry.get(key, [])
    if not isinstance(raw, list):
        raise fail(key, "expected a list of command lines or {run, creates} mappings")
    steps = []
    for index, item in enumerate(raw):
        where = f"{key}[{index}]"
        creates = None
        if isinstance(item, dict):
            if set(map(str, item)) - {"run", "creates"} or not isinstance(item.get("run"), str):
                raise fail(where, "expected {run: command line, creates: path}")
            creates = item.get("creates")
            if creates is not None and (not isinstance(creates, str) or not creates.strip()):
                raise fail(f"{where}.creates", "expected a path")
            item = item["run"]
        if not isinstance(item, str) or not item.strip():
            raise fail(where, "expected a command line")
        try:
            tokens = shlex.split(item)
        except ValueError as error:
            raise fail(where, f"cannot split ({error})") from None
        for token in [*tokens, *([creates] if creates else [])]:
            _check_template(token, lambda m, w=where: fail(w, m), allowed=SETUP_PLACEHOLDERS)
        steps.append(Step(run=item, creates=creates))
    return tuple(steps)


def _positive(value: Any, key: str, fail: Any) -> float:
    number = finite_number(value)
    if number is None and isinstance(value, float) and value > 0:
        raise fail(key, f"expected a finite number, got {value!r}")
    if number is None or not number > 0:
        raise fail(key, f"expected a number > 0, got {value!r}")
    return number


def _check_template(
    text: str,
    fail: Any,
    *,
    allow_star: bool = False,
    allowed: frozenset[str] = PLACEHOLDERS - {"proxy_key"},
) -> None:
    if allow_star and text == _STAR_CATEGORIES:
        return
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
    except ValueError as error:
        raise fail(f"bad template {text!r} ({error})") from None
    for name in fields:
        if name not in allowed:
            known = ", ".join(sorted(allowed))
            raise fail(f"unknown placeholder {{{name}}} in {text!r} (known: {known})")


def expand_template(text: str, values: Mapping[str, str]) -> str:
    """Fill a checked template's placeholders from ``values``."""
    return text.format_map(dict(values))


def expand_command(command: str, values: Mapping[str, str], categories: Sequence[str]) -> list[str]:
    """Return the argv of ``command``: split first, then each argument filled in.

    An argument that is exactly ``{*categories}`` becomes one argument per category, so a
    value holding spaces never splits into several arguments.
    """
    argv: list[str] = []
    for token in shlex.split(command):
        if token == _STAR_CATEGORIES:
            argv.extend(categories)
        else:
            argv.append(expand_template(token, values))
    return argv


# --- runner --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Execution:
    """What happened to one harness command."""

    returncode: int | None
    seconds: float
    timed_out: bool = False
    error: str | None = None
    started_at: float = 0.0  # time.time() when the first command started
    step: int = 0  # the 0-based index of the last command run

    @property
    def ok(self) -> bool:
        """Return whether the command ran to completion with exit status 0."""
        return self.error is None and not self.timed_out and self.returncode == 0


def execute(
    commands: Sequence[Sequence[str]],
    *,
    cwd: Path | None,
    env: Mapping[str, str],
    log_path: Path,
    timeout_seconds: float,
    stdout_path: Path | None = None,
    grace_seconds: float = 5.0,
) -> Execution:
    """Run each argv of ``commands`` in order (no shell) until one fails.

    Output goes to ``log_path`` (stdout to ``stdout_path`` instead, if given). Each command
    runs in a new session; once ``timeout_seconds`` have passed in all, the running command's
    whole process group gets SIGTERM, then SIGKILL after ``grace_seconds``, so grandchildren
    do not outlive it.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    if stdout_path is not None:
        stdout_path.parent.mkdir(parents=True, exist_ok=True)
    wall = time.time()
    started = time.monotonic()
    result = Execution(None, 0.0, started_at=wall)
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(log_path.open("ab"))
        out = log if stdout_path is None else stack.enter_context(stdout_path.open("ab"))
        for step, argv in enumerate(commands):
            remaining = timeout_seconds - (time.monotonic() - started)
            result = _execute_one(
                list(argv), cwd=cwd, env=env, log=log, out=out, timeout=remaining,
                grace=grace_seconds, started=started, wall=wall, step=step,
            )  # fmt: skip
            if not result.ok:
                break
    return result


def _execute_one(
    argv: list[str],
    *,
    cwd: Path | None,
    env: Mapping[str, str],
    log: IO[bytes],
    out: IO[bytes],
    timeout: float,
    grace: float,
    started: float,
    wall: float,
    step: int,
) -> Execution:
    _log_line(log, f"$ {shlex.join(argv)}  (cwd {cwd or os.getcwd()})")
    if timeout <= 0:
        _log_line(log, "not started: the harness's time is up")
        return Execution(None, time.monotonic() - started, True, None, wall, step)
    try:
        process = subprocess.Popen(  # noqa: S603 - argv list, no shell
            argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=log,
            start_new_session=True,
        )
    except OSError as error:
        _log_line(log, f"cannot start: {error}")
        return Execution(
            None,
            time.monotonic() - started,
            False,
            f"cannot start {argv[0]!r}: {error}",
            wall,
            step,
        )
    try:
        returncode = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _terminate_group(process, grace)
        _log_line(log, "timed out; terminated")
        return Execution(process.returncode, time.monotonic() - started, True, None, wall, step)
    seconds = time.monotonic() - started
    _log_line(log, f"exit status {returncode} after {seconds:.1f} s")
    return Execution(returncode, seconds, False, None, wall, step)


def _terminate_group(process: subprocess.Popen[bytes], grace_seconds: float) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=grace_seconds)
            return
        except subprocess.TimeoutExpired:
            continue


def _log_line(log: IO[bytes], text: str) -> None:
    log.write(f"[egi-bench] {text}\n".encode())
    log.flush()
