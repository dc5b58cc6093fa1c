"""Admin for decisions: recorded decisions are immutable, shown read-only."""

from __future__ import annotations

from django.contrib import admin

from charters.admin import ReadOnlyAdmin
from gates.models import Decision


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    list_display = ("pk", "use_case", "configuration", "status", "sha256", "created_at")
    list_filter = ("status",)
    list_select_related = ("use_case", "configuration")
