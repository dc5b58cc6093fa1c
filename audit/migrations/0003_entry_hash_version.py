"""Entries record which fields their hash covers: version 1 (existing entries, unchanged) or
version 2 (adds the actor's id). SQLite rebuilds the table to add a column, which drops its
append-only triggers: they are re-created here."""

from django.db import migrations, models

from audit.migrations._append_only import reinstall


class Migration(migrations.Migration):
    dependencies = (("audit", "0002_append_only_triggers"),)

    operations = (
        migrations.AddField(
            model_name="auditentry",
            name="hash_version",
            field=models.PositiveSmallIntegerField(default=1),
        ),
        migrations.RunPython(reinstall, reverse_code=migrations.RunPython.noop),
    )
