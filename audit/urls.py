"""Audit pages."""

from django.urls import path

from audit.views import use_case_audit

urlpatterns = [
    path("use-cases/<str:key>/audit/", use_case_audit, name="use-case-audit"),
]
