"""Structured judgements and task success (SPEC §4.1): labels, accuracy, macro-F1, pass^k.

A small control-classification use case (A2/C3): five graded tasks with gold labels, one σ
whose label format reads ``Judgement: <label>`` from the executed output, K = 4. The fake model
answers each task's repeats from a fixed plan, so the numbers below are a hand calculation:

======  ==========  ==================================  ===
task    gold        labels at repeats 0, 1, 2, 3        c_i
======  ==========  ==================================  ===
C-1     compliant   compliant ×4                        4
C-2     partially   partially, partially, non, partially 3
C-3     non         non, compliant, non, non            3
C-4     compliant   compliant, partially, partially, c. 2
C-5     non         compliant ×4                        0
======  ==========  ==================================  ===

pass^1 = (4+3+3+2+0)/(5·4) = 60 %; pass^2 = (6+3+3+1+0)/(5·6) = 43.33 %; pass^4 = 1/5 = 20 %.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml
from django.contrib.auth import get_user_model
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, precision_score

from charters.models import Charter, Role
from charters.services.charters import charter_create, charter_update
from charters.services.configurations import configuration_upload
from charters.services.task_sets import task_set_import
from charters.services.use_cases import membership_grant, use_case_create
from demo.testing.fakellm import FakeLLMServer
from metrics.classification import run_classification, run_labels
from metrics.selectors import charter_estimates, reliability_estimates
from runs.executor import load_litellm
from runs.models import Output
from runs.services.outputs import output_import
from runs.services.runs import run_create, run_execute_chunk

SIGMA_FILE = (
    Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "sigma-gemini-2.5.yaml"
)
LABELS = ["compliant", "partially compliant", "non-compliant"]
C, P, N = LABELS
GOLD = {"C-1": C, "C-2": P, "C-3": N, "C-4": C, "C-5": N}
PLAN = {
    "C-1": [C, C, C, C],
    "C-2": [P, P, N, P],
    "C-3": [N, C, N, N],
    "C-4": [C, P, P, C],
    "C-5": [C, C, C, C],
}
K = 4
PATTERN = r"^Judgement:\s*(?P<label>[^\n]+)$"


@pytest.fixture(autouse=True, scope="module")
def _cost_map_loaded():
    load_litellm()


def tasks_file(*, header=True, gold=GOLD) -> io.BytesIO:
    lines = [json.dumps({"label_set": LABELS})] if header else []
    for task_id, label in gold.items():
        task = {
            "id": task_id,
            "split": "graded",
            "input": f"Control {task_id}: quarterly access review of the payments system.",
            "sources": [{"id": f"{task_id}-s1", "text": "Access is reviewed each quarter."}],
            "key_elements": [{"id": "ke1", "text": "The judgement with its clause"}],
        }
        if label is not None:
            task["gold_label"] = label
        lines.append(json.dumps(task))
    return io.BytesIO(("\n".join(lines) + "\n").encode())


class Planned:
    """Answer each task's calls in order from PLAN (the repeats of a task, in call order)."""

    def __init__(self, plan=PLAN, garble=()):
        self.plan = plan
        self.garble = set(garble)
        self.calls: Counter[str] = Counter()

    def __call__(self, request: dict) -> str:
        user = request["messages"][-1]["content"]
        task_id = user.split(":", 1)[0].removeprefix("Task ").strip()
        number = self.calls[task_id]
        self.calls[task_id] += 1
        if (task_id, number) in self.garble:
            return "I could not decide on this control."
        label = self.plan[task_id][number].upper() if number == 1 else self.plan[task_id][number]
        return f"Judgement: {label}\nRecommendation: keep the review [{task_id}-s1]."


