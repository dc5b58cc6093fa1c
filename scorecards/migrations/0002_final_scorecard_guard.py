"""A final scorecard is immutable: the database refuses UPDATE (and DELETE on PostgreSQL)."""

from django.db import migrations

MESSAGE = "a final scorecard is immutable; record a new decision and scorecard"


def install(apps: object, schema_editor: object) -> None:
    connection = schema_editor.connection  # type: ignore[attr-defined]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # enterpriseval_refuse_change() is installed by charters.0002_database_guards.
            cursor.execute(
                "CREATE TRIGGER scorecards_scorecard_final BEFORE UPDATE OR DELETE ON "
                "scorecards_scorecard FOR EACH ROW WHEN (OLD.status = 'final') "
                f"EXECUTE FUNCTION enterpriseval_refuse_change('{MESSAGE}');"
            )
        else:
            cursor.execute(
                "CREATE TRIGGER scorecards_scorecard_final BEFORE UPDATE ON scorecards_scorecard "
                "WHEN OLD.status = 'final' BEGIN SELECT RAISE(ABORT, "
                f"'enterpriseval: UPDATE on scorecards_scorecard refused: {MESSAGE}'); END;"
            )


class Migration(migrations.Migration):
    dependencies = [("scorecards", "0001_initial"), ("charters", "0002_database_guards")]

    operations = [migrations.RunPython(install, reverse_code=migrations.RunPython.noop)]
