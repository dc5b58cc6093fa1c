"""Guard every graded-evidence table at the database (audit.db_guards): outputs, units, judge
scores, submitted grades, adjudications, decisions, signatures, final scorecards, a signed use
case's autonomy and consequence; UPDATE and DELETE on PostgreSQL and SQLite alike."""

from django.db import migrations

from audit.db_guards import install


class Migration(migrations.Migration):
    dependencies = [
        ("scorecards", "0003_signed_pdf"),
        ("gates", "0002_decision_immutable"),
        ("grading", "0002_session_arms"),
        ("runs", "0002_judging"),
        ("charters", "0002_database_guards"),
        ("audit", "0002_append_only_triggers"),
    ]

    operations = [migrations.RunPython(install, reverse_code=migrations.RunPython.noop)]
