from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from audit.models import AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """Read-only: entries are written by ``audit_record`` and never changed."""

    list_display = (
        "sequence",
        "created_at",
        "actor_username",
        "action",
        "target",
        "use_case_id",
        "hash_prefix",
    )
    list_filter = ("action",)
    search_fields = ("=target_id", "=actor_username", "action")
    ordering = ("-sequence",)
    show_full_result_count = False

    @admin.display(description="target")
    def target(self, entry: AuditEntry) -> str:
        return f"{entry.target_type}:{entry.target_id}" if entry.target_type else "—"

    @admin.display(description="hash")
    def hash_prefix(self, entry: AuditEntry) -> str:
        return entry.entry_hash[:12]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
