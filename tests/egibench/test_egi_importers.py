"""Importers of the EGI-Bench constituents' native result files (egibench/importers.py).

Every fixture is written here, in the test, to the format the benchmark's own writer code
produces (shared/research/egi-constituents.md); expected values are worked out by hand.
"""

from __future__ import annotations

import io
import json
import os
import pickle
from pathlib import Path
from typing import Any

import pytest
import yaml

from egibench.importers import (
    CRMARENA_TASK_TYPES,
    IMPORTERS,
    BenchmarkFileError,
    import_benchforce,
    import_crmarena,
    import_herb,
    import_locobench,
    import_mcp_universe,
    import_mcpeval,
    import_personabench,
    import_results,
    import_userbench,
    load_pickle_plain,
)

ROOT = Path(__file__).resolve().parents[2]


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_pickle(path: Path, data: Any) -> Path:
    path.write_bytes(pickle.dumps(data))
    return path


def assert_names(error: pytest.ExceptionInfo[BenchmarkFileError], path: Path, key: str) -> None:
    assert error.value.path == path
    assert error.value.key == key
    assert str(path) in str(error.value)
    assert key in str(error.value)


# --- CRMArena ------------------------------------------------------------------------------


def crm_task(task_id: int, task_type: str, reward: Any) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "task_type": task_type,
        "gt_answer": "x",
        "reward": reward,
        "agent_info": {"usage": {}, "total_cost": 0.01, "num_turns": 3},
        "traj": [],
    }


def test_crmarena_accuracy_is_the_mean_reward_per_task_type(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "results_m_react_all.json",
        [
            crm_task(1, "case_routing", 1),
            crm_task(2, "case_routing", 0),
            crm_task(3, "case_routing", 1),
            crm_task(4, "knowledge_qa", 0.5),  # KQA rewards are token F1, not 0/1
            crm_task(5, "knowledge_qa", 0.25),
            crm_task(6, "policy_violation_identification", 0),
        ],
    )
    # NCR = (1 + 0 + 1) / 3; KQA = (0.5 + 0.25) / 2; PVI = 0 / 1 (a real zero, from data)
    assert import_crmarena(path) == pytest.approx(
        {"case_routing": 2 / 3, "knowledge_qa": 0.375, "policy_violation_identification": 0.0}
    )


def test_crmarena_reads_a_directory_of_per_category_runs(tmp_path: Path) -> None:
    write_json(tmp_path / "results_m_react_handle_time.json", [crm_task(1, "handle_time", 1)])
    write_json(tmp_path / "results_m_react_transfer_count.json", [crm_task(2, "transfer_count", 0)])
    assert import_crmarena(tmp_path) == {"handle_time": 1.0, "transfer_count": 0.0}


def test_crmarena_refuses_a_task_counted_in_two_files(tmp_path: Path) -> None:
    write_json(tmp_path / "results_a.json", [crm_task(7, "handle_time", 1)])
    second = write_json(tmp_path / "results_b.json", [crm_task(7, "handle_time", 1)])
    with pytest.raises(BenchmarkFileError) as error:
        import_crmarena(tmp_path)
    assert_names(error, second, "[0].task_id")


@pytest.mark.parametrize(
    ("task", "key"),
    [
        ({"task_id": 2, "task_type": "case_routing"}, "[1].reward"),
        (crm_task(2, "case_routing", "1"), "[1].reward"),
        (crm_task(2, "case_routing", True), "[1].reward"),
        (crm_task(2, "case_routing", 1.5), "[1].reward"),
        (crm_task(2, "lead_qualification", 1), "[1].task_type"),
        ({"task_type": "case_routing", "reward": 1}, "[1].task_id"),
    ],
)
def test_crmarena_names_the_task_and_key_at_fault(
    tmp_path: Path, task: dict[str, Any], key: str
) -> None:
    path = write_json(tmp_path / "results.json", [crm_task(1, "case_routing", 1), task])
    with pytest.raises(BenchmarkFileError) as error:
        import_crmarena(path)
    assert_names(error, path, key)


def test_crmarena_refuses_an_empty_run_rather_than_scoring_zero(tmp_path: Path) -> None:
    path = write_json(tmp_path / "results.json", [])
    with pytest.raises(BenchmarkFileError, match="empty"):
        import_crmarena(path)


# --- HERB ----------------------------------------------------------------------------------

HERB_ANSWERABLE: dict[str, Any] = {
    "question": ["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"],
    "answer": ["a"] * 8,
    "ground_truth": ["g"] * 8,
    "citations": [[]] * 8,
    "type": ["person", "person", "url", "pr", "company", "content", "content", "content"],
    # evaluate.py: F1 × 100 for entity types, Likert 0–100 for content
    "gpt4-correctness": [100.0, 50.0, 0.0, 200 / 3, 100.0, 80, 70, -1],
    "gpt4-correctness-avg": 66.0,
    "time": 12.5,
}
HERB_UNANSWERABLE: dict[str, Any] = {
    "question": ["u1", "u2", "u3", "u4"],
    "answer": ["I don't know", "Paris", None, "no information"],
    "unanswerable_results": [
        {"q": "u1", "a": "I don't know", "s": 1},
        {"q": "u2", "a": "Paris", "s": 0},
        {"q": "u3", "a": "unanswered", "s": 1},
        {"q": "u4", "a": "no information", "s": 1},
    ],
}


def test_herb_recomputes_entity_f1_and_content_from_type_and_scores(tmp_path: Path) -> None:
    path = write_pickle(tmp_path / "emb-m-1-ans.pk", HERB_ANSWERABLE)
    # per entity: person (100 + 50) / 2 = 75; url 0; pr 200/3, kept apart from url;
    # company 100 → entity_f1 = (75 + 0 + 200/3 + 100) / 4 = 725/12 ≈ 60.42
    # (pooling the five questions instead would give 316.67 / 5 = 63.33).
    # content (80 + 70) / 2 = 75, the -1 left out as evaluate.py leaves it out of its average
    assert import_herb(path) == pytest.approx({"entity_f1": 725 / 12, "content_correctness": 75.0})


