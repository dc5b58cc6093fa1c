"""All eight importers on files shaped as the upstream harnesses write them, end to end.

The files under fixtures/native/ are written by fixtures/make_native_fixtures.py (each
writer cites the upstream function it mirrors). Every expected number below is worked out
by hand from the values that script writes.
"""

from __future__ import annotations

import filecmp
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from egibench import cli
from egibench.importers import IMPORTERS, BenchmarkFileError, import_results

HERE = Path(__file__).resolve().parent
NATIVE = HERE / "fixtures" / "native"
sys.path.insert(0, str(HERE / "fixtures"))

import make_native_fixtures  # noqa: E402

# By hand, from make_native_fixtures.py (gpt-4o):
#   crmarena: per task type, the mean reward of its tasks; KQA = (0.6 + 1.0 + 0.5) / 3 = 0.7,
#     the first two are dict rewards whose f1 is read.
#   herb: person (100 + 50)/2 = 75, url 80, pr 40, company 100 → (75+80+40+100)/4 = 73.75;
#     content (80 + 60)/2 = 70 (the -1 is the judge's failure, left out); null rate s =
#     1, 0, 1, 1 → 0.75.
#   personabench: gpt-4o+all-MiniLM-L6-v2, recall at noise 0.0 (0.9, 0.7, 0.5, 0.7) and 0.7
#     (0.7, 0.5, 0.3, 0.5) → 4.8 / 8 = 0.6 (gpt-4o-mini's cells are not read).
#   userbench: (0.3 + 0.2 + 0.1) / 3 = 0.2.
#   mcp_universe: financial_analysis 3/4, web_search 1/2, location_navigation 1/4.
#   mcpeval: (0.6 + 0.8) / 2 = 0.7.
#   benchforce: hospital (log and JSON agree) 10 entries, 8 finished, 0.4 / 0.5;
#     hr_software (JSON only) 20, 20, 0.6 / 0.6 → all (0.4+0.6)/2 = 0.5,
#     finished (0.5+0.6)/2 = 0.55, finished_ratio (0.8 + 1.0)/2 = 0.9.
#   locobench: summaries["gpt-4o"] 0.6, 0.7, 0.8, 0.5 (claude-sonnet-4's 0.9s not read).
EXPECTED: dict[str, dict[str, float]] = {
    "crmarena": {
        "case_routing": 1.0,
        "handle_time": 0.5,
        "transfer_count": 0.0,
        "top_issue_identification": 1.0,
        "best_region_identification": 0.5,
        "monthly_trend_analysis": 0.5,
        "named_entity_disambiguation": 1.0,
        "knowledge_qa": 0.7,
        "policy_violation_identification": 0.5,
    },
    "herb": {"entity_f1": 73.75, "content_correctness": 70.0, "unanswerable_null_rate": 0.75},
    "personabench": {"qa_accuracy": 0.6},
    "userbench": {"micro_avg": 0.2},
    "mcp_universe": {
        "pass_rate_financial_analysis": 0.75,
        "pass_rate_web_search": 0.5,
        "pass_rate_location_navigation": 0.25,
    },
    "mcpeval": {"flexible_average_score": 0.7},
    "benchforce": {"accuracy_all": 0.5, "accuracy_finished": 0.55, "finished_ratio": 0.9},
    "locobench": {
        "functional_correctness": 0.6,
        "software_engineering": 0.7,
        "code_quality": 0.8,
        "longcontext_utilization": 0.5,
    },
}

