"""``make demo``'s Use Case A: one σ executed against the loopback model, one imported, both
decided; the product's accuracy, macro-F1 and pass^1/2/4 equal the hand calculation."""

from __future__ import annotations

import json
import socket
from io import StringIO
from pathlib import Path
from urllib.parse import urlparse

import pytest
from pypdf import PdfReader
from use_case_a_hand import EXPECTED

from audit.models import AuditEntry
from charters.models import Charter, TaskSet, UseCase
from demo.use_case_a import USE_CASE_KEY, demo_use_case_a
from examples.use_case_a.make_outputs import EXECUTED, IMPORTED
from examples.use_case_a.make_tasks import LABELS
from gates.models import Decision
from metrics.selectors import reliability_estimates
from runs.models import Output, Run
from scorecards.models import ScorecardStatus

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "use_case_a"


def truth_labels(sigma: str) -> dict[tuple[str, int], str]:
    lines = (EXAMPLE / f"truth-{sigma}.jsonl").read_text(encoding="utf-8").splitlines()
    return {(r["task_id"], r["repeat"]): r["label"] for r in map(json.loads, lines)}


def graded_run(sigma: str) -> Run:
    return Run.objects.get(configuration__name=sigma, split="graded")


@pytest.mark.django_db
def test_use_case_a_is_executed_imported_decided_and_signed_off(tmp_path):
    log = StringIO()
    result = demo_use_case_a(
        example_dir=EXAMPLE, out_dir=tmp_path, log=lambda line: log.write(line + "\n")
    )

    use_case = UseCase.objects.get(key=USE_CASE_KEY)
    assert (use_case.autonomy, use_case.consequence, use_case.intensity) == (2, 3, 3)
    charter = Charter.objects.get(use_case=use_case)
    assert charter.is_frozen and charter.success_rule == "label_equals_gold"
    assert charter.metrics.get(metric_id="pass_hat_k").k == 4
    assert TaskSet.objects.get(use_case=use_case).label_set == list(LABELS)
    assert "attributable to the model alone" in log.getvalue()

    # σ Flash executed through the run path against the loopback model, stopped afterwards.
    executed = graded_run(EXECUTED)
    assert (executed.mode, executed.status, executed.repeats) == ("executed", "completed", 4)
    assert AuditEntry.objects.filter(action="run.start", payload__run=executed.pk).exists()
    api_base = executed.configuration.document["model"]["api_base"]
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", urlparse(api_base).port)) != 0
    # Each executed output's label was parsed from its text by σ's output format.
    for sigma in (EXECUTED, IMPORTED):
        stored = {
            (task, repeat): label
            for task, repeat, label in Output.objects.filter(run=graded_run(sigma)).values_list(
                "task__external_id", "repeat_index", "label"
            )
        }
        assert stored == truth_labels(sigma)
    assert graded_run(IMPORTED).mode == "imported"

    # Both decided on the evidence; the classification figures are the hand calculation's.
    decisions = {d.configuration.name: d for d in result.decisions}
    assert set(decisions) == {EXECUTED, IMPORTED}
    assert all(d.status != "Undetermined" for d in decisions.values()), [
        d.record["gate"]["reasons"][:2] for d in decisions.values()
    ]
    for sigma, decision in decisions.items():
        estimates = {e["metric_id"]: e for e in decision.record["estimates"]}
        expected = EXPECTED[sigma]
        for metric_id in ("classification_accuracy", "classification_macro_f1"):
            assert estimates[metric_id]["point"] == pytest.approx(expected[metric_id], abs=1e-6)
        records, _dispersion, _why, _basis = reliability_estimates(
            run=decision.run, confidence=charter.confidence, rule=charter.success_rule
        )
        for k in (1, 2, 4):
            assert records[k].point == pytest.approx(expected[f"pass^{k}"], abs=1e-6)
        assert estimates["pass_hat_k"]["point"] == pytest.approx(expected["pass^4"], abs=1e-6)
        assert decision.record["stress"].get("run") == result.stress_runs[sigma].pk

    for scorecard, pdf, pack in result.scorecards:
        assert scorecard.status == ScorecardStatus.FINAL
        assert len(PdfReader(pdf).pages) >= 2 and pack.stat().st_size > 0

    # Again: everything is found, no model is started, nothing is duplicated.
    counts = (Run.objects.count(), Output.objects.count(), Decision.objects.count())
    again = StringIO()
    demo_use_case_a(
        example_dir=EXAMPLE, out_dir=tmp_path, log=lambda line: again.write(line + "\n")
    )
    assert (Run.objects.count(), Output.objects.count(), Decision.objects.count()) == counts
    assert "no model started" in again.getvalue()
