"""``egi-bench run`` and ``setup`` (egibench/cli.py); subsetting rules (egibench/harness.py).

Subsets are worked out by hand from SPEC §10's rules; the run tests drive real subprocesses:
small Python scripts written to tmp_path that read the subset file and write the benchmarks'
native formats (the importer tests' builders), one succeeding, others failing in each way a
harness can fail.
"""

from __future__ import annotations

import json
import random
import sys
import textwrap
from pathlib import Path

import pytest
from test_egi_importers import BENCHFORCE_STDOUT

from egibench import cli
from egibench.aggregate import aggregate, load_routing
from egibench.harness import (
    DEFAULT_REGISTRY,
    Category,
    RegistryError,
    bucket_coverage,
    load_registry,
    subset_tasks,
)

ROUTING = load_routing()
ROUTES = [(r.benchmark, r.sub_metric, r.bucket) for r in ROUTING.routes]


def cat(name: str, n: int, buckets: str = "M1", minutes: float = 1.0) -> Category:
    return Category(
        name=name,
        tasks=tuple(f"{name}-{i}" for i in range(n)),
        buckets=tuple(buckets.split(",")),
        minutes_per_task=minutes,
    )


# --- subsetting, by hand ---------------------------------------------------------------------


def test_the_default_routing_coverage_counts_routes_per_bucket() -> None:
    # routing.yaml (seed 000 Table 6): M1 6 CRMArena + Benchforce + LoCoBench = 8;
    # M2 3 MCP-Universe + MCPEval + Benchforce = 5; M3 UserBench + LoCoBench = 2;
    # M4 NED, KQA, HERB ×2, PersonaBench = 5; M5 PVI, HERB null rate, Benchforce gap = 3; M6 2.
    coverage = bucket_coverage([(b, bucket) for b, _, bucket in ROUTES])
    assert coverage == {"M1": 8, "M2": 5, "M3": 2, "M4": 5, "M5": 3, "M6": 2}


def test_a_benchmark_that_fits_keeps_every_task() -> None:
    categories = [cat("a", 3), cat("b", 2, minutes=2.0)]  # 3·1 + 2·2 = 7 min
    subset = subset_tasks(categories, budget_minutes=7, coverage={"M1": 8})
    assert subset.kept == {"a": ("a-0", "a-1", "a-2"), "b": ("b-0", "b-1")}
    assert (subset.dropped, subset.estimated_minutes, subset.full_minutes) == ((), 7, 7)
    assert subset_tasks(categories, budget_minutes=None, coverage={}).total_tasks == 5


def test_tasks_are_cut_evenly_per_category_and_the_leftover_goes_in_declared_order() -> None:
    # 10, 4 and 2 tasks at 1 min, budget 9: k = 3 costs 3 + 3 + 2 = 8 (k = 4 would cost
    # 4 + 4 + 2 = 10); the leftover minute adds one task to the first category with more.
    categories = [cat("a", 10), cat("b", 4), cat("c", 2)]
    subset = subset_tasks(categories, budget_minutes=9, coverage={"M1": 8})
    assert {name: len(tasks) for name, tasks in subset.kept.items()} == {"a": 4, "b": 3, "c": 2}
    assert subset.dropped == ()
    assert subset.estimated_minutes == 9 and subset.full_minutes == 16
    assert subset.kept["c"] == ("c-0", "c-1")
    for name, tasks in subset.kept.items():
        everything = [t for c in categories if c.name == name for t in c.tasks]
        assert list(tasks) == [t for t in everything if t in tasks]  # declared order


def test_a_category_is_dropped_only_when_one_task_each_does_not_fit() -> None:
    # One task each: 2 + 1 + 1 + 1 = 5 min > 2.5. Redundancy: a (M1) 8, b (M2) 5,
    # c (M5) 3, d (M2) 5. Drop a (8): 3 min, still > 2.5. Then b and d tie on 5 and on cost;
    # the later-declared d goes (M2 now 4): 2 min fits, one task each (a second would not).
    coverage = {"M1": 8, "M2": 5, "M5": 3}
    categories = [cat("a", 3, "M1", 2.0), cat("b", 3, "M2"), cat("c", 3, "M5"), cat("d", 3, "M2")]
    subset = subset_tasks(categories, budget_minutes=2.5, coverage=coverage)
    assert subset.dropped == ("a", "d")
    assert {name: len(tasks) for name, tasks in subset.kept.items()} == {"b": 1, "c": 1}
    assert subset.estimated_minutes == 2 and not subset.over_budget


