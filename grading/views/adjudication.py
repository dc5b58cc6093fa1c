"""Adjudication pages: a session's queue, one artefact's disputed fields on one keyboard page.

The artefact page is one form: every pending disputed field with each grader's value, one
POST records the chosen values (and, with ``take``, Grader N's value for every other pending
field) all or nothing. ``grading/static/grading/adjudication.js`` adds the keys (``?``).
The adjudications file (docs/formats.md "Adjudications (JSONL)") goes out and comes in here.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, QueryDict, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_GET, require_http_methods

from enterpriseval.errors import ServiceError
from enterpriseval.limits import upload_status
from grading.models import GradingSession, SessionArtefact
from grading.rubric import field_for
from grading.selectors.adjudication import (
    AdjudicationAccess,
    adjudication_access,
    adjudication_item,
    adjudication_queue,
    adjudications_file,
    artefact_neighbours,
    artefacts_awaiting_grades,
    next_pending_artefact,
    queue_progress,
)
from grading.services.adjudication import (
    AdjudicationOutcome,
    FinalValue,
    adjudications_import,
    adjudications_record,
)

ADJUDICATIONS_CONTENT_TYPE = "application/x-ndjson"
SEPARATOR = "|"
NOTE = "note"
CHOICE_LETTERS = "abcd"
_LISTED = 5


@login_required
@require_GET
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
            "next_pending": next((i.public_id for i in items if i.pending), None),
        },
    )


def posted_values(data: QueryDict) -> list[FinalValue]:
    """Return the final values a page's form chose: ``unit|field`` → value, ``…|note``."""
    values = []
    for name, value in data.items():
        unit_key, _sep, field = name.rpartition(SEPARATOR)
        if not unit_key or field == NOTE or not value:
            continue
        note = data.get(f"{name}{SEPARATOR}{NOTE}", "").strip()
        values.append(FinalValue(unit_key, field, value, note))
    return values


def _take(data: QueryDict) -> int | None:
    taken = data.get("take", "")
    return int(taken) if taken.isdigit() else None


@login_required
@require_http_methods(["GET", "POST"])
def adjudication_item_view(
    request: HttpRequest, key: str, public_id: str, artefact_id: str
) -> HttpResponse:
    access = adjudication_access(request.user, key, public_id, write=request.method == "POST")
    session = access.session
    status = 200
    if request.method == "POST":
        artefact = session.artefacts.filter(public_id=artefact_id).first()
        if artefact is None:
            raise Http404("No such artefact in this session.")
        try:
            outcome = adjudications_record(
                actor=request.user,
                artefact=artefact,
                values=posted_values(request.POST),
                take_rest_from=_take(request.POST),
            )
        except ServiceError as error:
            messages.error(request, f"Not recorded: {error.message}")
            for detail in error.details[1:_LISTED]:
                messages.error(request, f"Also: {detail['message']}")
            status = error.status_code
        else:
            return _after_record(request, access.use_case.key, session, artefact, outcome)
    item = adjudication_item(session=session, artefact_public_id=artefact_id)
    if item is None:
        raise Http404("This artefact has no disagreement to adjudicate.")
    return render(
        request,
        "grading/adjudication_item.html",
        _item_context(request, access, item),
        status=status,
    )


def _item_context(request: HttpRequest, access: AdjudicationAccess, item: Any) -> dict[str, Any]:
    session, key = access.session, access.use_case.key
    neighbours = artefact_neighbours(session=session, public_id=item.public_id)
    following, before = neighbours.next_pending, neighbours.previous
    graders = max((len(d.values) for d in item.disputes), default=2)

    def url(artefact_id: str | None) -> str | None:
        if artefact_id is None:
            return None
        return reverse("grading-adjudication-item", args=[key, session.public_id, artefact_id])

    return {
        "access": access,
        "use_case": access.use_case,
        "session": session,
        "item": item,
        "letters": CHOICE_LETTERS,
        "grader_numbers": range(1, graders + 1),
        "next_url": url(following),
        "previous_url": url(before),
        "config": {
            "graders": graders,
            "next_url": url(following),
            "previous_url": url(before),
            "queue_url": reverse("grading-adjudication-queue", args=[key, session.public_id]),
            "can_adjudicate": access.can_adjudicate,
        },
    }


