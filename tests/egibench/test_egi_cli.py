"""The ``egi-bench`` console script (egibench/cli.py): import, report, rescore, doctor, clean.

Native input files come from the importer tests' builders; expected numbers are worked out
by hand below and checked again against :func:`egibench.aggregate.aggregate`.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_egi_importers import BENCHFORCE_STDOUT, crm_task, loco_file, loco_summary, write_json

from egibench import cli
from egibench.aggregate import aggregate, effective_weights, load_routing, parse_egi_weights
from egibench.importers import IMPORTERS

ROOT = Path(__file__).resolve().parents[2]

# The three-benchmark fixture, by hand (routing.yaml, seed 000 Table 6):
#   crmarena: case_routing (1 + 0)/2 = 0.5, handle_time 1, knowledge_qa 0.5, PVI 1
#   benchforce: accuracy_all 0.4, accuracy_finished 0.6, finished_ratio 8/10 = 0.8
#   locobench: functional_correctness 0.6, software_engineering 0.7, code_quality 0.8,
#              longcontext_utilization 0.55
# M1 = (50 + 100 + 40 + 60) / 4 = 62.5   (case_routing, handle_time, accuracy_all, fc)
# M2 = 80                                (finished_ratio; MCP-Universe and MCPEval absent)
# M3 = 55                                (longcontext_utilization; UserBench absent)
# M4 = 50                                (knowledge_qa; HERB, PersonaBench absent)
# M5 = (100 + 100·(1 − (0.6 − 0.4))) / 2 = (100 + 80) / 2 = 90
# M6 = (70 + 80) / 2 = 75
# EGI = 0.28·62.5 + 0.22·80 + 0.16·55 + 0.14·50 + 0.14·90 + 0.06·75
#     = 17.5 + 17.6 + 8.8 + 7.0 + 12.6 + 4.5 = 68.0
EXPECTED_BUCKETS = {"M1": 62.5, "M2": 80.0, "M3": 55.0, "M4": 50.0, "M5": 90.0, "M6": 75.0}
EXPECTED_EGI = 68.0


def inputs(tmp_path: Path, *, benchforce: str = BENCHFORCE_STDOUT) -> dict[str, Path]:
    crm = write_json(
        tmp_path / "in" / "crm" / "results_gpt-4o_react_all.json",
        [
            crm_task(1, "case_routing", 1),
            crm_task(2, "case_routing", 0),
            crm_task(3, "handle_time", 1),
            crm_task(4, "knowledge_qa", 0.5),
            crm_task(5, "policy_violation_identification", 1),
        ],
    )
    bench = tmp_path / "in" / "benchforce" / "hospital.txt"
    bench.parent.mkdir(parents=True)
    bench.write_text(benchforce, encoding="utf-8")
    (tmp_path / "in" / "loco").mkdir()
    loco = loco_file(tmp_path / "in" / "loco", {"gpt-4o": loco_summary(0.6)})
    return {"crmarena": crm, "benchforce": bench, "locobench": loco}


def dirs(tmp_path: Path) -> list[str]:
    return ["--results-dir", str(tmp_path / "agg"), "--raw-dir", str(tmp_path / "raw")]


def run_import(tmp_path: Path, sources: dict[str, Path], *extra: str) -> int:
    argv = ["import", *dirs(tmp_path), "--model", "gpt-4o", "--mode", "quick", *extra]
    for benchmark, path in sources.items():
        argv += ["--benchmark", benchmark, str(path)]
    return cli.main(argv)


def stored(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))]


def test_import_stores_raw_values_and_the_aggregated_egi(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sources = inputs(tmp_path)
    assert run_import(tmp_path, sources) == 0

    (artifact,) = stored(tmp_path / "agg")
    assert artifact["egi"] == pytest.approx(EXPECTED_EGI)
    assert {b: artifact["buckets"][b]["score"] for b in EXPECTED_BUCKETS} == pytest.approx(
        EXPECTED_BUCKETS
    )
    assert artifact["partial"] is False
    assert artifact["release_ready"] is True
    assert (artifact["model"], artifact["mode"], artifact["failed"]) == ("gpt-4o", "quick", [])
    assert artifact["timestamp"].endswith("+00:00")
    assert artifact["egi_weights"] == {
        "M1": 0.28, "M2": 0.22, "M3": 0.16, "M4": 0.14, "M5": 0.14, "M6": 0.06,
    }  # fmt: skip

    (run,) = (tmp_path / "raw").iterdir()
    assert run.name.startswith("gpt-4o_quick_")
    assert sorted(p.name for p in run.iterdir()) == [
        "benchforce.json", "crmarena.json", "locobench.json", "manifest.json",
    ]  # fmt: skip
    raw = {b: json.loads((run / f"{b}.json").read_text()) for b in sources}
    assert raw["benchforce"] == pytest.approx(
        {"accuracy_all": 0.4, "accuracy_finished": 0.6, "finished_ratio": 0.8}
    )
    # The independent check: the library on the stored raw values gives the stored artifact.
    assert aggregate(raw, routing=load_routing()).egi == pytest.approx(artifact["egi"])
    manifest = json.loads((run / "manifest.json").read_text())
    entry = manifest["benchmarks"]["benchforce"]
    assert entry["status"] == "imported"
    assert entry["files"] == [
        {
            "path": str(sources["benchforce"].resolve()),
            "sha256": hashlib.sha256(sources["benchforce"].read_bytes()).hexdigest(),
        }
    ]

    captured = capsys.readouterr()
    assert "[1/3] crmarena: 4 sub-metric(s)" in captured.err
    assert "[3/3] locobench: 4 sub-metric(s)" in captured.err
    assert "EGI 68.00" in captured.out


def test_a_malformed_file_drops_only_its_benchmark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sources = inputs(tmp_path, benchforce=BENCHFORCE_STDOUT.replace("0.4", "n/a"))
    assert run_import(tmp_path, sources) == 0

    (artifact,) = stored(tmp_path / "agg")
    (failure,) = artifact["failed"]
    assert failure["benchmark"] == "benchforce"
    assert "Accuracy (All)" in failure["error"] and str(sources["benchforce"]) in failure["error"]
    # Without Benchforce: M1 = (50 + 100 + 60) / 3 = 70; M2 has no data → missing;
    # M5 = PVI alone = 100. Partial EGI = 0.28·70 + 0.16·55 + 0.14·50 + 0.14·100 + 0.06·75
    #                                     = 19.6 + 8.8 + 7.0 + 14.0 + 4.5 = 53.9
    assert artifact["buckets"]["M1"]["score"] == pytest.approx(70.0)
    assert artifact["buckets"]["M2"]["score"] is None
    assert artifact["egi"] == pytest.approx(53.9)
    assert artifact["partial"] is True
    assert artifact["release_ready"] is False
    assert "benchforce" in artifact["missing_benchmarks"]
    (run,) = (tmp_path / "raw").iterdir()
    assert not (run / "benchforce.json").exists()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["benchmarks"]["benchforce"]["status"] == "failed"
    assert "[2/3] benchforce: FAILED" in capsys.readouterr().err


def test_import_accepts_from_b_equals_path(tmp_path: Path) -> None:
    sources = inputs(tmp_path)
    # The LoCoBench file holds gpt-4o's summary: the model imported must be gpt-4o.
    argv = ["import", *dirs(tmp_path), "--model", "gpt-4o", "--mode", "deep"]
    argv += [f"--from=locobench={sources['locobench']}"]
    argv += ["--benchmark", "crmarena", str(sources["crmarena"])]
    assert cli.main(argv) == 0
    (artifact,) = stored(tmp_path / "agg")
    assert set(artifact["benchmarks"]) == {"crmarena", "locobench"}


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--benchmark", "nope", "x"], "'nope'"),
        (["--from", "crmarena"], "--from 'crmarena'"),
        ([], "--benchmark"),
        (["--benchmark", "crmarena", "a", "--benchmark", "crmarena", "b"], "more than once"),
        (["--egi-weights", "M7=0.1"], "--egi-weights"),
    ],
)
def test_import_user_errors_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    code = cli.main(["import", *dirs(tmp_path), "--model", "m", "--mode", "quick", *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert named in err and err.count("\n") == 1
    assert not (tmp_path / "agg").exists() and not (tmp_path / "raw").exists()


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        ([], "egi-bench: error: the following arguments are required: command\n"),
        (["import", "--model", "m"], "egi-bench: error: import: the following arguments are "
         "required: --mode\n"),
        (["report", "--format", "xml"], "egi-bench: error: report: argument --format: invalid "
         "choice: 'xml'"),
    ],
)  # fmt: skip
def test_argument_errors_are_one_line_naming_the_option(
    capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(line) and err.count("\n") == 1


def test_import_where_every_importer_fails_stores_nothing(tmp_path: Path) -> None:
    assert run_import(tmp_path, {"crmarena": tmp_path / "absent.json"}) == 2
    assert not (tmp_path / "agg").exists()


def test_report_prints_the_latest_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sources = inputs(tmp_path)
    assert run_import(tmp_path, sources) == 0
    # A later import of CRMArena alone is the latest.
    assert run_import(tmp_path, {"crmarena": sources["crmarena"]}) == 0
    capsys.readouterr()

    assert cli.main(["report", *dirs(tmp_path), "--model", "gpt-4o", "--format", "json"]) == 0
    latest = json.loads(capsys.readouterr().out)
    assert set(latest["benchmarks"]) == {"crmarena"}

    assert cli.main(["report", *dirs(tmp_path)]) == 0
    out = capsys.readouterr().out
    # crmarena alone: M1 = (50 + 100)/2 = 75; M4 = 50; M5 = 100; EGI = 21 + 7 + 14 = 42
    assert "EGI 42.00  (partial" in out
    assert "M1     Task Outcome Accuracy            0.2800    75.00  2/8" in out
    assert "M2     Tool Actioning Reliability       0.2200  missing  0/5" in out
    assert "mcpeval.flexible_average_score (M2): benchmark missing" in out
    assert "M2 70 → missing" in out and "M5 70 → pass (100.00)" in out
    assert "Release readiness: not release-ready" in out

    assert cli.main(["report", *dirs(tmp_path), "--model", "other"]) == 2
    assert "model 'other'" in capsys.readouterr().err


def test_rescore_rederives_from_raw_values_with_new_weights_and_runs_no_importer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_import(tmp_path, inputs(tmp_path)) == 0
    capsys.readouterr()

    def refuse(path: Path, *, model: str | None = None) -> dict[str, float]:
        raise AssertionError("an importer ran during a rescore")

    for name in list(IMPORTERS):
        monkeypatch.setitem(IMPORTERS, name, refuse)
    argv = ["report", *dirs(tmp_path), "--rescore", "--model", "gpt-4o", "--mode", "quick"]
    assert cli.main([*argv, "--egi-weights", "M1=0.20,M5=0.30"]) == 0
    out = capsys.readouterr().out

    # Named weights replace the defaults; the other four are scaled by 0.5 / 0.58:
    # M2 0.22·0.5/0.58 = 0.1897, M3 0.16·… = 0.1379, M4 0.14·… = 0.1207, M6 0.06·… = 0.0517
    line = next(row for row in out.splitlines() if row.startswith("Effective EGI weights:"))
    shown = dict(part.split("=") for part in line.split(":")[1].split("(")[0].split())
    assert {k: float(v) for k, v in shown.items()} == {
        "M1": 0.2, "M2": 0.1897, "M3": 0.1379, "M4": 0.1207, "M5": 0.3, "M6": 0.0517,
    }  # fmt: skip
    assert "(sum 1.0000)" in line

    rescored = next(a for a in stored(tmp_path / "agg") if "rescored_from" in a)
    (run,) = (tmp_path / "raw").iterdir()
    assert rescored["rescored_from"] == str(run)
    scale = 0.5 / 0.58
    assert rescored["egi_weights"] == pytest.approx(
        {"M1": 0.2, "M2": 0.22 * scale, "M3": 0.16 * scale, "M4": 0.14 * scale, "M5": 0.3,
         "M6": 0.06 * scale}
    )  # fmt: skip
    # By hand: 0.2·62.5 + 0.3·90 + (0.5/0.58)·(17.6 + 8.8 + 7.0 + 4.5) = 39.5 + 32.672… = 72.17
    assert rescored["egi"] == pytest.approx(39.5 + scale * 37.9)
    raw = {p.stem: json.loads(p.read_text()) for p in run.glob("*.json") if p.stem != "manifest"}
    weights = effective_weights(parse_egi_weights("M1=0.20,M5=0.30"))
    assert rescored["egi"] == pytest.approx(
        aggregate(raw, routing=load_routing(), weights=weights).egi
    )
    assert f"EGI {rescored['egi']:.2f}" in out
    assert len(stored(tmp_path / "agg")) == 2


@pytest.mark.parametrize(
    ("weights", "named"),
    [
        ("M1=0.20,M5", "'M5'"),
        ("M1=0.20,M9=0.3", "'M9=0.3'"),
        ("M1=abc", "'M1=abc'"),
        ("M1=0.8,M5=0.3", "above 1"),
    ],
)
def test_rescore_refuses_bad_egi_weights_naming_the_part(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], weights: str, named: str
) -> None:
    argv = ["report", *dirs(tmp_path), "--rescore", "--model", "m", "--mode", "quick"]
    assert cli.main([*argv, "--egi-weights", weights]) == 2
    err = capsys.readouterr().err
    assert err.startswith("egi-bench: error: --egi-weights:") and named in err
    assert err.count("\n") == 1


def test_rescore_needs_model_and_mode_and_stored_raw_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["report", *dirs(tmp_path), "--rescore", "--model", "m"]) == 2
    assert "--model and --mode" in capsys.readouterr().err
    argv = ["report", *dirs(tmp_path), "--rescore", "--model", "m", "--mode", "deep"]
    assert cli.main(argv) == 2
    assert "--raw-dir" in capsys.readouterr().err
    assert cli.main(["report", *dirs(tmp_path), "--egi-weights", "M1=0.2"]) == 2
    assert "only with --rescore" in capsys.readouterr().err


def test_doctor_reports_importers_routing_storage_and_which_keys_are_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_import(tmp_path, inputs(tmp_path)) == 0
    registry = tmp_path / "harnesses.yaml"
    registry.write_text(
        "benchmarks:\n"
        "  crmarena: {command: 'python run_tasks.py', env: [EGI_TEST_KEY_A, EGI_TEST_KEY_B]}\n"
        "  locobench: {command: 'locobench evaluate'}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("EGI_TEST_KEY_A", "sk-very-secret")
    monkeypatch.delenv("EGI_TEST_KEY_B", raising=False)
    capsys.readouterr()

    assert cli.main(["doctor", *dirs(tmp_path), "--harnesses", str(registry)]) == 0
    out = capsys.readouterr().out
    assert "Importers: " + ", ".join(IMPORTERS) in out
    assert ": well-posed" in out
    assert f"{tmp_path / 'agg'} (1 file(s))" in out
    assert f"{tmp_path / 'raw'} (1 run(s))" in out
    assert "crmarena: EGI_TEST_KEY_A set, EGI_TEST_KEY_B NOT set" in out
    assert "locobench: no API key needed" in out
    assert "sk-very-secret" not in out


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (None, "cannot read"),
        ("benchmarks: [crmarena]\n", "key benchmarks"),
        ("benchmarks: {crmarena: {env: [K]}}\n", "benchmarks.crmarena.command"),
        ("benchmarks: {crmarena: {command: x, env: K}}\n", "benchmarks.crmarena.env"),
        ("benchmarks: {a: [\n", "not valid YAML"),
    ],
)
def test_doctor_exits_2_on_an_unreadable_registry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, named: str
) -> None:
    registry = tmp_path / "harnesses.yaml"
    if text is not None:
        registry.write_text(text, encoding="utf-8")
    assert cli.main(["doctor", *dirs(tmp_path), "--harnesses", str(registry)]) == 2
    err = capsys.readouterr().err
    assert str(registry) in err and named in err and err.count("\n") == 1


def test_clean_lists_without_yes_and_deletes_only_result_files_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sources = inputs(tmp_path)
    assert run_import(tmp_path, sources) == 0
    (aggregated,) = (tmp_path / "agg").glob("*.json")
    (run,) = (tmp_path / "raw").iterdir()
    bystanders = [
        write_json(tmp_path / "outside.json", {}),
        write_json(tmp_path / "raw" / "not-a-run" / "x.json", {}),
        tmp_path / "agg" / "notes.txt",
    ]
    bystanders[2].write_text("keep", encoding="utf-8")
    capsys.readouterr()

    assert cli.main(["clean", *dirs(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Would delete (pass --yes): 2 stored result(s)" in out
    assert str(aggregated) in out and str(run) in out
    assert aggregated.exists() and run.exists()

    old = 10 * 86400
    os.utime(aggregated, (aggregated.stat().st_atime - old, aggregated.stat().st_mtime - old))
    assert cli.main(["clean", *dirs(tmp_path), "--older-than", "5", "--yes"]) == 0
    assert not aggregated.exists() and run.exists()

    assert cli.main(["clean", *dirs(tmp_path), "--yes"]) == 0
    assert not run.exists()
    assert all(path.exists() for path in bystanders)
    assert all(path.exists() for path in sources.values())

    assert cli.main(["clean", *dirs(tmp_path), "--older-than", "-1"]) == 2


def test_python_m_runs_the_script_and_honours_egi_results_dir(tmp_path: Path) -> None:
    assert run_import(tmp_path, inputs(tmp_path)) == 0
    env = {**os.environ, "EGI_RESULTS_DIR": str(tmp_path / "agg")}
    done = subprocess.run(
        [sys.executable, "-m", "egibench.cli", "report", "--format", "json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["egi"] == pytest.approx(EXPECTED_EGI)