# Buckets (routing.yaml, seed 000 Table 6), every sub-metric normalised to 0–100:
# M1 = (NCR 100 + HTU 50 + TCU 0 + TII 100 + BRI 50 + MTA 50 + Benchforce acc_all 50
#       + LoCoBench functional_correctness 60) / 8 = 460 / 8 = 57.5
# M2 = (fin 75 + web 50 + loc 25 + MCPEval 70 + Benchforce finished_ratio 90) / 5 = 310/5 = 62
# M3 = (UserBench 20 + longcontext_utilization 50) / 2 = 35
# M4 = (NED 100 + KQA 70 + entity_f1 73.75 + content 70 + PersonaBench 60) / 5 = 373.75/5
#    = 74.75
# M5 = (PVI 50 + null rate 75 + 100·(1 − (0.55 − 0.5))) / 3 = (50 + 75 + 95) / 3 = 73.333…
# M6 = (software_engineering 70 + code_quality 80) / 2 = 75
# EGI = 0.28·57.5 + 0.22·62 + 0.16·35 + 0.14·74.75 + 0.14·220/3 + 0.06·75
#     = 16.1 + 13.64 + 5.6 + 10.465 + 10.2667 + 4.5 = 60.5717
BUCKETS = {"M1": 57.5, "M2": 62.0, "M3": 35.0, "M4": 74.75, "M5": 220 / 3, "M6": 75.0}
EGI = 16.1 + 13.64 + 5.6 + 10.465 + 0.14 * 220 / 3 + 4.5
CONTRIBUTORS = {
    "M1": [
        "crmarena.case_routing",
        "crmarena.handle_time",
        "crmarena.transfer_count",
        "crmarena.top_issue_identification",
        "crmarena.best_region_identification",
        "crmarena.monthly_trend_analysis",
        "benchforce.accuracy_all",
        "locobench.functional_correctness",
    ],
    "M2": [
        "mcp_universe.pass_rate_financial_analysis",
        "mcp_universe.pass_rate_web_search",
        "mcp_universe.pass_rate_location_navigation",
        "mcpeval.flexible_average_score",
        "benchforce.finished_ratio",
    ],
    "M3": ["userbench.micro_avg", "locobench.longcontext_utilization"],
    "M4": [
        "crmarena.named_entity_disambiguation",
        "crmarena.knowledge_qa",
        "herb.entity_f1",
        "herb.content_correctness",
        "personabench.qa_accuracy",
    ],
    "M5": [
        "crmarena.policy_violation_identification",
        "herb.unanswerable_null_rate",
        "benchforce.accuracy_gap",
    ],
    "M6": ["locobench.software_engineering", "locobench.code_quality"],
}


def test_the_fixtures_are_what_the_generator_writes(tmp_path: Path) -> None:
    make_native_fixtures.write_all(tmp_path)
    committed = sorted(p.relative_to(NATIVE) for p in NATIVE.rglob("*") if p.is_file())
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert committed == written
    for relative in committed:
        assert filecmp.cmp(NATIVE / relative, tmp_path / relative, shallow=False), relative
    assert make_native_fixtures.EXPECTED == EXPECTED  # the generator's note agrees


@pytest.mark.parametrize("benchmark", sorted(IMPORTERS))
def test_every_importer_reads_its_upstream_shaped_files(benchmark: str) -> None:
    values = import_results(benchmark, NATIVE / benchmark, model="gpt-4o")
    assert values == pytest.approx(EXPECTED[benchmark])


def import_all(tmp_path: Path, *extra: str, model: str = "gpt-4o") -> int:
    argv = ["import", *dirs(tmp_path), "--model", model, "--mode", "quick", *extra]
    for benchmark in IMPORTERS:
        argv += ["--benchmark", benchmark, str(NATIVE / benchmark)]
    return cli.main(argv)


def dirs(tmp_path: Path) -> list[str]:
    return ["--results-dir", str(tmp_path / "agg"), "--raw-dir", str(tmp_path / "raw")]


def stored(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((tmp_path / "agg").glob("*.json"))]