def test_dropping_a_category_lowers_its_buckets_coverage_for_the_next_choice() -> None:
    # M2 has 3 sub-metrics, M4 has 2; budget for one task. Drop y (M2 3, later than x);
    # M2 is now 2 = M4, and the later-declared z goes: x stays. Without the update, x (3)
    # would go before z (2).
    categories = [cat("x", 2, "M2"), cat("y", 2, "M2"), cat("z", 2, "M4")]
    subset = subset_tasks(categories, budget_minutes=1, coverage={"M2": 3, "M4": 2})
    assert subset.dropped == ("y", "z")
    assert list(subset.kept) == ["x"]


def test_a_category_feeding_several_buckets_counts_its_least_covered_one() -> None:
    # bench feeds M1 (8) and M5 (3): redundancy 3; ret feeds M4 (5): it goes first.
    categories = [cat("bench", 2, "M1,M5"), cat("ret", 2, "M4")]
    subset = subset_tasks(categories, budget_minutes=1, coverage={"M1": 8, "M4": 5, "M5": 3})
    assert subset.dropped == ("ret",)


def test_the_last_category_runs_one_task_even_over_budget() -> None:
    subset = subset_tasks([cat("a", 3, minutes=5.0)], budget_minutes=2, coverage={"M1": 8})
    assert len(subset.kept["a"]) == 1
    assert subset.over_budget is True and subset.estimated_minutes == 5


def test_seed_42_picks_the_same_tasks_every_time_and_another_seed_others() -> None:
    categories = [cat("a", 50), cat("b", 50)]
    first = subset_tasks(categories, budget_minutes=10, coverage={"M1": 8})
    again = subset_tasks(list(categories), budget_minutes=10, coverage={"M1": 8})
    assert first.kept == again.kept and first.seed == 42
    # The documented draw: random.Random("42:a").sample(range(50), 5), in declared order.
    expected = sorted(random.Random("42:a").sample(range(50), 5))
    assert first.kept["a"] == tuple(f"a-{i}" for i in expected)
    other = subset_tasks(categories, budget_minutes=10, coverage={"M1": 8}, seed=7)
    assert other.kept != first.kept
    assert {len(t) for t in other.kept.values()} == {5}


def test_subsetting_refuses_a_non_positive_budget() -> None:
    with pytest.raises(ValueError, match="budget_minutes"):
        subset_tasks([cat("a", 2)], budget_minutes=0, coverage={})


def test_the_shipped_registry_reproduces_the_quick_profiles_of_seed_000() -> None:
    registry = load_registry(DEFAULT_REGISTRY, routes=ROUTES)
    assert set(registry.harnesses) == set(ROUTING.benchmarks)
    coverage = bucket_coverage([(b, bucket) for b, _, bucket in ROUTES])

    def quick(name: str) -> dict[str, int]:
        h = registry.harnesses[name]
        keyless = [c for c in h.categories if not c.env]
        subset = subset_tasks(keyless, budget_minutes=h.budget("quick"), coverage=coverage)
        return {c: len(t) for c, t in subset.kept.items()}

    # Appendix G: CRMArena all 9 types, up to 6 tasks each; HERB 80 questions; UserBench 3
    # envs, 60 tasks each; MCP-Universe financial_analysis 20; MCPEval airbnb 50;
    # Benchforce hospital 40; LoCoBench 30 easy scenarios.
    assert quick("crmarena") == dict.fromkeys(
        [c.name for c in registry.harnesses["crmarena"].categories], 6
    )
    assert sum(quick("herb").values()) == 80
    assert quick("userbench") == {"travel22": 60, "travel33": 60, "travel44": 60}
    assert quick("mcp_universe") == {"financial_analysis": 20}
    assert quick("mcpeval") == {"airbnb": 50}
    assert quick("benchforce") == {"hospital": 40}
    assert quick("locobench") == {"easy": 30}
    assert all(h.budget("deep") is None for h in registry.harnesses.values())


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ("{command: 'x {nope}'}", "benchmarks.crmarena.command: unknown placeholder {nope}"),
        ("{command: 'x {proxy_key}'}", "benchmarks.crmarena.command: unknown placeholder"),
        ("{command: [x, 'y \"']}", "benchmarks.crmarena.command[1]: cannot split"),
        ("{command: x, colour: red}", "benchmarks.crmarena.colour: unknown key"),
        ("{command: x, budget_minutes: {quick: 5}}", "benchmarks.crmarena.categories"),
        (
            "{command: x, minutes_per_task: 1,"
            " categories: {a: {tasks: 2, sub_metrics: [micro_avg]}}}",
            "benchmarks.crmarena.categories.a.sub_metrics: 'micro_avg' is not routed",
        ),
        (
            "{command: x, categories: {a: {tasks: 0, buckets: [M1]}}}",
            "benchmarks.crmarena.categories.a.tasks",
        ),
        (
            "{command: x, categories: {a: {tasks: 2, buckets: [M1]}}}",
            "benchmarks.crmarena.categories.a.minutes_per_task: missing",
        ),
        ("{command: x, timeout_minutes: -1}", "benchmarks.crmarena.timeout_minutes"),
        ("{command: x, setup: ['pip install {model}']}", "benchmarks.crmarena.setup[0]"),
    ],
)
def test_a_bad_registry_entry_is_refused_naming_the_file_and_key(
    tmp_path: Path, entry: str, key: str
) -> None:
    path = tmp_path / "h.yaml"
    path.write_text(f"benchmarks:\n  crmarena: {entry}\n", encoding="utf-8")
    with pytest.raises(RegistryError) as caught:
        load_registry(path, routes=ROUTES)
    assert str(caught.value).startswith(f"{path}: key ") and key in str(caught.value)


