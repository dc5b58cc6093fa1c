"""Admin: stored EGI results, read-only (rows are immutable; the service stores them)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from egibench.models import EgiResult


@admin.register(EgiResult)
class EgiResultAdmin(admin.ModelAdmin):
    list_display = ("model_id", "mode", "run_at", "egi", "partial", "release_ready", "source")
    list_filter = ("mode", "partial", "release_ready")
    search_fields = ("model_id", "display_name", "sha256")
    ordering = ("model_id", "-run_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: EgiResult | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: EgiResult | None = None) -> bool:
        return False