def test_herb_null_rate_is_the_share_of_declined_unanswerable_questions(tmp_path: Path) -> None:
    path = write_pickle(tmp_path / "emb-m-1-unans.pk", HERB_UNANSWERABLE)
    # s = 1, 0, 1, 1 → 3 / 4
    assert import_herb(path) == {"unanswerable_null_rate": 0.75}


def test_herb_reads_the_answerable_and_unanswerable_pickles_of_a_directory(
    tmp_path: Path,
) -> None:
    write_pickle(tmp_path / "emb-m-1-ans.pk", HERB_ANSWERABLE)
    write_pickle(tmp_path / "emb-m-1-unans.pk", HERB_UNANSWERABLE)
    result = import_herb(tmp_path)
    assert result["unanswerable_null_rate"] == 0.75
    assert result["content_correctness"] == 75.0
    assert set(result) == {"entity_f1", "content_correctness", "unanswerable_null_rate"}


def test_herb_refuses_two_answerable_pickles_in_one_directory(tmp_path: Path) -> None:
    write_pickle(tmp_path / "emb-a-1-ans.pk", HERB_ANSWERABLE)
    write_pickle(tmp_path / "emb-b-1-ans.pk", HERB_ANSWERABLE)
    with pytest.raises(BenchmarkFileError, match="more than one answerable result"):
        import_herb(tmp_path)


def test_herb_refuses_a_pickle_evaluate_py_has_not_scored(tmp_path: Path) -> None:
    unscored = {k: v for k, v in HERB_ANSWERABLE.items() if not k.startswith("gpt4")}
    path = write_pickle(tmp_path / "emb-m-1-ans.pk", unscored)
    with pytest.raises(BenchmarkFileError, match=r"evaluate\.py") as error:
        import_herb(path)
    assert_names(error, path, "gpt4-correctness")


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"gpt4-correctness": [100.0]}, "gpt4-correctness"),
        ({"gpt4-correctness": [100.0, "50", 0, 0, 0, 0, 0, 0]}, "gpt4-correctness[1]"),
        ({"gpt4-correctness": [100.0, 101.0, 0, 0, 0, 0, 0, 0]}, "gpt4-correctness[1]"),
        ({"type": ["person", "email", *HERB_ANSWERABLE["type"][2:]]}, "type[1]"),
    ],
)
def test_herb_names_the_key_of_a_bad_score(
    tmp_path: Path, change: dict[str, Any], key: str
) -> None:
    path = write_pickle(tmp_path / "emb-m-1-ans.pk", {**HERB_ANSWERABLE, **change})
    with pytest.raises(BenchmarkFileError) as error:
        import_herb(path)
    assert_names(error, path, key)


def test_herb_refuses_a_null_flag_other_than_zero_or_one(tmp_path: Path) -> None:
    rows = [{"q": "u1", "a": "x", "s": 1}, {"q": "u2", "a": "y", "s": 0.5}]
    path = write_pickle(tmp_path / "emb-m-1-unans.pk", {"unanswerable_results": rows})
    with pytest.raises(BenchmarkFileError) as error:
        import_herb(path)
    assert_names(error, path, "unanswerable_results[1].s")


