"""The database guards of graded evidence: one registry, one way to install it (SPEC §7).

The services refuse changes to evidence first, with a clear message; these triggers are the
last line, so that no ORM ``update()``/``delete()``/``_raw_delete()``, admin action or
hand-written SQL changes evidence behind the audit log. Each :class:`Guard` names a table,
an operation and the condition (over ``OLD``/``NEW``, in SQL both databases accept) under
which that operation is refused; :func:`install` creates one trigger per guard on
PostgreSQL (a PL/pgSQL function per guard, since PostgreSQL's ``WHEN`` clause allows no
subquery) and on SQLite (``WHEN`` clause, ``RAISE(ABORT)``).

Refusing DELETE on SQLite too means Django's test flush (``DELETE FROM`` on SQLite, TRUNCATE
on PostgreSQL, which row triggers do not see) must lift the triggers: tests/conftest.py does.

SQLite rebuilds a table when a migration alters it, which drops the table's triggers: a
migration that alters a guarded table must end with ``RunPython(install)`` again (a test
checks every guard's trigger exists). The audit log's own triggers are installed by
``audit.0002_append_only_triggers``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Name prefix of every trigger (and PostgreSQL function) this module installs.
PREFIX = "ev_guard"

SUBMITTED = "(SELECT status FROM grading_assignment WHERE id = {row}.assignment_id) = 'submitted'"
# The grade change a revision explains: the newest revision of the same field, whose values
# are the change's (the revision service writes it first, then changes the grade).
LATEST_REVISION = (
    "EXISTS (SELECT 1 FROM grading_graderevision r WHERE r.id = (SELECT MAX(id) FROM "
    "grading_graderevision WHERE assignment_id = {row}.assignment_id AND unit_key = "
    "{row}.unit_key AND field = {row}.field) {values})"
)
SIGNED_CHARTER = (
    "EXISTS (SELECT 1 FROM charters_charter WHERE use_case_id = OLD.id AND frozen_at IS NOT NULL)"
)
FROZEN_PARENT = (
    "EXISTS (SELECT 1 FROM charters_charter WHERE id = {row}.charter_id AND frozen_at IS NOT NULL)"
)


@dataclass(frozen=True)
class Guard:
    """Refuse ``operation`` on ``table`` when ``when`` holds (always, if it is ``None``)."""

    table: str
    operation: str  # "UPDATE", "DELETE" or "INSERT"
    message: str
    when: str | None = None

    @property
    def name(self) -> str:
        return f"{PREFIX}_{self.table}_{self.operation.lower()}"


def _always(table: str, message: str) -> list[Guard]:
    return [Guard(table, operation, message) for operation in ("UPDATE", "DELETE")]


def _when(table: str, message: str, when: str) -> list[Guard]:
    return [Guard(table, operation, message, when) for operation in ("UPDATE", "DELETE")]


GRADE_MESSAGE = "a submitted assignment's grade changes only by a recorded revision (grade.revise)"
ASSIGNMENT_MESSAGE = "a submitted assignment cannot be reopened, moved or deleted"
USE_CASE_MESSAGE = (
    "a use case's autonomy and consequence are fixed once a charter version is signed"
)
FROZEN_CHARTER = "a signed charter is immutable; revise it as a new version"

GUARDS: tuple[Guard, ...] = (
    # Layer 1: what a signed charter and a frozen σ or task set rest on.
    *_always("charters_configuration", "a configuration version is immutable; upload a new one"),
    *_always("charters_taskset", "an imported task set is immutable; import a new version"),
    *_always("charters_task", "an imported task is immutable; import a new task-set version"),
    *_always("charters_sourcechunk", "an imported source chunk is immutable"),
    *_always("charters_keyelement", "an imported key element is immutable"),
    *_always("charters_guidanceitem", "an imported guidance item is immutable"),
    *_always("charters_signature", "a signature is immutable"),
    Guard("charters_signature", "INSERT", FROZEN_CHARTER, FROZEN_PARENT.format(row="NEW")),
    *_always("charters_deviation", "a recorded deviation is immutable"),
    *_always("charters_unblindingevent", "an unblinding event is immutable"),
    *_when("charters_charter", FROZEN_CHARTER, "OLD.frozen_at IS NOT NULL"),
    Guard("charters_chartermetric", "INSERT", FROZEN_CHARTER, FROZEN_PARENT.format(row="NEW")),
    *_when("charters_chartermetric", FROZEN_CHARTER, FROZEN_PARENT.format(row="OLD")),
    Guard(
        "charters_usecase",
        "UPDATE",
        USE_CASE_MESSAGE,
        f"(NEW.autonomy <> OLD.autonomy OR NEW.consequence <> OLD.consequence) "
        f"AND {SIGNED_CHARTER}",
    ),
    Guard("charters_usecase", "DELETE", USE_CASE_MESSAGE, SIGNED_CHARTER),
    # Membership changes are a revoke and a grant, each audited; a row is never edited.
    Guard(
        "charters_membership",
        "UPDATE",
        "a membership is never edited: revoke the role and grant another (both audited)",
    ),
    # Layer 2: what was generated and judged.
    *_always("runs_output", "a generated or imported output is immutable"),
    *_always("runs_unit", "a graded unit of an output is immutable"),
    *_always("runs_trajectory", "an output's trajectory is immutable"),
    *_always("runs_judgescore", "a judge score is immutable; judge with a new judge version"),
    # Layer 3: what the experts graded and adjudicated.
    *_always("grading_sessionartefact", "a session's artefact (and its provenance) is immutable"),
    Guard(
        "grading_assignment",
        "UPDATE",
        ASSIGNMENT_MESSAGE,
        "OLD.status = 'submitted' AND (NEW.status <> OLD.status OR NEW.grader_id <> "
        "OLD.grader_id OR NEW.artefact_id <> OLD.artefact_id OR NEW.session_id <> "
        "OLD.session_id OR NEW.submitted_at IS NULL OR NEW.submitted_at <> OLD.submitted_at)",
    ),
    Guard("grading_assignment", "DELETE", ASSIGNMENT_MESSAGE, "OLD.status = 'submitted'"),
    Guard(
        "grading_grade",
        "INSERT",
        GRADE_MESSAGE,
        f"{SUBMITTED.format(row='NEW')} AND NOT "
        + LATEST_REVISION.format(row="NEW", values="AND r.new_value = NEW.value"),
    ),
    Guard(
        "grading_grade",
        "UPDATE",
        GRADE_MESSAGE,
        f"{SUBMITTED.format(row='OLD')} AND (NEW.value <> OLD.value OR NEW.assignment_id <> "
        "OLD.assignment_id OR NEW.unit_key <> OLD.unit_key OR NEW.field <> OLD.field) AND NOT "
        + LATEST_REVISION.format(
            row="OLD",
            values="AND r.old_value = OLD.value AND r.new_value = NEW.value "
            "AND NEW.assignment_id = OLD.assignment_id AND NEW.unit_key = OLD.unit_key "
            "AND NEW.field = OLD.field",
        ),
    ),
    Guard(
        "grading_grade",
        "DELETE",
        GRADE_MESSAGE,
        f"{SUBMITTED.format(row='OLD')} AND NOT "
        + LATEST_REVISION.format(
            row="OLD", values="AND r.old_value = OLD.value AND r.new_value = ''"
        ),
    ),
    *_always("grading_graderevision", "a grade revision is immutable"),
    *_always("grading_adjudication", "an adjudication is immutable"),
    # Layer 4: what the committee acts on.
    *_always("gates_decision", "a recorded decision is immutable; compute a new decision"),
    *_when(
        "scorecards_scorecard",
        "a final scorecard is immutable; record a new decision and scorecard",
        "OLD.status = 'final'",
    ),
)

#: The triggers of earlier migrations that :func:`install` replaces: (trigger, table).
_IMMUTABLE_BEFORE = (
    "charters_configuration",
    "charters_taskset",
    "charters_task",
    "charters_sourcechunk",
    "charters_keyelement",
    "charters_guidanceitem",
    "charters_signature",
    "charters_deviation",
    "charters_unblindingevent",
    "gates_decision",
)
SUPERSEDED_POSTGRES = (
    *((f"{table}_immutable", table) for table in _IMMUTABLE_BEFORE),
    ("charters_charter_frozen", "charters_charter"),
    ("charters_chartermetric_frozen_charter", "charters_chartermetric"),
    ("charters_signature_frozen_charter", "charters_signature"),
    ("scorecards_scorecard_final", "scorecards_scorecard"),
)
SUPERSEDED_SQLITE = (
    *(f"{table}_immutable" for table in _IMMUTABLE_BEFORE),
    "charters_charter_frozen",
    "scorecards_scorecard_final",
    *(
        f"{table}_frozen_charter_{operation}"
        for table in ("charters_chartermetric", "charters_signature")
        for operation in ("insert", "update")
    ),
)


def guarded_tables() -> list[str]:
    """Return the guarded tables, each once, in registry order."""
    return list(dict.fromkeys(guard.table for guard in GUARDS))


def _refusal(guard: Guard) -> str:
    return f"enterpriseval: {guard.operation} on {guard.table} refused: {guard.message}"


def postgres_statements(guard: Guard) -> list[str]:
    """Return the statements that (re)create ``guard`` on PostgreSQL."""
    returned = "OLD" if guard.operation == "DELETE" else "NEW"
    test = guard.when or "TRUE"
    message = _refusal(guard).replace("'", "''")
    return [
        f"DROP TRIGGER IF EXISTS {guard.name} ON {guard.table};",
        f"""
        CREATE OR REPLACE FUNCTION {guard.name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF {test} THEN
            RAISE EXCEPTION '{message}' USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          RETURN {returned};
        END;
        $$;
        """,
        f"CREATE TRIGGER {guard.name} BEFORE {guard.operation} ON {guard.table} "
        f"FOR EACH ROW EXECUTE FUNCTION {guard.name}();",
    ]


def sqlite_statements(guard: Guard) -> list[str]:
    """Return the statements that (re)create ``guard`` on SQLite."""
    when = f" WHEN {guard.when}" if guard.when else ""
    message = _refusal(guard).replace("'", "''")
    return [
        f"DROP TRIGGER IF EXISTS {guard.name};",
        f"CREATE TRIGGER {guard.name} BEFORE {guard.operation} ON {guard.table} FOR EACH ROW"
        f"{when} BEGIN SELECT RAISE(ABORT, '{message}'); END;",
    ]


def install_statements(vendor: str) -> list[str]:
    """Return the statements that replace earlier guards and install every guard."""
    if vendor == "postgresql":
        statements = [
            f"DROP TRIGGER IF EXISTS {name} ON {table};" for name, table in SUPERSEDED_POSTGRES
        ]
        for guard in GUARDS:
            statements += postgres_statements(guard)
        return statements
    if vendor == "sqlite":
        statements = [f"DROP TRIGGER IF EXISTS {name};" for name in SUPERSEDED_SQLITE]
        for guard in GUARDS:
            statements += sqlite_statements(guard)
        return statements
    raise RuntimeError(f"EnterpriseVal supports PostgreSQL and SQLite, not {vendor}")


def install(apps: object, schema_editor: object) -> None:
    """Install every guard on the connection's database (a migration's ``RunPython``)."""
    connection = schema_editor.connection  # type: ignore[attr-defined]
    with connection.cursor() as cursor:
        for statement in install_statements(connection.vendor):
            cursor.execute(statement)
