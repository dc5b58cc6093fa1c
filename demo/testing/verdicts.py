"""Test helpers: a structured-judgement use case whose charter asks graders for verdicts.

Five controls (A2/C3) each classified compliant / partially compliant / non-compliant, one σ's
imported outputs at K = 4 repeats with the labels of :data:`PLAN`, and a signed charter whose
``rubric_fields`` asks "Classification correct?" (``label_correct``: classification accuracy
is human-graded) and "Acceptable as is?" (``acceptable``: the ``human_acceptable`` success
rule). The session grades every output (a census), two graders each, so pass^k can be read.

Built through the services, as the demo builds it; grades go through
:func:`grading.services.grades.grades_save` and :func:`assignment_submit`.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model

from charters.models import Charter, Role, UseCase
from charters.services.charters import charter_create, charter_sign
from charters.services.configurations import configuration_upload
from charters.services.task_sets import task_set_import
from charters.services.use_cases import membership_grant, use_case_create
from enterpriseval.documents import config_data
from grading.models import Assignment, GradingSession
from grading.rubric import FIELDS_BY_KIND, FIELDS_BY_NAME, is_asked
from grading.selectors.artefacts import units_of
from grading.services.grades import GradeChange, assignment_submit, grades_save
from grading.services.sessions import session_create
from runs.models import Output, Run
from runs.services.outputs import output_import

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LABELS = ("compliant", "partially compliant", "non-compliant")
C, P, N = LABELS
K = 4
#: The label each task's output gives at repeats 0..3.
PLAN: dict[str, tuple[str, ...]] = {
    "C-1": (C, C, C, C),
    "C-2": (P, P, N, P),
    "C-3": (N, C, N, N),
    "C-4": (C, P, P, C),
    "C-5": (C, C, C, C),
}
#: The graders' final "Classification correct?" per task and repeat (gold: C, P, N, C, N).
GOLD = {"C-1": C, "C-2": P, "C-3": N, "C-4": C, "C-5": N}
#: Which outputs the graders find "Acceptable as is?" (both agree): repeats per task.
ACCEPTABLE = {"C-1": (0, 1, 2, 3), "C-2": (0, 1, 3), "C-3": (0, 2), "C-4": (), "C-5": (1,)}


@dataclass
class VerdictWorld:
    use_case: UseCase
    owner: Any
    model_owner: Any
    reviewer: Any
    graders: list[Any]
    adjudicator: Any
    run: Run
    charter: Charter
    session: GradingSession | None = None

    def sample(self, **options: Any) -> GradingSession:
        """Draw the session (every output unless ``sample_size`` says otherwise)."""
        self.session = session_create(
            actor=self.owner,
            use_case=self.use_case,
            name="Control verdicts",
            runs=[self.run],
            graders=self.graders,
            adjudicators=[self.adjudicator],
            sample_size=options.pop("sample_size", K * len(PLAN)),
            seed=options.pop("seed", 15),
            **options,
        )
        return self.session


def _tasks() -> io.BytesIO:
    lines = [json.dumps({"label_set": list(LABELS)})]
    for task_id, gold in GOLD.items():
        lines.append(
            json.dumps(
                {
                    "id": task_id,
                    "split": "graded",
                    "input": f"Control {task_id}: quarterly access review of the payments system.",
                    "sources": [{"id": f"{task_id}-s1", "text": "Access is reviewed quarterly."}],
                    "gold_label": gold,
                }
            )
        )
    return io.BytesIO(("\n".join(lines) + "\n").encode())


def _outputs() -> io.BytesIO:
    lines = [
        json.dumps(
            {
                "task_id": task_id,
                "repeat": repeat,
                "text": f"Judgement: {label}. Keep the quarterly review [{task_id}-s1].",
                "label": label,
            }
        )
        for task_id, labels in PLAN.items()
        for repeat, label in enumerate(labels)
    ]
    return io.BytesIO(("\n".join(lines) + "\n").encode())


def verdict_charter_document(
    *, rubric_fields: tuple[str, ...] = ("label_correct", "acceptable")
) -> dict[str, Any]:
    """Return Use Case A's example charter, asking ``rubric_fields``, success human_acceptable."""
    path = EXAMPLES / "use_case_a" / "charter.yaml"
    document = dict(config_data(path.read_text(encoding="utf-8"), str(path)))
    for derived in ("use_case", "autonomy", "consequence", "intensity"):
        document.pop(derived, None)
    document["success_rule"] = "human_acceptable"
    document["rubric_fields"] = list(rubric_fields)
    for entry in document["metrics"]:
        if entry["id"] in ("classification_accuracy", "pass_hat_k"):
            entry["planned_n"] = len(PLAN)
    return document