class RunsCode:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def test_a_pickle_that_would_run_code_is_refused_before_it_runs(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "emb-m-1-ans.pk"
    path.write_bytes(pickle.dumps({"type": ["person"], "gpt4-correctness": [RunsCode(marker)]}))
    with pytest.raises(BenchmarkFileError, match=r"refused.*'(posix|nt)\.system'") as error:
        import_herb(path)
    assert error.value.path == path
    assert not marker.exists()
    pickle.loads(path.read_bytes())  # control: the stock unpickler does run it
    assert marker.exists()


class Response:
    """Stands in for the llama-index Response object rag.py may pickle as an answer."""

    def __init__(self, response: str) -> None:
        self.response = response


def test_a_pickled_object_is_refused_naming_its_class(tmp_path: Path) -> None:
    path = write_pickle(tmp_path / "emb-m-1-unans.pk", {"answer": [Response("Paris")]})
    with pytest.raises(BenchmarkFileError, match=r"test_egi_importers\.Response"):
        import_herb(path)


def test_plain_containers_load_without_any_global(tmp_path: Path) -> None:
    data = {"a": [1, 2.5, True, None, "x", (3, 4)], "b": {"c": -7}}
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        path = tmp_path / f"plain{protocol}.pk"
        path.write_bytes(pickle.dumps(data, protocol=protocol))
        assert load_pickle_plain(path) == data


def test_a_file_that_is_not_a_pickle_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "emb-m-1-ans.pk"
    path.write_bytes(b"not a pickle")
    with pytest.raises(BenchmarkFileError, match="not a readable pickle") as error:
        import_herb(path)
    assert error.value.path == path


# --- PersonaBench --------------------------------------------------------------------------


def persona_categories(recall: float) -> dict[str, Any]:
    cats = [
        "Overall",
        "Basic_information_easy",
        "Preference_easy",
        "Preference_hard",
        "Social_easy",
    ]
    scores = {c: {"ave_precision": 0.9, "ave_recall": recall, "ave_f1": 0.1} for c in cats}
    scores["Preference_hard"]["ave_recall"] = recall / 2
    return {**scores, "outdated_information": {"ave_recall": 0.05}}


def persona_level(noise: float, by_model: dict[str, float]) -> dict[str, Any]:
    return {
        "Noise": noise,
        "Statistics": {
            "end2end_eval": {name: persona_categories(r) for name, r in by_model.items()},
            "retrieval_eval": {"all-MiniLM-L6-v2": {"Overall": {"ave_recall": 0.3}}},
        },
    }


def test_personabench_averages_recall_over_noise_levels_and_question_types(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "statistics_all_noises.json",
        [
            persona_level(0.0, {"gpt-4o+gt-context": 0.8}),
            persona_level(0.3, {"gpt-4o+gt-context": 0.6}),
        ],
    )
    # cells (ave_recall): noise 0.0 → 0.8, 0.8, 0.4, 0.8; noise 0.3 → 0.6, 0.6, 0.3, 0.6;
    # Overall (0.8 / 0.6) and outdated_information (0.05) are not types and not read.
    # mean = (0.8 + 0.8 + 0.4 + 0.8 + 0.6 + 0.6 + 0.3 + 0.6) / 8 = 4.9 / 8 = 0.6125
    assert import_personabench(path) == pytest.approx({"qa_accuracy": 0.6125})


def test_personabench_needs_the_model_when_the_file_holds_several(tmp_path: Path) -> None:
    models = {"gpt-4o+gt-context": 0.8, "gpt-4o+all-MiniLM-L6-v2": 0.5}
    path = write_json(tmp_path / "statistics_all_noises.json", [persona_level(0.7, models)])
    with pytest.raises(BenchmarkFileError, match="pass model=") as error:
        import_personabench(path)
    assert_names(error, path, "[0].Statistics.end2end_eval")
    chosen = import_personabench(path, model="gpt-4o+all-MiniLM-L6-v2")
    # the chosen model's cells: 0.5, 0.5, 0.25, 0.5 → 1.75 / 4
    assert chosen == pytest.approx({"qa_accuracy": 0.4375})


def test_personabench_names_a_missing_recall(tmp_path: Path) -> None:
    level = persona_level(0.5, {"m+r": 0.8})
    del level["Statistics"]["end2end_eval"]["m+r"]["Social_easy"]["ave_recall"]
    path = write_json(tmp_path / "statistics_all_noises.json", [level])
    with pytest.raises(BenchmarkFileError) as error:
        import_personabench(path)
    assert_names(error, path, "[0].Statistics.end2end_eval.m+r.Social_easy.ave_recall")


# --- UserBench -----------------------------------------------------------------------------

USERBENCH_STATS = {"micro_max": 0.9, "avg_number_of_08": 0.5, "avg_number_of_1": 0.3}


def test_userbench_averages_micro_avg_over_environments(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "results_run.json",
        {
            "travel22": {"1": {"micro_avg": 0.61, **USERBENCH_STATS}},
            "travel33": {"1": {"micro_avg": 0.42, **USERBENCH_STATS}},
        },
    )
    # (0.61 + 0.42) / 2
    assert import_userbench(path) == pytest.approx({"micro_avg": 0.515})


def test_userbench_names_a_missing_micro_avg(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "results_run.json",
        {"travel22": {"1": {"micro_avg": 0.61}}, "travel33": {"1": USERBENCH_STATS}},
    )
    with pytest.raises(BenchmarkFileError) as error:
        import_userbench(path)
    assert_names(error, path, "travel33.1.micro_avg")


def test_userbench_refuses_an_ambiguous_pass_k(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "results_run.json",
        {"travel44": {"1": {"micro_avg": 0.5}, "3": {"micro_avg": 0.7}}},
    )
    with pytest.raises(BenchmarkFileError, match="one pass_k entry") as error:
        import_userbench(path)
    assert_names(error, path, "travel44")


# --- MCP-Universe ---------------------------------------------------------------------------


def mcp_row(task: str, passed: int, failed: int) -> str:
    # report.py's f-string continues its line with "\", keeping the next line's indent
    pad = " " * 35
    score = passed / (passed + failed)
    return f"|**{task}**:| {pad}{passed} | {pad}{failed} | {pad}{score:.2f} | {pad}7 |"


def mcp_report(rows: list[str]) -> str:
    return "\n".join(
        [
            "## Benchmark Config\n",
            "**Benchmark description:** financial analysis\n",
            "**LLM:** openai: gpt-4o\n",
            "## Benchmark Summary",
            "| Name | Passed | Not Passed | Score | LLM Calls |\n"
            "| ---  | ------ | ---------- | ----- | --------- |",
            *rows,
            "## Appendix (Benchmark Details)",
            "### Task",
            "- config: financial_analysis/yfinance_task_0001.json",
            '    - Passed? <span color="green">True<span>',
        ]
    )


def test_mcp_universe_pass_rate_counts_tasks_whose_evaluators_all_passed(tmp_path: Path) -> None:
    path = tmp_path / "report_20250101_120000_abc.md"
    path.write_text(
        mcp_report(
            [
                mcp_row("financial_analysis/yfinance_task_0001.json", 3, 0),
                mcp_row("financial_analysis/yfinance_task_0002.json", 2, 1),
                mcp_row("financial_analysis/yfinance_task_0003.json", 1, 0),
                mcp_row("web_search/info_search_task_0001.json", 0, 2),
            ]
        ),
        encoding="utf-8",
    )
    # financial_analysis: tasks 1 and 3 pass all evaluators, task 2 fails one → 2 / 3;
    # web_search: 0 / 1
    assert import_mcp_universe(path) == pytest.approx(
        {"pass_rate_financial_analysis": 2 / 3, "pass_rate_web_search": 0.0}
    )


def test_mcp_universe_reads_a_directory_of_reports(tmp_path: Path) -> None:
    rows_a = [mcp_row("location_navigation/task_0001.json", 2, 0)]
    rows_b = [mcp_row("location_navigation/task_0002.json", 1, 1)]
    (tmp_path / "report_a.md").write_text(mcp_report(rows_a), encoding="utf-8")
    (tmp_path / "report_b.md").write_text(mcp_report(rows_b), encoding="utf-8")
    assert import_mcp_universe(tmp_path) == {"pass_rate_location_navigation": 0.5}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (mcp_row("yfinance_task_0001.json", 1, 0), "no domain folder"),
        ("|**financial_analysis/t.json**:| 1 | x | 1.00 | 3 |", "not of the form"),
        ("|**financial_analysis/t.json**:| 0 | 0 | 0.00 | 3 |", "no evaluator"),
    ],
)
def test_mcp_universe_names_the_line_of_a_bad_row(tmp_path: Path, row: str, message: str) -> None:
    path = tmp_path / "report_x.md"
    path.write_text(mcp_report([row]), encoding="utf-8")
    with pytest.raises(BenchmarkFileError, match=message) as error:
        import_mcp_universe(path)
    assert_names(error, path, "line 10")  # after the config and table header lines


