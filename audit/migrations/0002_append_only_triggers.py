"""The database refuses UPDATE and DELETE on audit entries, whatever the client.

The model and its queryset refuse first, with a clear message; these triggers stop raw SQL,
``QuerySet._update()`` and other clients. PostgreSQL does not fire row triggers on
TRUNCATE (Django's test flush uses it); production grants the application role no
TRUNCATE on this table. Django rebuilds SQLite tables to alter them, which drops their
triggers: a later migration that alters AuditEntry must re-create them
(tests/audit/test_audit_append_only.py checks they exist).
"""

from django.db import migrations

TABLE = "audit_auditentry"
MESSAGE = "audit entries are append-only"

POSTGRES_INSTALL = [
    f"""
    CREATE FUNCTION audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION '{MESSAGE}: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
    END;
    $$;
    """,
    f"CREATE TRIGGER {TABLE}_append_only BEFORE UPDATE OR DELETE ON {TABLE} "
    "FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();",
]
POSTGRES_REMOVE = [
    f"DROP TRIGGER {TABLE}_append_only ON {TABLE};",
    "DROP FUNCTION audit_refuse_change();",
]
SQLITE_INSTALL = [
    f"CREATE TRIGGER {TABLE}_no_{operation.lower()} BEFORE {operation} ON {TABLE} "
    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}: {operation} on {TABLE} refused'); END;"
    for operation in ("UPDATE", "DELETE")
]
SQLITE_REMOVE = [f"DROP TRIGGER {TABLE}_no_{operation};" for operation in ("update", "delete")]


def _run(schema_editor, statements_by_vendor):
    vendor = schema_editor.connection.vendor
    if vendor not in statements_by_vendor:
        raise RuntimeError(f"EnterpriseVal supports PostgreSQL and SQLite, not {vendor}")
    for statement in statements_by_vendor[vendor]:
        schema_editor.execute(statement, params=None)


def install(apps, schema_editor):
    _run(schema_editor, {"postgresql": POSTGRES_INSTALL, "sqlite": SQLITE_INSTALL})


def remove(apps, schema_editor):
    _run(schema_editor, {"postgresql": POSTGRES_REMOVE, "sqlite": SQLITE_REMOVE})


class Migration(migrations.Migration):
    dependencies = (("audit", "0001_initial"),)
    operations = (migrations.RunPython(install, reverse_code=remove),)
