"""Which model a native result file is for: refused when it names another, per importer.

docs/egi-bench.md, "Which model a file is for": CRMArena's and HERB's file names,
MCP-Universe's ``**LLM:**`` line, LoCoBench's ``summaries`` and PersonaBench's
``end2end_eval`` keys name the model; each refusal names the file, the model the file
holds and the one requested, and ``--file-model B=NAME`` sets the in-file name for one
benchmark. The files are written here as the upstream writers name and shape them.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from egibench import cli, harness
from egibench.aggregate import load_routing
from egibench.importers import (
    IMPORTERS,
    BenchmarkFileError,
    crmarena_file_model,
    herb_file_model,
    import_crmarena,
    import_herb,
    import_mcp_universe,
    import_results,
)


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def crm_tasks() -> list[dict[str, Any]]:
    # run_tasks.py's checkpoint list; case_routing (1 + 0) / 2 = 0.5, knowledge_qa 0.8
    return [
        {"task_id": 1, "task_type": "case_routing", "gt_answer": "a", "reward": 1},
        {"task_id": 2, "task_type": "case_routing", "gt_answer": "b", "reward": 0},
        {"task_id": 3, "task_type": "knowledge_qa", "gt_answer": "c", "reward": 0.8},
    ]


CRM_VALUES = {"case_routing": 0.5, "knowledge_qa": 0.8}

HERB_ANS = {
    "question": ["q1", "q2", "q3"],
    "answer": ["a1", "a2", "a3"],
    "type": ["person", "person", "content"],
    "gpt4-correctness": [100.0, 60.0, 40],
}
HERB_UNANS = {"unanswerable_results": [{"q": "u1", "a": "x", "s": 1}, {"q": "u2", "s": 0}]}
# person (100 + 60) / 2 = 80 is the only entity type; content 40; null rate (1 + 0) / 2
HERB_VALUES = {"entity_f1": 80.0, "content_correctness": 40.0, "unanswerable_null_rate": 0.5}


def herb_json(directory: Path, stem: str, data: dict[str, Any], *, converted: str = "") -> Path:
    """A result as herb_to_json.py writes it: ``<stem>.json`` recording its pickle's name."""
    record = {"file": converted or f"{stem}.pk", "sha256": "0" * 64}
    return write_json(directory / f"{stem}.json", {**data, "egi_converted_from": record})


def mcp_report(llm: str | None, domain: str = "financial_analysis") -> str:
    """A report as BenchmarkReport.dump writes it (mcpuniverse/benchmark/report.py)."""
    pad = " " * 35
    config = ["## Benchmark Config\n", "**Benchmark description:** a test\n", "**Agent:** react\n"]
    if llm is not None:
        config.append(f"**LLM:** {llm}\n")
    rows = [
        f"|**mcpuniverse/{domain}/task_0001.json**:| {pad}2 | {pad}0 | {pad}1.00 | {pad}4 |",
        f"|**mcpuniverse/{domain}/task_0002.json**:| {pad}1 | {pad}1 | {pad}0.50 | {pad}6 |",
    ]
    return "\n".join(
        [
            *config,
            "## Benchmark Summary",
            "| Name | Passed | Not Passed | Score | LLM Calls |\n"
            "| ---  | ------ | ---------- | ----- | --------- |",
            *rows,
            "## Appendix (Benchmark Details)",
        ]
    )


def write_report(path: Path, llm: str | None, domain: str = "financial_analysis") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(mcp_report(llm, domain), encoding="utf-8")
    return path


MCP_VALUES = {"pass_rate_financial_analysis": 0.5}  # task 1 passes all, task 2 does not


def assert_refused(
    error: pytest.ExceptionInfo[BenchmarkFileError], path: Path, held: str, model: str
) -> None:
    """The refusal names the file, the model it holds, the one requested and the fix."""
    message = str(error.value)
    assert error.value.path == path and message.startswith(f"{path}")
    assert f"the file holds results for {held}, not for the requested model {model!r}" in message
    assert "--file-model" in message and "=NAME" in message


# --- CRMArena: results_{model}_{agent_strategy}_{task_category}.json -----------------------


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("results_gpt-4o_react_all.json", "gpt-4o"),
        ("results_o1-mini_act_knowledge_qa.json", "o1-mini"),
        ("results_mixtral_8x22b_instruct_tool_call_flex_all.json", "mixtral_8x22b_instruct"),
        (
            "results_claude-3-opus-20240229_tool_call_handle_time,transfer_count.json",
            "claude-3-opus-20240229",
        ),
        ("results_m_react_case_routing.json", "m"),
        ("results_x.json", None),
        ("results_gpt-4o_reflexion_all.json", None),
    ],
)
def test_crmarena_reads_the_model_from_the_file_name(name: str, model: str | None) -> None:
    assert crmarena_file_model(name) == model