def test_mcp_universe_refuses_a_report_without_task_rows(tmp_path: Path) -> None:
    path = tmp_path / "report_x.md"
    path.write_text(mcp_report([]), encoding="utf-8")
    with pytest.raises(BenchmarkFileError, match="no task row"):
        import_mcp_universe(path)


# --- MCPEval -------------------------------------------------------------------------------


def mcpeval_summary(flexible: float) -> dict[str, Any]:
    return {
        "summary": {
            "total_tasks": 62,
            "tasks_with_matching_tools": 20,
            "exact_match": {"tasks_with_complete_success": 13, "average_overall_score": 0.314},
            "flexible_match": {
                "tasks_with_complete_success": 18,
                "average_overall_score": flexible,
            },
            "weights": {"name": 0.4, "params": 0.4, "order": 0.2},
        },
        "parameter_mismatches": {},
        "tool_usage": {},
        "success_patterns": {},
    }


def test_mcpeval_averages_the_flexible_score_over_domains(tmp_path: Path) -> None:
    name = "gpt-4o_mix_task_evaluation_summary_analysis.json"
    write_json(tmp_path / "healthcare" / "results" / name, mcpeval_summary(0.3161))
    write_json(tmp_path / "sports" / "results" / name, mcpeval_summary(0.5))
    # (0.3161 + 0.5) / 2
    assert import_mcpeval(tmp_path) == pytest.approx({"flexible_average_score": 0.40805})


def test_mcpeval_refuses_two_summaries_for_one_domain(tmp_path: Path) -> None:
    write_json(tmp_path / "sports" / "results" / "a_summary_analysis.json", mcpeval_summary(0.1))
    write_json(tmp_path / "sports" / "results" / "b_summary_analysis.json", mcpeval_summary(0.9))
    with pytest.raises(BenchmarkFileError, match="second summary for domain 'sports'"):
        import_mcpeval(tmp_path)


def test_mcpeval_names_a_missing_flexible_score(tmp_path: Path) -> None:
    summary = mcpeval_summary(0.5)
    del summary["summary"]["flexible_match"]
    path = write_json(tmp_path / "airbnb" / "results" / "m_summary_analysis.json", summary)
    with pytest.raises(BenchmarkFileError) as error:
        import_mcpeval(path)
    assert_names(error, path, "summary.flexible_match.average_overall_score")


def test_mcpeval_refuses_a_file_outside_the_domain_layout(tmp_path: Path) -> None:
    path = write_json(tmp_path / "m_summary_analysis.json", mcpeval_summary(0.5))
    with pytest.raises(BenchmarkFileError, match="cannot tell the domain"):
        import_mcpeval(path)


# --- Benchforce ----------------------------------------------------------------------------

BENCHFORCE_STDOUT = """\
Session 3f2a… finished (benchforce.terminate)
     metric            parameter  value
0  accuracy        Total entries   10.0
1  accuracy     Finished entries    8.0
2  accuracy       Accuracy (All)    0.4
3  accuracy  Accuracy (Finished)    0.6
"""


