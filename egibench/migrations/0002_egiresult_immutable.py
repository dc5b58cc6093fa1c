"""A stored EGI result is immutable: the database refuses UPDATE (and DELETE on PostgreSQL)."""

from typing import Any

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

MESSAGE = "a stored EGI result is immutable; store a new result"
# A database of the ``benchmarks`` release carries the trigger under that name on the table
# 0001 renamed; it is replaced by one named after the new table.
OLD_TRIGGER = "benchmarks_egiresult_immutable"


def install(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"DROP TRIGGER IF EXISTS {OLD_TRIGGER} ON egibench_egiresult;")
            # enterpriseval_refuse_change() is installed by charters.0002_database_guards.
            cursor.execute(
                "CREATE TRIGGER egibench_egiresult_immutable BEFORE UPDATE OR DELETE ON "
                "egibench_egiresult FOR EACH ROW EXECUTE FUNCTION "
                f"enterpriseval_refuse_change('{MESSAGE}');"
            )
        else:
            cursor.execute(f"DROP TRIGGER IF EXISTS {OLD_TRIGGER};")
            cursor.execute(
                "CREATE TRIGGER egibench_egiresult_immutable BEFORE UPDATE ON "
                "egibench_egiresult BEGIN SELECT RAISE(ABORT, 'enterpriseval: UPDATE on "
                f"egibench_egiresult refused: {MESSAGE}'); END;"
            )


class Migration(migrations.Migration):
    dependencies = [("egibench", "0001_initial"), ("charters", "0002_database_guards")]

    operations = [migrations.RunPython(install, reverse_code=migrations.RunPython.noop)]
