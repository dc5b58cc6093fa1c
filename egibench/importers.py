"""Read the eight EGI-Bench constituents' native result files into routed sub-metrics.

Pure: no Django import. One importer per benchmark, ``import_<benchmark>(path)``, returns the
benchmark's native sub-metrics keyed as ``egibench/routing.yaml`` routes them (seed 000
Table 6 in lower-case snake_case). A Table 6 row stated "per env", "per entity", "per domain"
or "per (noise × type)" is one key, the unweighted mean over its envs, entities, domains or
cells, so each row weighs the same in its bucket; MCP-Universe's three domains are three rows.
Values keep the benchmark's native scale (the routing's ``scale`` states it; SPEC §10
normalises to [0, 100] later). Formats: ``shared/research/egi-constituents.md``.

A sub-metric the file has no data for is left out (the aggregator reweights within its
bucket); a malformed file raises :class:`BenchmarkFileError` naming the file and the key, and
never turns into a zero.
"""

from __future__ import annotations

import io
import math
import pickle
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from enterpriseval.documents import DocumentLimitError, DocumentSyntaxError, json_decode
from enterpriseval.values import finite_number, type_name

__all__ = [
    "IMPORTERS",
    "BenchmarkFileError",
    "Importer",
    "import_benchforce",
    "import_crmarena",
    "import_herb",
    "import_locobench",
    "import_mcp_universe",
    "import_mcpeval",
    "import_personabench",
    "import_results",
    "import_userbench",
    "load_pickle_plain",
]


class BenchmarkFileError(ValueError):
    """A benchmark result file that cannot be read: the file, the key at fault, why."""

    def __init__(self, path: Path, key: str | None, message: str) -> None:
        self.path = path
        self.key = key
        self.message = message
        where = f"{path}" if key is None else f"{path}: key {key}"
        super().__init__(f"{where}: {message}")


class Importer(Protocol):
    def __call__(self, path: Path, *, model: str | None = None) -> dict[str, float]: ...


# --- shared readers and checks -------------------------------------------------------------


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkFileError(path, None, f"cannot read the file ({exc})") from exc


def _load_json(path: Path) -> Any:
    text = _read_text(path)
    try:
        # The project's JSON reader: nesting and integer length bounded (issue 17).
        return json_decode(text)
    except DocumentSyntaxError as exc:
        kind = "refused JSON" if isinstance(exc, DocumentLimitError) else "not valid JSON"
        raise BenchmarkFileError(
            path, None, f"{kind} (line {exc.line}, column {exc.column}: {exc.problem})"
        ) from exc


class _RefusedGlobalError(pickle.UnpicklingError):
    def __init__(self, module: str, name: str) -> None:
        self.global_name = f"{module}.{name}"
        super().__init__(self.global_name)


class _PlainUnpickler(pickle.Unpickler):
    """Unpickle only what needs no global: dict, list, tuple, str, int, float, bool, None."""

    def find_class(self, module: str, name: str) -> Any:
        raise _RefusedGlobalError(module, name)