def test_benchforce_averages_accuracy_and_finished_share_over_environments(tmp_path: Path) -> None:
    (tmp_path / "hospital.txt").write_text(BENCHFORCE_STDOUT, encoding="utf-8")
    (tmp_path / "hr_software.txt").write_text(
        BENCHFORCE_STDOUT.replace("0.4\n", "0.5\n"), encoding="utf-8"
    )
    # accuracy_all (0.4 + 0.5) / 2; accuracy_finished (0.6 + 0.6) / 2;
    # finished_ratio (8/10 + 8/10) / 2. The routing's gap is then 0.6 − 0.45 = 0.15.
    assert import_benchforce(tmp_path) == pytest.approx(
        {"accuracy_all": 0.45, "accuracy_finished": 0.6, "finished_ratio": 0.8}
    )


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (
            BENCHFORCE_STDOUT.replace("3  accuracy  Accuracy (Finished)    0.6\n", ""),
            "Accuracy (Finished)",
        ),
        (BENCHFORCE_STDOUT + "3  accuracy  Accuracy (Finished)    0.6\n", "Accuracy (Finished)"),
        (BENCHFORCE_STDOUT.replace("0.4", "n/a"), "Accuracy (All)"),
        (BENCHFORCE_STDOUT.replace("8.0", "12.0"), "Finished entries"),
        ("0  accuracy  accuracy_error  division by zero\n", "accuracy_error"),
    ],
)
def test_benchforce_names_the_row_at_fault(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "hospital.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BenchmarkFileError) as error:
        import_benchforce(path)
    assert_names(error, path, key)


# --- LoCoBench -----------------------------------------------------------------------------


def loco_summary(fc: float, completed: int = 8) -> dict[str, Any]:
    return {
        "total_scenarios": 10,
        "completed_scenarios": completed,
        "failed_scenarios": 10 - completed,
        "avg_software_engineering_score": 0.7,
        "avg_functional_correctness_score": fc,
        "avg_code_quality_score": 0.8,
        "avg_longcontext_utilization_score": 0.55,
        "avg_total_score": 3.4,
        "category_results": {},
    }


def loco_file(tmp_path: Path, summaries: dict[str, Any]) -> Path:
    document = {
        "metadata": {},
        "configuration": {},
        "analysis": {},
        "summaries": summaries,
        "detailed_results": {},
        "scenario_lookup": {},
    }
    return write_json(tmp_path / "gpt-4o_all_all_20250101_evaluation_results.json", document)


def test_locobench_reads_the_four_dimension_averages(tmp_path: Path) -> None:
    path = loco_file(tmp_path, {"gpt-4o": loco_summary(0.6)})
    assert import_locobench(path) == {
        "functional_correctness": 0.6,
        "software_engineering": 0.7,
        "code_quality": 0.8,
        "longcontext_utilization": 0.55,
    }


def test_locobench_needs_the_model_when_the_file_holds_several(tmp_path: Path) -> None:
    path = loco_file(tmp_path, {"gpt-4o": loco_summary(0.6), "claude": loco_summary(0.9)})
    with pytest.raises(BenchmarkFileError, match="2 models"):
        import_locobench(path)
    assert import_locobench(path, model="claude")["functional_correctness"] == 0.9
    with pytest.raises(BenchmarkFileError) as error:
        import_locobench(path, model="gemini")
    assert_names(error, path, "summaries.gemini")


def test_locobench_refuses_a_run_with_no_completed_scenario(tmp_path: Path) -> None:
    path = loco_file(tmp_path, {"gpt-4o": loco_summary(0.0, completed=0)})
    with pytest.raises(BenchmarkFileError) as error:
        import_locobench(path)
    assert_names(error, path, "summaries.gpt-4o.completed_scenarios")


def test_locobench_names_a_missing_dimension(tmp_path: Path) -> None:
    summary = loco_summary(0.6)
    del summary["avg_code_quality_score"]
    path = loco_file(tmp_path, {"gpt-4o": summary})
    with pytest.raises(BenchmarkFileError) as error:
        import_locobench(path)
    assert_names(error, path, "summaries.gpt-4o.avg_code_quality_score")


# --- registry ------------------------------------------------------------------------------


def test_the_registry_has_one_importer_per_benchmark() -> None:
    assert set(IMPORTERS) == {
        "crmarena",
        "herb",
        "personabench",
        "userbench",
        "mcp_universe",
        "mcpeval",
        "benchforce",
        "locobench",
    }


def test_import_results_dispatches_by_benchmark_name(tmp_path: Path) -> None:
    path = write_json(tmp_path / "results_run.json", {"travel22": {"1": {"micro_avg": 0.25}}})
    assert import_results("userbench", path) == {"micro_avg": 0.25}


def test_import_results_refuses_an_unknown_benchmark(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="benchmark: unknown benchmark 'tau_bench'"):
        import_results("tau_bench", tmp_path)


@pytest.mark.parametrize("benchmark", ["crmarena", "personabench", "userbench", "locobench"])
def test_a_file_that_is_not_json_is_an_error_naming_it(tmp_path: Path, benchmark: str) -> None:
    path = tmp_path / "results_x.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(BenchmarkFileError, match="not valid JSON") as error:
        import_results(benchmark, path)
    assert error.value.path == path


@pytest.mark.parametrize("benchmark", sorted(IMPORTERS))
def test_a_missing_path_is_an_error_naming_it(tmp_path: Path, benchmark: str) -> None:
    path = tmp_path / "absent"
    with pytest.raises(BenchmarkFileError) as error:
        import_results(benchmark, path)
    assert error.value.path == path


def test_the_importers_write_exactly_the_keys_the_default_routing_reads(tmp_path: Path) -> None:
    routing = yaml.safe_load((ROOT / "egibench" / "routing.yaml").read_text(encoding="utf-8"))
    routed = {
        (route["benchmark"], key)
        for route in routing["routes"]
        for key in route.get("difference_of") or [route["sub_metric"]]
    }
    crm = write_json(
        tmp_path / "crm" / "results_all.json",
        [crm_task(i, t, 1) for i, t in enumerate(CRMARENA_TASK_TYPES)],
    )
    herb = tmp_path / "herb"
    herb.mkdir()
    write_pickle(herb / "e-m-1-ans.pk", HERB_ANSWERABLE)
    write_pickle(herb / "e-m-1-unans.pk", HERB_UNANSWERABLE)
    persona = write_json(tmp_path / "p.json", [persona_level(0.0, {"m+r": 0.5})])
    user = write_json(tmp_path / "u.json", {"travel22": {"1": {"micro_avg": 0.5}}})
    mcp = tmp_path / "report_x.md"
    domains = ("financial_analysis", "web_search", "location_navigation")
    mcp.write_text(mcp_report([mcp_row(f"{d}/t.json", 1, 0) for d in domains]), encoding="utf-8")
    mcpeval = write_json(
        tmp_path / "d" / "results" / "m_summary_analysis.json", mcpeval_summary(0.5)
    )
    bench = tmp_path / "hospital.txt"
    bench.write_text(BENCHFORCE_STDOUT, encoding="utf-8")
    loco = loco_file(tmp_path, {"m": loco_summary(0.5)})
    paths = {
        "crmarena": crm,
        "herb": herb,
        "personabench": persona,
        "userbench": user,
        "mcp_universe": mcp,
        "mcpeval": mcpeval,
        "benchforce": bench,
        "locobench": loco,
    }
    written = {(name, key) for name, path in paths.items() for key in import_results(name, path)}
    assert written == routed


# --- the formats the upstream writers really produce (issue 20) ---------------------------


def kqa_reward(f1: float) -> dict[str, Any]:
    # CRMArena's fuzzy-match reward as a dict of metrics (get_all_metrics)
    return {"em": 0, "f1": f1, "bleu": 0.1, "rouge": {"rouge1": 0.5, "rougeL": 0.4}}


def test_crmarena_reads_the_f1_of_a_dict_reward(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "results_m_react_knowledge_qa.json",
        [
            crm_task(1, "knowledge_qa", kqa_reward(0.4)),
            crm_task(2, "knowledge_qa", kqa_reward(0.9)),
            crm_task(3, "knowledge_qa", 0.2),  # a float reward beside them
        ],
    )
    # (0.4 + 0.9 + 0.2) / 3 = 0.5: F1, not em (0) nor bleu (0.1)
    assert import_crmarena(path) == pytest.approx({"knowledge_qa": 0.5})


@pytest.mark.parametrize(
    ("reward", "key"),
    [
        ({"em": 1, "bleu": 0.2}, "[1].reward.f1"),
        ({"em": 1, "f1": "0.5"}, "[1].reward.f1"),
        ({"em": 1, "f1": 1.4}, "[1].reward.f1"),
    ],
)
def test_crmarena_names_a_bad_f1_in_a_dict_reward(
    tmp_path: Path, reward: dict[str, Any], key: str
) -> None:
    path = write_json(
        tmp_path / "results.json",
        [crm_task(1, "knowledge_qa", kqa_reward(0.5)), crm_task(2, "knowledge_qa", reward)],
    )
    with pytest.raises(BenchmarkFileError) as error:
        import_crmarena(path)
    assert_names(error, path, key)


def test_the_routing_file_says_kqa_reads_the_f1() -> None:
    text = (ROOT / "egibench" / "routing.yaml").read_text(encoding="utf-8")
    kqa = next(line for line in text.splitlines() if "sub_metric: knowledge_qa" in line)
    assert "F1" in kqa
    assert "f1" in text.split("routes:")[0]  # and the header explains the dict reward


def test_mcp_universe_takes_the_domain_from_the_task_path_not_the_report_folder(
    tmp_path: Path,
) -> None:
    # The domain YAMLs list tasks as mcpuniverse/<domain>/<task>.json; the report sits in log/.
    report = tmp_path / "log" / "report_20250101_120000_abc.md"
    report.parent.mkdir()
    report.write_text(
        mcp_report(
            [
                mcp_row("mcpuniverse/financial_analysis/yfinance_task_0001.json", 2, 0),
                mcp_row("mcpuniverse/financial_analysis/yfinance_task_0002.json", 1, 1),
                mcp_row("mcpuniverse/web_search/info_search_task_0001.json", 1, 0),
            ]
        ),
        encoding="utf-8",
    )
    assert import_mcp_universe(tmp_path) == pytest.approx(
        {"pass_rate_financial_analysis": 0.5, "pass_rate_web_search": 1.0}
    )


BENCHFORCE_RESULT = {
    "accuracy": {
        "total_entries": 10,
        "finished_entries": 8,
        "accuracy_all": 0.4,
        "accuracy_finished": 0.6,
    },
    "metadata": {"environment": "hospital", "entries": [-1], "saved_at": "2025-01-01T00:00:00Z"},
}


def rich_summary() -> str:
    """The melted table printed by rich itself (its default box), as a framed summary."""
    from rich.console import Console
    from rich.table import Table

    table = Table("metric", "parameter", "value")
    for parameter, value in (
        ("Total entries", "10"),
        ("Finished entries", "8"),
        ("Accuracy (All)", "0.4"),
        ("Accuracy (Finished)", "0.6"),
    ):
        table.add_row("accuracy", parameter, value)
    console = Console(record=True, width=100, file=io.StringIO())
    console.print(table)
    return "Evaluation results:\n" + console.export_text()


def test_benchforce_reads_a_summary_framed_with_box_drawing_characters(tmp_path: Path) -> None:
    text = rich_summary()
    assert "┃" in text and "│" in text  # the frame is there
    path = tmp_path / "hospital.txt"
    path.write_text(text, encoding="utf-8")
    assert import_benchforce(path) == pytest.approx(
        {"accuracy_all": 0.4, "accuracy_finished": 0.6, "finished_ratio": 0.8}
    )


def test_benchforce_reads_a_summary_framed_with_pipes(tmp_path: Path) -> None:
    rows = [line.split() for line in BENCHFORCE_STDOUT.splitlines()[2:]]
    text = "\n".join(
        f"| {r[1]} | {' '.join(r[2:-1])} | {r[-1]} |" for r in rows
    )  # | accuracy | Total entries | 10.0 |
    path = tmp_path / "hospital.txt"
    path.write_text(text, encoding="utf-8")
    assert import_benchforce(path)["finished_ratio"] == pytest.approx(0.8)


def test_benchforce_reads_the_json_result_instead_of_the_log(tmp_path: Path) -> None:
    path = write_json(tmp_path / "results" / "run-1" / "result.json", BENCHFORCE_RESULT)
    expected = {"accuracy_all": 0.4, "accuracy_finished": 0.6, "finished_ratio": 0.8}
    assert import_benchforce(path) == pytest.approx(expected)
    assert import_benchforce(tmp_path) == pytest.approx(expected)


def test_benchforce_counts_a_log_and_the_json_beside_it_as_one_run(tmp_path: Path) -> None:
    (tmp_path / "hospital.txt").write_text(BENCHFORCE_STDOUT, encoding="utf-8")
    write_json(tmp_path / "results" / "run-1" / "result.json", BENCHFORCE_RESULT)
    other = {
        "accuracy": {
            "total_entries": 4,
            "finished_entries": 2,
            "accuracy_all": 1.0,
            "accuracy_finished": 1.0,
        },
        "metadata": {"environment": "hr_software"},
    }
    write_json(tmp_path / "results" / "run-2" / "result.json", other)
    # hospital once (not twice): all (0.4 + 1.0)/2 = 0.7, finished (0.6 + 1.0)/2 = 0.8,
    # finished_ratio (8/10 + 2/4)/2 = 0.65
    assert import_benchforce(tmp_path) == pytest.approx(
        {"accuracy_all": 0.7, "accuracy_finished": 0.8, "finished_ratio": 0.65}
    )


def test_benchforce_refuses_a_log_that_disagrees_with_the_json_beside_it(tmp_path: Path) -> None:
    log = tmp_path / "hospital.txt"
    log.write_text(BENCHFORCE_STDOUT.replace("0.4\n", "0.3\n"), encoding="utf-8")
    result = write_json(tmp_path / "results" / "run-1" / "result.json", BENCHFORCE_RESULT)
    with pytest.raises(BenchmarkFileError) as error:
        import_benchforce(tmp_path)
    assert_names(error, log, "Accuracy (All)")
    assert str(result) in str(error.value)


def test_benchforce_refuses_two_json_runs_of_one_environment(tmp_path: Path) -> None:
    write_json(tmp_path / "results" / "a" / "result.json", BENCHFORCE_RESULT)
    second = write_json(tmp_path / "results" / "b" / "result.json", BENCHFORCE_RESULT)
    with pytest.raises(BenchmarkFileError, match="second run of environment 'hospital'") as error:
        import_benchforce(tmp_path)
    assert_names(error, second, "metadata.environment")


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda d: d["accuracy"].pop("finished_entries"), "accuracy.finished_entries"),
        (lambda d: d["accuracy"].update(accuracy_all="0.4"), "accuracy.accuracy_all"),
        (lambda d: d["accuracy"].update(finished_entries=11), "accuracy.finished_entries"),
        (lambda d: d.pop("accuracy"), "accuracy"),
        (lambda d: d.pop("metadata"), "metadata.environment"),
    ],
)
def test_benchforce_names_the_key_of_a_malformed_json_result(
    tmp_path: Path, change: Any, key: str
) -> None:
    data = json.loads(json.dumps(BENCHFORCE_RESULT))
    change(data)
    path = write_json(tmp_path / "result.json", data)
    with pytest.raises(BenchmarkFileError) as error:
        import_benchforce(path)
    assert_names(error, path, key)


