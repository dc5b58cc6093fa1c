"""Re-create the audit log's append-only triggers (after a migration that rebuilt the table)."""

from __future__ import annotations

from typing import Any

TABLE = "audit_auditentry"
MESSAGE = "audit entries are append-only"


def reinstall(apps: Any, schema_editor: Any) -> None:
    """Re-create the triggers of ``audit.0002`` where a table rebuild dropped them (SQLite)."""
    if schema_editor.connection.vendor != "sqlite":
        return  # PostgreSQL keeps a table's triggers across ALTER TABLE
    for operation in ("UPDATE", "DELETE"):
        name = f"{TABLE}_no_{operation.lower()}"
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {name};", params=None)
        schema_editor.execute(
            f"CREATE TRIGGER {name} BEFORE {operation} ON {TABLE} "
            f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}: {operation} on {TABLE} refused'); END;",
            params=None,
        )
