"""Scorecard pages: the list, one scorecard (page, PDF, evidence pack), edit and sign-off."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from enterpriseval.errors import ServiceError
from gates.selectors import decision_get
from scorecards.models import Scorecard
from scorecards.selectors import (
    scorecard_get,
    scorecard_list,
    scorecard_state,
    scorecard_use_case_for,
    scorecard_view,
)
from scorecards.services import (
    EDITABLE_FIELDS,
    scorecard_create,
    scorecard_evidence_pack,
    scorecard_pdf_bytes,
    scorecard_sign_off,
    scorecard_update,
    user_may_edit,
    user_may_sign_off,
)


def _scorecard(request: HttpRequest, key: str, pk: int) -> Scorecard:
    use_case = scorecard_use_case_for(request.user, key)
    scorecard = scorecard_get(use_case=use_case, pk=pk)
    if scorecard is None:
        raise Http404(f"No scorecard {pk} in {use_case.key}.")
    return scorecard


@login_required
def scorecard_list_page(request: HttpRequest, key: str) -> HttpResponse:
    use_case = scorecard_use_case_for(request.user, key)
    rows = []
    for scorecard in scorecard_list(use_case=use_case):
        flags = list(scorecard.reevaluation_flags.all())
        rows.append(
            {"scorecard": scorecard, "flags": flags, "state": scorecard_state(scorecard, flags)}
        )
    return render(request, "scorecards/scorecard_list.html", {"use_case": use_case, "rows": rows})


@login_required
def scorecard_detail_page(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scorecard = _scorecard(request, key, pk)
    return _detail(request, scorecard)


def _detail(
    request: HttpRequest, scorecard: Scorecard, *, error: str = "", status: int = 200
) -> HttpResponse:
    return render(
        request,
        "scorecards/scorecard_detail.html",
        {
            "use_case": scorecard.use_case,
            "view": scorecard_view(scorecard=scorecard),
            "may_edit": user_may_edit(request.user, scorecard),  # type: ignore[arg-type]
            "may_sign_off": user_may_sign_off(request.user, scorecard),  # type: ignore[arg-type]
            "error": error,
            "base_url": "",
        },
        status=status,
    )


@login_required
@require_POST
def scorecard_create_view(request: HttpRequest, key: str, decision_pk: int) -> HttpResponse:
    use_case = scorecard_use_case_for(request.user, key)
    decision = decision_get(use_case=use_case, pk=decision_pk)
    if decision is None:
        raise Http404(f"No decision {decision_pk} in {use_case.key}.")
    existing = Scorecard.objects.filter(decision=decision).only("pk").first()
    if existing is None:
        existing = scorecard_create(actor=request.user, decision=decision)  # type: ignore[arg-type]
    return redirect("scorecard-detail", key=use_case.key, pk=existing.pk)


@login_required
@require_POST
def scorecard_edit_view(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scorecard = _scorecard(request, key, pk)
    changes = {name: request.POST[name] for name in EDITABLE_FIELDS if name in request.POST}
    try:
        scorecard_update(actor=request.user, scorecard=scorecard, changes=changes)  # type: ignore[arg-type]
    except ServiceError as error:
        return _detail(request, scorecard, error=error.message, status=error.status_code)
    return redirect("scorecard-detail", key=key, pk=pk)


@login_required
@require_POST
def scorecard_sign_off_view(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scorecard = _scorecard(request, key, pk)
    try:
        scorecard_sign_off(actor=request.user, scorecard=scorecard)  # type: ignore[arg-type]
    except ServiceError as error:
        return _detail(request, scorecard, error=error.message, status=error.status_code)
    return redirect("scorecard-detail", key=key, pk=pk)


@login_required
def scorecard_pdf_view(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scorecard = _scorecard(request, key, pk)
    base = request.build_absolute_uri("/").rstrip("/")
    pdf = scorecard_pdf_bytes(scorecard=scorecard, base_url=base)
    response = HttpResponse(pdf, content_type="application/pdf")
    name = f"scorecard-{scorecard.use_case.key}-{scorecard.pk}.pdf"
    response["Content-Disposition"] = f'inline; filename="{name}"'
    return response


@login_required
def scorecard_evidence_view(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scorecard = _scorecard(request, key, pk)
    base = request.build_absolute_uri("/").rstrip("/")
    data = scorecard_evidence_pack(actor=request.user, scorecard=scorecard, base_url=base)  # type: ignore[arg-type]
    response = HttpResponse(data, content_type="application/zip")
    name = f"evidence-{scorecard.use_case.key}-scorecard-{scorecard.pk}.zip"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