def test_benchforce_reports_a_missing_row_before_an_unparseable_value_further_on(
    tmp_path: Path,
) -> None:
    # Finished entries is missing; Accuracy (All), printed after it, is not a number.
    text = BENCHFORCE_STDOUT.replace("1  accuracy     Finished entries    8.0\n", "")
    text = text.replace("0.4\n", "n/a\n")
    path = tmp_path / "hospital.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BenchmarkFileError, match="missing from the printed summary") as error:
        import_benchforce(path)
    assert_names(error, path, "Finished entries")


def test_benchforce_names_the_line_of_an_unparseable_value(tmp_path: Path) -> None:
    path = tmp_path / "hospital.txt"
    path.write_text(BENCHFORCE_STDOUT.replace("0.4\n", "n/a\n"), encoding="utf-8")
    with pytest.raises(BenchmarkFileError, match="not a number on line 5") as error:
        import_benchforce(path)
    assert_names(error, path, "Accuracy (All)")


def test_personabench_reads_the_base_model_of_its_one_retriever(tmp_path: Path) -> None:
    models = {"gpt-4o+all-MiniLM-L6-v2": 0.8, "gpt-4o-mini+all-MiniLM-L6-v2": 0.4}
    path = write_json(tmp_path / "statistics_all_noises.json", [persona_level(0.0, models)])
    # gpt-4o's cells: 0.8, 0.8, 0.4, 0.8 → 2.8 / 4 = 0.7
    assert import_personabench(path, model="gpt-4o") == pytest.approx({"qa_accuracy": 0.7})