def test_crmarena_reads_a_file_named_for_the_requested_model(tmp_path: Path) -> None:
    path = write_json(tmp_path / "results_gpt-4o_react_all.json", crm_tasks())
    assert import_crmarena(path, model="gpt-4o") == pytest.approx(CRM_VALUES)


def test_crmarena_refuses_a_file_named_for_another_model(tmp_path: Path) -> None:
    path = write_json(tmp_path / "results_gpt-4o-mini_react_all.json", crm_tasks())
    with pytest.raises(BenchmarkFileError) as error:
        import_crmarena(path, model="gpt-4o")
    assert_refused(error, path, "'gpt-4o-mini' (by its file name)", "gpt-4o")
    assert error.value.key is None  # the file name, not a key inside it, is at fault


def test_crmarena_refuses_a_folder_holding_one_category_run_of_another_model(
    tmp_path: Path,
) -> None:
    write_json(tmp_path / "results_gpt-4o_react_case_routing.json", crm_tasks()[:2])
    other = write_json(tmp_path / "results_o1-mini_react_knowledge_qa.json", crm_tasks()[2:])
    with pytest.raises(BenchmarkFileError) as error:
        import_crmarena(tmp_path, model="gpt-4o")
    assert_refused(error, other, "'o1-mini' (by its file name)", "gpt-4o")


def test_crmarena_checks_the_model_before_reading_the_file(tmp_path: Path) -> None:
    path = tmp_path / "results_o1-mini_react_all.json"
    path.write_text("not json", encoding="utf-8")
    with pytest.raises(BenchmarkFileError, match="not for the requested model 'gpt-4o'"):
        import_crmarena(path, model="gpt-4o")


def test_crmarena_does_not_check_a_name_that_names_no_model(tmp_path: Path) -> None:
    # Not run_tasks.py's pattern (no strategy): the name says nothing of the model.
    path = write_json(tmp_path / "results_export.json", crm_tasks())
    assert import_crmarena(path, model="gpt-4o") == pytest.approx(CRM_VALUES)


# --- HERB: {embedding}-{model}-{num_attempts}-{ans,unans}.pk, and its .json ----------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("text-embedding-3-large-gpt-4o-1-ans.pk", ("gpt-4o", True)),
        ("text-embedding-3-small-gpt-4o-mini-3-unans.json", ("gpt-4o-mini", True)),
        (
            "text-embedding-3-large-meta-llama_Llama-3.3-70B-1-ans.pkl",
            ("meta-llama_Llama-3.3-70B", True),
        ),
        ("bge-large-en-v1.5-gpt-4o-1-ans.json", ("bge-large-en-v1.5-gpt-4o", False)),
        ("answers-ans.json", None),
        ("text-embedding-3-large-1-ans.pk", ("text-embedding-3-large", False)),
    ],
)
def test_herb_reads_the_model_from_the_file_name(
    name: str, expected: tuple[str, bool] | None
) -> None:
    assert herb_file_model(name) == expected


def test_herb_reads_a_folder_of_results_named_for_the_requested_model(tmp_path: Path) -> None:
    herb_json(tmp_path, "text-embedding-3-large-gpt-4o-1-ans", HERB_ANS)
    herb_json(tmp_path, "text-embedding-3-large-gpt-4o-1-unans", HERB_UNANS)
    assert import_herb(tmp_path, model="gpt-4o") == pytest.approx(HERB_VALUES)


def test_herb_refuses_a_result_for_another_model_even_when_the_other_matches(
    tmp_path: Path,
) -> None:
    herb_json(tmp_path, "text-embedding-3-large-gpt-4o-1-ans", HERB_ANS)
    other = herb_json(tmp_path, "text-embedding-3-large-gpt-4o-mini-1-unans", HERB_UNANS)
    with pytest.raises(BenchmarkFileError) as error:
        import_herb(tmp_path, model="gpt-4o")
    assert_refused(error, other, "'gpt-4o-mini' (by its file name)", "gpt-4o")


def test_herb_refuses_a_pickle_for_another_model_before_unpickling_it(tmp_path: Path) -> None:
    path = tmp_path / "text-embedding-3-large-o3-1-ans.pk"
    path.write_bytes(pickle.dumps(HERB_ANS))
    with pytest.raises(BenchmarkFileError) as error:
        import_herb(path, model="gpt-4o")
    assert_refused(error, path, "'o3' (by its file name)", "gpt-4o")
    assert import_herb(path, model="o3") == pytest.approx(
        {"entity_f1": 80.0, "content_correctness": 40.0}
    )