@pytest.fixture
def world(db):
    users = {
        name: get_user_model().objects.create_user(username=name, password="pw-" + name)
        for name in ("owner", "model_owner", "reviewer")
    }
    use_case = use_case_create(
        actor=users["owner"],
        key="CONTROLS-A",
        name="Control design classification",
        business_outcome="Controls are classified against the standard.",
        value_hypothesis="Reviewers classify faster with no loss of accuracy.",
        autonomy=2,
        consequence=3,
    )
    membership_grant(
        actor=users["owner"], use_case=use_case, user=users["model_owner"], role=Role.MODEL_OWNER
    )
    membership_grant(
        actor=users["owner"], use_case=use_case, user=users["reviewer"], role=Role.REVIEWER
    )
    task_set = task_set_import(
        actor=users["owner"],
        use_case=use_case,
        name="controls",
        fileobj=tasks_file(),
        filename="controls.jsonl",
    )
    return {"use_case": use_case, "task_set": task_set, **users}


def sigma(world, server, *, output_format, name="labeller"):
    document = yaml.safe_load(SIGMA_FILE.read_text())
    document["model"] = {
        "provider": "openai_compatible",
        "id": "fake-model",
        "api_base": server.base_url,
        "parameters": {"temperature": 0.2, "timeout_seconds": 5},
    }
    document["prompts"]["user_template"] = "Task {task_id}: {input}\n\nSources:\n{sources}\n"
    document["guardrails"]["output_format"] = output_format
    return configuration_upload(
        actor=world["model_owner"],
        use_case=world["use_case"],
        name=name,
        content=json.dumps(document),
        filename="sigma.json",
    )


LABEL_FORMAT = {"kind": "label", "pattern": PATTERN, "description": "First line: Judgement."}


def execute(world, configuration, repeats=K):
    run = run_create(
        actor=world["model_owner"],
        use_case=world["use_case"],
        configuration=configuration,
        task_set=world["task_set"],
        split="graded",
        repeats=repeats,
        concurrency=1,
    )
    pks = list(world["task_set"].tasks.order_by("line_number").values_list("pk", flat=True))
    run_execute_chunk(run_id=run.pk, task_pks=pks)
    return run


def charter(world, *, success_rule=None, k=None):
    pass_hat_k = {"id": "pass_hat_k", "treatment": "gated", "theta_out": 30, "theta_in": 50}
    if k is not None:
        pass_hat_k["k"] = k
    document = {
        "repeats_k": K,
        "metrics": [
            {"id": "classification_accuracy", "treatment": "gated"},
            {"id": "classification_macro_f1", "treatment": "informational", "reason": "r"},
            pass_hat_k,
            {"id": "dispersion", "treatment": "informational", "reason": "r"},
        ],
    }
    if success_rule is not None:
        document["success_rule"] = success_rule
    draft = Charter.objects.filter(use_case=world["use_case"]).first()
    if draft is not None:
        return charter_update(actor=world["owner"], charter=draft, document=document)
    return charter_create(actor=world["owner"], use_case=world["use_case"], document=document)


def hand_counts():
    return np.array([sum(a == GOLD[t] for a in PLAN[t]) for t in GOLD])


def test_labels_parsed_from_executed_outputs_give_pass_k_by_hand(world):
    with FakeLLMServer(responder=Planned()) as server:
        run = execute(world, sigma(world, server, output_format=LABEL_FORMAT))
    labels = {
        (o.task.external_id, o.repeat_index): o.label
        for o in Output.objects.filter(run=run).select_related("task")
    }
    # repeat 1 answers in capitals: the label is matched to the set whatever its case
    assert labels == {(t, r): PLAN[t][r] for t in PLAN for r in range(K)}
    estimates = charter_estimates(charter=charter(world, success_rule="label_equals_gold"), run=run)
    assert list(hand_counts()) == [4, 3, 3, 2, 0]
    gated = estimates["pass_hat_k"]  # default k = 4 when K ≥ 4
    assert gated.point == pytest.approx(100 * 1 / 5)
    notes = " ".join(gated.notes)
    assert "gated k = 4" in notes
    assert "pass^1 = 60.0" in notes and f"pass^2 = {100 * 13 / 30:.1f}" in notes
    assert "label parsed from each executed output" in notes
    at_two = charter_estimates(
        charter=charter(world, success_rule="label_equals_gold", k=2), run=run
    )["pass_hat_k"]
    assert at_two.point == pytest.approx(100 * 13 / 30)


