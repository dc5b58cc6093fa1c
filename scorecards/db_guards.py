"""The database guard of final scorecards, shared by the migrations that (re)install it.

SQLite rebuilds a table when a migration alters it, which drops its triggers: a migration
that changes ``scorecards_scorecard`` calls :func:`reinstall_final_guard` after it.
"""

from __future__ import annotations

MESSAGE = "a final scorecard is immutable; record a new decision and scorecard"


def reinstall_final_guard(apps: object, schema_editor: object) -> None:
    """(Re)create the trigger that refuses changes to a final scorecard."""
    connection = schema_editor.connection  # type: ignore[attr-defined]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "DROP TRIGGER IF EXISTS scorecards_scorecard_final ON scorecards_scorecard;"
            )
            # enterpriseval_refuse_change() is installed by charters.0002_database_guards.
            cursor.execute(
                "CREATE TRIGGER scorecards_scorecard_final BEFORE UPDATE OR DELETE ON "
                "scorecards_scorecard FOR EACH ROW WHEN (OLD.status = 'final') "
                f"EXECUTE FUNCTION enterpriseval_refuse_change('{MESSAGE}');"
            )
        else:
            cursor.execute("DROP TRIGGER IF EXISTS scorecards_scorecard_final;")
            cursor.execute(
                "CREATE TRIGGER scorecards_scorecard_final BEFORE UPDATE ON scorecards_scorecard "
                "WHEN OLD.status = 'final' BEGIN SELECT RAISE(ABORT, "
                f"'enterpriseval: UPDATE on scorecards_scorecard refused: {MESSAGE}'); END;"
            )
