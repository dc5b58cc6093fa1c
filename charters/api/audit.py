"""The audit log of a use case under /api/v1/use-cases/<key>/audit/, newest entries first."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.models import AuditEntry
from audit.selectors import audit_entries_for_use_case, audit_verify
from charters.permissions import AUDIT_READERS, use_case_for


class AuditEntryOutput(serializers.ModelSerializer[AuditEntry]):
    class Meta:
        model = AuditEntry
        fields = [
            "sequence",
            "created_at",
            "actor_username",
            "action",
            "target_type",
            "target_id",
            "use_case_id",
            "payload",
            "previous_hash",
            "entry_hash",
        ]


class UseCaseAuditApi(APIView):
    @extend_schema(
        responses=AuditEntryOutput(many=True),
        parameters=[OpenApiParameter("limit", int), OpenApiParameter("offset", int)],
        summary="The use case's audit entries, newest first, with the chain's verification",
    )
    def get(self, request: Request, key: str) -> Response:
        use_case = use_case_for(request.user, key, roles=AUDIT_READERS)
        entries = audit_entries_for_use_case(use_case_id=use_case.pk).order_by("-sequence")
        paginator = LimitOffsetPagination()
        page = paginator.paginate_queryset(entries, request, view=self)
        response = paginator.get_paginated_response(AuditEntryOutput(page, many=True).data)
        verification = audit_verify()
        response.data["chain"] = {
            "ok": verification.ok,
            "entries_checked": verification.entries_checked,
            "first_broken_sequence": verification.first_broken_sequence,
            "reason": verification.reason,
            "head_hash": verification.head_hash,
        }
        return response


urlpatterns = [
    path("use-cases/<str:key>/audit/", UseCaseAuditApi.as_view(), name="api-use-case-audit"),
]
