"""Test helpers: the world grading happens in.

The credit-memo use case with a signed charter, both σ's imported outputs (12 graded tasks
each), three graders, an adjudicator and a session.

Built through the services, as the demo builds it. ``grading_world`` holds a blinded session
of 8 artefacts, 4 drawn from each σ's run, 2 graders each; ``provenance`` lists every string that
would reveal where an artefact came from.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model

from charters.models import Role, UseCase
from charters.services.use_cases import membership_grant
from demo.loaders import demo_evaluation_object
from grading.models import Assignment, GradingSession
from grading.rubric import FIELDS_BY_KIND, FIELDS_BY_NAME, is_asked
from grading.selectors.artefacts import units_of
from grading.services.grades import GradeChange, assignment_submit, grades_save
from grading.services.sessions import provenance_strings, session_create
from runs.models import Run
from runs.services.outputs import output_import

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"
GRADED_TASKS = 12
SEED = 20261130


def first_tasks_file(sigma: str, count: int) -> io.BytesIO:
    """Return the first ``count`` lines of an example outputs file."""
    lines = (EXAMPLES / f"outputs-{sigma}.jsonl").read_text(encoding="utf-8").splitlines()
    return io.BytesIO(("\n".join(lines[:count]) + "\n").encode())


@dataclass
class GradingWorld:
    use_case: UseCase
    owner: Any
    model_owner: Any
    reviewer: Any
    graders: list[Any]
    adjudicator: Any
    outsider: Any
    runs: list[Run]
    session: GradingSession
    provenance: list[str] = field(default_factory=list)

    def assignments_of(self, grader: Any) -> list[Assignment]:
        return list(
            Assignment.objects.filter(session=self.session, grader=grader).order_by("position")
        )


def make_world(*, sample_size: int = 4, include_baselines: bool = False) -> GradingWorld:
    objects = demo_evaluation_object(example_dir=EXAMPLES, log=lambda _line: None)
    users = get_user_model().objects
    owner = users.get(username="demo-owner")
    model_owner = users.get(username="demo-model-owner")
    reviewer = users.get(username="demo-reviewer")
    adjudicator = users.get(username="demo-adjudicator")
    graders = [users.get(username="demo-grader")]
    for name in ("grader-two", "grader-three"):
        user = users.create_user(username=name, password="pw-" + name)
        membership_grant(actor=owner, use_case=objects.use_case, user=user, role=Role.GRADER)
        graders.append(user)
    outsider = users.create_user(username="outsider", password="pw-outsider")  # noqa: S106
    runs = []
    for sigma, configuration in objects.configurations.items():
        runs.append(
            output_import(
                actor=model_owner,
                use_case=objects.use_case,
                configuration=configuration,
                task_set=objects.task_set,
                split="graded",
                repeats=1,
                fileobj=first_tasks_file(sigma, GRADED_TASKS),
                filename=f"outputs-{sigma}.jsonl",
            )
        )
    session = session_create(
        actor=owner,
        use_case=objects.use_case,
        name="Credit memo round 1",
        runs=runs,
        graders=graders,
        adjudicators=[adjudicator],
        include_baselines=include_baselines,
        design="stratified",
        sample_size=sample_size,
        seed=SEED,
    )
    return GradingWorld(
        use_case=objects.use_case,
        owner=owner,
        model_owner=model_owner,
        reviewer=reviewer,
        graders=graders,
        adjudicator=adjudicator,
        outsider=outsider,
        runs=runs,
        session=session,
        provenance=provenance_strings(runs),
    )


def truth_of(sigma: str) -> dict[str, dict[str, Any]]:
    """Return the planted truth of an example σ's outputs by task id."""
    lines = (EXAMPLES / f"truth-{sigma}.jsonl").read_text(encoding="utf-8").splitlines()
    return {record["task_id"]: record for record in map(json.loads, lines)}


def first_values(unit_key: str, field: str) -> str:
    """Choose the first value of every field (assertive Y, supported fully, …)."""
    return FIELDS_BY_NAME[field].values[0]


def fill(assignment: Assignment, choose=first_values) -> dict[str, dict[str, str]]:
    """Grade every asked field of the assignment with ``choose(unit_key, field)``; return them."""
    grades: dict[str, dict[str, str]] = {}
    changes = []
    for unit in units_of([assignment.artefact])[assignment.artefact_id]:
        unit_grades = grades.setdefault(unit.key, {})
        for spec in FIELDS_BY_KIND[unit.kind]:
            if is_asked(spec.name, unit_grades):
                unit_grades[spec.name] = choose(unit.key, spec.name)
                changes.append(GradeChange(unit.key, spec.name, unit_grades[spec.name]))
    grades_save(actor=assignment.grader, assignment=assignment, changes=changes, elapsed_seconds=30)
    return grades


