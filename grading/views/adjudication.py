"""Adjudication pages: a session's queue of disagreements and one artefact's disputed fields."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path
from django.views.decorators.http import require_http_methods

from enterpriseval.errors import ServiceError
from grading.models import GradingSession
from grading.rubric import field_for
from grading.selectors.adjudication import (
    adjudication_access,
    adjudication_item,
    adjudication_queue,
    artefacts_awaiting_grades,
    next_pending_artefact,
    queue_progress,
)
from grading.services.grades import adjudication_record


class AdjudicationForm(forms.Form):
    unit_key = forms.CharField(max_length=160)
    field = forms.CharField(max_length=20)
    value = forms.CharField(max_length=20, error_messages={"required": "Choose a final value."})
    note = forms.CharField(required=False, max_length=4000)


@login_required
def adjudication_queue_view(request: HttpRequest, key: str, public_id: str) -> HttpResponse:
    access = adjudication_access(request.user, key, public_id)
    items = adjudication_queue(session=access.session)
    return render(
        request,
        "grading/adjudication_queue.html",
        {
            "access": access,
            "use_case": access.use_case,
            "session": access.session,
            "items": items,
            "progress": queue_progress(items),
            "awaiting": artefacts_awaiting_grades(session=access.session),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def adjudication_item_view(
    request: HttpRequest, key: str, public_id: str, artefact_id: str
) -> HttpResponse:
    access = adjudication_access(request.user, key, public_id, write=request.method == "POST")
    session = access.session
    status = 200
    if request.method == "POST":
        form = AdjudicationForm(request.POST)
        artefact = session.artefacts.filter(public_id=artefact_id).first()
        if artefact is None:
            raise Http404("No such artefact in this session.")
        if not form.is_valid():
            first = next(iter(form.errors.values()))[0]
            messages.error(request, f"Not recorded: {first}")
            status = 400
        else:
            data = form.cleaned_data
            try:
                adjudication_record(
                    actor=request.user,
                    artefact=artefact,
                    unit_key=data["unit_key"],
                    field=data["field"],
                    value=data["value"],
                    note=data["note"].strip(),
                )
            except ServiceError as error:
                messages.error(request, f"Not recorded: {error.message}")
                status = error.status_code
            else:
                return _after_record(request, access.use_case.key, session, artefact_id, data)
    item = adjudication_item(session=session, artefact_public_id=artefact_id)
    if item is None:
        raise Http404("This artefact has no disagreement to adjudicate.")
    return render(
        request,
        "grading/adjudication_item.html",
        {"access": access, "use_case": access.use_case, "session": session, "item": item},
        status=status,
    )


def _after_record(
    request: HttpRequest, key: str, session: GradingSession, artefact_id: str, data: dict[str, str]
) -> HttpResponse:
    """Stay on the artefact while it has pending fields, then move to the next one."""
    spec = field_for(data["unit_key"], data["field"])
    label = dict(zip(spec.values, spec.labels, strict=True))[data["value"]]
    messages.success(request, f"{data['unit_key']} {spec.name}: the final value is {label}.")
    item = adjudication_item(session=session, artefact_public_id=artefact_id)
    if item is not None and item.pending:
        return redirect("grading-adjudication-item", key, session.public_id, artefact_id)
    following = next_pending_artefact(session=session)
    if following is None:
        messages.info(request, "Every disagreement of this session is resolved.")
        return redirect("grading-adjudication-queue", key, session.public_id)
    messages.info(request, "This artefact is resolved; here is the next one with a disagreement.")
    return redirect("grading-adjudication-item", key, session.public_id, following)


urlpatterns: list[URLPattern] = [
    path(
        "use-cases/<str:key>/grading/<str:public_id>/adjudication/",
        adjudication_queue_view,
        name="grading-adjudication-queue",
    ),
    path(
        "use-cases/<str:key>/grading/<str:public_id>/adjudication/<str:artefact_id>/",
        adjudication_item_view,
        name="grading-adjudication-item",
    ),
]
