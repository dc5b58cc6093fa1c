"""A stored EGI result is immutable: the database refuses UPDATE (and DELETE on PostgreSQL)."""

from django.db import migrations

MESSAGE = "a stored EGI result is immutable; store a new result"


def install(apps: object, schema_editor: object) -> None:
    connection = schema_editor.connection  # type: ignore[attr-defined]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # enterpriseval_refuse_change() is installed by charters.0002_database_guards.
            cursor.execute(
                "CREATE TRIGGER benchmarks_egiresult_immutable BEFORE UPDATE OR DELETE ON "
                "benchmarks_egiresult FOR EACH ROW EXECUTE FUNCTION "
                f"enterpriseval_refuse_change('{MESSAGE}');"
            )
        else:
            cursor.execute(
                "CREATE TRIGGER benchmarks_egiresult_immutable BEFORE UPDATE ON "
                "benchmarks_egiresult BEGIN SELECT RAISE(ABORT, 'enterpriseval: UPDATE on "
                f"benchmarks_egiresult refused: {MESSAGE}'); END;"
            )


class Migration(migrations.Migration):
    dependencies = [("benchmarks", "0001_initial"), ("charters", "0002_database_guards")]

    operations = [migrations.RunPython(install, reverse_code=migrations.RunPython.noop)]
