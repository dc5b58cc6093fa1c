"""A final scorecard is immutable: the database refuses UPDATE (and DELETE on PostgreSQL)."""

from django.db import migrations

from scorecards.db_guards import reinstall_final_guard


class Migration(migrations.Migration):
    dependencies = [("scorecards", "0001_initial"), ("charters", "0002_database_guards")]

    operations = [
        migrations.RunPython(reinstall_final_guard, reverse_code=migrations.RunPython.noop)
    ]
