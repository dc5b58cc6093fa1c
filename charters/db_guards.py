"""Database-level guards: signed charters and frozen artefacts cannot be changed (SPEC §2).

The services refuse such changes first, with a clear message; these triggers are the second
line, so that no ORM ``update()``, admin action or hand-written SQL can change them either.

PostgreSQL (production) refuses UPDATE and DELETE. SQLite (the embedded default) refuses
UPDATE; it cannot refuse DELETE because Django's test flush deletes rows on SQLite (on
PostgreSQL it truncates, which row triggers don't see), so deletes there are refused by the
models (PROTECT foreign keys and ``delete()`` overrides).
"""

from __future__ import annotations

IMMUTABLE_TABLES = {
    "charters_configuration": "a configuration version is immutable; upload a new version",
    "charters_taskset": "an imported task set is immutable; import a new version",
    "charters_task": "an imported task is immutable; import a new task-set version",
    "charters_sourcechunk": "an imported source chunk is immutable",
    "charters_keyelement": "an imported key element is immutable",
    "charters_guidanceitem": "an imported guidance item is immutable",
    "charters_signature": "a signature is immutable",
    "charters_deviation": "a recorded deviation is immutable",
    "charters_unblindingevent": "an unblinding event is immutable",
}
FROZEN_CHARTER = "a signed charter is immutable; revise it as a new version"
FROZEN_CHILD_TABLES = ("charters_chartermetric", "charters_signature")

POSTGRES_FUNCTIONS = """
CREATE OR REPLACE FUNCTION enterpriseval_refuse_change() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'enterpriseval: % on % refused: %', TG_OP, TG_TABLE_NAME, TG_ARGV[0]
    USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION enterpriseval_refuse_frozen_charter_child() RETURNS trigger AS $$
DECLARE
  ids bigint[];
BEGIN
  IF TG_OP = 'INSERT' THEN ids := ARRAY[NEW.charter_id];
  ELSIF TG_OP = 'UPDATE' THEN ids := ARRAY[OLD.charter_id, NEW.charter_id];
  ELSE ids := ARRAY[OLD.charter_id];
  END IF;
  IF EXISTS (SELECT 1 FROM charters_charter WHERE id = ANY(ids) AND frozen_at IS NOT NULL) THEN
    RAISE EXCEPTION 'enterpriseval: % on % refused: %', TG_OP, TG_TABLE_NAME, TG_ARGV[0]
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""


def postgres_install() -> list[str]:
    """Return the statements that install the guards on PostgreSQL."""
    statements = [POSTGRES_FUNCTIONS]
    for table, message in IMMUTABLE_TABLES.items():
        statements.append(
            f"CREATE TRIGGER {table}_immutable BEFORE UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION enterpriseval_refuse_change('{message}');"
        )
    statements.append(
        "CREATE TRIGGER charters_charter_frozen BEFORE UPDATE OR DELETE ON charters_charter "
        "FOR EACH ROW WHEN (OLD.frozen_at IS NOT NULL) "
        f"EXECUTE FUNCTION enterpriseval_refuse_change('{FROZEN_CHARTER}');"
    )
    for table in FROZEN_CHILD_TABLES:
        statements.append(
            f"CREATE TRIGGER {table}_frozen_charter BEFORE INSERT OR UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION "
            f"enterpriseval_refuse_frozen_charter_child('{FROZEN_CHARTER}');"
        )
    return statements


def sqlite_install() -> list[str]:
    """Return the statements that install the guards on SQLite (updates and inserts)."""
    statements = []
    for table, message in IMMUTABLE_TABLES.items():
        statements.append(
            f"CREATE TRIGGER {table}_immutable BEFORE UPDATE ON {table} BEGIN "
            f"SELECT RAISE(ABORT, 'enterpriseval: UPDATE on {table} refused: {message}'); END;"
        )
    statements.append(
        "CREATE TRIGGER charters_charter_frozen BEFORE UPDATE ON charters_charter "
        "WHEN OLD.frozen_at IS NOT NULL BEGIN SELECT RAISE(ABORT, "
        f"'enterpriseval: UPDATE on charters_charter refused: {FROZEN_CHARTER}'); END;"
    )
    for table in FROZEN_CHILD_TABLES:
        for operation, row in (("INSERT", "NEW"), ("UPDATE", "OLD")):
            statements.append(
                f"CREATE TRIGGER {table}_frozen_charter_{operation.lower()} BEFORE {operation} "
                f"ON {table} WHEN EXISTS (SELECT 1 FROM charters_charter WHERE id = "
                f"{row}.charter_id AND frozen_at IS NOT NULL) BEGIN SELECT RAISE(ABORT, "
                f"'enterpriseval: {operation} on {table} refused: {FROZEN_CHARTER}'); END;"
            )
    return statements


def install(apps: object, schema_editor: object) -> None:
    """Install the guards for the connection's database (a migration's RunPython)."""
    connection = schema_editor.connection  # type: ignore[attr-defined]
    if connection.vendor == "postgresql":
        statements = postgres_install()
    elif connection.vendor == "sqlite":
        statements = sqlite_install()
    else:
        raise RuntimeError(f"EnterpriseVal supports PostgreSQL and SQLite, not {connection.vendor}")
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