def test_herb_refuses_a_renamed_json_whose_pickle_was_for_another_model(tmp_path: Path) -> None:
    path = herb_json(
        tmp_path,
        "text-embedding-3-large-gpt-4o-1-ans",
        HERB_ANS,
        converted="text-embedding-3-large-claude-3-7-sonnet-1-ans.pk",
    )
    with pytest.raises(BenchmarkFileError) as error:
        import_herb(path, model="gpt-4o")
    assert_refused(error, path, "'claude-3-7-sonnet' (by egi_converted_from.file)", "gpt-4o")
    assert error.value.key == "egi_converted_from.file"


def test_herb_writes_a_slash_in_the_model_as_rag_py_does(tmp_path: Path) -> None:
    path = herb_json(tmp_path, "text-embedding-3-large-Qwen_Qwen3-235B-1-ans", HERB_ANS)
    assert import_herb(path, model="Qwen/Qwen3-235B")["content_correctness"] == 40.0


def test_herb_with_another_embedding_model_compares_the_end_of_the_name(tmp_path: Path) -> None:
    # BAAI/bge-large-en-v1.5 puts the pickle in output/BAAI/: the stem starts "bge-…".
    path = herb_json(tmp_path, "bge-large-en-v1.5-gpt-4o-1-ans", HERB_ANS)
    assert import_herb(path, model="gpt-4o")["entity_f1"] == 80.0
    with pytest.raises(BenchmarkFileError) as error:
        import_herb(path, model="o3")
    held = "'bge-large-en-v1.5-gpt-4o' (<embedding model>-<model>, by its file name)"
    assert_refused(error, path, held, "o3")


def test_herb_does_not_check_a_name_that_names_no_model(tmp_path: Path) -> None:
    path = write_json(tmp_path / "answers-ans.json", HERB_ANS)
    assert import_herb(path, model="gpt-4o")["entity_f1"] == 80.0


# --- MCP-Universe: the report's **LLM:** <type>: <model_name> line -------------------------


def test_mcp_universe_reads_a_report_of_the_requested_model(tmp_path: Path) -> None:
    path = write_report(tmp_path / "report_1.md", "openai: gpt-4o")
    assert import_mcp_universe(path, model="gpt-4o") == MCP_VALUES


def test_mcp_universe_refuses_a_report_of_another_model_naming_its_line(tmp_path: Path) -> None:
    path = write_report(tmp_path / "report_1.md", "claude: claude-sonnet-4-20250514")
    with pytest.raises(BenchmarkFileError) as error:
        import_mcp_universe(path, model="gpt-4o")
    held = "'claude-sonnet-4-20250514' (by its **LLM:** line, type claude)"
    assert_refused(error, path, held, "gpt-4o")
    assert error.value.key == "line 7"
    assert "--file-model mcp_universe=NAME" in str(error.value)


def test_mcp_universe_refuses_one_report_of_another_model_in_a_folder(tmp_path: Path) -> None:
    write_report(tmp_path / "log" / "report_a.md", "openai: gpt-4o")
    other = write_report(tmp_path / "log" / "report_b.md", "openai: gpt-4.1", "web_search")
    with pytest.raises(BenchmarkFileError) as error:
        import_mcp_universe(tmp_path, model="gpt-4o")
    assert_refused(error, other, "'gpt-4.1' (by its **LLM:** line, type openai)", "gpt-4o")


def test_mcp_universe_keeps_a_colon_inside_the_model_name(tmp_path: Path) -> None:
    path = write_report(tmp_path / "report_1.md", "ollama: llama3.1:70b")
    assert import_mcp_universe(path, model="llama3.1:70b") == MCP_VALUES


def test_mcp_universe_refuses_a_report_that_does_not_say_its_model(tmp_path: Path) -> None:
    path = write_report(tmp_path / "report_1.md", None)
    with pytest.raises(BenchmarkFileError, match="does not say which model it ran") as error:
        import_mcp_universe(path, model="gpt-4o")
    assert error.value.path == path and error.value.key == "**LLM:**"
    assert import_mcp_universe(path) == MCP_VALUES  # without a model, nothing is checked


def test_mcp_universe_names_an_llm_line_it_cannot_read(tmp_path: Path) -> None:
    path = write_report(tmp_path / "report_1.md", "gpt-4o")
    with pytest.raises(BenchmarkFileError, match="cannot read the model") as error:
        import_mcp_universe(path, model="gpt-4o")
    assert error.value.key == "line 7"


# --- the command line: refused, then read with --file-model for that benchmark only -------


