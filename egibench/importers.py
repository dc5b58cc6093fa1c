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


MAX_DEPTH = 64
"""The deepest nesting of arrays and objects accepted in a result file (or pickle).

The upstream writers nest at most six levels (PersonaBench's statistics); anything far
deeper is not a result file, and is refused with a message rather than a recursion error.
"""


def _load_json(path: Path) -> Any:
    text = _read_text(path)
    depth, line = _json_depth(text)
    if depth > MAX_DEPTH:
        raise BenchmarkFileError(
            path, None, f"nested deeper than {MAX_DEPTH} levels (line {line}): not a result file"
        )
    try:
        # The project's JSON reader: nesting and integer length bounded (issue 17).
        data = json_decode(text)
    except DocumentSyntaxError as exc:
        kind = "refused JSON" if isinstance(exc, DocumentLimitError) else "not valid JSON"
        raise BenchmarkFileError(
            path, None, f"{kind} (line {exc.line}, column {exc.column}: {exc.problem})"
        ) from exc
    except (ValueError, RecursionError) as exc:  # an integer of > 4,300 digits
        raise BenchmarkFileError(path, None, f"not readable as JSON ({exc})") from exc
    return data


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def _json_depth(text: str) -> tuple[int, int]:
    """Return the deepest ``[``/``{`` nesting of JSON ``text`` and the line it is reached on.

    Counts brackets outside strings, without parsing, so a hostile file cannot exhaust
    the parser's recursion before it is refused.
    """
    depth = deepest = 0
    at = 0
    for token in _JSON_TOKEN.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest, at = depth, token.start()
                if deepest > MAX_DEPTH:
                    break
        elif char in "]}":
            depth -= 1
    return deepest, text.count("\n", 0, at) + 1