def load_pickle_plain(path: Path) -> Any:
    """Load a pickle that holds only plain containers, strings and numbers.

    Every global the pickle asks for (a class, a function such as ``os.system``) is refused
    before anything runs, so a pickle built to execute code raises instead.

    Parameters
    ----------
    path : Path
        The pickle file.

    Returns
    -------
    Any
        The unpickled dicts, lists, tuples, strings, numbers, booleans and ``None``.

    Raises
    ------
    BenchmarkFileError
        The file cannot be read, is not a pickle, or asks for a global (named in the message).
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BenchmarkFileError(path, None, f"cannot read the file ({exc})") from exc
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except _RefusedGlobalError as exc:
        raise BenchmarkFileError(
            path,
            None,
            f"pickle refused: it asks for the global {exc.global_name!r}; only plain dicts, "
            "lists, strings and numbers are accepted (store answers as str, not objects)",
        ) from exc
    except Exception as exc:  # a truncated or foreign file fails in many ways
        raise BenchmarkFileError(path, None, f"not a readable pickle ({exc!r})") from exc


def _get(container: Any, key: str | int, path: Path, where: str) -> Any:
    """Return ``container[key]``, or raise naming the JSON path ``where``."""
    if isinstance(key, int):
        if not isinstance(container, list) or not -len(container) <= key < len(container):
            raise BenchmarkFileError(path, where, "missing (expected a list item)")
        return container[key]
    if not isinstance(container, dict):
        raise BenchmarkFileError(path, where, "missing (its parent is not an object)")
    if key not in container:
        raise BenchmarkFileError(path, where, "missing")
    return container[key]


def _as_dict(value: Any, path: Path, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BenchmarkFileError(
            path, where, f"expected an object, got {type_name(value, style='python')}"
        )
    return value


def _as_list(value: Any, path: Path, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise BenchmarkFileError(
            path, where, f"expected a list, got {type_name(value, style='python')}"
        )
    return value


def _number(value: Any, path: Path, where: str, *, low: float = 0.0, high: float = 1.0) -> float:
    """Return ``value`` as a float in ``[low, high]``; booleans, strings and NaN are refused."""
    number = finite_number(value)
    if number is None and not isinstance(value, float):  # a NaN or an infinity is a float
        got = type_name(value, style="python") + ("" if value is None else f" {value!r}")
        raise BenchmarkFileError(path, where, f"expected a number, got {got}")
    if number is None or not low <= number <= high:
        raise BenchmarkFileError(path, where, f"{float(value)!r} is outside [{low:g}, {high:g}]")
    return number


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values)


def _slug(text: str) -> str:
    """Lower-case snake_case: ``"Preference_easy"`` → ``preference_easy``, ``0.3`` → ``0_3``."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _files(path: Path, patterns: Iterable[str], *, recursive: bool = False) -> list[Path]:
    """Return ``[path]`` for a file, else the directory's files matching ``patterns``."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise BenchmarkFileError(path, None, "no such file or directory")
    found: set[Path] = set()
    for pattern in patterns:
        found.update(path.rglob(pattern) if recursive else path.glob(pattern))
    files = sorted(p for p in found if p.is_file())
    if not files:
        wanted = ", ".join(patterns)
        raise BenchmarkFileError(path, None, f"the directory holds no result file ({wanted})")
    return files


def _pick_model(
    by_model: dict[str, Any], model: str | None, path: Path, where: str
) -> tuple[str, Any]:
    if model is not None:
        return model, _get(by_model, model, path, f"{where}.{model}")
    if len(by_model) != 1:
        names = ", ".join(sorted(by_model)) or "none"
        raise BenchmarkFileError(
            path, where, f"holds {len(by_model)} models ({names}); pass model= to choose one"
        )
    return next(iter(by_model.items()))


# --- CRMArena ------------------------------------------------------------------------------

CRMARENA_TASK_TYPES = (
    "case_routing",  # NCR
    "handle_time",  # HTU
    "transfer_count",  # TCU
    "top_issue_identification",  # TII
    "best_region_identification",  # BRI
    "monthly_trend_analysis",  # MTA
    "named_entity_disambiguation",  # NED
    "knowledge_qa",  # KQA
    "policy_violation_identification",  # PVI
)
"""CRMArena's ``task_type`` strings, which are also the sub-metric keys (Table 6 codes)."""


