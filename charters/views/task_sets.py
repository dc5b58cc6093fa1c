"""Task-set pages: the list, the import with its error report, a version with its tasks."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_http_methods

from charters.models.tasks import Split
from charters.permissions import use_case_for, use_case_for_unblinded, user_roles
from charters.selectors.task_sets import task_set_get, task_set_list, task_set_tasks
from charters.services.task_sets import (
    IMPORT_ROLES,
    MAX_LISTED_ERRORS,
    task_set_import,
)
from charters.task_import import check_task_file
from enterpriseval.errors import ServiceError
from enterpriseval.limits import UploadKind, UploadTooLarge, upload_size_check, upload_status


class TaskSetImportForm(forms.Form):
    name = forms.SlugField(
        max_length=80,
        help_text="Importing under an existing name creates its next version.",
    )
    file = forms.FileField(
        allow_empty_file=True, help_text="JSONL: one task per line (docs/formats.md)."
    )


@login_required
def task_set_list_view(request: HttpRequest, key: str) -> HttpResponse:
    use_case = use_case_for_unblinded(request.user, key, what="task sets")
    can_import = bool(user_roles(request.user, use_case) & {str(r) for r in IMPORT_ROLES})
    return render(
        request,
        "charters/task_set_list.html",
        {
            "use_case": use_case,
            "task_sets": task_set_list(use_case=use_case),
            "can_import": can_import,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def task_set_import_view(request: HttpRequest, key: str) -> HttpResponse:
    use_case = use_case_for(request.user, key, roles=IMPORT_ROLES)
    form = TaskSetImportForm(request.POST or None, request.FILES or None)
    context: dict[str, Any] = {"use_case": use_case, "form": form}
    if request.method == "GET" or not form.is_valid():
        status = 400 if request.method == "POST" else 200
        return render(request, "charters/task_set_import.html", context, status=status)
    upload = form.cleaned_data["file"]
    if "check" in request.POST:
        try:
            upload_size_check(kind=UploadKind.TASK_SET, filename=upload.name, size=upload.size)
        except UploadTooLarge as error:
            context.update(failure=error.message, filename=upload.name)
            return render(request, "charters/task_set_import.html", context, status=413)
        report = check_task_file(upload, max_errors=MAX_LISTED_ERRORS)
        context.update(checked=report, errors=report.details(), filename=upload.name)
        status = 200 if report.ok else 400
        return render(request, "charters/task_set_import.html", context, status=status)
    try:
        task_set = task_set_import(
            actor=request.user,
            use_case=use_case,
            name=form.cleaned_data["name"],
            fileobj=upload,
            filename=upload.name,
        )
    except ServiceError as error:
        context.update(failure=error.message, errors=error.details, filename=upload.name)
        return render(
            request, "charters/task_set_import.html", context, status=upload_status(error)
        )
    messages.success(
        request,
        f"Imported {task_set.line_count} tasks as {task_set.name} v{task_set.version}.",
    )
    return redirect(
        "task-set-detail", key=use_case.key, name=task_set.name, version=task_set.version
    )


@login_required
def task_set_detail_view(request: HttpRequest, key: str, name: str, version: int) -> HttpResponse:
    use_case = use_case_for_unblinded(request.user, key, what="task sets")
    task_set = task_set_get(use_case=use_case, name=name, version=version)
    if task_set is None:
        raise Http404("No such task set.")
    split = request.GET.get("split") or None
    if split not in (None, *Split.values):
        split = None
    page = task_set_tasks(task_set=task_set, offset=_offset(request), split=split)
    return render(
        request,
        "charters/task_set_detail.html",
        {
            "use_case": use_case,
            "task_set": task_set,
            "page": page,
            "splits": [(value, task_set.split_counts.get(value, 0)) for value in Split.values],
        },
    )


def _offset(request: HttpRequest) -> int:
    try:
        return max(int(request.GET.get("offset", 0)), 0)
    except ValueError:
        return 0


urlpatterns = [
    path("use-cases/<str:key>/task-sets/", task_set_list_view, name="task-set-list"),
    path("use-cases/<str:key>/task-sets/import/", task_set_import_view, name="task-set-import"),
    path(
        "use-cases/<str:key>/task-sets/<slug:name>/<int:version>/",
        task_set_detail_view,
        name="task-set-detail",
    ),
]