def test_accuracy_macro_f1_and_the_confusion_matrix_match_scikit_learn(world):
    with FakeLLMServer(responder=Planned()) as server:
        run = execute(world, sigma(world, server, output_format=LABEL_FORMAT))
    estimates = charter_estimates(charter=charter(world, success_rule="label_equals_gold"), run=run)
    gold = [GOLD[t] for t in GOLD]
    first = [PLAN[t][0] for t in GOLD]  # the task's label is its output's at repeat 0
    assert estimates["classification_accuracy"].point == pytest.approx(
        100 * accuracy_score(gold, first)
    )
    assert estimates["classification_macro_f1"].point == pytest.approx(
        100 * f1_score(gold, first, labels=LABELS, average="macro", zero_division=0)
    )
    summary = run_classification(labels=run_labels(run=run))
    assert summary is not None
    assert (
        summary.confusion[:, :3].tolist() == confusion_matrix(gold, first, labels=LABELS).tolist()
    )
    assert summary.confusion[:, 3].tolist() == [0, 0, 0]  # no unknown label
    precision = precision_score(gold, first, labels=LABELS, average=None, zero_division=0)
    for score, expected in zip(summary.scores, precision, strict=True):
        assert score.precision == pytest.approx(100 * expected)


def test_an_unparseable_output_is_recorded_unknown_naming_it_and_pass_k_says_why(world):
    with FakeLLMServer(responder=Planned(garble={("C-3", 2)})) as server:
        run = execute(world, sigma(world, server, output_format=LABEL_FORMAT))
    output = Output.objects.get(run=run, task__external_id="C-3", repeat_index=2)
    assert output.label is None and output.status == "succeeded"
    assert output.label_error.startswith("task C-3, repeat 2: no label")
    record = charter_estimates(charter=charter(world, success_rule="label_equals_gold"), run=run)
    assert not record["pass_hat_k"].has_value
    assert "the success of 1 of 20 outputs is unknown" in record["pass_hat_k"].reason
    assert "tasks C-3" in record["pass_hat_k"].reason


def test_a_run_without_a_success_rule_has_no_pass_k_and_says_why(world):
    with FakeLLMServer(responder=Planned()) as server:
        run = execute(world, sigma(world, server, output_format="Free text."))
    assert set(Output.objects.filter(run=run).values_list("label", flat=True)) == {None}
    estimates = charter_estimates(charter=charter(world), run=run)
    for metric_id in ("pass_hat_k", "dispersion"):
        assert not estimates[metric_id].has_value
        assert "states no success rule" in estimates[metric_id].reason
        assert "completion, not success" in estimates[metric_id].reason
    records, dispersion, why, basis = reliability_estimates(run=run, confidence=0.95, rule=None)
    assert records == {} and dispersion is None and "no success rule" in why
    assert not basis.determined
    # Executed outputs record no success flag: the `recorded` rule knows none of them.
    recorded = charter_estimates(charter=charter(world, success_rule="recorded"), run=run)
    assert "an executed run records no success flag" in recorded["pass_hat_k"].reason


def test_an_imported_run_is_scored_by_the_same_rule(world):
    with FakeLLMServer(responder=Planned()) as server:
        configuration = sigma(world, server, output_format="Free text.", name="imported")
    lines = [
        json.dumps(
            {"task_id": t, "repeat": r, "text": f"Judgement: {PLAN[t][r]}", "label": PLAN[t][r]}
        )
        for t in PLAN
        for r in range(K)
    ]
    run = output_import(
        actor=world["model_owner"],
        use_case=world["use_case"],
        configuration=configuration,
        task_set=world["task_set"],
        split="graded",
        repeats=K,
        fileobj=io.BytesIO("\n".join(lines).encode()),
        filename="outputs.jsonl",
    )
    gated = charter_estimates(charter=charter(world, success_rule="label_equals_gold"), run=run)
    assert gated["pass_hat_k"].point == pytest.approx(20.0)
    assert "label imported with each output" in " ".join(gated["pass_hat_k"].notes)
