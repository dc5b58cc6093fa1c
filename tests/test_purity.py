"""The pure core imports without Django, DRF or Celery (STYLE.md practice 2)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PURE_MODULES = [
    "enterpriseval.stats",
    "enterpriseval.plotting",
    "enterpriseval.jsonl",
    "enterpriseval.values",
    "enterpriseval.currencies",
    "gates.algorithm",
    "gates.value_model",
    "audit.canonical",
    "enterpriseval.documents",
    "charters.configurations",
    "charters.validation",
    "charters.charter_document",
    "charters.task_import",
    "charters.catalogue",
    "runs.judges.rubric",
    "runs.judges.offline",
    "runs.judges.llm",
    "runs.retrieval",
    "runs.prompting",
    "runs.executor",
    "runs.segment",
    "runs.segment_pool",
    "runs.slots",
    "runs.output_import",
    "runs.trajectory",
    "grading.rubric",
    "grading.sampling",
    "grading.defects",
    "grading.agreement",
    "grading.grade_io",
    "grading.adjudication_io",
    "grading.oversight_io",
    "grading.sequential",
    "grading.sequence_plot",
    "metrics.estimate",
    "metrics.task_estimators",
    "metrics.unit_estimators",
    "gates.value_evidence",
    "egibench.aggregate",
    "egibench.importers",
    "egibench.harness",
    "egibench.model_names",
    "egibench.plots",
    "egibench.proxy",
    "egibench.result_shape",
    "scorecards.artefacts",
    "scorecards.fields",
    "scorecards.regulatory",
    "scorecards.evidence",
]


@pytest.mark.parametrize("module", PURE_MODULES)
def test_pure_module_imports_without_django_or_celery(module):
    code = (
        f"import sys, {module}; "
        "loaded = sorted(m for m in ('django', 'rest_framework', 'celery') if m in sys.modules); "
        "print(','.join(loaded))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_import_linter_contract_covers_the_pure_modules():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = config["tool"]["importlinter"]["contracts"][0]
    assert set(contract["source_modules"]) == set(PURE_MODULES)
    assert "django" in contract["forbidden_modules"]


def test_the_layers_contract_states_the_pipeline_and_frees_only_the_pure_modules():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = {c["type"]: c for c in config["tool"]["importlinter"]["contracts"][1:]}
    layers = contracts["layers"]
    assert layers["layers"] == [
        "lifecycle | demo",
        "scorecards",
        "gates",
        "egibench",
        "metrics",
        "grading",
        "runs",
        "charters",
        "audit",
        "enterpriseval",
    ]
    freed = {m for m in PURE_MODULES if not m.startswith("enterpriseval.")}
    assert set(layers["ignore_imports"]) == {f"** -> {m}" for m in freed}
    capability = contracts["forbidden"]
    assert capability["source_modules"] == ["egibench"]
    assert set(capability["forbidden_modules"]) == {"runs", "grading", "metrics"}
    assert set(capability["ignore_imports"]) == set(layers["ignore_imports"])