def test_a_registry_key_given_twice_is_refused_naming_the_file_key_and_lines(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.yaml"
    path.write_text("benchmarks:\n  crmarena: {command: x}\n  crmarena: {command: y}\n")
    with pytest.raises(RegistryError) as caught:
        load_registry(path, routes=ROUTES)
    assert str(caught.value) == (
        f"--harnesses {path}: not valid YAML (line 3: key 'benchmarks.crmarena' appears twice, "
        "first on line 2; give each key once)"
    )


# --- run -------------------------------------------------------------------------------------

CRM_SCRIPT = """\
import json, os, sys
out, subset_file = sys.argv[1], sys.argv[2]
subset = json.load(open(subset_file))
rewards = {"case_routing": [1, 1], "handle_time": [1, 0], "knowledge_qa": [0.5],
           "policy_violation_identification": [1]}
rows = []
for task_type, ids in subset["categories"].items():
    for position, task_id in enumerate(ids):
        rows.append({"task_id": f"{task_type}/{task_id}", "task_type": task_type, "gt_answer": "x",
                     "reward": rewards[task_type][position], "agent_info": {}, "traj": []})
model = sys.argv[-1]  # as run_tasks.py names its file: results_{model}_{strategy}_{category}
json.dump(rows, open(os.path.join(out, f"results_{model}_react_all.json"), "w"))
json.dump(sorted(os.environ), open(os.path.join(out, "env-names.json"), "w"))
print("base", os.environ["OPENAI_API_BASE"], "key", os.environ.get("OPENAI_API_KEY"))
print("argv", sys.argv[3:])
"""

BENCHFORCE_SCRIPT = f"print({BENCHFORCE_STDOUT!r})\n"
FAIL_SCRIPT = "import sys\nprint('harness crashed', file=sys.stderr)\nsys.exit(1)\n"
HANG_SCRIPT = "import time\nprint('working', flush=True)\ntime.sleep(60)\n"
SILENT_SCRIPT = "print('done, but wrote nothing')\n"
BAD_SCRIPT = "import sys\nopen(sys.argv[1], 'w').write('{\"summary\": {}}')\n"


def registry(tmp_path: Path, *, timeout_minutes: float = 0.03) -> Path:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    for name, text in {
        "crm.py": CRM_SCRIPT,
        "benchforce.py": BENCHFORCE_SCRIPT,
        "fail.py": FAIL_SCRIPT,
        "hang.py": HANG_SCRIPT,
        "silent.py": SILENT_SCRIPT,
        "bad.py": BAD_SCRIPT,
    }.items():
        (scripts / name).write_text(text, encoding="utf-8")
    py = sys.executable
    path = tmp_path / "harnesses.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            benchmarks:
              crmarena:
                workdir: scripts
                env: [EGI_TEST_DECLARED]
                set_env: {{HARNESS_FLAG: "{{mode}}-{{total_tasks}}"}}
                command: "{py} crm.py {{output_dir}} {{subset_file}} {{*categories}} {{model}}"
                output: .
                minutes_per_task: 1
                budget_minutes: {{quick: 6, deep: null}}
                categories:
                  case_routing: {{tasks: 4, sub_metrics: [case_routing]}}
                  handle_time: {{tasks: 2, sub_metrics: [handle_time]}}
                  knowledge_qa: {{tasks: 2, sub_metrics: [knowledge_qa]}}
                  policy_violation_identification:
                    tasks: 2
                    sub_metrics: [policy_violation_identification]
              benchforce:
                command: "{py} {scripts}/benchforce.py"
                stdout: hospital.txt
                output: hospital.txt
              locobench:
                command: "{py} {scripts}/fail.py"
                output: results.json
              userbench:
                command: "{py} {scripts}/hang.py"
                output: results.json
                timeout_minutes: {timeout_minutes}
              mcpeval:
                command: "{py} {scripts}/silent.py"
                output: "{{output_dir}}/*_summary_analysis.json"
              herb:
                command: ["{py} {scripts}/silent.py", "{py} {scripts}/bad.py {{output_dir}}/x.pk"]
                output: x.pk
            """
        ),
        encoding="utf-8",
    )
    return path


def run(tmp_path: Path, reg: Path, *extra: str) -> int:
    return cli.main(
        [
            "run",
            "--results-dir", str(tmp_path / "agg"),
            "--raw-dir", str(tmp_path / "raw"),
            "--harnesses", str(reg),
            "--model", "gpt-4o",
            "--mode", "quick",
            "--api-base", "http://127.0.0.1:9/v1",
            "--proxy-state-dir", str(tmp_path / "no-proxy"),
            *extra,
        ]
    )  # fmt: skip


# crmarena's subset under 6 min at 1 min/task (4, 2, 2, 2 tasks): one each costs 4, two each
# would cost 8; the 2 leftover minutes go to case_routing and handle_time in declared order:
# case_routing 2, handle_time 2, knowledge_qa 1, PVI 1. The script's rewards give
# case_routing 1, handle_time 0.5, knowledge_qa 0.5, PVI 1. Benchforce: accuracy_all 0.4,
# accuracy_finished 0.6, finished 8/10.
#   M1 = (100 + 50 + 40) / 3 = 63.333…   M2 = 80   M4 = 50   M5 = (100 + 100·(1 − 0.2)) / 2 = 90
#   M3, M6 missing → partial EGI = 0.28·63.333 + 0.22·80 + 0.14·50 + 0.14·90
#                                = 17.7333 + 17.6 + 7 + 12.6 = 54.9333
EXPECTED = {"M1": 190 / 3, "M2": 80.0, "M4": 50.0, "M5": 90.0}
EXPECTED_EGI = 0.28 * 190 / 3 + 17.6 + 7.0 + 12.6


@pytest.mark.parametrize("parallel", [[], ["--parallel", "--max-workers", "3"]])
def test_run_imports_what_succeeded_and_records_why_each_other_harness_failed(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    parallel: list[str],
) -> None:
    monkeypatch.setenv("EGI_TEST_DECLARED", "declared-value")
    monkeypatch.setenv("EGI_TEST_UNDECLARED_SECRET", "must-not-leak")
    reg = registry(tmp_path)
    assert run(tmp_path, reg, *parallel) == 0

    (artifact_path,) = (tmp_path / "agg").glob("*.json")
    artifact = json.loads(artifact_path.read_text())
    assert artifact["egi"] == pytest.approx(EXPECTED_EGI)
    assert {b: artifact["buckets"][b]["score"] for b in EXPECTED} == pytest.approx(EXPECTED)
    assert artifact["buckets"]["M3"]["score"] is None and artifact["partial"] is True
    assert set(artifact["benchmarks"]) == {"crmarena", "benchforce"}
    failed = {f["benchmark"]: f["error"] for f in artifact["failed"]}
    assert set(failed) == {"locobench", "userbench", "mcpeval", "herb"}
    assert failed["locobench"].startswith("exit status 1 (log ")
    assert failed["userbench"].startswith("timed out after 1.8 s")
    assert failed["mcpeval"].startswith("output missing: ")
    assert failed["herb"].startswith("import: ") and "x.pk" in failed["herb"]

    (run_dir,) = (tmp_path / "raw").iterdir()
    assert run_dir.name == artifact_path.stem and run_dir.name.startswith("gpt-4o_quick_")
    raw = {b: json.loads((run_dir / f"{b}.json").read_text()) for b in artifact["benchmarks"]}
    assert raw["crmarena"] == {
        "case_routing": 1.0, "handle_time": 0.5, "knowledge_qa": 0.5,
        "policy_violation_identification": 1.0,
    }  # fmt: skip
    assert aggregate(raw, routing=ROUTING).egi == pytest.approx(artifact["egi"])

    manifest = json.loads((run_dir / "manifest.json").read_text())
    entries = manifest["benchmarks"]
    assert entries["crmarena"]["status"] == "imported"
    assert entries["crmarena"]["returncode"] == 0
    assert entries["crmarena"]["subset"] == {"total_tasks": 6, "dropped": []}
    assert entries["locobench"]["status"] == "failed"
    assert entries["locobench"]["returncode"] == 1
    assert "harness crashed" in Path(entries["locobench"]["log"]).read_text()
    assert entries["userbench"]["returncode"] is not None  # killed, not left running
    assert "working" in Path(entries["userbench"]["log"]).read_text()

    config = json.loads((run_dir / "config.json").read_text())
    subset = config["benchmarks"]["crmarena"]["subset"]
    assert {c: len(t) for c, t in subset["categories"].items()} == {
        "case_routing": 2, "handle_time": 2, "knowledge_qa": 1,
        "policy_violation_identification": 1,
    }  # fmt: skip
    assert subset["seed"] == 42 and subset["budget_minutes"] == 6
    assert (
        json.loads((run_dir / "subsets" / "crmarena.json").read_text())["categories"]
        == (subset["categories"])
    )
    argv = config["benchmarks"]["crmarena"]["commands"][0]
    assert argv[0] == sys.executable and argv[-1] == "gpt-4o"
    assert argv[-5:-1] == list(subset["categories"])  # {*categories}: one argument each
    assert "EGI_TEST_DECLARED" in config["benchmarks"]["crmarena"]["env"]
    assert "declared-value" not in (run_dir / "config.json").read_text()

    native = run_dir / "native" / "crmarena"
    names = json.loads((native / "env-names.json").read_text())
    assert "EGI_TEST_DECLARED" in names and "EGI_TEST_UNDECLARED_SECRET" not in names
    assert {"OPENAI_API_BASE", "OPENAI_BASE_URL", "LITELLM_LOCAL_MODEL_COST_MAP"} <= set(names)
    crm_log = (run_dir / "logs" / "crmarena.log").read_text()
    assert "base http://127.0.0.1:9/v1" in crm_log
    assert (run_dir / "native" / "benchforce" / "hospital.txt").read_text().strip() == (
        BENCHFORCE_STDOUT.strip()
    )

    captured = capsys.readouterr()
    assert "crmarena: finished in" in captured.err
    assert "locobench: FAILED in" in captured.err and "exit status 1" in captured.err
    assert "Failed benchmark userbench: timed out" in captured.out
    assert f"EGI {EXPECTED_EGI:.2f}  (partial" in captured.out

    # A run's raw results rescore like an import's, without running anything again.
    rescore = ["report", "--rescore", "--model", "gpt-4o", "--mode", "quick", "--format", "json"]
    dirs = ["--results-dir", str(tmp_path / "agg"), "--raw-dir", str(tmp_path / "raw")]
    assert cli.main([*rescore, *dirs]) == 0
    rescored = json.loads(capsys.readouterr().out)
    assert rescored["egi"] == pytest.approx(EXPECTED_EGI)
    assert rescored["rescored_from"] == str(run_dir)
    assert {f["benchmark"] for f in rescored["failed"]} == set(failed)


def test_run_passes_the_proxy_key_and_set_env_to_the_harness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITELLM_MASTER_KEY", "sk-test-proxy-key")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    reg = registry(tmp_path)
    assert run(tmp_path, reg, "--benchmarks", "crmarena", "--budget-minutes", "4") == 0
    (run_dir,) = (tmp_path / "raw").iterdir()
    log = (run_dir / "logs" / "crmarena.log").read_text()
    assert "key sk-test-proxy-key" in log
    config = json.loads((run_dir / "config.json").read_text())
    # --budget-minutes 4: one task per category.
    assert config["benchmarks"]["crmarena"]["subset"]["total_tasks"] == 4
    assert config["budget_minutes_override"] == 4
    assert "sk-test-proxy-key" not in (run_dir / "config.json").read_text()


def test_run_where_every_harness_fails_exits_1_and_stores_no_aggregate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reg = registry(tmp_path)
    assert run(tmp_path, reg, "--benchmarks", "locobench,mcpeval") == 1
    assert not (tmp_path / "agg").exists()
    (run_dir,) = (tmp_path / "raw").iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert {e["status"] for e in manifest["benchmarks"].values()} == {"failed"}
    assert "every harness failed" in capsys.readouterr().err


def test_a_missing_workdir_fails_only_that_benchmark(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    (tmp_path / "scripts" / "crm.py").rename(tmp_path / "crm.py")
    (tmp_path / "scripts").rename(tmp_path / "moved")
    reg.write_text(reg.read_text().replace(str(tmp_path / "scripts"), str(tmp_path / "moved")))
    assert run(tmp_path, reg, "--benchmarks", "crmarena", "benchforce") == 0
    (artifact_path,) = (tmp_path / "agg").glob("*.json")
    (failure,) = json.loads(artifact_path.read_text())["failed"]
    assert failure["benchmark"] == "crmarena"
    assert "workdir" in failure["error"] and "egi-bench setup" in failure["error"]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--benchmarks", "nope"], "--benchmarks 'nope'"),
        (["--max-workers", "2"], "--max-workers applies only with --parallel"),
        (["--parallel", "--max-workers", "0"], "--max-workers 0"),
        (["--budget-minutes", "0"], "--budget-minutes 0"),
    ],
)
def test_run_user_errors_exit_2_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    assert run(tmp_path, registry(tmp_path), *argv) == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1
    assert not (tmp_path / "raw").exists()


def test_run_refuses_a_registered_benchmark_without_an_importer_or_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reg = tmp_path / "h.yaml"
    reg.write_text("benchmarks:\n  mystery: {command: x, output: y}\n  herb: {command: x}\n")
    assert run(tmp_path, reg, "--benchmarks", "mystery") == 2
    assert "benchmarks.mystery: no importer" in capsys.readouterr().err
    assert run(tmp_path, reg, "--benchmarks", "herb") == 2
    assert "benchmarks.herb.output: missing" in capsys.readouterr().err


# --- setup -----------------------------------------------------------------------------------


def test_setup_runs_each_harness_steps_in_its_workdir_and_reports_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EGI_TEST_MISSING_KEY", raising=False)
    py = sys.executable
    reg = tmp_path / "h.yaml"
    reg.write_text(
        textwrap.dedent(
            f"""\
            benchmarks:
              crmarena:
                workdir: work/crm
                command: "{py} run.py"
                env: [EGI_TEST_MISSING_KEY]
                setup:
                  - run: "{py} -c \\"import os; os.mkdir('crm'); open('parent-cwd', 'w')\\""
                    creates: crm
                  - "{py} -c \\"open('{{workdir}}/installed', 'w').write('ok')\\""
                data:
                  - "{py} -c \\"open('{{workdir}}/data', 'w').write('ok')\\""
              herb:
                workdir: work/herb
                command: "{py} rag.py"
                setup:
                  - "{py} -c \\"raise SystemExit(3)\\""
                  - "{py} -c \\"open('never', 'w')\\""
              locobench:
                command: no-such-program-egi evaluate
            """
        ),
        encoding="utf-8",
    )
    argv = ["setup", "--results-dir", str(tmp_path / "agg"), "--raw-dir", str(tmp_path / "raw")]
    assert cli.main([*argv, "--harnesses", str(reg), "--skip-data"]) == 1
    out = capsys.readouterr().out
    crm = tmp_path / "work" / "crm"
    assert (crm / "installed").read_text() == "ok" and not (crm / "data").exists()
    assert (tmp_path / "work" / "parent-cwd").exists()  # steps run in the workdir's parent
    assert not (tmp_path / "work" / "never").exists()
    assert (tmp_path / "agg").is_dir() and (tmp_path / "raw").is_dir()
    assert "[1/3] crmarena: ready" in out
    assert f"workdir: {crm} created by the setup steps" in out
    assert "data: skipped (1 step(s))" in out
    assert "missing environment (needed at run time): EGI_TEST_MISSING_KEY" in out
    assert "[2/3] herb: NOT ready" in out and "setup: FAILED, exit status 3" in out
    assert "missing: workdir" in out
    assert "[3/3] locobench: NOT ready" in out
    assert "missing: program 'no-such-program-egi'" in out

    assert cli.main([*argv, "--harnesses", str(reg), "--benchmarks", "crmarena"]) == 0
    out = capsys.readouterr().out
    assert f"workdir: {crm} exists" in out and (crm / "data").read_text() == "ok"
    assert f"setup: skipped, {crm} exists" in out


def test_doctor_reads_the_shipped_registry(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["doctor", "--harnesses", str(DEFAULT_REGISTRY)]) == 0
    out = capsys.readouterr().out
    assert "crmarena: OPENAI_API_KEY" in out