def import_crmarena(path: Path, *, model: str | None = None) -> dict[str, float]:
    """Return CRMArena's per-task-type accuracy: the mean ``reward`` of each task type.

    Reads ``{log_dir}/results_{model}_{strategy}_{category}.json`` (``run_tasks.py``), or
    every ``results_*.json`` in a directory (one run per category); expects a list of
    objects with ``task_id``, ``task_type`` (one of :data:`CRMARENA_TASK_TYPES`) and
    ``reward`` in [0, 1] (0/1 for exact match, a token F1 for KQA).

    Parameters
    ----------
    path : Path
        A result file or a directory of them.
    model : str, optional
        Unused: a CRMArena result file holds one model's run.

    Returns
    -------
    dict[str, float]
        One key per ``task_type`` present (``case_routing``, ``knowledge_qa``, …), each a
        fraction in [0, 1]: :math:`\\frac{1}{n_t}\\sum_{i \\in t} r_i`.
    """
    rewards: dict[str, list[float]] = defaultdict(list)
    seen: dict[Any, Path] = {}
    for file in _files(path, ["results_*.json"]):
        tasks = _as_list(_load_json(file), file, "(root)")
        for index, task in enumerate(tasks):
            where = f"[{index}]"
            task_id = _get(task, "task_id", file, f"{where}.task_id")
            if not isinstance(task_id, int | str) or isinstance(task_id, bool):
                raise BenchmarkFileError(file, f"{where}.task_id", f"invalid id {task_id!r}")
            if task_id in seen:
                raise BenchmarkFileError(
                    file, f"{where}.task_id", f"task {task_id!r} also appears in {seen[task_id]}"
                )
            seen[task_id] = file
            task_type = _get(task, "task_type", file, f"{where}.task_type")
            if task_type not in CRMARENA_TASK_TYPES:
                known = ", ".join(CRMARENA_TASK_TYPES)
                raise BenchmarkFileError(
                    file, f"{where}.task_type", f"unknown task type {task_type!r} (known: {known})"
                )
            reward = _number(_get(task, "reward", file, f"{where}.reward"), file, f"{where}.reward")
            rewards[task_type].append(reward)
    if not rewards:
        raise BenchmarkFileError(path, "(root)", "no tasks: the result list is empty")
    return {key: _mean(values) for key, values in rewards.items()}


# --- HERB ----------------------------------------------------------------------------------

HERB_ENTITY_TYPES = ("person", "url", "pr", "company")


def import_herb(path: Path, *, model: str | None = None) -> dict[str, float]:
    r"""Return HERB's per-entity F1, content correctness and unanswerable null rate.

    Reads the pickles ``code/output/{emb}-{model}-{n}-{ans,unans}.pk`` after ``evaluate.py``
    has scored them in place: one pickle, or a directory holding at most one ``*-ans.pk`` and
    one ``*-unans.pk`` (``.pkl`` too). Loaded with :func:`load_pickle_plain`, so answers must
    be plain strings (a pickled llama-index ``Response`` is refused). The kind is told by the
    keys: an *ans* pickle has parallel lists ``type`` and ``gpt4-correctness``; an *unans*
    pickle has ``unanswerable_results``, a list of ``{"q", "a", "s"}`` with ``s`` ∈ {0, 1}.

    Parameters
    ----------
    path : Path
        A scored pickle, or a directory of them.
    model : str, optional
        Unused: each HERB pickle holds one model's run.

    Returns
    -------
    dict[str, float]
        ``entity_f1`` and ``content_correctness`` on HERB's 0–100 scale (F1 × 100; content is
        a GPT-4 Likert score 0–100); ``unanswerable_null_rate`` in [0, 1], the mean of ``s``
        (1 = the model declined, which is right for an unanswerable question). With
        :math:`\bar s_t` the mean score of the questions of type *t*,
        ``entity_f1`` = :math:`\frac{1}{|T|}\sum_{t \in T} \bar s_t` over the entity types
        *T* ⊆ {person, url, pr, company} that have questions, and ``content_correctness`` =
        :math:`\bar s_{content}`.

    Notes
    -----
    ``evaluate.py`` prints ``pr`` folded into ``url``; the ``type`` list still says ``pr``,
    so the two are averaged apart as Table 6 lists them. Negative scores are left out of the
    means, as ``evaluate.py`` leaves them out of ``gpt4-correctness-avg``.
    """
    if path.is_dir():
        answerable = _glob(path, "*-ans.pk", "*-ans.pkl")
        unanswerable = _glob(path, "*-unans.pk", "*-unans.pkl")
        for kind, found in (("answerable", answerable), ("unanswerable", unanswerable)):
            if len(found) > 1:
                names = ", ".join(f.name for f in found)
                raise BenchmarkFileError(path, None, f"more than one {kind} pickle: {names}")
        files = answerable + unanswerable
        if not files:
            raise BenchmarkFileError(path, None, "no *-ans.pk or *-unans.pk pickle")
    else:
        files = [path]
    result: dict[str, float] = {}
    for file in files:
        data = _as_dict(load_pickle_plain(file), file, "(root)")
        if "unanswerable_results" in data:
            result.update(_herb_unanswerable(data, file))
        elif "gpt4-correctness" in data:
            result.update(_herb_answerable(data, file))
        else:
            raise BenchmarkFileError(
                file,
                "gpt4-correctness",
                "missing, and so is unanswerable_results: run HERB's evaluate.py on the file",
            )
    return result