#: What :func:`dissent` answers instead of :func:`first_values`: s2 "not assertive", so
#: Grader 2 is not asked whether s2 is supported.
DISSENT = {
    ("s1", "relevant"): "N",
    ("s2", "assertive"): "N",
    ("k:ke1", "key_element"): "absent",
    ("artefact", "value_add"): "2",
}


def dissent(unit_key: str, field: str) -> str:
    """Disagree with :func:`first_values` on s1 relevance, s2, key element ke1, value-add."""
    return DISSENT.get((unit_key, field), first_values(unit_key, field))


def grade_apart(artefact: Any, *, both_submit: bool = True) -> list[Assignment]:
    """Have an artefact's two graders disagree and submit: Grader 1 (the lower assignment
    public id, as the adjudication pages number them) with :func:`first_values`, Grader 2
    with :func:`dissent`. Return the assignments in grader order."""
    assignments = list(Assignment.objects.filter(artefact=artefact).order_by("public_id"))
    fill(assignments[0])
    fill(assignments[1], dissent)
    for assignment in assignments[: 2 if both_submit else 1]:
        assignment_submit(actor=assignment.grader, assignment=assignment)
    return assignments


def grade_all_open(session: GradingSession) -> int:
    """Have each grader grade and submit their open assignments (all agreeing) until none is
    left or the session stops (a sequential session draws more as values become final)."""
    from grading.models import AssignmentStatus, SessionStatus

    done = 0
    while True:
        session.refresh_from_db()
        if session.status != SessionStatus.OPEN:
            return done
        assignment = (
            Assignment.objects.filter(
                session=session,
                status__in=[AssignmentStatus.PENDING, AssignmentStatus.IN_PROGRESS],
            )
            .select_related("grader", "artefact", "session")
            .order_by("pk")
            .first()
        )
        if assignment is None:
            return done
        fill(assignment)
        assignment_submit(actor=assignment.grader, assignment=assignment)
        done += 1


def sequential_session(world: GradingWorld, **options: Any) -> GradingSession:
    """Return a sequential session (SPEC §5.5) on the world's first run: a budget of 10 grades,
    3 outputs double-graded for agreement, τ 0.5; ``options`` replace those (``judge`` needed)."""
    from grading.models import SessionMode

    chosen = {
        "name": "Credit memo round 2",
        "budget": 10,
        "agreement_size": 3,
        "seed": 424242,
        "tau": 0.5,
    } | options
    return session_create(
        actor=world.owner,
        use_case=world.use_case,
        runs=[world.runs[0]],
        graders=world.graders,
        adjudicators=[world.adjudicator],
        mode=SessionMode.SEQUENTIAL,
        **chosen,
    )


def grade_queue_by_command(username: str, session: str) -> int:
    """Have ``username`` grade and submit their open assignments of ``session`` with the
    grader's commands only (``assignments_list``, ``assignment_show``, ``assignment_grade``),
    as a grader at a terminal would: the first allowed value of every field the rubric asks,
    saved until nothing is missing (a value may ask a further field: assertive Y → supported),
    then submitted. Return how many were submitted."""
    from django.core.management import call_command

    def as_json(command: str, *options: str) -> Any:
        out = io.StringIO()
        call_command(command, *options, "--as", username, "--format", "json", stdout=out)
        return json.loads(out.getvalue())

    submitted = 0
    while True:
        queue = as_json("assignments_list", "--session", session)["results"]
        open_ = [a for a in queue if a["status"] != "submitted"]
        if not open_:
            return submitted
        public_id = open_[0]["public_id"]
        detail = as_json("assignment_show", "--assignment", public_id)
        first = {f["name"]: f["values"][0] for f in detail["rubric"] if f["values"]}
        while detail["missing"]:
            values = [
                f"{m['unit_key']}.{m['field']}={first[m['field']]}" for m in detail["missing"]
            ]
            options = [part for value in values for part in ("--value", value)]
            saved = as_json(
                "assignment_grade", "--assignment", public_id, "--elapsed-seconds", "20", *options
            )
            detail = as_json("assignment_show", "--assignment", public_id)
            assert saved["missing"] == detail["missing"]
        done = as_json(
            "assignment_grade", "--assignment", public_id, "--elapsed-seconds", "5", "--submit"
        )
        assert done["status"] == "submitted"
        submitted += 1