def make_verdict_world(*, document: Mapping[str, Any] | None = None) -> VerdictWorld:
    users = get_user_model().objects
    people = {
        name: users.create_user(username=name, password="pw-" + name)
        for name in ("owner", "model-owner", "reviewer", "grader-a", "grader-b", "adjudicator")
    }
    owner = people["owner"]
    use_case = use_case_create(
        actor=owner,
        key="CONTROLS-V",
        name="Control verdicts",
        business_outcome="Controls are classified against the standard.",
        value_hypothesis="Reviewers classify faster with no loss of accuracy.",
        autonomy=2,
        consequence=3,
    )
    for name, role in (
        ("model-owner", Role.MODEL_OWNER),
        ("reviewer", Role.REVIEWER),
        ("grader-a", Role.GRADER),
        ("grader-b", Role.GRADER),
        ("adjudicator", Role.ADJUDICATOR),
    ):
        membership_grant(actor=owner, use_case=use_case, user=people[name], role=role)
    task_set = task_set_import(
        actor=owner, use_case=use_case, name="controls", fileobj=_tasks(), filename="c.jsonl"
    )
    sigma = EXAMPLES / "use_case_a" / "sigma-gemini-2.5-pro.yaml"
    configuration = configuration_upload(
        actor=people["model-owner"],
        use_case=use_case,
        name="labeller",
        content=sigma.read_text(encoding="utf-8"),
        filename=sigma.name,
    )
    run = output_import(
        actor=people["model-owner"],
        use_case=use_case,
        configuration=configuration,
        task_set=task_set,
        split="graded",
        repeats=K,
        fileobj=_outputs(),
        filename="outputs.jsonl",
    )
    charter = charter_create(
        actor=owner, use_case=use_case, document=dict(document or verdict_charter_document())
    )
    for name, role in (
        ("owner", Role.CHARTER_OWNER),
        ("model-owner", Role.MODEL_OWNER),
        ("reviewer", Role.REVIEWER),
    ):
        charter_sign(actor=people[name], charter=charter, role=role)
    charter.refresh_from_db()
    return VerdictWorld(
        use_case=use_case,
        owner=owner,
        model_owner=people["model-owner"],
        reviewer=people["reviewer"],
        graders=[people["grader-a"], people["grader-b"]],
        adjudicator=people["adjudicator"],
        run=run,
        charter=charter,
    )


Choose = Callable[[Output, str, str], str]


def planted(output: Output, unit_key: str, field: str) -> str:
    """Answer the verdicts by :data:`GOLD` and :data:`ACCEPTABLE`, every other field first."""
    task_id = output.task.external_id
    if field == "label_correct":
        return "Y" if output.label == GOLD[task_id] else "N"
    if field == "correct_label":
        return GOLD[task_id]
    if field == "acceptable":
        return "Y" if output.repeat_index in ACCEPTABLE[task_id] else "N"
    return FIELDS_BY_NAME[field].values[0]


def doubting(output: Output, unit_key: str, field: str) -> str:
    """Answer as :func:`planted`, except that C-1's "compliant" (its gold label) is judged
    wrong, the right label being "partially compliant"."""
    if output.task.external_id == "C-1" and field == "label_correct":
        return "N"
    if output.task.external_id == "C-1" and field == "correct_label":
        return P
    return planted(output, unit_key, field)


def grade(assignment: Assignment, choose: Choose = planted, *, submit: bool = True) -> None:
    """Grade every asked field of ``assignment`` with ``choose``; submit it."""
    output = assignment.artefact.output
    assert output is not None
    grades: dict[str, dict[str, str]] = {}
    changes = []
    for unit in units_of([assignment.artefact])[assignment.artefact_id]:
        unit_grades = grades.setdefault(unit.key, {})
        for spec in FIELDS_BY_KIND[unit.kind]:
            if is_asked(spec.name, unit_grades):
                unit_grades[spec.name] = choose(output, unit.key, spec.name)
                changes.append(GradeChange(unit.key, spec.name, unit_grades[spec.name]))
    grades_save(actor=assignment.grader, assignment=assignment, changes=changes, elapsed_seconds=20)
    if submit:
        assignment_submit(actor=assignment.grader, assignment=assignment)


def grade_session(session: GradingSession, choose: Choose = planted) -> None:
    """Have every grader grade and submit every assignment of ``session`` with ``choose``."""
    for assignment in (
        Assignment.objects.filter(session=session)
        .select_related("grader", "artefact__output__task")
        .order_by("pk")
    ):
        grade(assignment, choose)