def _glob(directory: Path, *patterns: str) -> list[Path]:
    return sorted({p for pattern in patterns for p in directory.glob(pattern) if p.is_file()})


def _herb_answerable(data: dict[str, Any], file: Path) -> dict[str, float]:
    types = _as_list(_get(data, "type", file, "type"), file, "type")
    scores = _as_list(
        _get(data, "gpt4-correctness", file, "gpt4-correctness"), file, "gpt4-correctness"
    )
    if len(types) != len(scores):
        raise BenchmarkFileError(
            file,
            "gpt4-correctness",
            f"{len(scores)} scores for {len(types)} questions in 'type'",
        )
    by_type: dict[str, list[float]] = defaultdict(list)
    for index, (kind, score) in enumerate(zip(types, scores, strict=True)):
        if kind not in (*HERB_ENTITY_TYPES, "content"):
            raise BenchmarkFileError(file, f"type[{index}]", f"unknown question type {kind!r}")
        value = _number(score, file, f"gpt4-correctness[{index}]", low=-math.inf, high=100.0)
        if value >= 0:
            by_type[kind].append(value)
    per_entity = [_mean(by_type[kind]) for kind in HERB_ENTITY_TYPES if by_type[kind]]
    result = {"entity_f1": _mean(per_entity)} if per_entity else {}
    if by_type["content"]:
        result["content_correctness"] = _mean(by_type["content"])
    if not result:
        raise BenchmarkFileError(file, "gpt4-correctness", "no scored question")
    return result


def _herb_unanswerable(data: dict[str, Any], file: Path) -> dict[str, float]:
    rows = _as_list(data["unanswerable_results"], file, "unanswerable_results")
    if not rows:
        raise BenchmarkFileError(file, "unanswerable_results", "empty list")
    declined = []
    for index, row in enumerate(rows):
        where = f"unanswerable_results[{index}].s"
        s = _get(row, "s", file, where)
        if isinstance(s, bool) or s not in (0, 1):
            raise BenchmarkFileError(file, where, f"expected 0 or 1, got {s!r}")
        declined.append(float(s))
    return {"unanswerable_null_rate": _mean(declined)}


# --- PersonaBench --------------------------------------------------------------------------

PERSONABENCH_CATEGORIES = (
    "Basic_information_easy",
    "Preference_easy",
    "Preference_hard",
    "Social_easy",
)
PERSONABENCH_MEASURE = "ave_recall"
"""The QA "accuracy": word-set recall, the measure PersonaBench's own noise plot uses."""


def import_personabench(path: Path, *, model: str | None = None) -> dict[str, float]:
    """Return PersonaBench's QA accuracy per noise level × question type.

    Reads ``statistics_all_noises.json`` written by ``scripts/evaluation/eval.py``; expects a
    list of ``{"Noise": <number>, "Statistics": {"end2end_eval": {"<base>+<retriever>":
    {category: {"ave_recall": …}}}}}`` with the categories of
    :data:`PERSONABENCH_CATEGORIES` (``Overall`` and ``outdated_information`` are not
    types and are not read). A category absent from a noise level is left out.

    Parameters
    ----------
    path : Path
        The statistics file.
    model : str, optional
        The ``end2end_eval`` key (``"gpt-4o+all-MiniLM-L6-v2"``); required when the file
        holds more than one.

    Returns
    -------
    dict[str, float]
        ``qa_accuracy`` in [0, 1]: the mean of ``ave_recall`` over the (noise level,
        category) cells the file holds.
    """
    levels = _as_list(_load_json(path), path, "(root)")
    if not levels:
        raise BenchmarkFileError(path, "(root)", "no noise level")
    cells: dict[tuple[float, str], float] = {}
    for index, level in enumerate(levels):
        where = f"[{index}]"
        noise = _number(_get(level, "Noise", path, f"{where}.Noise"), path, f"{where}.Noise")
        e2e_where = f"{where}.Statistics.end2end_eval"
        statistics = _get(level, "Statistics", path, f"{where}.Statistics")
        end2end = _as_dict(_get(statistics, "end2end_eval", path, e2e_where), path, e2e_where)
        name, categories = _pick_model(end2end, model, path, e2e_where)
        for category in PERSONABENCH_CATEGORIES:
            if not isinstance(categories, dict) or category not in categories:
                continue
            key_where = f"{e2e_where}.{name}.{category}.{PERSONABENCH_MEASURE}"
            value = _number(
                _get(categories[category], PERSONABENCH_MEASURE, path, key_where), path, key_where
            )
            if (noise, category) in cells:
                raise BenchmarkFileError(path, f"{where}.Noise", f"noise {noise} appears twice")
            cells[noise, category] = value
    if not cells:
        raise BenchmarkFileError(path, "(root)", "no question-type statistics in any noise level")
    return {"qa_accuracy": _mean(list(cells.values()))}