def _data_depth(value: Any) -> int:
    """Return the nesting depth of loaded containers (iteratively: no recursion limit)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


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
        loaded = _PlainUnpickler(io.BytesIO(data)).load()
    except _RefusedGlobalError as exc:
        raise BenchmarkFileError(
            path,
            None,
            f"pickle refused: it asks for the global {exc.global_name!r}; only plain dicts, "
            "lists, strings and numbers are accepted (store answers as str, not objects)",
        ) from exc
    except RecursionError as exc:
        raise BenchmarkFileError(
            path, None, f"nested deeper than {MAX_DEPTH} levels: not a result file"
        ) from exc
    except Exception as exc:  # a truncated or foreign file fails in many ways
        raise BenchmarkFileError(path, None, f"not a readable pickle ({exc!r})") from exc
    if _data_depth(loaded) > MAX_DEPTH:
        raise BenchmarkFileError(
            path, None, f"nested deeper than {MAX_DEPTH} levels: not a result file"
        )
    return loaded


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
    try:
        number = finite_number(value)
    except OverflowError:  # an integer too large for a float
        digits = len(str(abs(value))) if isinstance(value, int) else 0
        raise BenchmarkFileError(
            path, where, f"a number of {digits} digits is too large (outside [{low:g}, {high:g}])"
        ) from None
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


def _one_file(path: Path, patterns: Iterable[str], *, what: str) -> Path:
    """Return ``path`` for a file, else the one file under the directory matching ``patterns``.

    A directory is searched recursively; errors then name the file inside it.
    """
    files = _files(path, patterns, recursive=True)
    if len(files) > 1:
        names = ", ".join(str(f.relative_to(path)) for f in files)
        raise BenchmarkFileError(path, None, f"holds {len(files)} {what} ({names}); give one")
    return files[0]


def _pick_model(
    by_model: dict[str, Any],
    model: str | None,
    path: Path,
    where: str,
    *,
    benchmark: str,
    base_of: Any = None,
) -> tuple[str, Any]:
    """Return the entry of ``model`` in ``by_model`` (a file's per-model mapping).

    Without ``model`` the mapping must hold exactly one. With it, the key must be ``model``
    (or, when ``base_of`` is given, the one key whose ``base_of(key)`` is ``model``); a
    file for another model is refused naming both (:func:`_other_model`).
    """
    names = ", ".join(sorted(by_model)) or "none"
    if model is None:
        if len(by_model) != 1:
            raise BenchmarkFileError(
                path, where, f"holds {len(by_model)} models ({names}); pass model= to choose one"
            )
        return next(iter(by_model.items()))
    if model in by_model:
        return model, by_model[model]
    matches = [key for key in by_model if base_of is not None and base_of(key) == model]
    if len(matches) == 1:
        return matches[0], by_model[matches[0]]
    if matches:
        found = ", ".join(sorted(matches))
        raise BenchmarkFileError(
            path,
            where,
            f"holds {len(matches)} entries for model {model!r} ({found}); "
            f"{_file_model_hint(benchmark)}",
        )
    raise _other_model(
        path,
        f"{where}.{model}",
        held=sorted(by_model),
        model=model,
        benchmark=benchmark,
        key_missing=True,
    )


def _check_model(
    named: str,
    model: str | None,
    path: Path,
    where: str | None,
    *,
    benchmark: str,
    source: str,
) -> None:
    """Refuse a file that names the model ``named`` when ``model`` was requested.

    For the files that hold one model's run and say which (CRMArena's and HERB's file
    names, MCP-Universe's ``**LLM:**`` line); ``source`` says where the file names it.
    Without ``model`` nothing is checked.
    """
    if model is not None and named != model:
        held = [f"{named!r} ({source})"]
        raise _other_model(path, where, held=held, model=model, benchmark=benchmark)


def _file_model_hint(benchmark: str) -> str:
    return f"set the in-file name with --file-model {benchmark}=NAME"


def _other_model(
    path: Path,
    where: str | None,
    *,
    held: Iterable[str],
    model: str,
    benchmark: str,
    key_missing: bool = False,
) -> BenchmarkFileError:
    """The one refusal of a file for another model: it names the file, both models, the fix.

    Every importer whose files name their model refuses through here, so the message and
    the ``--file-model`` override read the same for all of them. ``key_missing``: ``where``
    is the model's absent key in a per-model mapping (LoCoBench, PersonaBench).
    """
    names = ", ".join(held) or "none"
    missing = "missing: " if key_missing else ""
    return BenchmarkFileError(
        path,
        where,
        f"{missing}the file holds results for {names}, not for the requested model "
        f"{model!r}; refusing a file for another model ({_file_model_hint(benchmark)} if it "
        "names this model differently)",
    )


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
    ``reward`` in [0, 1]: 0/1 for exact match; for KQA's fuzzy match a token-F1 number, or
    a dict of metrics ``{"em", "f1", "bleu", "rouge"}`` of which ``f1`` is read.

    Parameters
    ----------
    path : Path
        A result file or a directory of them.
    model : str, optional
        The model the run is for, as ``run_tasks.py --model`` names it in the file name:
        a file named ``results_{other}_{strategy}_{category}.json`` is refused naming
        both models. A file whose name does not follow that pattern names no model and is
        not checked; neither is any file without ``model``.

    Returns
    -------
    dict[str, float]
        One key per ``task_type`` present (``case_routing``, ``knowledge_qa``, …), each a
        fraction in [0, 1]: :math:`\\frac{1}{n_t}\\sum_{i \\in t} r_i`.
    """
    rewards: dict[str, list[float]] = defaultdict(list)
    seen: dict[Any, Path] = {}
    for file in _files(path, ["results_*.json"]):
        named = crmarena_file_model(file.name)
        if named is not None:
            _check_model(named, model, file, None, benchmark="crmarena", source="by its file name")
        tasks = _as_list(_load_json(file), file, "(root)")
        _crmarena_keys_present(tasks, file)
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
            rewards[task_type].append(_crmarena_reward(task, file, where))
    if not rewards:
        raise BenchmarkFileError(path, "(root)", "no tasks: the result list is empty")
    return {key: _mean(values) for key, values in rewards.items()}


CRMARENA_STRATEGIES = ("tool_call_superface", "tool_call_flex", "tool_call", "react", "act")
"""``run_tasks.py --agent_strategy`` choices, which sit between the model and the category in
the result file's name."""

_CRMARENA_NAME = re.compile(
    r"^results_(?P<model>.+)_(?:" + "|".join(CRMARENA_STRATEGIES) + r")_"
    r"(?P<category>[a-z0-9_]+(?:,[a-z0-9_]+)*)\.json$"
)


def crmarena_file_model(name: str) -> str | None:
    """Return the model a CRMArena result file's name gives, or ``None`` if it gives none.

    ``run_tasks.py`` writes ``results_{model}_{agent_strategy}_{task_category}.json``; the
    category is ``all``, one task type or a comma-separated list of them. The model is
    what precedes the last ``_<strategy>_<category>``, so a model name may itself hold
    underscores (``mixtral_8x22b_instruct``).
    """
    match = _CRMARENA_NAME.match(name)
    return None if match is None else match["model"]


CRMARENA_DICT_REWARD = "f1"
"""The metric read from a reward written as a dict of metrics (``{"em", "f1", "bleu",
"rouge"}``, the fuzzy-match ``knowledge_qa`` reward): the token F1."""


def _crmarena_keys_present(tasks: list[Any], file: Path) -> None:
    """Refuse the first missing key of the file before any value is judged."""
    for index, task in enumerate(tasks):
        for key in ("task_id", "task_type", "reward"):
            _get(task, key, file, f"[{index}].{key}")
        if isinstance(task["reward"], dict):
            where = f"[{index}].reward.{CRMARENA_DICT_REWARD}"
            _get(task["reward"], CRMARENA_DICT_REWARD, file, where)


def _crmarena_reward(task: Any, file: Path, where: str) -> float:
    reward = _get(task, "reward", file, f"{where}.reward")
    if isinstance(reward, dict):
        key = f"{where}.reward.{CRMARENA_DICT_REWARD}"
        return _number(_get(reward, CRMARENA_DICT_REWARD, file, key), file, key)
    return _number(reward, file, f"{where}.reward")


# --- HERB ----------------------------------------------------------------------------------

HERB_ENTITY_TYPES = ("person", "url", "pr", "company")


def import_herb(path: Path, *, model: str | None = None) -> dict[str, float]:
    r"""Return HERB's per-entity F1, content correctness and unanswerable null rate.

    Reads the results ``code/output/{emb}-{model}-{n}-{ans,unans}.pk`` after ``evaluate.py``
    has scored them in place, as the plain JSON ``{stem}.json`` that
    ``egibench/harness_steps/herb_to_json.py`` writes from them inside HERB's environment
    (same keys, answers as strings), or as the pickles themselves: one file, or a directory
    holding at most one answerable and one unanswerable result (a JSON stands for the pickle
    of the same stem). Pickles are loaded with :func:`load_pickle_plain`, so a real HERB
    pickle, whose answers are llama-index ``Response`` objects, is refused: convert it. The
    kind is told by the keys: an *ans* result has parallel lists ``type`` and
    ``gpt4-correctness``; an *unans* result has ``unanswerable_results``, a list of
    ``{"q", "a", "s"}`` with ``s`` ∈ {0, 1}.

    Parameters
    ----------
    path : Path
        A scored result (JSON or pickle), or a directory of them.
    model : str, optional
        The model the run is for, as ``rag.py --model_name`` names it in the file name
        ``{emb}-{model}-{n}-{mode}`` (a ``/`` in the model written as ``_``): a result
        for another model is refused naming both. The JSON's ``egi_converted_from.file``
        (the pickle it came from) is checked the same way. A name not of that form names
        no model and is not checked; neither is any file without ``model``.

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
        answerable = _herb_files(path, "ans")
        unanswerable = _herb_files(path, "unans")
        for kind, found in (("answerable", answerable), ("unanswerable", unanswerable)):
            if len(found) > 1:
                names = ", ".join(f.name for f in found)
                raise BenchmarkFileError(path, None, f"more than one {kind} result: {names}")
        files = answerable + unanswerable
        if not files:
            raise BenchmarkFileError(
                path, None, "no *-ans / *-unans result (.json from herb_to_json.py, or .pk)"
            )
    elif not path.is_file():
        raise BenchmarkFileError(path, None, "no such file or directory")
    else:
        files = [path]
    result: dict[str, float] = {}
    for file in files:
        _herb_check_model(file.name, model, file, None)
        loaded = _load_json(file) if file.suffix == ".json" else _herb_pickle(file)
        data = _as_dict(loaded, file, "(root)")
        converted = data.get("egi_converted_from")
        if isinstance(converted, dict) and isinstance(converted.get("file"), str):
            _herb_check_model(converted["file"], model, file, "egi_converted_from.file")
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


HERB_CONVERTER = "egibench/harness_steps/herb_to_json.py"

HERB_EMBEDDINGS = ("text-embedding-3-large", "text-embedding-3-small", "text-embedding-ada-002")
"""OpenAI embedding models ``rag.py --embedding_model_name`` takes (the default first): a
file name starting with one of them gives the model exactly."""

_HERB_NAME = re.compile(r"^(?P<prefix>.+)-(?P<attempts>\d+)-(?:ans|unans)(?:\.[a-z]+)?$")


def herb_file_model(name: str) -> tuple[str, bool] | None:
    """Return what a HERB result file's name says of its model, or ``None`` if nothing.

    ``rag.py`` writes ``output/{embedding_model_name}-{model_name}-{num_attempts}-{mode}.pk``
    with each ``/`` of the model name written as ``_``. Returns ``(model, True)`` when the
    name starts with a known embedding model (:data:`HERB_EMBEDDINGS`), else
    ``(embedding-model, False)``: both names may hold hyphens, so only the end is the model.
    """
    match = _HERB_NAME.match(name)
    if match is None:
        return None
    prefix = match["prefix"]
    for embedding in HERB_EMBEDDINGS:
        if prefix.startswith(f"{embedding}-") and len(prefix) > len(embedding) + 1:
            return prefix[len(embedding) + 1 :], True
    return prefix, False


def _herb_check_model(name: str, model: str | None, file: Path, where: str | None) -> None:
    named = herb_file_model(name)
    if model is None or named is None:
        return
    found, exact = named
    wanted = model.replace("/", "_")  # as rag.py writes it into the file name
    if found == wanted if exact else found.endswith(f"-{wanted}"):
        return
    by = "by its file name" if where is None else f"by {where}"
    held = f"{found!r} ({by})" if exact else f"{found!r} (<embedding model>-<model>, {by})"
    raise _other_model(file, where, held=[held], model=model, benchmark="herb")


def _herb_pickle(file: Path) -> Any:
    try:
        return load_pickle_plain(file)
    except BenchmarkFileError as exc:
        if "asks for the global" not in exc.message:
            raise
        raise BenchmarkFileError(
            file,
            None,
            f"{exc.message}. Convert HERB's pickles to plain JSON inside HERB's own "
            f"environment with {HERB_CONVERTER} (the registry's HERB step does), and import "
            "the JSON",
        ) from exc


def _herb_files(directory: Path, kind: str) -> list[Path]:
    """Return the *kind* results of ``directory``; a JSON stands for the pickle of its stem."""
    found = _glob(directory, f"*-{kind}.json", f"*-{kind}.pk", f"*-{kind}.pkl")
    by_stem: dict[str, Path] = {}
    for file in found:
        if file.stem not in by_stem or file.suffix == ".json":
            by_stem[file.stem] = file
    return sorted(by_stem.values())


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
        The statistics file, or a directory holding one (searched recursively).
    model : str, optional
        The model whose results to read: an ``end2end_eval`` key
        (``"gpt-4o+all-MiniLM-L6-v2"``), or a base model (``"gpt-4o"``) when the file holds
        one retriever for it. A file without it is refused naming both. Without ``model``
        the file must hold exactly one key.

    Returns
    -------
    dict[str, float]
        ``qa_accuracy`` in [0, 1]: the mean of ``ave_recall`` over the (noise level,
        category) cells the file holds.
    """
    path = _one_file(path, ["statistics_all_noises.json"], what="statistics files")
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
        name, categories = _pick_model(
            end2end, model, path, e2e_where, benchmark="personabench", base_of=_persona_base
        )
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


def _persona_base(key: str) -> str:
    """Return the base model of an ``end2end_eval`` key ``"<base>+<retriever>"``."""
    return key.rpartition("+")[0]


# --- UserBench -----------------------------------------------------------------------------


def import_userbench(path: Path, *, model: str | None = None) -> dict[str, float]:
    """Return UserBench's ``micro_avg`` per environment.

    Reads ``outputs/results_{save_name}.json`` written by ``eval.py``; expects
    ``{env: {str(pass_k): {"micro_avg": …, …}}}`` with exactly one ``pass_k`` entry per
    environment (the run's ``--pass_k``).

    Parameters
    ----------
    path : Path
        The results file, or a directory holding one ``results_*.json`` (searched
        recursively; ``reward_cache_*.json`` is not read).
    model : str, optional
        Unused: the file does not name its model (``save_name`` is the user's), so it is
        not checked.

    Returns
    -------
    dict[str, float]
        ``micro_avg`` in [0, 1]: the mean over environments (``travel22``, …) of each one's
        ``micro_avg``, itself the mean over items of the mean turn reward.
    """
    path = _one_file(path, ["results_*.json"], what="results files")
    envs = _as_dict(_load_json(path), path, "(root)")
    if not envs:
        raise BenchmarkFileError(path, "(root)", "no environment")
    found: list[tuple[str, Any]] = []
    for env, by_k in envs.items():
        by_k = _as_dict(by_k, path, env)
        if len(by_k) != 1:
            keys = ", ".join(sorted(by_k)) or "none"
            raise BenchmarkFileError(path, env, f"expected one pass_k entry, found {keys}")
        ((k, stats),) = by_k.items()
        where = f"{env}.{k}.micro_avg"
        found.append((where, _get(stats, "micro_avg", path, where)))
    # Every environment's micro_avg is present; only now are the values judged.
    return {"micro_avg": _mean([_number(value, path, where) for where, value in found])}


# --- MCP-Universe ---------------------------------------------------------------------------

_MCP_UNIVERSE_ROW = re.compile(
    r"^\|\*\*(?P<name>.+?)\*\*:\|\s*(?P<passed>\d+)\s*\|\s*(?P<failed>\d+)\s*\|"
    r"\s*[0-9.]+\s*\|\s*\d+\s*\|\s*$"
)


def import_mcp_universe(path: Path, *, model: str | None = None) -> dict[str, float]:
    """Return MCP-Universe's pass rate per domain.

    Reads the Markdown reports ``log/report_*.md`` (``mcpuniverse/benchmark/report.py``):
    one report, or every ``report_*.md`` under a directory (searched recursively). Expects
    "Benchmark Summary" rows
    ``|**<task>**:| <passed> | <not passed> | <score> | <llm calls> |``, one per task, where
    passed / not passed count the task's evaluators and ``<task>`` is the task's config path
    as the domain YAML lists it (``mcpuniverse/financial_analysis/yfinance_task_0001.json``):
    the domain is the folder that holds the task file, wherever the report itself sits.

    Parameters
    ----------
    path : Path
        A report or a directory of reports.
    model : str, optional
        The model the run is for, as each report's ``**LLM:** <type>: <model_name>`` line
        names it (the domain YAML's ``kind: llm`` ``model_name``): a report for another
        model, or one without the line, is refused naming the report. Without ``model``
        nothing is checked.

    Returns
    -------
    dict[str, float]
        ``pass_rate_{domain}`` in [0, 1]: the share of the domain's tasks whose evaluators
        all passed, over the tasks in the reports.
    """
    outcomes: dict[str, list[float]] = defaultdict(list)
    seen: dict[str, Path] = {}
    for file in _files(path, ["report_*.md"], recursive=True):
        lines = _read_text(file).splitlines()
        _mcp_universe_check_model(lines, model, file)
        for number, line in enumerate(lines, start=1):
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
            # The task's config path as the domain YAML lists it
            # (mcpuniverse/<domain>/<task>.json): the domain is the folder holding the task.
            outcomes[_slug(name.rsplit("/", 2)[-2])].append(1.0 if failed == 0 else 0.0)
    if not outcomes:
        raise BenchmarkFileError(path, "Benchmark Summary", "no task row")
    return {f"pass_rate_{domain}": _mean(values) for domain, values in outcomes.items()}


_MCP_UNIVERSE_LLM = re.compile(r"^\*\*LLM:\*\*(?P<spec>.*)$")


def _mcp_universe_check_model(lines: list[str], model: str | None, file: Path) -> None:
    """Refuse a report whose ``**LLM:** <type>: <model_name>`` lines name another model.

    ``BenchmarkReport`` writes the line once per benchmark section, from the one
    ``kind: llm`` config of the run (``spec.type``, ``spec.config.model_name``). The type
    has no colon; the model name is everything after the first one (``llama3:8b`` keeps
    its own).
    """
    if model is None:
        return
    found = False
    for number, line in enumerate(lines, start=1):
        match = _MCP_UNIVERSE_LLM.match(line.strip())
        if match is None:
            continue
        found = True
        kind, colon, named = match["spec"].partition(":")
        named = named.strip()
        if not colon or not kind.strip() or not named:
            raise BenchmarkFileError(
                file,
                f"line {number}",
                f"cannot read the model from {line.strip()!r} (expected **LLM:** <type>: <model>)",
            )
        _check_model(
            named,
            model,
            file,
            f"line {number}",
            benchmark="mcp_universe",
            source=f"by its **LLM:** line, type {kind.strip()}",
        )
    if not found:
        raise BenchmarkFileError(
            file,
            "**LLM:**",
            f"missing: the report does not say which model it ran (report.py writes "
            f"'**LLM:** <type>: <model>' in its Benchmark Config), so it cannot be taken "
            f"for {model!r}",
        )


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
        Unused: a summary does not name its model (its stem is the predictions file's),
        so it is not checked.

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
# A table frame: box-drawing characters (rich prints U+2500–U+257F) and ASCII pipes.
_TABLE_FRAME = re.compile(r"[\u2500-\u257f|]")
_BENCHFORCE_PARAMETERS = (
    "Total entries",
    "Finished entries",
    "Accuracy (All)",
    "Accuracy (Finished)",
)
# result.json (src/metrics/accuracy.py, Accuracy.aggregate's json_results): key → printed row.
_BENCHFORCE_JSON_KEYS = {
    "total_entries": "Total entries",
    "finished_entries": "Finished entries",
    "accuracy_all": "Accuracy (All)",
    "accuracy_finished": "Accuracy (Finished)",
}
# A printed value has pandas' 6 significant digits; the JSON beside it has the float.
_BENCHFORCE_PRINT_TOLERANCE = 5e-6


def import_benchforce(path: Path, *, model: str | None = None) -> dict[str, float]:
    """Return Benchforce's accuracy (all and finished) and finished share, mean over environments.

    Reads either or both of what a run (``python run.py``, one ``environment`` of
    ``config.yaml``) leaves:

    - the printed summary, stdout captured to a ``.txt`` file named after the environment
      (``hospital.txt``): the melted table rows ``accuracy | Total entries``,
      ``Finished entries``, ``Accuracy (All)`` and ``Accuracy (Finished)``, each once, with
      or without pandas' index column, and with or without a frame of box-drawing
      characters or pipes (as a rich table prints it); other lines are ignored;
    - the JSON result ``results/<runner id>/result.json`` (``src/classes/runner.py``):
      ``{"accuracy": {"total_entries", "finished_entries", "accuracy_all",
      "accuracy_finished"}, "metadata": {"environment": …}}``.

    ``path`` is one such file or a directory: its ``*.txt`` files and every
    ``result.json`` below it. Each environment counts once: a JSON result and a summary of
    the same environment (the ``.txt`` file's stem) are one run, whose values must agree;
    the JSON's are used.

    Parameters
    ----------
    path : Path
        A captured summary, a ``result.json``, or a directory of them.
    model : str, optional
        Unused: neither the printed summary nor ``result.json`` names the agent model, so
        they are not checked.

    Returns
    -------
    dict[str, float]
        The mean over environments of ``accuracy_all`` (Accuracy (All)),
        ``accuracy_finished`` (Accuracy (Finished)) and ``finished_ratio`` (Finished entries /
        Total entries), each in [0, 1]. The routing forms the gap ``accuracy_finished −
        accuracy_all`` (SPEC §10 enters it into M5 as 100 − gap).
    """
    if path.is_dir():
        texts = _glob(path, "*.txt")
        results = sorted(p for p in path.rglob("result.json") if p.is_file())
        if not texts and not results:
            raise BenchmarkFileError(
                path, None, "the directory holds no result file (*.txt, results/*/result.json)"
            )
    elif path.is_file():
        texts, results = ([], [path]) if path.suffix == ".json" else ([path], [])
    else:
        raise BenchmarkFileError(path, None, "no such file or directory")

    runs: dict[str, tuple[Path, dict[str, float]]] = {}
    for file in results:
        values, environment = _benchforce_json(file)
        if environment in runs:
            other = runs[environment][0]
            raise BenchmarkFileError(
                file,
                "metadata.environment",
                f"a second run of environment {environment!r} (the other is {other})",
            )
        runs[environment] = (file, values)
    for file in texts:
        values = _benchforce_text(file)
        environment = file.stem
        if environment in runs:
            _benchforce_agree(runs[environment], (file, values))
            continue
        runs[environment] = (file, values)

    collected: dict[str, list[float]] = defaultdict(list)
    for _, values in runs.values():
        collected["accuracy_all"].append(values["Accuracy (All)"])
        collected["accuracy_finished"].append(values["Accuracy (Finished)"])
        collected["finished_ratio"].append(values["Finished entries"] / values["Total entries"])
    return {key: _mean(values) for key, values in collected.items()}


def _benchforce_text(file: Path) -> dict[str, float]:
    rows: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(_read_text(file).splitlines(), start=1):
        match = _BENCHFORCE_ROW.match(_TABLE_FRAME.sub(" ", line))
        if match is None:
            continue
        parameter = match["parameter"]
        if parameter == "accuracy_error":
            raise BenchmarkFileError(file, parameter, f"the run failed: {match['value']}")
        if parameter in rows:
            raise BenchmarkFileError(
                file,
                parameter,
                f"printed twice, lines {rows[parameter][1]} and {number} (two runs in one file?)",
            )
        rows[parameter] = (match["value"], number)
    # Every row must be there before any value is read: a missing row is the first fault.
    missing = [p for p in _BENCHFORCE_PARAMETERS if p not in rows]
    if missing:
        raise BenchmarkFileError(file, missing[0], "missing from the printed summary")
    values: dict[str, float] = {}
    for parameter in _BENCHFORCE_PARAMETERS:
        text, number = rows[parameter]
        try:
            value = float(text)
        except ValueError:
            raise BenchmarkFileError(
                file, parameter, f"not a number on line {number}: {text!r}"
            ) from None
        values[parameter] = _benchforce_number(value, file, parameter)
    _benchforce_counts(values, file, "Finished entries")
    return values


def _benchforce_json(file: Path) -> tuple[dict[str, float], str]:
    document = _as_dict(_load_json(file), file, "(root)")
    accuracy = _as_dict(_get(document, "accuracy", file, "accuracy"), file, "accuracy")
    missing = [key for key in _BENCHFORCE_JSON_KEYS if key not in accuracy]
    if missing:
        raise BenchmarkFileError(file, f"accuracy.{missing[0]}", "missing")
    values = {
        row: _benchforce_number(accuracy[key], file, f"accuracy.{key}", row=row)
        for key, row in _BENCHFORCE_JSON_KEYS.items()
    }
    _benchforce_counts(values, file, "accuracy.finished_entries")
    metadata = document.get("metadata")
    environment = metadata.get("environment") if isinstance(metadata, dict) else None
    if not isinstance(environment, str) or not environment.strip():
        raise BenchmarkFileError(
            file, "metadata.environment", "missing: cannot tell which environment ran"
        )
    return values, environment.strip()


def _benchforce_number(value: Any, file: Path, where: str, *, row: str | None = None) -> float:
    high = math.inf if (row or where).endswith("entries") else 1.0
    return _number(value, file, where, high=high)


def _benchforce_counts(values: dict[str, float], file: Path, where: str) -> None:
    total, finished = values["Total entries"], values["Finished entries"]
    if total < 1 or finished > total or not total.is_integer() or not finished.is_integer():
        raise BenchmarkFileError(file, where, f"{finished:g} finished of {total:g} is not a count")


def _benchforce_agree(
    first: tuple[Path, dict[str, float]], second: tuple[Path, dict[str, float]]
) -> None:
    (json_file, json_values), (text_file, text_values) = first, second
    for parameter in _BENCHFORCE_PARAMETERS:
        a, b = json_values[parameter], text_values[parameter]
        if not math.isclose(a, b, rel_tol=_BENCHFORCE_PRINT_TOLERANCE, abs_tol=1e-6):
            raise BenchmarkFileError(
                text_file,
                parameter,
                f"{b:g} here but {a:g} in {json_file}, the JSON result of the same "
                f"environment: two different runs?",
            )


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
        The evaluation results file, or a directory holding one (searched recursively).
    model : str, optional
        The ``summaries`` key of the model to read. A file without it is refused naming
        both models, even when it holds a single (other) model. Without ``model`` the file
        must evaluate exactly one model.

    Returns
    -------
    dict[str, float]
        ``functional_correctness``, ``software_engineering``, ``code_quality``,
        ``longcontext_utilization``, each in [0, 1].
    """
    path = _one_file(path, ["*_evaluation_results.json"], what="evaluation results")
    document = _as_dict(_load_json(path), path, "(root)")
    summaries = _as_dict(_get(document, "summaries", path, "summaries"), path, "summaries")
    name, summary = _pick_model(summaries, model, path, "summaries", benchmark="locobench")
    where = f"summaries.{name}"
    for key in ("completed_scenarios", *(f"avg_{d}_score" for d in LOCOBENCH_DIMENSIONS)):
        _get(summary, key, path, f"{where}.{key}")  # a missing key first, then the values
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
        The model whose results to read, as the files name it. Files that hold several
        models (PersonaBench, LoCoBench) are read for it; files that name the one model
        they ran (CRMArena's and HERB's file names, MCP-Universe's ``**LLM:**`` line) are
        checked against it. A file for another model is refused naming the file and both
        models. UserBench, MCPEval and Benchforce files do not name their model and are
        not checked. Without ``model`` nothing is checked, and a file holding several
        models must hold exactly one. ``egi-bench`` always passes it (``--model``, or
        ``--file-model B=NAME`` for benchmark B).

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
