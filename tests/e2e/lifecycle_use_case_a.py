"""Use Case A of seed 003 (§7.1, Table 3): control design effectiveness, A2 / C3 / E3.

The files a user brings to the lifecycle browser test: the task set (each control of a
process–risk–control matrix to classify against the control standard), a σ differing only in
its model, and the loopback model's replies. Gemini 2.5 Pro answers without the unsupported
audit claim Gemini 2.5 Flash makes, so the two σ's decisions differ.
"""

from __future__ import annotations

import json

KEY = "CTRL-DESIGN-A"

#: (control id, name, matrix row, standard clause): the graded tasks.
CONTROLS = [
    (
        "C-101",
        "Quarterly user-access review",
        "The IT security manager reviews user access to the payments system each quarter and "
        "revokes leavers within five days.",
        "Standard AC-2 requires a named owner, a frequency and retained evidence of review.",
    ),
    (
        "C-102",
        "Daily cash reconciliation",
        "Treasury operations reconcile nostro balances daily; breaks above 10,000 are "
        "escalated to the head of treasury.",
        "Standard RC-4 requires a frequency, a threshold and an escalation path.",
    ),
    (
        "C-103",
        "Vendor due diligence",
        "Procurement performs due diligence on new vendors.",
        "Standard TP-1 requires who performs the check, when, and the evidence retained.",
    ),
    (
        "C-104",
        "Change approval",
        "The change advisory board approves production changes before release; tickets are "
        "retained for seven years.",
        "Standard CM-3 requires approval before release and retained evidence.",
    ),
    (
        "C-105",
        "Limit monitoring",
        "Market risk reviews trading limits.",
        "Standard LM-2 requires a frequency, a threshold and an escalation path for breaches.",
    ),
    (
        "C-106",
        "Payment release dual control",
        "Two authorised signatories release every payment above 1 million in the payments system.",
        "Standard PY-1 requires dual control on high-value payments, evidenced in the log.",
    ),
]


def _task(task_id: str, split: str, control: tuple[str, str, str, str]) -> dict:
    control_id, name, row, clause = control
    return {
        "id": task_id,
        "split": split,
        "input": (
            f"Classify the design of control {control_id} ({name}) as compliant, partially "
            "compliant or non-compliant against the control standard, citing the chunk ids."
        ),
        "sources": [
            {"id": f"{task_id}-row", "source": "process-risk-control matrix", "text": row},
            {"id": f"{task_id}-std", "source": "control standard", "text": clause},
        ],
        "key_elements": [
            {"id": "ke1", "text": "The classification, with the standard clause it rests on"},
            {"id": "ke2", "text": "The remediation the design needs to comply"},
        ],
        "metadata": {"control": control_id},
    }


def tasks_jsonl() -> str:
    """Six graded controls, one for tuning, two for the stress split (one with no sources)."""
    tasks = [_task(f"A-G{i}", "graded", control) for i, control in enumerate(CONTROLS, 1)]
    tasks.append(
        _task(
            "A-D1",
            "dev",
            ("C-900", "Journal review", "Finance reviews manual journals monthly.", "JE-1."),
        )
    )
    orphan = _task("A-S1", "stress", ("C-901", "Unknown control", "-", "XX-1."))
    orphan.update(sources=[], expected_abstention=True)
    tasks += [orphan, _task("A-S2", "stress", CONTROLS[2])]
    return "".join(json.dumps(task) + "\n" for task in tasks)


SIGMA = """\
schema_version: "1"
name: Control design classification
description: >-
  Classifies each control of a process-risk-control matrix as compliant, partially compliant
  or non-compliant against the control standard and rule library, citing both.
model:
  provider: openai_compatible
  id: {model}
  api_base: {api_base}
  parameters:
    temperature: 0
prompts:
  version: ctl-1.0
  system: |
    You are an issue quality assurance analyst. Use only the matrix row and the standard
    clause given; cite each statement's chunk id in square brackets. Do not score your own
    output.
  user_template: |
    Task {{task_id}}: {{input}}

    Sources:
    {{sources}}
retrieval:
  corpus: control-standards
  chunking:
    strategy: section
    size: 400
    overlap: 0
  top_k: 4
  embedder: bm25
tools: []
guardrails:
  citation_required: true
  refusal_policy: Say "Not determinable from the sources" when the row or clause is missing.
  max_output_tokens: 600
  output_format: One judgement per control, exported to the structured table.
  preconditions:
    - The matrix file is present before the run starts.
    - The analyst has explicitly instructed the run.
  blocked_terms: []
oversight:
  checkpoints:
    - name: analyst-approval
      description: The issue QA analyst approves or corrects every judgement.
      blocking: true
  reviewer_role: Issue quality assurance analyst
  review_instructions: Check each judgement against the standard clause it cites.
  review_time_budget_minutes: 10
"""


def sigma_yaml(*, model: str, api_base: str) -> str:
    return SIGMA.format(model=model, api_base=api_base)


#: The sentence Flash adds that no source supports: graders mark it "not supported".
UNSUPPORTED = "Internal audit tested the control in 2023 and found it effective."
#: A recommendation, not an assertion.
NOT_ASSERTIVE = "Please confirm the classification with the control owner."


def reply(request: dict) -> str:
    """The loopback model: cite the row and the clause; Flash adds an unsupported claim."""
    user = request["messages"][-1]["content"]
    ids = [part.split("]", 1)[0] for part in user.split("[")[1:]]
    row = next((i for i in ids if i.endswith("-row")), None)
    clause = next((i for i in ids if i.endswith("-std")), None)
    if row is None or clause is None:
        return "Not determinable from the sources: the matrix row is missing."
    sentences = [
        f"The control states who performs it and how often [{row}].",
        f"The standard also requires retained evidence, so the design is partially compliant "
        f"[{clause}].",
    ]
    if "flash" in str(request.get("model", "")):
        sentences.append(UNSUPPORTED)
    sentences.append(NOT_ASSERTIVE)
    return " ".join(sentences)