# --- UserBench -----------------------------------------------------------------------------


def import_userbench(path: Path, *, model: str | None = None) -> dict[str, float]:
    """Return UserBench's ``micro_avg`` per environment.

    Reads ``outputs/results_{save_name}.json`` written by ``eval.py``; expects
    ``{env: {str(pass_k): {"micro_avg": …, …}}}`` with exactly one ``pass_k`` entry per
    environment (the run's ``--pass_k``).

    Parameters
    ----------
    path : Path
        The results file.
    model : str, optional
        Unused: the file holds one model's run.

    Returns
    -------
    dict[str, float]
        ``micro_avg`` in [0, 1]: the mean over environments (``travel22``, …) of each one's
        ``micro_avg``, itself the mean over items of the mean turn reward.
    """
    envs = _as_dict(_load_json(path), path, "(root)")
    if not envs:
        raise BenchmarkFileError(path, "(root)", "no environment")
    per_env: list[float] = []
    for env, by_k in envs.items():
        by_k = _as_dict(by_k, path, env)
        if len(by_k) != 1:
            keys = ", ".join(sorted(by_k)) or "none"
            raise BenchmarkFileError(path, env, f"expected one pass_k entry, found {keys}")
        ((k, stats),) = by_k.items()
        where = f"{env}.{k}.micro_avg"
        per_env.append(_number(_get(stats, "micro_avg", path, where), path, where))
    return {"micro_avg": _mean(per_env)}


# --- MCP-Universe ---------------------------------------------------------------------------

_MCP_UNIVERSE_ROW = re.compile(
    r"^\|\*\*(?P<name>.+?)\*\*:\|\s*(?P<passed>\d+)\s*\|\s*(?P<failed>\d+)\s*\|"
    r"\s*[0-9.]+\s*\|\s*\d+\s*\|\s*$"
)


def import_mcp_universe(path: Path, *, model: str | None = None) -> dict[str, float]:
    """Return MCP-Universe's pass rate per domain.

    Reads the Markdown reports ``log/report_*.md`` (``mcpuniverse/benchmark/report.py``): one
    report, or every ``report_*.md`` in a directory. Expects "Benchmark Summary" rows
    ``|**<domain>/<task>.json**:| <passed> | <not passed> | <score> | <llm calls> |``, one
    per task, where passed / not passed count the task's evaluators; the domain is the first
    component of the task's config path.

    Parameters
    ----------
    path : Path
        A report or a directory of reports.
    model : str, optional
        Unused: a report holds one model's run.

    Returns
    -------
    dict[str, float]
        ``pass_rate_{domain}`` in [0, 1]: the share of the domain's tasks whose evaluators
        all passed, over the tasks in the reports.
    """
    outcomes: dict[str, list[float]] = defaultdict(list)
    seen: dict[str, Path] = {}
    for file in _files(path, ["report_*.md"]):
        for number, line in enumerate(_read_text(file).splitlines(), start=1):
            if not line.startswith("|**"):
                continue
            where = f"line {number}"
            match = _MCP_UNIVERSE_ROW.match(line)
            if match is None:
                raise BenchmarkFileError(
                    file,
                    where,
                    "a summary row not of the form |**task**:| passed | "
                    "not passed | score | llm calls |",
                )
            name = match["name"].strip()
            if "/" not in name:
                raise BenchmarkFileError(
                    file, where, f"task {name!r} has no domain folder (expected <domain>/<task>)"
                )
            if name in seen:
                raise BenchmarkFileError(file, where, f"task {name!r} also appears in {seen[name]}")
            seen[name] = file
            passed, failed = int(match["passed"]), int(match["failed"])
            if passed + failed == 0:
                raise BenchmarkFileError(file, where, f"task {name!r} has no evaluator")
            outcomes[_slug(name.split("/", 1)[0])].append(1.0 if failed == 0 else 0.0)
    if not outcomes:
        raise BenchmarkFileError(path, "Benchmark Summary", "no task row")
    return {f"pass_rate_{domain}": _mean(values) for domain, values in outcomes.items()}


