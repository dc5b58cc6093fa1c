"""Test helpers: decisions recorded from the example's illustrative estimates, and a world whose
evidence is complete (every run judged, every assignment submitted) for recording one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from charters.models import Charter
from demo.testing.grading import GradingWorld, fill, first_tasks_file, make_world
from gates.algorithm import gate_evaluate
from gates.decision_file import load_decision_file
from gates.models import Decision
from gates.services import decision_record, gate_input_for, grades_digest
from grading.models import Assignment, GradingSession
from grading.services.grades import assignment_submit
from metrics.estimate import MetricEstimate
from runs.models import Judge
from runs.services.judging import judge_get_or_create, judge_run
from runs.services.outputs import output_import

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


def make_decidable_world(*, sample_size: int = 8) -> tuple[GradingWorld, Judge]:
    """Return ``make_world``'s world with both runs judged offline and its session closed.

    Every assignment is graded with the first value of every field and submitted, so the
    graders agree everywhere and nothing awaits adjudication.
    """
    world = make_world(sample_size=sample_size)
    judge = judge_get_or_create(kind="offline")
    for run in world.runs:
        judge_run(actor=world.model_owner, run=run, judge=judge, purpose="gated")
    for assignment in Assignment.objects.filter(session=world.session).select_related(
        "grader", "artefact", "session"
    ):
        fill(assignment)
        assignment_submit(actor=assignment.grader, assignment=assignment)
    return world, judge


def estimates_with_informational() -> list[MetricEstimate]:
    """The example's estimates and three informational ones the charter does not gate."""
    estimates = load_example_estimates("gemini-2.5")
    extra = [
        replace(estimates[0], metric_id=metric_id, point=50.0, lo=40.0, hi=60.0)
        for metric_id in ("citation_precision_strict", "refusal_rate", "cost_per_task")
    ]
    return [*estimates, *extra]


def decide_on_a_larger_run(world: GradingWorld, *, outputs: int = 60) -> Decision:
    """Record the example's decision on a new run of Gemini 2.5's first ``outputs`` outputs
    (the world's runs hold 12)."""
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    run = output_import(
        actor=world.model_owner,
        use_case=world.use_case,
        configuration=world.runs[0].configuration,
        task_set=world.runs[0].task_set,
        split="graded",
        repeats=1,
        fileobj=first_tasks_file("gemini-2-5", outputs),
        filename="outputs-gemini-2-5.jsonl",
    )
    estimates = load_example_estimates("gemini-2.5")
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
        evidence={"charter_sha256": charter.sha256, "run_source_sha256": run.source_sha256},
    )