def _after_record(
    request: HttpRequest,
    key: str,
    session: GradingSession,
    artefact: SessionArtefact,
    outcome: AdjudicationOutcome,
) -> HttpResponse:
    """Stay on the artefact while it has pending fields, then move to the next one."""
    recorded = outcome.recorded
    for adjudication in recorded[:_LISTED]:
        spec = field_for(adjudication.unit_key, adjudication.field)
        label = dict(zip(spec.values, spec.labels, strict=True)).get(
            adjudication.value, adjudication.value
        )
        messages.success(
            request, f"{adjudication.unit_key} {spec.name}: the final value is {label}."
        )
    if len(recorded) > _LISTED:
        messages.success(
            request, f"… and {len(recorded) - _LISTED} more: {len(recorded)} final values recorded."
        )
    if outcome.not_asked:
        listed = ", ".join(f"{k} {f}" for k, f in outcome.not_asked)
        messages.info(request, f"Left pending (that grader was not asked them): {listed}.")
    if outcome.moot:
        listed = ", ".join(f"{k} {f}" for k, f in outcome.moot)
        messages.info(request, f"No longer asked, given the final values: {listed}.")
    item = adjudication_item(session=session, artefact_public_id=artefact.public_id)
    if item is not None and item.pending:
        return redirect("grading-adjudication-item", key, session.public_id, artefact.public_id)
    following = next_pending_artefact(session=session, after=artefact.public_id)
    if following is None:
        messages.info(request, "Every disagreement of this session is resolved.")
        return redirect("grading-adjudication-queue", key, session.public_id)
    messages.info(request, "This artefact is resolved; here is the next one with a disagreement.")
    return redirect("grading-adjudication-item", key, session.public_id, following)


@login_required
@require_GET
def adjudication_export_view(
    request: HttpRequest, key: str, public_id: str
) -> StreamingHttpResponse:
    access = adjudication_access(request.user, key, public_id)
    return adjudications_response(access.session)


def adjudications_response(session: GradingSession) -> StreamingHttpResponse:
    """Return the session's pending disputed fields as a streamed JSONL download."""
    response = StreamingHttpResponse(
        adjudications_file(session=session), content_type=ADJUDICATIONS_CONTENT_TYPE
    )
    response["Content-Disposition"] = (
        f'attachment; filename="adjudications-{session.public_id}.jsonl"'
    )
    return response


class AdjudicationsImportForm(forms.Form):
    file = forms.FileField(
        allow_empty_file=True,
        help_text="JSONL: one line per disputed field (docs/formats.md, 'Adjudications (JSONL)').",
    )


@login_required
@require_http_methods(["GET", "POST"])
def adjudication_import_view(request: HttpRequest, key: str, public_id: str) -> HttpResponse:
    access = adjudication_access(request.user, key, public_id, write=True)
    session = access.session
    form = AdjudicationsImportForm(request.POST or None, request.FILES or None)
    context: dict[str, Any] = {"use_case": access.use_case, "session": session, "form": form}
    if request.method == "GET" or not form.is_valid():
        status = 400 if request.method == "POST" else 200
        return render(request, "grading/adjudication_import.html", context, status=status)
    upload = form.cleaned_data["file"]
    try:
        result = adjudications_import(
            actor=request.user, session=session, fileobj=upload, filename=upload.name
        )
    except ServiceError as error:
        context.update(failure=error.message, errors=error.details, filename=upload.name)
        return render(
            request, "grading/adjudication_import.html", context, status=upload_status(error)
        )
    messages.success(
        request,
        f"Imported {upload.name}: {result.adjudicated} final value(s) recorded on "
        f"{result.artefacts} artefact(s); {result.left_blank} line(s) left blank stay pending.",
    )
    return redirect("grading-adjudication-queue", access.use_case.key, session.public_id)


_BASE = "use-cases/<str:key>/grading/<str:public_id>/adjudication/"

urlpatterns: list[URLPattern] = [
    path(_BASE, adjudication_queue_view, name="grading-adjudication-queue"),
    path(
        f"{_BASE}adjudications.jsonl",
        adjudication_export_view,
        name="grading-adjudication-export",
    ),
    path(f"{_BASE}import/", adjudication_import_view, name="grading-adjudication-import"),
    path(f"{_BASE}<str:artefact_id>/", adjudication_item_view, name="grading-adjudication-item"),
]
