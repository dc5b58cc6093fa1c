"""The immutability matrix (issue 17 findings 6, 7): every guarded table × every way to change it.

One world holds a guarded row of every table in ``audit.db_guards``: outputs, units, a
trajectory, judge scores, session artefacts, a submitted assignment with its grades and a
revision, an adjudication, a recorded decision, a final scorecard, the signed charter with
its metrics, signatures, deviation and unblinding event, σ, the task set and its content,
the signed use case and a membership. Each row is attacked as an admin action, a script or
a careless migration would: ORM ``update()``, ORM ``delete()``, ``_raw_delete()``, raw SQL
UPDATE and raw SQL DELETE. Every attempt must be refused and leave the row as it was, on
SQLite and on PostgreSQL alike (the suite runs on both). The second half checks that the
guards leave the legitimate paths open: drafts, unsubmitted grades, revisions through the
service, a use case's autonomy before its charter is signed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.apps import apps
from django.db import DatabaseError, connection, models, transaction
from django.db.models.deletion import ProtectedError
from django.urls import reverse

from audit.db_guards import GUARDS, guarded_tables
from charters.models import (
    Charter,
    CharterMetric,
    Configuration,
    Deviation,
    GuidanceItem,
    KeyElement,
    Membership,
    Signature,
    SourceChunk,
    Task,
    TaskSet,
    UnblindingEvent,
    UseCase,
)
from charters.services.charters import charter_revise
from charters.services.use_cases import use_case_create
from demo.testing.grading import GradingWorld, fill, grade_apart, make_world
from demo.testing.scorecards import final_scorecard
from enterpriseval.errors import ImmutableError
from gates.models import Decision
from grading.models import (
    Adjudication,
    Assignment,
    AssignmentStatus,
    Grade,
    GradeRevision,
    SessionArtefact,
)
from grading.services.grades import GradeChange, adjudication_record, grades_save
from runs.models import Judge, JudgeKind, JudgeScore, Output, Trajectory, Unit
from scorecards.models import Scorecard

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Target:
    """A guarded row, a column to change and a value to change it to."""

    model: type[models.Model]
    pk: Any
    column: str
    value: Any
    deletable: bool = True  # False: only UPDATE is guarded (membership rows are revoked)


@pytest.fixture
def evidence(db) -> dict[str, Target]:
    """Build the world and return one guarded row per guarded table."""
    world: GradingWorld = make_world(sample_size=4)
    artefact = world.session.artefacts.order_by("pk").first()
    first, _second = grade_apart(artefact)
    grades_save(
        actor=first.grader,
        assignment=first,
        changes=[GradeChange("artefact", "value_add", _another_value_add(first))],
        reason="Re-read the memo.",
    )
    adjudication = adjudication_record(
        actor=world.adjudicator, artefact=artefact, unit_key="s1", field="relevant", value="Y"
    )
    scorecard = final_scorecard(world)  # records a decision too, which unblinds
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    charter_revise(actor=world.owner, charter=charter, reason="Committee asked for E4.")
    output = Output.objects.filter(run__in=world.runs).order_by("pk").first()
    trajectory = Trajectory.objects.create(output=output, record={"steps": []})
    judge = Judge.objects.create(name="matrix", version="1", kind=JudgeKind.OFFLINE)
    unit = Unit.objects.filter(output=output).order_by("pk").first()
    score = JudgeScore.objects.create(judge=judge, unit=unit, criterion="supported", score=1.0)
    task_set = world.runs[0].task_set
    task = Task.objects.filter(task_set=task_set).order_by("pk").first()
    grade = Grade.objects.filter(assignment=first).exclude(unit_key="artefact").first()
    decision = Decision.objects.get(use_case=world.use_case)
    assert first.__class__.objects.get(pk=first.pk).status == AssignmentStatus.SUBMITTED
    targets = [
        Target(Output, output.pk, "text", "rewritten output"),
        Target(Unit, unit.pk, "text", "rewritten sentence"),
        Target(Trajectory, trajectory.pk, "record", {"steps": ["forged"]}),
        Target(JudgeScore, score.pk, "score", 0.0),
        Target(SessionArtefact, artefact.pk, "stratum", "baseline"),
        Target(Assignment, first.pk, "status", AssignmentStatus.IN_PROGRESS),
        Target(Grade, grade.pk, "value", "forged"),
        Target(GradeRevision, GradeRevision.objects.get().pk, "reason", "never happened"),
        Target(Adjudication, adjudication.pk, "value", "N"),
        Target(Decision, decision.pk, "status", "Scale"),
        Target(Scorecard, scorecard.pk, "failure_modes", "none at all"),
        Target(Charter, charter.pk, "nu_max", 99),
        Target(
            CharterMetric, CharterMetric.objects.filter(charter=charter).first().pk, "weight", 9
        ),
        Target(Signature, Signature.objects.filter(charter=charter).first().pk, "role", "x"),
        Target(Deviation, Deviation.objects.get().pk, "reason", "another story"),
        Target(UnblindingEvent, UnblindingEvent.objects.first().pk, "reason", "never"),
        Target(Configuration, world.runs[0].configuration_id, "model_ref", "forged/model"),
        Target(TaskSet, task_set.pk, "manifest_sha256", "0" * 64),
        Target(Task, task.pk, "reference", "forged reference"),
        Target(SourceChunk, SourceChunk.objects.filter(task=task).first().pk, "text", "x"),
        Target(KeyElement, KeyElement.objects.filter(task=task).first().pk, "text", "x"),
        Target(GuidanceItem, GuidanceItem.objects.filter(task=task).first().pk, "text", "x"),
        Target(UseCase, world.use_case.pk, "autonomy", 3),
        Target(Membership, Membership.objects.first().pk, "role", "reviewer", deletable=False),
    ]
    return {target.model._meta.db_table: target for target in targets}


def _another_value_add(assignment: Assignment) -> str:
    current = Grade.objects.get(assignment=assignment, unit_key="artefact", field="value_add")
    return next(value for value in ("0", "1", "2") if value != current.value)


def _snapshot(target: Target) -> dict[str, Any]:
    return target.model.objects.filter(pk=target.pk).values().get()


def _sql(statement: str, params: list[Any]) -> Callable[[], None]:
    def run() -> None:
        with connection.cursor() as cursor:
            cursor.execute(statement, params)

    return run


def attacks(target: Target) -> dict[str, Callable[[], Any]]:
    """Return the ways to change or remove ``target``'s row, by name."""
    rows = target.model.objects.filter(pk=target.pk)
    table = connection.ops.quote_name(target.model._meta.db_table)
    column = target.model._meta.get_field(target.column)
    value = column.get_db_prep_save(target.value, connection)
    found = {
        "ORM update()": lambda: rows.update(**{target.column: target.value}),
        "raw SQL UPDATE": _sql(
            f"UPDATE {table} SET {connection.ops.quote_name(column.column)} = %s WHERE id = %s",
            [value, target.pk],
        ),
    }
    if target.deletable:
        found |= {
            "ORM delete()": lambda: rows.delete(),
            "_raw_delete()": lambda: rows._raw_delete(connection.alias),
            "raw SQL DELETE": _sql(f"DELETE FROM {table} WHERE id = %s", [target.pk]),
        }
    return found


