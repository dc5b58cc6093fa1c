"""HERB's conversion step (egibench/harness_steps/herb_to_json.py) and the importer reading it.

HERB's real pickles hold llama-index ``Response`` objects. Here a class defined in this test
stands in for that type: the pickles below are made of plain objects shaped like llama-index
responses, exactly as rag.py + evaluate.py leave them.
"""

from __future__ import annotations

import ast
import json
import math
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from egibench import harness
from egibench.aggregate import load_routing
from egibench.harness_steps import herb_to_json
from egibench.importers import BenchmarkFileError, import_herb, load_pickle_plain

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "egibench" / "harness_steps" / "herb_to_json.py"
HERE = Path(__file__).resolve().parent


class Response:
    """Stands in for llama_index.core.base.response.schema.Response (rag.py's answers)."""

    def __init__(self, response: str | None) -> None:
        self.response = response
        self.source_nodes = [NodeWithScore("chunk text", 0.82)]
        self.metadata = {"node-1": {"file": "slack.json"}}


class NodeWithScore:
    def __init__(self, text: str, score: float) -> None:
        self.text = text
        self.score = score


def herb_ans() -> dict[str, Any]:
    types = ["person", "url", "url", "pr", "company", "content", "content"]
    return {
        "question": [f"q{i}" for i in range(7)],
        "answer": [Response(f"a{i}") for i in range(6)] + [None],
        "ground_truth": [f"g{i}" for i in range(7)],
        "citations": [[("doc", i)] for i in range(7)],
        "type": types,
        "time": 12.0,
        # person 90; url (60 + 20)/2 = 40; pr 30; company 50 → entity (90+40+30+50)/4 = 52.5
        # content (70 + 90)/2 = 80
        "gpt4-correctness": [90.0, 60.0, 20.0, 30.0, 50.0, 70, 90],
        "gpt4-correctness-avg": 58.57,
    }


def herb_unans() -> dict[str, Any]:
    answers = [Response("I don't know."), Response("42"), None, Response("Not found.")]
    return {
        "question": ["u0", "u1", "u2", "u3"],
        "answer": answers,
        # s: 1, 0, 1, 0 → null rate 0.5
        "unanswerable_results": [
            {"q": "u0", "a": answers[0], "s": 1},
            {"q": "u1", "a": answers[1], "s": 0},
            {"q": "u2", "a": "unanswered", "s": 1},
            {"q": "u3", "a": answers[3], "s": 0},
        ],
    }


def raw_pickles(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    ans = directory / "text-embedding-3-large-gpt-4o-1-ans.pk"
    unans = directory / "text-embedding-3-large-gpt-4o-1-unans.pk"
    ans.write_bytes(pickle.dumps(herb_ans()))
    unans.write_bytes(pickle.dumps(herb_unans()))
    return [ans, unans]


def test_the_safe_unpickler_still_refuses_herbs_raw_pickles(tmp_path: Path) -> None:
    ans, unans = raw_pickles(tmp_path / "output")
    for path in (ans, unans):
        with pytest.raises(BenchmarkFileError, match=r"test_egi_herb_convert\.Response"):
            load_pickle_plain(path)
    with pytest.raises(BenchmarkFileError, match=r"herb_to_json\.py") as error:
        import_herb(tmp_path / "output")
    assert error.value.path == ans


def test_converted_json_gives_herbs_sub_metrics(tmp_path: Path) -> None:
    pickles = raw_pickles(tmp_path / "output")
    written = herb_to_json.convert_all(pickles, tmp_path / "converted")
    assert [p.name for p in written] == [
        "text-embedding-3-large-gpt-4o-1-ans.json",
        "text-embedding-3-large-gpt-4o-1-unans.json",
    ]
    ans = json.loads(written[0].read_text(encoding="utf-8"))
    assert ans["answer"] == ["a0", "a1", "a2", "a3", "a4", "a5", None]  # Response → its text
    assert ans["citations"][0] == [["doc", 0]]  # tuples → lists
    assert ans["type"] == herb_ans()["type"] and ans["gpt4-correctness"][0] == 90.0
    assert ans["egi_converted_from"]["file"] == pickles[0].name
    unans = json.loads(written[1].read_text(encoding="utf-8"))
    assert unans["unanswerable_results"][1] == {"q": "u1", "a": "42", "s": 0}
    # By hand: entity (90 + 40 + 30 + 50)/4 = 52.5; content 80; null rate 2/4 = 0.5
    assert import_herb(tmp_path / "converted") == pytest.approx(
        {"entity_f1": 52.5, "content_correctness": 80.0, "unanswerable_null_rate": 0.5}
    )
    assert import_herb(written[0]) == pytest.approx(
        {"entity_f1": 52.5, "content_correctness": 80.0}
    )


def test_a_json_stands_for_the_pickle_of_its_stem(tmp_path: Path) -> None:
    # Converted in place: the folder holds both; the JSON is read, the raw pickle is not.
    pickles = raw_pickles(tmp_path)
    herb_to_json.convert_all(pickles, tmp_path)
    assert import_herb(tmp_path)["unanswerable_null_rate"] == 0.5


def test_the_script_runs_standalone_as_a_harness_step(tmp_path: Path) -> None:
    pickles = raw_pickles(tmp_path / "output")
    # HERB's environment has llama-index; here the stand-in class's module must import.
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)]),
    }
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out-dir", str(tmp_path / "out"), *map(str, pickles)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("wrote ") == 2
    assert import_herb(tmp_path / "out")["entity_f1"] == pytest.approx(52.5)