def test_personabench_refuses_a_file_without_the_model_naming_both(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "statistics_all_noises.json",
        [persona_level(0.0, {"gpt-4o-mini+all-MiniLM-L6-v2": 0.4})],
    )
    with pytest.raises(BenchmarkFileError) as error:
        import_personabench(path, model="gpt-4o")
    message = str(error.value)
    assert "'gpt-4o'" in message and "gpt-4o-mini+all-MiniLM-L6-v2" in message
    assert "--file-model personabench=NAME" in message


def test_personabench_asks_which_retriever_when_the_model_has_two(tmp_path: Path) -> None:
    models = {"gpt-4o+all-MiniLM-L6-v2": 0.8, "gpt-4o+gt-context": 0.9}
    path = write_json(tmp_path / "statistics_all_noises.json", [persona_level(0.3, models)])
    with pytest.raises(BenchmarkFileError, match="2 entries for model 'gpt-4o'"):
        import_personabench(path, model="gpt-4o")
    assert import_personabench(path, model="gpt-4o+gt-context")["qa_accuracy"] == pytest.approx(
        (0.9 * 3 + 0.45) / 4
    )


def test_locobench_refuses_a_single_model_file_for_another_model(tmp_path: Path) -> None:
    path = loco_file(tmp_path, {"claude-sonnet-4": loco_summary(0.9)})
    with pytest.raises(BenchmarkFileError) as error:
        import_locobench(path, model="gpt-4o")
    assert_names(error, path, "summaries.gpt-4o")
    assert "claude-sonnet-4" in str(error.value)


# --- errors name the file inside a folder, deep nesting and huge numbers -------------------


