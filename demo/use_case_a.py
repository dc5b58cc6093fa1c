"""``make demo``'s second example: seed 003 Use Case A, control design effectiveness (A2/C3/E3).

Loads ``examples/use_case_a/`` beside the credit memo and takes it to signed-off scorecards
through the services the web app calls: the use case and its members, the charter signed by
three people (success rule ``label_equals_gold``, pass^k gated at k = 4), the task set with its
label set and gold labels, and two σ that differ only in the model:

- σ ``gemini-2-5-flash`` is EXECUTED through the real run path — ``run_create``,
  ``run_start`` and the Celery task ``runs.run_execute_chunk`` applied in-process (what a worker
  runs) — against the loopback fake model (:class:`demo.testing.fakellm.FakeLLMServer`), which
  the demo starts on a free port and stops; the outputs' labels are parsed by σ's output
  format, as for any executed run;
- σ ``gemini-2-5-pro`` is IMPORTED from its outputs file, labels included.

Both σ run K = 4 repeats of the graded split and of the stress split (reported apart, SPEC
§9). The built-in judge scores every unit; simulated graders with known error rates grade a
blinded sample of 30 outputs per σ, the adjudicator settles every disagreement from the planted
truth; each σ's decision is recorded by ``decision_create`` and its scorecard signed off. The
classification metrics and pass^1/2/4 are printed beside the planted truth. Every step is
idempotent: a second run finds what the first made and starts no model.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from charters.models import Charter, Configuration, TaskSet, UseCase
from charters.selectors.configurations import configuration_parity
from demo.decisions import decision_print
from demo.grading import DemoGrading, demo_grading
from demo.loaders import (
    DemoObjects,
    JudgedRun,
    demo_task_set,
    demo_use_case,
    frozen_configuration,
    imported_run,
    judged_run,
    offline_judged,
    signed_charter,
)
from demo.scorecards import committee_fields, demo_scorecards
from demo.testing.fakellm import FakeLLMServer
from examples.use_case_a import make_grades
from examples.use_case_a.make_outputs import EXECUTED, IMPORTED
from examples.use_case_a.planted import PASS_K, planted
from gates.models import Decision
from gates.services import decision_create, grades_digest
from metrics.selectors import reliability_estimates
from runs.models import Output, Run, RunMode, RunStatus
from runs.services.judging import judge_get_or_create
from runs.services.runs import run_create, run_start
from runs.tasks import run_execute_chunk_task
from scorecards.models import Scorecard

USE_CASE_KEY = "CTRL-DESIGN-A"
TASK_SET_NAME = "control-design-tasks"
SIGMA_FILES = {EXECUTED: "sigma-gemini-2.5-flash.yaml", IMPORTED: "sigma-gemini-2.5-pro.yaml"}
#: The address in the committed σ file that the demo replaces by the loopback model's.
LOOPBACK_PLACEHOLDER = "http://127.0.0.1:8400/v1"
#: One call at a time: the loopback model answers a task's n-th request with its repeat-n
#: reply, and the executor sends a task's repeats in order (the requests are identical).
RUN_CONCURRENCY = 1
SPLITS = ("graded", "stress")
SESSION_NAME = "Control design blind review, round 1"
SESSION_SEED = 20261204
SAMPLE_SIZE = 30  # per σ: 60 outputs, 120 assignments over the three simulated graders
AGREEMENT_DRAWS = 100  # re-simulations of the design for the expected agreement (time)
TASK_LINE = re.compile(r"^Task (\S+): ", re.MULTILINE)


@dataclass(frozen=True)
class UseCaseADemo:
    objects: DemoObjects
    runs: list[JudgedRun]
    stress_runs: dict[str, Run]
    grading: DemoGrading
    decisions: list[Decision]
    scorecards: list[tuple[Scorecard, Path, Path]]


class LoopbackModel:
    """The loopback model's replies: the n-th request for a task gets the task's repeat-n reply.

    Deterministic per task and repeat (``replies-gemini-2-5-flash.jsonl``); the task id is read
    from σ's user prompt (``Task {task_id}: …``).
    """

    def __init__(self, replies: Sequence[dict[str, Any]]) -> None:
        self.replies = {(r["task_id"], r["repeat"]): r["text"] for r in replies}
        self.calls: Counter[str] = Counter()

    def __call__(self, request: dict[str, Any]) -> str:
        user = next(m["content"] for m in reversed(request["messages"]) if m["role"] == "user")
        match = TASK_LINE.search(user)
        if match is None:
            raise ValueError("the request names no task (σ's user prompt starts 'Task <id>:')")
        task_id = match.group(1)
        repeat = self.calls[task_id]
        self.calls[task_id] += 1
        return self.replies[(task_id, repeat)]


def demo_use_case_a(
    *, example_dir: Path, out_dir: Path, log: Callable[[str], None]
) -> UseCaseADemo:
    """Take Use Case A from an empty use case to signed-off scorecards, printing each step."""
    log("── The evaluation object ──")
    use_case, users = demo_use_case(
        key=USE_CASE_KEY,
        name="Control design effectiveness (seed 003, Use Case A)",
        business_outcome=(
            "Issue QA classifies the design of each control of a process–risk–control matrix "
            "as compliant, partially compliant or non-compliant against the control standard, "
            "with the gaps and the remediation, for an analyst to approve."
        ),
        value_hypothesis=(
            "Analysts approve structured judgements instead of writing them, at least 85% "
            "of them right and stable across repeats (pass^4)."
        ),
        autonomy=2,
        consequence=3,
        log=log,
    )
    charter = signed_charter(use_case, users, example_dir, log)
    model_owner = users["demo-model-owner"]
    task_set = demo_task_set(
        use_case=use_case,
        model_owner=model_owner,
        path=example_dir / "tasks.jsonl",
        name=TASK_SET_NAME,
        log=log,
    )
    log(f"  label set: {', '.join(task_set.label_set)}; success rule {charter.success_rule}")
    imported = frozen_configuration(
        use_case=use_case,
        model_owner=model_owner,
        name=IMPORTED,
        content=(example_dir / SIGMA_FILES[IMPORTED]).read_bytes(),
        filename=SIGMA_FILES[IMPORTED],
    )
    log("")
    log("── Runs: σ gemini-2-5-flash executed against the loopback model, Pro imported ──")
    executed, executed_runs = _executed_runs(
        use_case, task_set, charter, model_owner, example_dir, log
    )
    imported_runs = {
        split: imported_run(
            configuration=imported,
            task_set=task_set,
            split=split,
            repeats=charter.repeats_k,
            model_owner=model_owner,
            path=path,
        )
        for split, path in (
            ("graded", example_dir / f"outputs-{IMPORTED}.jsonl"),
            ("stress", example_dir / f"outputs-{IMPORTED}-stress.jsonl"),
        )
    }
    configurations = {EXECUTED: executed, IMPORTED: imported}
    for name, configuration in configurations.items():
        log(f"σ {name} v{configuration.version} frozen: sha256 {configuration.sha256[:16]}…")
    parity = configuration_parity(a=executed, b=imported)
    log(f"parity {EXECUTED} vs {IMPORTED}: {parity.label}")
    judged = [
        judged_run(
            sigma=sigma,
            run=run,
            truth_path=example_dir / f"truth-{sigma}.jsonl",
            how=how,
            log=log,
        )
        for sigma, run, how in (
            (EXECUTED, executed_runs["graded"], "executed against the loopback model"),
            (IMPORTED, imported_runs["graded"], "imported"),
        )
    ]
    stress_runs = {EXECUTED: executed_runs["stress"], IMPORTED: imported_runs["stress"]}
    for sigma, run in stress_runs.items():
        offline_judged(run)
        log(f"stress run {run.pk} (σ {sigma}): {run.items_done} outputs, judged (reported apart)")
    objects = DemoObjects(
        use_case=use_case, charter=charter, configurations=configurations, task_set=task_set
    )
    log("")
    log("── Blinded grading (the same simulated graders, Use Case A's planted truth) ──")
    grading = demo_grading(
        objects=objects,
        runs=judged,
        log=log,
        grades=make_grades,
        name=SESSION_NAME,
        sample_size=SAMPLE_SIZE,
        seed=SESSION_SEED,
        agreement_draws=AGREEMENT_DRAWS,
    )
    log("")
    log("── Decisions on the evidence (estimates beside the planted truth) ──")
    decisions = _decisions(objects, judged, stress_runs, grading, users["demo-owner"], log)
    log("")
    log("── Classification and reliability beside the planted truth ──")
    for decision, judged_one in zip(decisions, judged, strict=True):
        _print_classification(decision, judged_one, example_dir, log)
    log("")
    log("── Scorecards (signed off by the second line) and evidence packs ──")
    scorecards = demo_scorecards(
        decisions=decisions,
        out_dir=out_dir,
        log=log,
        prefix="use_case_a",
        fields=functools.partial(
            committee_fields,
            conditions_of_use=(
                "Structured judgements an issue QA analyst approves (A2): every classification "
                "and remediation is approved or corrected before it enters the judgement "
                "table; no control is closed on the model's classification alone."
            ),
            compensating_controls=(
                "The analyst checks each classification against the rule of CS-11 and each "
                "gap against the row; a monthly sample of 30 judgements is re-graded against "
                "the charter's thresholds; the stress set is re-run when the standard changes."
            ),
        ),
    )
    return UseCaseADemo(objects, judged, stress_runs, grading, decisions, scorecards)


def _executed_runs(
    use_case: UseCase,
    task_set: TaskSet,
    charter: Charter,
    model_owner: AbstractBaseUser,
    example_dir: Path,
    log: Callable[[str], None],
) -> tuple[Configuration, dict[str, Run]]:
    """Return the executed σ and its completed runs per split, executing them if none exist."""
    found = {
        split: Run.objects.filter(
            use_case=use_case,
            task_set=task_set,
            configuration__name=EXECUTED,
            mode=RunMode.EXECUTED,
            status=RunStatus.COMPLETED,
            split=split,
        )
        .select_related("configuration")
        .order_by("-pk")
        .first()
        for split in SPLITS
    }
    graded, stress = found["graded"], found["stress"]
    if graded is not None and stress is not None and graded.configuration == stress.configuration:
        log(f"found executed runs {graded.pk} and {stress.pk} of σ {EXECUTED}: no model started")
        return graded.configuration, {"graded": graded, "stress": stress}
    replies = [
        json.loads(line)
        for line in (example_dir / f"replies-{EXECUTED}.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    model = LoopbackModel(replies)
    text = (example_dir / SIGMA_FILES[EXECUTED]).read_text(encoding="utf-8")
    if text.count(LOOPBACK_PLACEHOLDER) != 1:
        raise ValueError(f"{SIGMA_FILES[EXECUTED]}: expected api_base {LOOPBACK_PLACEHOLDER}")
    with FakeLLMServer(responder=model) as server:
        log(f"loopback model started at {server.base_url}")
        configuration = frozen_configuration(
            use_case=use_case,
            model_owner=model_owner,
            name=EXECUTED,
            content=text.replace(LOOPBACK_PLACEHOLDER, server.base_url).encode("utf-8"),
            filename=SIGMA_FILES[EXECUTED],
        )
        runs = {}
        for split in SPLITS:
            run = run_create(
                actor=model_owner,
                use_case=use_case,
                configuration=configuration,
                task_set=task_set,
                split=split,
                repeats=charter.repeats_k,
                concurrency=RUN_CONCURRENCY,
            )
            for chunk in run_start(actor=model_owner, run=run, enqueue=False):
                # The Celery task a worker runs for each chunk, applied in this process.
                run_execute_chunk_task.apply(args=(run.pk, chunk), throw=True)
            run.refresh_from_db()
            if run.status != RunStatus.COMPLETED or run.items_failed:
                raise RuntimeError(
                    f"run {run.pk} of σ {EXECUTED} ended {run.status} with "
                    f"{run.items_failed} failed outputs"
                )
            runs[split] = run
        calls = server.calls
    log(f"loopback model stopped after {calls} calls")
    _check_replies(runs["graded"], model)
    for split, run in runs.items():
        labelled = Output.objects.filter(run=run, label__isnull=False).count()
        log(
            f"run {run.pk} (σ {EXECUTED}, {split}, K = {run.repeats}): {run.items_done} outputs "
            f"executed, {labelled} with a label parsed by σ's output format"
        )
    return configuration, runs


def _check_replies(run: Run, model: LoopbackModel) -> None:
    """Refuse to go on unless each output is its task's reply at its repeat (the truth's key)."""
    for task_id, repeat, text in Output.objects.filter(run=run).values_list(
        "task__external_id", "repeat_index", "text"
    ):
        if model.replies[(task_id, repeat)] != text:
            raise RuntimeError(
                f"run {run.pk}: the output of task {task_id} at repeat {repeat} is not the "
                "loopback model's reply for that repeat; the planted truth would not apply"
            )


def _decisions(
    objects: DemoObjects,
    judged: Sequence[JudgedRun],
    stress_runs: dict[str, Run],
    grading: DemoGrading,
    owner: AbstractBaseUser,
    log: Callable[[str], None],
) -> list[Decision]:
    judge = judge_get_or_create(kind="offline")
    digest = grades_digest(session=grading.session)
    decisions = []
    for one in judged:
        decision = (
            Decision.objects.filter(run=one.run, charter=objects.charter, session=grading.session)
            .filter(evidence__grades_sha256=digest)
            .first()
        )
        if decision is None:
            decision = decision_create(
                actor=owner,
                charter=objects.charter,
                run=one.run,
                session=grading.session,
                judge=judge,
                stress_run=stress_runs[one.sigma],
            )
        truth = planted(one.sigma)
        gated_k = _gated_k(objects.charter)
        decision_print(decision, truth | {"pass_hat_k": truth[f"pass^{gated_k}"]}, log)
        decisions.append(decision)
    return decisions


def _gated_k(charter: Charter) -> int:
    metric = charter.metrics.filter(metric_id="pass_hat_k").first()
    return int(metric.k) if metric is not None and metric.k else 4


def _print_classification(
    decision: Decision, judged: JudgedRun, example_dir: Path, log: Callable[[str], None]
) -> None:
    """Print accuracy, macro-F1 and pass^1/2/4 as the product estimates them, beside the truth."""
    truth = planted(judged.sigma, example_dir)
    estimates = {e["metric_id"]: e for e in decision.record["estimates"]}
    reliability, _dispersion, why, _basis = reliability_estimates(
        run=judged.run, confidence=decision.charter.confidence, rule=decision.charter.success_rule
    )
    rows: list[tuple[str, dict[str, Any] | None, float]] = [
        ("accuracy", estimates.get("classification_accuracy"), truth["classification_accuracy"]),
        ("macro-F1", estimates.get("classification_macro_f1"), truth["classification_macro_f1"]),
    ]
    for k in PASS_K:
        record = reliability.get(k)
        rows.append(
            (
                f"pass^{k}",
                None
                if record is None
                else {
                    "point": record.point,
                    "lo": record.lo,
                    "hi": record.hi,
                    "reason": record.reason,
                },
                truth[f"pass^{k}"],
            )
        )
    log(f"σ {judged.sigma} ({judged.run.items_done} outputs, K = {judged.run.repeats}):")
    for name, estimate, true in rows:
        if estimate is None or estimate.get("point") is None:
            why_not = (estimate or {}).get("reason") or why or "no estimate"
            log(f"  {name:<9} —  ({why_not})  planted {true:.2f}")
            continue
        log(
            f"  {name:<9} {estimate['point']:6.2f} [{estimate['lo']:.2f}, {estimate['hi']:.2f}]"
            f"  planted {true:6.2f}"
        )