def test_the_script_needs_only_the_standard_library() -> None:
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported - {"__future__"} <= set(sys.stdlib_module_names)


def test_nothing_is_written_when_one_pickle_fails(tmp_path: Path, capsys) -> None:
    good, _ = raw_pickles(tmp_path / "output")
    bad = tmp_path / "output" / "x-gpt-4o-1-unans.pk"
    bad.write_bytes(b"\x80\x04not a pickle")
    out = tmp_path / "converted"
    assert herb_to_json.main(["--out-dir", str(out), str(good), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("herb_to_json.py: error: ") and str(bad) in err
    assert err.count("\n") == 1
    assert not out.exists() or not any(out.iterdir())


def test_a_non_finite_score_is_kept_visible_and_then_refused(tmp_path: Path) -> None:
    data = herb_ans()
    data["gpt4-correctness"][2] = math.nan
    path = tmp_path / "e-gpt-4o-1-ans.pk"
    path.write_bytes(pickle.dumps(data))
    (written,) = herb_to_json.convert_all([path], tmp_path / "out")
    assert json.loads(written.read_text())["gpt4-correctness"][2] == "nan"
    with pytest.raises(BenchmarkFileError) as error:
        import_herb(written)
    assert error.value.key == "gpt4-correctness[2]" and error.value.path == written


def test_the_registry_runs_the_conversion_inside_herbs_environment() -> None:
    routes = [(r.benchmark, r.sub_metric, r.bucket) for r in load_routing().routes]
    registry = harness.load_registry(harness.DEFAULT_REGISTRY, routes=routes)
    herb = registry.harnesses["herb"]
    values = {name: f"<{name}>" for name in harness.PLACEHOLDERS}
    values.update(steps=str(harness.STEPS_DIR), python="/herb/.venv/bin/python", model="m")
    argv = harness.expand_command(herb.commands[-1], values, [])
    assert argv[0] == "/herb/.venv/bin/python"  # HERB's interpreter, not egi-bench's
    assert Path(argv[1]) == SCRIPT and SCRIPT.is_file()
    assert argv[2:4] == ["--out-dir", "<output_dir>"]
    assert argv[4:] == [
        "output/text-embedding-3-large-m-1-ans.pk",
        "output/text-embedding-3-large-m-1-unans.pk",
    ]
    # after evaluate.py has scored both pickles in place
    assert [c.split()[1] for c in herb.commands[2:4]] == ["evaluate.py", "evaluate.py"]
    assert herb.output == "."  # the importer reads the JSON in {output_dir}
