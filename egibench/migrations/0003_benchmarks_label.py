"""Move what Django recorded under the ``benchmarks`` label of the previous release.

Its content types move to ``egibench`` in place, so permissions, group and user grants and
admin log entries stay attached to them; its rows in django_migrations are deleted, as no
migration of that app exists any more. On a new database there is nothing to move. Audit
entries keep ``benchmarks.egiresult`` as their target type: the log is append-only and
hash-chained.
"""

from typing import Any

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.recorder import MigrationRecorder

OLD_LABEL = "benchmarks"
NEW_LABEL = "egibench"


def benchmarks_label_move(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    content_types = apps.get_model("contenttypes", "ContentType").objects.using(
        schema_editor.connection.alias
    )
    old = content_types.filter(app_label=OLD_LABEL)
    clash = sorted(
        content_types.filter(app_label=NEW_LABEL, model__in=old.values("model")).values_list(
            "model", flat=True
        )
    )
    if clash:
        raise RuntimeError(
            f"content types {', '.join(f'{NEW_LABEL}.{m}' for m in clash)} already exist beside "
            f"{OLD_LABEL}.*: delete the {NEW_LABEL} ones (they hold no data of the previous "
            "release) and migrate again"
        )
    old.update(app_label=NEW_LABEL)
    MigrationRecorder(schema_editor.connection).migration_qs.filter(app=OLD_LABEL).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("egibench", "0002_egiresult_immutable"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.RunPython(benchmarks_label_move, reverse_code=migrations.RunPython.noop)
    ]