def test_the_matrix_covers_every_guarded_table(evidence):
    assert set(evidence) == set(guarded_tables())
    models_by_table = {model._meta.db_table for model in apps.get_models()}
    assert set(guarded_tables()) <= models_by_table


def test_every_attack_on_every_guarded_table_is_refused_and_changes_nothing(evidence):
    accepted: list[str] = []
    for table, target in evidence.items():
        before = _snapshot(target)
        for name, attack in attacks(target).items():
            try:
                with transaction.atomic():
                    attack()
            except (DatabaseError, ProtectedError, ImmutableError):
                pass
            else:
                accepted.append(f"{table}: {name} was accepted")
                continue
            if _snapshot(target) != before:
                accepted.append(f"{table}: {name} was refused but the row changed")
    assert not accepted, "\n".join(accepted)


def test_the_database_names_the_table_and_the_rule_it_enforces(evidence):
    target = evidence["grading_grade"]
    with pytest.raises(DatabaseError) as refused, transaction.atomic():
        target.model.objects.filter(pk=target.pk)._raw_delete(connection.alias)
    message = str(refused.value)
    assert "grading_grade" in message
    assert "only by a recorded revision" in message


def test_every_guard_trigger_is_installed(db):
    if connection.vendor == "postgresql":
        sql = "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"
    else:
        sql = "SELECT name FROM sqlite_master WHERE type = 'trigger'"
    with connection.cursor() as cursor:
        cursor.execute(sql)
        installed = {name for (name,) in cursor.fetchall()}
    assert {guard.name for guard in GUARDS} <= installed