@pytest.mark.parametrize(
    ("benchmark", "relative", "content", "key"),
    [
        ("userbench", "outputs/results_egi.json", {"travel22": {"1": {}}}, "travel22.1.micro_avg"),
        (
            "locobench",
            "evaluation_results/x_evaluation_results.json",
            {"summaries": {}},
            "summaries.gpt-4o",
        ),
        (
            "personabench",
            "logs/eval_data_v1/r/statistics_all_noises.json",
            [{"Noise": 0.0}],
            "[0].Statistics",
        ),
        ("crmarena", "results_gpt-4o_react_all.json", [{"task_id": 1}], "[0].task_type"),
        ("mcpeval", "airbnb/results/m_summary_analysis.json", {"summary": {}}, None),
    ],
)
def test_given_a_folder_the_error_names_the_file_inside_it(
    tmp_path: Path, benchmark: str, relative: str, content: Any, key: str | None
) -> None:
    inner = write_json(tmp_path / relative, content)
    with pytest.raises(BenchmarkFileError) as error:
        import_results(benchmark, tmp_path, model="gpt-4o")
    assert error.value.path == inner
    assert str(error.value).startswith(f"{inner}: ")
    if key is not None:
        assert error.value.key == key


def test_a_folder_holding_two_result_files_names_both(tmp_path: Path) -> None:
    write_json(tmp_path / "a" / "results_one.json", {"travel22": {"1": {"micro_avg": 0.1}}})
    write_json(tmp_path / "b" / "results_two.json", {"travel22": {"1": {"micro_avg": 0.2}}})
    with pytest.raises(BenchmarkFileError, match=r"2 results files \(a/results_one\.json, b/"):
        import_userbench(tmp_path)


@pytest.mark.parametrize(
    ("benchmark", "name"),
    [
        ("crmarena", "results_x.json"),
        ("personabench", "statistics_all_noises.json"),
        ("userbench", "results_x.json"),
        ("locobench", "x_evaluation_results.json"),
        ("herb", "e-m-1-ans.json"),
        ("benchforce", "result.json"),
    ],
)
def test_deeply_nested_json_is_refused_with_a_message_not_a_traceback(
    tmp_path: Path, benchmark: str, name: str
) -> None:
    path = tmp_path / name
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(BenchmarkFileError, match="nested deeper than 64 levels") as error:
        import_results(benchmark, path)
    assert error.value.path == path


def test_mcpeval_refuses_deep_nesting_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "airbnb" / "results" / "m_summary_analysis.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"summary": ' + "[" * 5000 + "]" * 5000 + "}", encoding="utf-8")
    with pytest.raises(BenchmarkFileError, match="nested deeper") as error:
        import_mcpeval(tmp_path)
    assert error.value.path == path


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "results_run.json",
        {"travel22": {"1": {"micro_avg": 0.25, "note": "[" * 500 + '\\"{' * 200}}},
    )
    assert import_userbench(path) == {"micro_avg": 0.25}


def test_a_deeply_nested_pickle_is_refused_with_a_message(tmp_path: Path) -> None:
    nested: Any = []
    for _ in range(200):
        nested = [nested]
    path = write_pickle(tmp_path / "e-m-1-ans.pk", {"type": nested})
    with pytest.raises(BenchmarkFileError, match="nested deeper than 64") as error:
        import_herb(path)
    assert error.value.path == path


@pytest.mark.parametrize("digits", [400, 5000])
def test_a_huge_number_is_refused_naming_the_file_and_key(tmp_path: Path, digits: int) -> None:
    path = tmp_path / "x_evaluation_results.json"
    summary = json.dumps(loco_summary(0.6)).replace(
        '"completed_scenarios": 8', '"completed_scenarios": ' + "9" * digits
    )
    path.write_text('{"summaries": {"gpt-4o": ' + summary + "}}", encoding="utf-8")
    with pytest.raises(BenchmarkFileError) as error:
        import_locobench(path)
    assert error.value.path == path and str(path) in str(error.value)
    # The project's JSON reader refuses an integer past 300 characters before Python parses
    # it (issue 17), naming where it stands in the file.
    assert "refused JSON (line 1, column 73" in str(error.value)
    assert f"an integer of {digits:,} characters is longer than 300 allowed" in str(error.value)


def test_a_huge_number_in_a_benchforce_summary_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "hospital.txt"
    path.write_text(BENCHFORCE_STDOUT.replace("0.4\n", "9" * 400 + "\n"), encoding="utf-8")
    with pytest.raises(BenchmarkFileError) as error:
        import_benchforce(path)
    assert_names(error, path, "Accuracy (All)")


def test_crmarena_reports_a_missing_key_before_an_unparseable_value_further_on(
    tmp_path: Path,
) -> None:
    path = write_json(
        tmp_path / "results.json",
        [
            crm_task(1, "case_routing", "one"),  # unparseable, first in the file
            {"task_id": 2, "task_type": "case_routing"},  # no reward, further on
        ],
    )
    with pytest.raises(BenchmarkFileError, match="missing") as error:
        import_crmarena(path)
    assert_names(error, path, "[1].reward")


def test_userbench_reports_a_missing_key_before_an_unparseable_value(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "results_run.json",
        {"travel22": {"1": {"micro_avg": "high"}}, "travel33": {"1": USERBENCH_STATS}},
    )
    with pytest.raises(BenchmarkFileError, match="missing") as error:
        import_userbench(path)
    assert_names(error, path, "travel33.1.micro_avg")


def test_locobench_reports_a_missing_key_before_an_unparseable_value(tmp_path: Path) -> None:
    summary = loco_summary(0.6)
    summary["avg_software_engineering_score"] = "n/a"
    del summary["avg_longcontext_utilization_score"]
    path = loco_file(tmp_path, {"gpt-4o": summary})
    with pytest.raises(BenchmarkFileError, match="missing") as error:
        import_locobench(path)
    assert_names(error, path, "summaries.gpt-4o.avg_longcontext_utilization_score")
