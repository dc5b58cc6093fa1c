"""A recorded decision is immutable: the database refuses UPDATE (and DELETE on PostgreSQL)."""

from django.db import migrations

MESSAGE = "a recorded decision is immutable; compute a new decision"


def install(apps: object, schema_editor: object) -> None:
    connection = schema_editor.connection  # type: ignore[attr-defined]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # enterpriseval_refuse_change() is installed by charters.0002_database_guards.
            cursor.execute(
                "CREATE TRIGGER gates_decision_immutable BEFORE UPDATE OR DELETE ON gates_decision "
                f"FOR EACH ROW EXECUTE FUNCTION enterpriseval_refuse_change('{MESSAGE}');"
            )
        else:
            cursor.execute(
                "CREATE TRIGGER gates_decision_immutable BEFORE UPDATE ON gates_decision BEGIN "
                f"SELECT RAISE(ABORT, 'enterpriseval: UPDATE on gates_decision refused: {MESSAGE}'); "
                "END;"
            )


class Migration(migrations.Migration):
    dependencies = [("gates", "0001_initial"), ("charters", "0002_database_guards")]

    operations = [migrations.RunPython(install, reverse_code=migrations.RunPython.noop)]
