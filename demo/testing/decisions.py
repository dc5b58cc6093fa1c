"""Test helpers: decisions recorded from the example's illustrative estimates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from charters.models import Charter
from gates.algorithm import gate_evaluate
from gates.decision_file import load_decision_file
from gates.models import Decision
from gates.services import decision_record, gate_input_for, grades_digest
from grading.models import GradingSession
from metrics.estimate import MetricEstimate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"
SIGMA_OF_MODEL = {"gemini-2.5": "gemini-2-5", "llama-4": "llama-4"}


def load_example_estimates(model: str) -> list[MetricEstimate]:
    """Return the example decision input's estimates (seed 003 Table 4) as metric records."""
    gate_input = load_decision_file(EXAMPLES / f"{model}.yaml").gate_input
    return [
        MetricEstimate(
            metric_id=m.id,
            point=m.estimate,
            lo=m.ci[0] if m.ci else None,
            hi=m.ci[1] if m.ci else None,
            confidence=0.95,
            n=m.n or 0,
            n_clusters=25,
            mode="H",
            estimator="cluster-robust ratio (illustrative counts)",
            kappa=0.7,
        )
        for m in gate_input.metrics
    ]


def decide(
    world: Any,
    model: str = "gemini-2.5",
    *,
    estimates: Sequence[MetricEstimate] | None = None,
    value: Mapping[str, Any] | None = None,
    charter: Charter | None = None,
    session: GradingSession | None = None,
) -> Decision:
    """Record a conservative decision on the world's run of ``model`` from given estimates.

    With ``session``, the decision rests on its grades too (their digest is in the evidence).
    """
    charter = charter or Charter.objects.get(use_case=world.use_case, version=1)
    estimates = load_example_estimates(model) if estimates is None else list(estimates)
    run = next(r for r in world.runs if r.configuration.name == SIGMA_OF_MODEL[model])
    gate = gate_evaluate(
        gate_input_for(charter=charter, estimates={e.metric_id: e for e in estimates}),
        mode="conservative",
    )
    return decision_record(
        actor=world.owner,
        charter=charter,
        run=run,
        estimates=estimates,
        gate=gate,
        evidence={
            "charter_sha256": charter.sha256,
            "run_source_sha256": run.source_sha256,
            **({"grades_sha256": grades_digest(session=session)} if session else {}),
        },
        value=value,
        session=session,
    )
