"""Create the EGI result table, or adopt the ``benchmarks`` release's table with its rows.

The app was named ``benchmarks`` until a package of that name installed by a dependency
(pysbd) shadowed it. That release's migrations made ``benchmarks_egiresult``; on such a
database this migration renames the table, keeping every row, instead of creating an empty
one. 0002 re-creates its trigger under the new name and 0003 moves what Django recorded under
the old label.
"""

from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

OLD_TABLE = "benchmarks_egiresult"


def egi_result_table_create_or_adopt(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    model = apps.get_model("egibench", "EgiResult")
    if OLD_TABLE in schema_editor.connection.introspection.table_names():
        schema_editor.alter_db_table(model, OLD_TABLE, model._meta.db_table)
    else:
        schema_editor.create_model(model)


def egi_result_table_drop(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    schema_editor.delete_model(apps.get_model("egibench", "EgiResult"))


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The state gets the model as CreateModel would; the table is made (or adopted) below.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="EgiResult",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "model_id",
                            models.CharField(
                                help_text="The model as the benchmarks name it.", max_length=200
                            ),
                        ),
                        ("model_key", models.CharField(db_index=True, max_length=200)),
                        ("display_name", models.CharField(blank=True, max_length=200)),
                        (
                            "mode",
                            models.CharField(
                                choices=[
                                    ("quick", "quick"),
                                    ("deep", "deep"),
                                    ("published", "published"),
                                ],
                                max_length=10,
                            ),
                        ),
                        ("run_at", models.DateTimeField(help_text="The artifact's timestamp.")),
                        ("egi", models.FloatField(blank=True, null=True)),
                        ("partial", models.BooleanField()),
                        ("m1", models.FloatField(blank=True, null=True)),
                        ("m2", models.FloatField(blank=True, null=True)),
                        ("m3", models.FloatField(blank=True, null=True)),
                        ("m4", models.FloatField(blank=True, null=True)),
                        ("m5", models.FloatField(blank=True, null=True)),
                        ("m6", models.FloatField(blank=True, null=True)),
                        (
                            "floors",
                            models.JSONField(
                                blank=True, help_text="{bucket: {floor, score, status}}"
                            ),
                        ),
                        ("release_ready", models.BooleanField()),
                        ("missing", models.JSONField(blank=True)),
                        ("result", models.JSONField()),
                        ("canonical_json", models.TextField()),
                        ("sha256", models.CharField(max_length=64, unique=True)),
                        ("source", models.CharField(max_length=300)),
                        ("routing_sha256", models.CharField(blank=True, max_length=64)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "created_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["model_id", "-run_at", "-pk"],
                        "indexes": [
                            models.Index(fields=["model_id", "run_at"], name="egi_model_run_at")
                        ],
                    },
                ),
            ]
        ),
        migrations.RunPython(egi_result_table_create_or_adopt, reverse_code=egi_result_table_drop),
    ]
