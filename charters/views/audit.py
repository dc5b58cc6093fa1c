"""The audit log of a use case, newest entries first."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from audit.selectors import audit_entries_for_use_case, audit_verify
from charters.permissions import AUDIT_READERS, use_case_for

PAGE_SIZE = 50


@login_required
def use_case_audit(request: HttpRequest, key: str) -> HttpResponse:
    use_case = use_case_for(request.user, key, roles=AUDIT_READERS)
    entries = audit_entries_for_use_case(use_case_id=use_case.pk).order_by("-sequence")
    page = Paginator(entries, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "charters/use_case_audit.html",
        {"use_case": use_case, "page": page, "verification": audit_verify()},
    )


urlpatterns = [
    path("use-cases/<str:key>/audit/", use_case_audit, name="use-case-audit"),
]