def test_rescore_of_all_eight_gives_every_bucket_from_its_sub_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert import_all(tmp_path) == 0
    capsys.readouterr()
    argv = ["report", *dirs(tmp_path), "--rescore", "--model", "gpt-4o", "--mode", "quick"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out

    rescored = next(a for a in stored(tmp_path) if "rescored_from" in a)
    assert rescored["partial"] is False and rescored["failed"] == []
    assert rescored["missing"] == [] and rescored["unrouted"] == []
    assert {b: row["score"] for b, row in rescored["buckets"].items()} == pytest.approx(BUCKETS)
    assert rescored["egi"] == pytest.approx(EGI)
    assert rescored["egi"] == pytest.approx(60.571667, abs=1e-6)
    # M2 62 is below its floor of 70; M5 73.33 clears it.
    assert rescored["floors"]["M2"]["status"] == "below"
    assert rescored["floors"]["M5"]["status"] == "pass"
    assert rescored["release_ready"] is False
    for bucket, names in CONTRIBUTORS.items():
        rows = rescored["buckets"][bucket]["contributors"]
        assert [f"{r['benchmark']}.{r['sub_metric']}" for r in rows] == names
        assert all(r["available"] for r in rows)
        assert sum(r["effective_weight"] for r in rows) == pytest.approx(1.0)
    gap = next(
        r for r in rescored["buckets"]["M5"]["contributors"] if r["sub_metric"] == "accuracy_gap"
    )
    assert gap["raw"] == pytest.approx(0.05) and gap["normalised"] == pytest.approx(95.0)

    # The printed report lists each bucket with all its contributors under it.
    assert "EGI 60.57" in out
    lines = out.splitlines()
    for bucket, names in CONTRIBUTORS.items():
        start = next(i for i, line in enumerate(lines) if line.startswith(f"{bucket} "))
        assert f"{BUCKETS[bucket]:.2f}" in lines[start]
        assert f"{len(names)}/{len(names)}" in lines[start]
        listed = [line.split()[0] for line in lines[start + 1 : start + 1 + len(names)]]
        assert listed == names
    kqa = next(line for line in lines if line.split()[:1] == ["crmarena.knowledge_qa"])
    assert re.search(r"0\.7 -> +70\.00 +x 0\.2000", kqa)


# The files that name their model (docs/egi-bench.md, "Which model a file is for"), each
# with the file that names it; the other four (UserBench, MCPEval, Benchforce and, for
# PersonaBench, the gpt-4o-mini cells it also holds) do not refuse gpt-4o-mini.
NAMED_BY = {
    "crmarena": ("results_gpt-4o_react_all.json", "'gpt-4o' (by its file name)"),
    "herb": ("text-embedding-3-large-gpt-4o-1-ans.json", "'gpt-4o' (by its file name)"),
    "mcp_universe": (
        "report_20250101_120000_00000000-aaaa-4bbb-8ccc-dddddddddddd.md",
        "'gpt-4o' (by its **LLM:** line, type openai)",
    ),
    "locobench": (
        "gpt-4o_claude-sonnet-4_all_easy_20250101_120000_evaluation_results.json",
        "claude-sonnet-4, gpt-4o",
    ),
}


def test_a_file_for_another_model_is_refused_naming_both_models_and_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every fixture is gpt-4o's run (LoCoBench's also claude-sonnet-4's), not gpt-4o-mini's.
    assert import_all(tmp_path, model="gpt-4o-mini") == 0
    err = capsys.readouterr().err
    (artifact,) = stored(tmp_path)
    failed = {row["benchmark"]: row["error"] for row in artifact["failed"]}
    assert set(failed) == set(NAMED_BY)
    for benchmark, (name, held) in NAMED_BY.items():
        message = failed[benchmark]
        assert message.startswith(str(NATIVE / benchmark)) and f"/{name}: " in message
        assert f"the file holds results for {held}, not for the requested model " in message
        assert "'gpt-4o-mini'" in message
        assert f"--file-model {benchmark}=NAME" in message
        assert f"{benchmark}: FAILED" in err
    # PersonaBench's file does hold gpt-4o-mini's cells: (0.5·4 + 0.4·4) / 8 = 0.45.
    assert artifact["benchmarks"]["personabench"] == {"qa_accuracy": pytest.approx(0.45)}
    # The formats that name no model are read whatever the model.
    for benchmark in ("userbench", "mcpeval", "benchforce"):
        assert artifact["benchmarks"][benchmark] == pytest.approx(EXPECTED[benchmark])


def test_the_in_file_model_name_is_set_per_benchmark(tmp_path: Path) -> None:
    # Named differently inside each file; PersonaBench keeps --model.
    options = [
        "--file-model=locobench=claude-sonnet-4",
        "--file-model=crmarena=gpt-4o",
        "--file-model=herb=gpt-4o",
        "--file-model=mcp_universe=gpt-4o",
    ]
    assert import_all(tmp_path, *options, model="gpt-4o-mini") == 0
    (artifact,) = stored(tmp_path)
    assert artifact["failed"] == []
    assert artifact["model"] == "gpt-4o-mini"
    assert artifact["benchmarks"]["locobench"]["functional_correctness"] == 0.9
    assert artifact["benchmarks"]["personabench"] == {"qa_accuracy": pytest.approx(0.45)}
    for benchmark in ("crmarena", "herb", "mcp_universe"):
        assert artifact["benchmarks"][benchmark] == pytest.approx(EXPECTED[benchmark])


@pytest.mark.parametrize(
    ("option", "named"),
    [
        ("claude-sonnet-4", "expected B=NAME"),
        ("locobench=", "expected B=NAME"),
        ("tau_bench=x", "benchmark 'tau_bench' is not imported here"),
    ],
)
def test_a_bad_file_model_option_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, named: str
) -> None:
    assert import_all(tmp_path, "--file-model", option) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"egi-bench: error: --file-model {option!r}") and named in err
    assert err.count("\n") == 1
    assert not (tmp_path / "agg").exists()


def test_a_file_for_another_model_is_refused_by_the_importer_naming_both() -> None:
    path = NATIVE / "locobench"
    with pytest.raises(BenchmarkFileError) as error:
        import_results("locobench", path, model="gemini-2.5-pro")
    assert error.value.path.name.endswith("_evaluation_results.json")
    assert "claude-sonnet-4, gpt-4o" in str(error.value) and "'gemini-2.5-pro'" in str(error.value)