# --- MCPEval -------------------------------------------------------------------------------


def import_mcpeval(path: Path, *, model: str | None = None) -> dict[str, float]:
    """Return MCPEval's flexible average score per domain.

    Reads ``<domain>/results/<stem>_summary_analysis.json`` written by ``mcp-eval analyze``
    (MCPEval's ``benchmarks/<domain>/results/`` layout names the domain): one file, or every
    such file under a directory. Expects ``summary.flexible_match.average_overall_score``.

    Parameters
    ----------
    path : Path
        A summary file or a directory searched recursively.
    model : str, optional
        Unused: a summary covers one model's predictions.

    Returns
    -------
    dict[str, float]
        ``flexible_average_score`` in [0, 1]: the mean over domains of each domain's
        ``average_overall_score``.
    """
    per_domain: dict[str, float] = {}
    for file in _files(path, ["*_summary_analysis.json"], recursive=True):
        if file.parent.name != "results":
            raise BenchmarkFileError(
                file, None, "cannot tell the domain: expected <domain>/results/<file>"
            )
        domain = file.parent.parent.name
        if domain in per_domain:
            raise BenchmarkFileError(file, None, f"a second summary for domain {domain!r}")
        where = "summary.flexible_match.average_overall_score"
        node = _load_json(file)
        for part in where.split("."):
            node = _get(node, part, file, where)
        per_domain[domain] = _number(node, file, where)
    return {"flexible_average_score": _mean(list(per_domain.values()))}


# --- Benchforce ----------------------------------------------------------------------------

_BENCHFORCE_ROW = re.compile(
    r"^\s*(?:\d+\s+)?accuracy\s+(?P<parameter>Total entries|Finished entries|"
    r"Accuracy \(All\)|Accuracy \(Finished\)|accuracy_error)\s+(?P<value>.*?)\s*$"
)


def import_benchforce(path: Path, *, model: str | None = None) -> dict[str, float]:
    """Return Benchforce's accuracy (all and finished) and finished share, mean over environments.

    Reads the printed summary (stdout of ``python run.py``, one run per ``environment`` of
    ``config.yaml``, captured to a ``.txt`` file such as ``hospital.txt``): one file, or every
    ``*.txt`` in a directory, one environment each. Expects the melted table rows
    ``accuracy | Total entries``, ``Finished entries``, ``Accuracy (All)`` and
    ``Accuracy (Finished)``, each once, with or without pandas' index column; other output
    lines are ignored.

    Parameters
    ----------
    path : Path
        A captured summary or a directory of them.
    model : str, optional
        Unused: a run tests one agent model.

    Returns
    -------
    dict[str, float]
        The mean over environments of ``accuracy_all`` (Accuracy (All)),
        ``accuracy_finished`` (Accuracy (Finished)) and ``finished_ratio`` (Finished entries /
        Total entries), each in [0, 1]. The routing forms the gap ``accuracy_finished −
        accuracy_all`` (SPEC §10 enters it into M5 as 100 − gap).
    """
    runs: dict[str, list[float]] = defaultdict(list)
    for file in _files(path, ["*.txt"]):
        rows: dict[str, str] = {}
        for line in _read_text(file).splitlines():
            match = _BENCHFORCE_ROW.match(line)
            if match is None:
                continue
            parameter = match["parameter"]
            if parameter == "accuracy_error":
                raise BenchmarkFileError(file, parameter, f"the run failed: {match['value']}")
            if parameter in rows:
                raise BenchmarkFileError(file, parameter, "printed twice (two runs in one file?)")
            rows[parameter] = match["value"]
        values = {p: _benchforce_value(rows, p, file) for p in _BENCHFORCE_PARAMETERS}
        total, finished = values["Total entries"], values["Finished entries"]
        if total < 1 or finished > total or not total.is_integer() or not finished.is_integer():
            raise BenchmarkFileError(
                file, "Finished entries", f"{finished:g} finished of {total:g} is not a count"
            )
        runs["accuracy_all"].append(values["Accuracy (All)"])
        runs["accuracy_finished"].append(values["Accuracy (Finished)"])
        runs["finished_ratio"].append(finished / total)
    return {key: _mean(values) for key, values in runs.items()}