def native_files(tmp_path: Path, model: str) -> dict[str, Path]:
    """One run of ``model`` per benchmark whose files name their model."""
    crm = write_json(tmp_path / "crm" / f"results_{model}_react_all.json", crm_tasks())
    herb = tmp_path / "herb"
    herb_json(herb, f"text-embedding-3-large-{model}-1-ans", HERB_ANS)
    herb_json(herb, f"text-embedding-3-large-{model}-1-unans", HERB_UNANS)
    mcp = write_report(tmp_path / "mcp" / "log" / "report_1.md", f"openai: {model}")
    return {"crmarena": crm.parent, "herb": herb, "mcp_universe": mcp.parent}


VALUES = {"crmarena": CRM_VALUES, "herb": HERB_VALUES, "mcp_universe": MCP_VALUES}


def run_import(out: Path, sources: dict[str, Path], *extra: str) -> dict[str, Any]:
    argv = ["import", "--results-dir", str(out / "agg"), "--raw-dir", str(out / "raw")]
    argv += ["--model", "gpt-4o", "--mode", "quick", *extra]
    for benchmark, path in sources.items():
        argv += ["--benchmark", benchmark, str(path)]
    assert cli.main(argv) == 0
    (stored,) = (out / "agg").glob("*.json")
    artifact: dict[str, Any] = json.loads(stored.read_text(encoding="utf-8"))
    return artifact


@pytest.mark.parametrize("benchmark", sorted(VALUES))
def test_import_refuses_another_models_file_until_its_in_file_name_is_given(
    tmp_path: Path, benchmark: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EGI_BENCH_DB", "0")
    ours = native_files(tmp_path / "ours", "gpt-4o")
    theirs = native_files(tmp_path / "theirs", "o3-mini")
    sources = {**ours, benchmark: theirs[benchmark]}

    artifact = run_import(tmp_path / "refused", sources)
    assert artifact["benchmarks"] == {b: VALUES[b] for b in sorted(VALUES) if b != benchmark}
    (failed,) = artifact["failed"]
    assert failed["benchmark"] == benchmark
    assert str(theirs[benchmark]) in failed["error"]
    assert "'o3-mini'" in failed["error"] and "'gpt-4o'" in failed["error"]

    artifact = run_import(tmp_path / "read", sources, "--file-model", f"{benchmark}=o3-mini")
    assert artifact["failed"] == []
    assert artifact["benchmarks"] == VALUES  # every value is exact in binary


# --- `run`: the shipped registry writes files that name the model under test --------------


def test_the_registry_runs_herb_for_the_model_its_file_names_carry() -> None:
    routes = [(r.benchmark, r.sub_metric, r.bucket) for r in load_routing().routes]
    registry = harness.load_registry(harness.DEFAULT_REGISTRY, routes=routes)
    herb = registry.harnesses["herb"]
    values = {name: f"<{name}>" for name in harness.PLACEHOLDERS}
    values.update(python="py", model="o3-mini")
    argvs = [harness.expand_command(command, values, []) for command in herb.commands]
    # rag.py answers with the model under test, so output/…-o3-mini-1-*.pk is its run.
    assert [a[1:] for a in argvs[:2]] == [
        ["rag.py", "--mode", mode, "--model_name", "o3-mini"] for mode in ("ans", "unans")
    ]
    converted = [Path(arg).name for arg in argvs[-1][4:]]
    assert [herb_file_model(name) for name in converted] == [("o3-mini", True)] * 2


# --- the documentation's table says which importers check, and they are the ones that do ---

DOCS = Path(__file__).resolve().parents[2] / "docs" / "egi-bench.md"
NATIVE = Path(__file__).resolve().parent / "fixtures" / "native"


def documented_checks() -> dict[str, bool]:
    """``{importer: checked}`` from the table under "Which model a file is for"."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("### Which model a file is for") :].split("\n### ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {
        row.split("`")[1]: "the file does not name its model: not checked" not in row
        for row in rows
    }


def test_the_documented_table_covers_every_importer() -> None:
    assert set(documented_checks()) == set(IMPORTERS)
    unchecked = {name for name, checked in documented_checks().items() if not checked}
    assert unchecked == {"userbench", "mcpeval", "benchforce"}


@pytest.mark.parametrize("benchmark", sorted(IMPORTERS))
def test_an_importer_refuses_another_models_file_exactly_when_the_docs_say_so(
    benchmark: str,
) -> None:
    # The fixtures are gpt-4o's run (LoCoBench and PersonaBench hold a second model too).
    if documented_checks()[benchmark]:
        with pytest.raises(BenchmarkFileError, match="not for the requested model 'o3-mini'"):
            import_results(benchmark, NATIVE / benchmark, model="o3-mini")
    else:
        assert import_results(benchmark, NATIVE / benchmark, model="o3-mini") == (
            import_results(benchmark, NATIVE / benchmark, model="gpt-4o")
        )
