"""Audit endpoints under /api/v1/."""

from django.urls import path

from audit.views import UseCaseAuditApi

urlpatterns = [
    path("use-cases/<str:key>/audit/", UseCaseAuditApi.as_view(), name="api-use-case-audit"),
]