_BENCHFORCE_PARAMETERS = (
    "Total entries",
    "Finished entries",
    "Accuracy (All)",
    "Accuracy (Finished)",
)


def _benchforce_value(rows: dict[str, str], parameter: str, file: Path) -> float:
    if parameter not in rows:
        raise BenchmarkFileError(file, parameter, "missing from the printed summary")
    try:
        value = float(rows[parameter])
    except ValueError:
        raise BenchmarkFileError(file, parameter, f"not a number: {rows[parameter]!r}") from None
    high = math.inf if parameter.endswith("entries") else 1.0
    return _number(value, file, parameter, high=high)


# --- LoCoBench -----------------------------------------------------------------------------

LOCOBENCH_DIMENSIONS = (
    "functional_correctness",
    "software_engineering",
    "code_quality",
    "longcontext_utilization",
)


def import_locobench(path: Path, *, model: str | None = None) -> dict[str, float]:
    """Return LoCoBench's four dimension scores.

    Reads ``evaluation_results/*_evaluation_results.json`` written by ``locobench
    evaluate``; expects ``summaries[<model>]`` with ``completed_scenarios`` ≥ 1 and
    ``avg_{dimension}_score`` in [0, 1] for each of :data:`LOCOBENCH_DIMENSIONS`.

    Parameters
    ----------
    path : Path
        The evaluation results file.
    model : str, optional
        The ``summaries`` key; required when the file evaluates more than one model.

    Returns
    -------
    dict[str, float]
        ``functional_correctness``, ``software_engineering``, ``code_quality``,
        ``longcontext_utilization``, each in [0, 1].
    """
    document = _as_dict(_load_json(path), path, "(root)")
    summaries = _as_dict(_get(document, "summaries", path, "summaries"), path, "summaries")
    name, summary = _pick_model(summaries, model, path, "summaries")
    where = f"summaries.{name}"
    completed = _number(
        _get(summary, "completed_scenarios", path, f"{where}.completed_scenarios"),
        path,
        f"{where}.completed_scenarios",
        high=math.inf,
    )
    if completed < 1:
        raise BenchmarkFileError(
            path, f"{where}.completed_scenarios", "no completed scenario: the averages are empty"
        )
    result = {}
    for dimension in LOCOBENCH_DIMENSIONS:
        key = f"{where}.avg_{dimension}_score"
        result[dimension] = _number(_get(summary, f"avg_{dimension}_score", path, key), path, key)
    return result


# --- registry ------------------------------------------------------------------------------

IMPORTERS: dict[str, Importer] = {
    "crmarena": import_crmarena,
    "herb": import_herb,
    "personabench": import_personabench,
    "userbench": import_userbench,
    "mcp_universe": import_mcp_universe,
    "mcpeval": import_mcpeval,
    "benchforce": import_benchforce,
    "locobench": import_locobench,
}
"""Benchmark name → importer."""


def import_results(benchmark: str, path: Path, *, model: str | None = None) -> dict[str, float]:
    """Import ``benchmark``'s native result file(s) at ``path`` into sub-metrics.

    Parameters
    ----------
    benchmark : str
        A key of :data:`IMPORTERS`.
    path : Path
        The result file or directory the importer documents.
    model : str, optional
        For files that hold several models (PersonaBench, LoCoBench), the one to read.

    Raises
    ------
    ValueError
        ``benchmark`` is not registered.
    BenchmarkFileError
        The file is missing or malformed; the message names the file and the key.
    """
    importer = IMPORTERS.get(benchmark)
    if importer is None:
        known = ", ".join(IMPORTERS)
        raise ValueError(f"benchmark: unknown benchmark {benchmark!r} (known: {known})")
    return importer(Path(path), model=model)
