"""What ``make demo`` must have done for its second example, seed 003 Use Case A.

Called by the demo's end-to-end test after it runs the command: one σ executed against the
loopback model and one imported, both decided and signed off, and the product's accuracy,
macro-F1 and pass^1/2/4 equal to the hand calculation of ``use_case_a_hand``.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import urlparse

import pytest
from pypdf import PdfReader
from use_case_a_hand import EXPECTED

from audit.models import AuditEntry
from charters.models import Charter, TaskSet, UseCase
from demo.use_case_a import USE_CASE_KEY
from examples.use_case_a.make_outputs import EXECUTED, IMPORTED
from examples.use_case_a.make_tasks import HERE, LABELS
from gates.models import Decision
from metrics.selectors import reliability_estimates
from runs.models import Output, Run
from scorecards.evidence import evidence_verify
from scorecards.models import Scorecard, ScorecardStatus


def truth_labels(sigma: str) -> dict[tuple[str, int], str]:
    lines = (HERE / f"truth-{sigma}.jsonl").read_text(encoding="utf-8").splitlines()
    return {(r["task_id"], r["repeat"]): r["label"] for r in map(json.loads, lines)}


def check_use_case_a(output: str, out_dir: Path) -> None:
    use_case = UseCase.objects.get(key=USE_CASE_KEY)
    assert (use_case.autonomy, use_case.consequence, use_case.intensity) == (2, 3, 3)
    charter = Charter.objects.get(use_case=use_case)
    assert charter.is_frozen and charter.success_rule == "label_equals_gold"
    assert charter.metrics.get(metric_id="pass_hat_k").k == 4
    assert TaskSet.objects.get(use_case=use_case).label_set == list(LABELS)
    section = output.split("Second example: seed 003 Use Case A")[1]
    assert f"parity {EXECUTED} vs {IMPORTED}: attributable to the model alone" in section

    runs = {
        sigma: Run.objects.get(use_case=use_case, configuration__name=sigma, split="graded")
        for sigma in (EXECUTED, IMPORTED)
    }
    # σ Flash executed through the run path against the loopback model, stopped afterwards.
    executed = runs[EXECUTED]
    assert (executed.mode, executed.status, executed.repeats) == ("executed", "completed", 4)
    assert AuditEntry.objects.filter(action="run.start", use_case_id=use_case.pk).count() == 2
    port = urlparse(executed.configuration.document["model"]["api_base"]).port
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    assert runs[IMPORTED].mode == "imported"
    # Each executed output's label was parsed from its text by σ's output format; the
    # imported ones came with the file. Both are the planted labels.
    for sigma, run in runs.items():
        stored = {
            (task, repeat): label
            for task, repeat, label in Output.objects.filter(run=run).values_list(
                "task__external_id", "repeat_index", "label"
            )
        }
        assert stored == truth_labels(sigma), sigma

    # Both decided on honest evidence; the classification figures are the hand calculation's.
    decisions = {d.configuration.name: d for d in Decision.objects.filter(use_case=use_case)}
    assert set(decisions) == {EXECUTED, IMPORTED}
    assert all(d.status != "Undetermined" for d in decisions.values())
    for sigma, decision in decisions.items():
        assert f"σ {sigma}: {decision.status}" in section
        estimates = {e["metric_id"]: e for e in decision.record["estimates"]}
        expected = EXPECTED[sigma]
        for metric_id in ("classification_accuracy", "classification_macro_f1"):
            assert estimates[metric_id]["point"] == pytest.approx(expected[metric_id], abs=1e-9)
        records, _dispersion, _why, _basis = reliability_estimates(
            run=decision.run, confidence=charter.confidence, rule=charter.success_rule
        )
        for k in (1, 2, 4):
            assert records[k].point == pytest.approx(expected[f"pass^{k}"], abs=1e-9)
        assert estimates["pass_hat_k"]["point"] == pytest.approx(expected["pass^4"], abs=1e-9)
        assert decision.record["stress"]["run"] == (
            Run.objects.get(configuration=decision.configuration, split="stress").pk
        )
        printed = section.split(f"σ {sigma} (160 outputs, K = 4):")[1]
        assert f"accuracy   {expected['classification_accuracy']:.2f}" in printed
        assert f"pass^4     {expected['pass^4']:.2f}" in printed

        scorecard = Scorecard.objects.get(decision=decision)
        assert scorecard.status == ScorecardStatus.FINAL
        stem = out_dir / f"use_case_a_{sigma}_scorecard"
        assert len(PdfReader(f"{stem}.pdf").pages) >= 2
        assert evidence_verify(Path(f"{stem}_evidence.zip").read_bytes()).ok