# -- the legitimate paths stay open ---------------------------------------------------------


def test_unsubmitted_grades_stay_editable_and_a_revision_goes_through(db):
    world = make_world(sample_size=4)
    assignment = world.assignments_of(world.graders[0])[0]
    fill(assignment)
    grade = Grade.objects.filter(assignment=assignment).first()
    assert Grade.objects.filter(pk=grade.pk).update(value="N") == 1
    Grade.objects.filter(pk=grade.pk).delete()
    fill(assignment)
    from grading.services.grades import assignment_submit

    assignment_submit(actor=assignment.grader, assignment=assignment)
    revised = _another_value_add(assignment)
    grades_save(
        actor=assignment.grader,
        assignment=assignment,
        changes=[GradeChange("artefact", "value_add", revised)],
        reason="Second look.",
    )
    value_add = Grade.objects.filter(assignment=assignment, unit_key="artefact", field="value_add")
    assert value_add.get().value == revised
    # The revision's values are spent: another raw change of the same field is refused.
    with pytest.raises(DatabaseError), transaction.atomic():
        value_add.update(value=_another_value_add(assignment))


def test_a_use_case_changes_autonomy_until_its_charter_is_signed(personas):
    assert UseCase.objects.filter(pk=personas.use_case.pk).update(autonomy=2) == 1


def test_the_admin_shows_autonomy_read_only_once_the_charter_is_signed(admin_client, db):
    world = make_world(sample_size=4)
    url = reverse("admin:charters_usecase_change", args=[world.use_case.pk])
    page = admin_client.get(url).content.decode()
    assert 'name="autonomy"' not in page and 'name="consequence"' not in page
    draft_owner = world.owner
    other = use_case_create(
        actor=draft_owner,
        key="DRAFT-UC",
        name="Draft",
        business_outcome="x",
        value_hypothesis="y",
        autonomy=1,
        consequence=1,
    )
    page = admin_client.get(reverse("admin:charters_usecase_change", args=[other.pk]))
    assert 'name="autonomy"' in page.content.decode()


def test_the_admin_shows_every_guarded_model_read_only(evidence, admin_client):
    editable: list[str] = []
    for table, target in evidence.items():
        if table in {"charters_usecase", "charters_chartermetric"}:
            continue  # a draft's; read-only fields once signed (tested above), or an inline
        meta = target.model._meta
        change = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[target.pk])
        if admin_client.post(change, {target.column: "x"}).status_code != 403:
            editable.append(f"{table}: the change form accepted a POST")
        if table == "charters_membership":
            continue  # revoked through the audited service
        delete = reverse(f"admin:{meta.app_label}_{meta.model_name}_delete", args=[target.pk])
        if admin_client.post(delete, {"post": "yes"}).status_code != 403:
            editable.append(f"{table}: the delete view accepted a POST")
    assert not editable, "\n".join(editable)
