"""Admin for Layer 1: everything visible, nothing frozen editable.

Signed charters, configurations, task sets and their content, signatures, deviations and
unblinding events are read-only here; the services are the only way to change state, so
every change is validated and audited.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import transaction
from django.http import HttpRequest

from audit.services import audit_record
from charters.models import (
    Charter,
    CharterMetric,
    Configuration,
    Deviation,
    GuidanceItem,
    KeyElement,
    Membership,
    Signature,
    SourceChunk,
    StageEvent,
    Task,
    TaskSet,
    UnblindingEvent,
    UseCase,
)
from charters.permissions import held_roles, membership_conflict
from charters.services.use_cases import membership_grant, membership_revoke, use_case_create


class ReadOnlyAdmin(admin.ModelAdmin):
    """Show every field; allow no add, change or delete."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class AuditedAdmin(admin.ModelAdmin):
    """Record every change made through the admin in the audit log."""

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            audit_record(
                actor=request.user,
                action=f"admin.{'change' if change else 'add'}",
                target=obj,
                payload={"changed": sorted(form.changed_data)},
            )

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        with transaction.atomic():
            audit_record(actor=request.user, action="admin.delete", target=obj, payload={})
            super().delete_model(request, obj)


class UseCaseAddForm(forms.ModelForm):
    """The admin's add form: the use case and the user who will own its charter."""

    charter_owner = forms.ModelChoiceField(
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        help_text="Becomes the use case's charter owner, who grants the other roles on its "
        "members page. You get no role on it.",
    )

    class Meta:
        model = UseCase
        fields = ["key", "name", "business_outcome", "value_hypothesis", "autonomy", "consequence"]


@admin.register(UseCase)
class UseCaseAdmin(AuditedAdmin):
    list_display = ["key", "name", "autonomy", "consequence", "intensity", "stage", "created_at"]
    search_fields = ["key", "name"]
    readonly_fields = ["stage", "created_by", "created_at"]

    def get_form(
        self, request: HttpRequest, obj: UseCase | None = None, change: bool = False, **kwargs: Any
    ) -> Any:
        if obj is None:
            kwargs["form"] = UseCaseAddForm
            kwargs["fields"] = [*UseCaseAddForm.Meta.fields, "charter_owner"]
        return super().get_form(request, obj, change, **kwargs)

    def get_fieldsets(self, request: HttpRequest, obj: UseCase | None = None) -> Any:
        if obj is None:
            return [(None, {"fields": [*UseCaseAddForm.Meta.fields, "charter_owner"]})]
        return super().get_fieldsets(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: UseCase | None = None) -> list[str]:
        if obj is None:
            return []
        # The signed charter's gates were set for this autonomy and consequence (a database
        # trigger refuses the change too: audit/db_guards.py).
        fields = list(self.readonly_fields)
        if obj.charters.frozen().exists():
            fields += ["autonomy", "consequence"]
        return fields

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        # A use case begins through the service, as on /use-cases/new/: stage 1 entered, the
        # charter owner's membership granted and one audit entry, "usecase.create".
        data = form.cleaned_data
        created = use_case_create(
            actor=request.user,
            charter_owner=data["charter_owner"],
            **{name: data[name] for name in UseCaseAddForm.Meta.fields},
        )
        obj.pk = created.pk
        obj.stage = created.stage
        obj.created_by = created.created_by
        obj.created_at = created.created_at

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="E")
    def intensity(self, obj: UseCase) -> str:
        return f"E{obj.intensity}"


class MembershipForm(forms.ModelForm):
    """Grant a role through the policy of :func:`charters.permissions.membership_conflict`."""

    class Meta:
        model = Membership
        fields = ["use_case", "user", "role"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        use_case, user, role = data.get("use_case"), data.get("user"), data.get("role")
        if use_case is not None and user is not None and role:
            conflict = membership_conflict(held_roles(user, use_case), role)
            if conflict is not None:
                raise forms.ValidationError({"role": f"{user.get_username()}: {conflict}"})
        return data


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    """Grant and revoke through the services (policy-checked, audited); never edit a row."""

    form = MembershipForm
    list_display = ["use_case", "user", "role", "granted_by", "granted_at"]
    list_filter = ["role"]
    autocomplete_fields = ["user"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Membership, form: Any, change: bool) -> None:
        granted = membership_grant(
            actor=request.user, use_case=obj.use_case, user=obj.user, role=obj.role
        )
        obj.pk, obj.granted_by, obj.granted_at = (
            granted.pk,
            granted.granted_by,
            granted.granted_at,
        )

    def delete_model(self, request: HttpRequest, obj: Membership) -> None:
        membership_revoke(actor=request.user, use_case=obj.use_case, user=obj.user, role=obj.role)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for membership in queryset.select_related("use_case", "user"):
            self.delete_model(request, membership)


@admin.register(StageEvent)
class StageEventAdmin(ReadOnlyAdmin):
    list_display = ["use_case", "stage", "entered_at", "actor"]


class CharterMetricInline(admin.TabularInline):
    model = CharterMetric
    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return obj is not None and not obj.is_frozen

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return obj is None or not obj.is_frozen

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return obj is not None and not obj.is_frozen


@admin.register(Charter)
class CharterAdmin(AuditedAdmin):
    list_display = ["use_case", "version", "frozen_at", "sha256"]
    list_filter = ["use_case"]
    readonly_fields = ["canonical_json", "sha256", "frozen_at", "created_by", "created_at"]
    inlines = [CharterMetricInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # drafts are created through the charter editor (validated, audited)

    def has_change_permission(self, request: HttpRequest, obj: Charter | None = None) -> bool:
        return obj is None or not obj.is_frozen

    def has_delete_permission(self, request: HttpRequest, obj: Charter | None = None) -> bool:
        return False


@admin.register(Signature)
class SignatureAdmin(ReadOnlyAdmin):
    list_display = ["charter", "role", "user", "signed_at", "content_sha256"]


@admin.register(Deviation)
class DeviationAdmin(ReadOnlyAdmin):
    list_display = ["charter", "previous", "created_by", "created_at"]


@admin.register(UnblindingEvent)
class UnblindingEventAdmin(ReadOnlyAdmin):
    list_display = ["use_case", "charter", "actor", "occurred_at", "reason"]


@admin.register(Configuration)
class ConfigurationAdmin(ReadOnlyAdmin):
    list_display = ["use_case", "name", "version", "model_ref", "sha256", "created_at"]
    list_filter = ["use_case"]


@admin.register(TaskSet)
class TaskSetAdmin(ReadOnlyAdmin):
    list_display = ["use_case", "name", "version", "line_count", "manifest_sha256", "created_at"]


@admin.register(Task)
class TaskAdmin(ReadOnlyAdmin):
    list_display = ["external_id", "task_set", "split", "expected_abstention"]
    list_filter = ["split"]
    list_select_related = ["task_set"]


@admin.register(SourceChunk)
class SourceChunkAdmin(ReadOnlyAdmin):
    list_display = ["chunk_id", "task", "source"]
    list_select_related = ["task"]


@admin.register(KeyElement)
class KeyElementAdmin(ReadOnlyAdmin):
    list_display = ["element_id", "task"]
    list_select_related = ["task"]


@admin.register(GuidanceItem)
class GuidanceItemAdmin(ReadOnlyAdmin):
    list_display = ["item_id", "task", "mandatory"]
    list_select_related = ["task"]
