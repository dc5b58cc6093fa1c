"""``enterpriseval gate``: decisions on a decision input file, and clear refusals of bad input."""

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "credit_memo"

VALID = """\
nu_max: 3
metrics:
  - id: guidance_recall
    direction: higher
    theta_out: 75
    theta_in: 80
    weight: 1
    estimate: 80.0
    ci: [71.2, 87.0]
    grading: H
    kappa: 0.72
    n: 120
  - id: hallucination_rate
    direction: lower
    theta_out: 10
    theta_in: 5
    weight: 1
    estimate: 1.6
    ci: [0.8, 3.1]
"""


def gate_json(path: Path, mode: str = "conservative") -> dict:
    out = StringIO()
    call_command("gate", "--input", str(path), "--mode", mode, "--format", "json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize(
    ("model", "decision", "ei"), [("gemini-2.5", "Conditional", 2.45), ("llama-4", "Scale", 2.59)]
)
def test_it_reproduces_table_4_in_point_mode(model, decision, ei):
    result = gate_json(EXAMPLE / f"{model}.yaml", mode="point")
    assert result["decision"] == decision
    assert result["mode"] == "point"
    assert round(result["ei"], 2) == ei
    if model == "gemini-2.5":
        assert result["binding_metric"] == "guidance_recall"
        recall = next(m for m in result["metrics"] if m["id"] == "guidance_recall")
        assert recall["status"] == "Conditional"
        assert recall["nu"] == pytest.approx(1.0)


def test_json_output_has_every_documented_field(tmp_path):
    path = tmp_path / "input.yaml"
    path.write_text(VALID)
    result = gate_json(path)
    for key in (
        "decision",
        "binding_metric",
        "mode",
        "metrics",
        "ei",
        "ei_g",
        "ei_band",
        "reasons",
        "recommendations",
    ):
        assert key in result
    assert {"id", "status", "value_used", "nu", "weight"} <= set(result["metrics"][0])
    # Conservative mode uses the lower bound of a higher-is-better metric: 71.2 < θout 75.
    recall = result["metrics"][0]
    assert recall["value_used"] == pytest.approx(71.2)
    assert recall["status"] == "Reject"
    assert recall["nu"] == pytest.approx((71.2 - 75) / 5)
    assert recall["weight"] == pytest.approx(0.5)
    assert result["decision"] == "Reject"
    assert len(result["ei_band"]) == 2
    assert result["input"]["sha256"] and len(result["input"]["sha256"]) == 64


def test_json_input_files_are_read_as_json(tmp_path):
    import yaml

    path = tmp_path / "input.json"
    path.write_text(json.dumps(yaml.safe_load(VALID)))
    assert gate_json(path)["decision"] == "Reject"


def test_the_table_format_shows_the_decision_and_each_metric(tmp_path):
    path = tmp_path / "input.yaml"
    path.write_text(VALID)
    out = StringIO()
    call_command("gate", "--input", str(path), "--mode", "point", stdout=out)
    text = out.getvalue()
    assert "decision: Conditional" in text
    assert "guidance_recall" in text and "hallucination_rate" in text
    assert "illustration only" in text


BAD_INPUTS = {
    "inverted pair": (
        VALID.replace("theta_in: 5\n", "theta_in: 15\n"),
        ["hallucination_rate", "inverted pair"],
    ),
    "missing CI in conservative mode": (
        VALID.replace("    ci: [0.8, 3.1]\n", ""),
        ["hallucination_rate", "ci"],
    ),
    "unknown direction": (
        VALID.replace("direction: lower", "direction: down"),
        ["direction", "down"],
    ),
    "negative weight": (
        VALID.replace("weight: 1\n    estimate: 1.6", "weight: -1\n    estimate: 1.6"),
        ["weight"],
    ),
    "malformed file": ("metrics: [\n  - id: x\n  oops", ["malformed YAML", "line"]),
    "duplicate key": (
        VALID.replace("    theta_in: 5\n", "    theta_in: 5\n    theta_in: 4\n"),
        ["metrics[1].theta_in", "duplicate key 'theta_in' (line 17, first on line 16)"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_invalid_input_exits_2_naming_the_file_and_the_field(tmp_path, case):
    text, expected = BAD_INPUTS[case]
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(CommandError) as raised:
        call_command("gate", "--input", str(path), stdout=StringIO())
    assert raised.value.returncode == 2
    message = str(raised.value)
    assert str(path) in message
    for fragment in expected:
        assert fragment in message


def test_a_missing_file_is_reported_with_its_path(tmp_path):
    path = tmp_path / "nowhere.yaml"
    with pytest.raises(CommandError) as raised:
        call_command("gate", "--input", str(path), stdout=StringIO())
    assert raised.value.returncode == 2
    assert str(path) in str(raised.value)


def test_the_console_script_exits_with_status_2_and_one_message(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD_INPUTS["inverted pair"][0])
    script = Path(sys.executable).with_name("enterpriseval")
    result = subprocess.run(
        [str(script), "gate", "--input", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "enterpriseval.test_settings"},
    )
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1
    assert str(path) in lines[0] and "hallucination_rate" in lines[0]
    assert result.stdout == ""
