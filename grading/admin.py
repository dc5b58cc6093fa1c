"""Admin for grading: artefacts, assignments, grades, revisions and adjudications, read-only.

Grades change only through the workspace (a revision once submitted, audited); the database
refuses every other change (audit/db_guards.py). Staff see provenance here: the admin is not
for graders.
"""

from __future__ import annotations

from django.contrib import admin

from charters.admin import ReadOnlyAdmin
from grading.models import Adjudication, Assignment, Grade, GradeRevision, SessionArtefact


@admin.register(SessionArtefact)
class SessionArtefactAdmin(ReadOnlyAdmin):
    list_display = ("public_id", "session", "kind", "stratum")
    list_filter = ("kind",)
    list_select_related = ("session",)


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ("public_id", "session", "grader", "position", "status", "submitted_at")
    list_filter = ("status",)
    list_select_related = ("session", "grader")


@admin.register(Grade)
class GradeAdmin(ReadOnlyAdmin):
    list_display = ("pk", "assignment", "unit_key", "field", "value", "updated_at")
    list_select_related = ("assignment",)


@admin.register(GradeRevision)
class GradeRevisionAdmin(ReadOnlyAdmin):
    list_display = ("pk", "assignment", "unit_key", "field", "old_value", "new_value", "actor")
    list_select_related = ("assignment", "actor")


@admin.register(Adjudication)
class AdjudicationAdmin(ReadOnlyAdmin):
    list_display = ("pk", "artefact", "unit_key", "field", "value", "adjudicator", "created_at")
    list_select_related = ("artefact", "adjudicator")
