"""A grader's pages: "My grading" (the queue) and the workspace of one assignment."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_http_methods

from enterpriseval.errors import ServiceError
from grading.models import Assignment, SessionStatus
from grading.rubric import FIELDS
from grading.selectors.artefacts import assignment_for_grader, grades_of
from grading.selectors.workspace import (
    FIELD_TITLES,
    RESERVED_KEYS,
    assignment_siblings,
    assignment_workspace,
    ended_sessions,
    grading_queue,
    next_open_of,
)
from grading.services.grades import GradeChange, assignment_submit, grades_save


@login_required
def grading_queue_view(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "grading/queue.html",
        {"queue": grading_queue(user=request.user), "ended": ended_sessions(user=request.user)},
    )


@login_required
@require_http_methods(["GET", "POST"])
def workspace_view(request: HttpRequest, public_id: str) -> HttpResponse:
    assignment = assignment_for_grader(request.user, public_id)
    failure: ServiceError | None = None
    if request.method == "POST":
        try:
            return _save_posted(request, assignment)
        except ServiceError as error:
            failure = error
            assignment.refresh_from_db(fields=["status", "seconds_spent", "submitted_at"])
    workspace = assignment_workspace(assignment=assignment)
    config = {
        "public_id": assignment.public_id,
        "submitted": assignment.is_submitted,
        "closed": assignment.session.status == SessionStatus.CLOSED,
        "grades_url": reverse("api-grading-assignment-grades", args=[public_id]),
        "heartbeat_url": reverse("api-grading-assignment-heartbeat", args=[public_id]),
        "submit_url": reverse("api-grading-assignment-submit", args=[public_id]),
        "detail_url": reverse("api-grading-assignment-detail", args=[public_id]),
        "reserved_keys": sorted(RESERVED_KEYS),
    }
    context: dict[str, Any] = {
        "workspace": workspace,
        "assignment": assignment,
        "config": config,
        "closed": config["closed"],
        "failure": failure,
        "failure_missing": [d for d in (failure.details if failure else []) if "unit_key" in d],
        "rubric": [
            (FIELD_TITLES[spec.name], spec.question)
            for spec in FIELDS
            if spec.unit_kind in {unit.kind for unit in workspace.units}
        ],
    }
    return render(request, "grading/workspace.html", context, status=400 if failure else 200)


def _save_posted(request: HttpRequest, assignment: Assignment) -> HttpResponse:
    """Save the plain form (the page without JavaScript), then submit if asked."""
    current = grades_of(assignment)
    changes = [
        change
        for change in _posted_changes(request.POST)
        if current.get(change.unit_key, {}).get(change.field, "") != change.value
    ]
    if changes:
        grades_save(
            actor=request.user,
            assignment=assignment,
            changes=changes,
            reason=request.POST.get("reason", ""),
        )
    if request.POST.get("action") != "submit":
        messages.success(request, "Saved.")
        return redirect("grading-workspace", public_id=assignment.public_id)
    assignment_submit(actor=request.user, assignment=assignment)
    messages.success(request, f"Artefact {assignment.position} submitted.")
    return redirect(page_after_submit(assignment))


def page_after_submit(assignment: Assignment) -> str:
    """Return the URL of the grader's next unsubmitted artefact, else of the queue."""
    following = next_open_of(assignment_siblings(assignment), assignment.position)
    if following is None:
        return reverse("grading-queue")
    return reverse("grading-workspace", args=[following.public_id])


def _posted_changes(data: QueryDict) -> list[GradeChange]:
    """Return the grade changes of a posted workspace form (inputs named ``unit_key|field``)."""
    changes = []
    for name, value in data.items():
        if "|" in name and value:
            unit_key, field = name.rsplit("|", 1)
            changes.append(GradeChange(unit_key, field, value))
    return changes


urlpatterns: list[URLPattern] = [
    path("grading/", grading_queue_view, name="grading-queue"),
    path("grading/a/<str:public_id>/", workspace_view, name="grading-workspace"),
]
