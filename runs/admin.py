"""Admin for runs: outputs, units, trajectories and judge scores are evidence, shown read-only.

They are written by the run, import and judging services; the database refuses changes to
them too (audit/db_guards.py).
"""

from __future__ import annotations

from django.contrib import admin

from charters.admin import ReadOnlyAdmin
from runs.models import JudgeScore, Output, Trajectory, Unit


@admin.register(Output)
class OutputAdmin(ReadOnlyAdmin):
    list_display = ("pk", "run", "task", "repeat_index", "status", "created_at")
    list_filter = ("status",)
    list_select_related = ("run", "task")


@admin.register(Unit)
class UnitAdmin(ReadOnlyAdmin):
    list_display = ("pk", "output", "kind", "key", "position")
    list_filter = ("kind",)
    list_select_related = ("output__task",)


@admin.register(Trajectory)
class TrajectoryAdmin(ReadOnlyAdmin):
    list_display = ("pk", "output")
    list_select_related = ("output__task",)


@admin.register(JudgeScore)
class JudgeScoreAdmin(ReadOnlyAdmin):
    list_display = ("pk", "judge", "unit", "criterion", "score", "created_at")
    list_select_related = ("judge", "unit")
