"""Oversight study pages: the owner's studies and results, and the reviewer's blind queue."""

from __future__ import annotations

import math
import time
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path
from django.views.decorators.http import require_http_methods

from charters.models import Role, UseCase
from charters.permissions import require_role, use_case_for, user_roles
from enterpriseval.errors import ServiceError
from grading.models import DefectKind, SessionStatus
from grading.selectors.oversight import (
    oversight_item_for_reviewer,
    oversight_queue,
    oversight_results,
    oversight_review,
    oversight_study_get,
    oversight_study_list,
)
from grading.services.oversight import (
    MAX_ITEMS_PER_REVIEWER,
    oversight_item_decide,
    oversight_study_close,
    oversight_study_create,
)
from runs.models import Run, RunStatus

READ_ROLES = (Role.CHARTER_OWNER, Role.REVIEWER)


class StudyForm(forms.Form):
    name = forms.CharField(
        max_length=120, help_text="Reviewers see it: it must not reveal a model or the design."
    )
    runs = forms.ModelMultipleChoiceField(
        queryset=Run.objects.none(), widget=forms.CheckboxSelectMultiple
    )
    reviewers = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.none(),
        widget=forms.CheckboxSelectMultiple,
        help_text="Members with the grader role: they review the copies blind.",
    )
    items_per_reviewer = forms.IntegerField(
        min_value=1, max_value=MAX_ITEMS_PER_REVIEWER, initial=10
    )
    defect_share = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        initial=0.3,
        help_text="Share of each queue that carries one seeded defect.",
    )
    kinds = forms.MultipleChoiceField(
        choices=DefectKind.choices,
        required=False,
        initial=DefectKind.values,
        widget=forms.CheckboxSelectMultiple,
        label="Defect kinds",
    )
    seed = forms.IntegerField(
        min_value=0, required=False, help_text="Leave empty for a random seed (recorded)."
    )

    def __init__(self, *args: Any, use_case: UseCase, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        runs = self.fields["runs"]
        reviewers = self.fields["reviewers"]
        assert isinstance(runs, forms.ModelMultipleChoiceField)
        assert isinstance(reviewers, forms.ModelMultipleChoiceField)
        runs.queryset = (
            Run.objects.filter(use_case=use_case, status=RunStatus.COMPLETED)
            .select_related("configuration")
            .order_by("pk")
        )
        runs.label_from_instance = lambda r: (
            f"Run {r.pk}: {r.configuration.name} v{r.configuration.version}, {r.split}, "
            f"{r.items_done} outputs"
        )
        reviewers.queryset = (
            get_user_model()
            .objects.filter(memberships__use_case=use_case, memberships__role=Role.GRADER)
            .order_by("username")
        )
        reviewers.label_from_instance = lambda u: u.get_username()


@login_required
@require_http_methods(["GET", "POST"])
def oversight_study_list_view(request: HttpRequest, key: str) -> HttpResponse:
    use_case = use_case_for(request.user, key, roles=READ_ROLES)
    if request.method == "POST":
        require_role(request.user, use_case, [Role.CHARTER_OWNER])
    can_create = _is_owner(request, use_case)
    form = StudyForm(request.POST or None, use_case=use_case) if can_create else None
    if form is not None and request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            study = oversight_study_create(
                actor=request.user,
                use_case=use_case,
                name=data["name"],
                runs=list(data["runs"]),
                reviewers=list(data["reviewers"]),
                items_per_reviewer=data["items_per_reviewer"],
                defect_share=data["defect_share"],
                kinds=data["kinds"],
                seed=data["seed"],
            )
        except ServiceError as error:
            field = error.field.split("[")[0] if error.field else None
            form.add_error(field if field in form.fields else None, error.message)
        else:
            messages.success(request, f"Oversight study {study.name} created.")
            return redirect("grading-oversight-detail", key=use_case.key, public_id=study.public_id)
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "grading/oversight_list.html",
        {"use_case": use_case, "studies": oversight_study_list(use_case=use_case), "form": form},
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def oversight_study_detail_view(request: HttpRequest, key: str, public_id: str) -> HttpResponse:
    use_case = use_case_for(request.user, key, roles=READ_ROLES)
    study = oversight_study_get(use_case=use_case, public_id=public_id)
    if request.method == "POST":
        require_role(request.user, use_case, [Role.CHARTER_OWNER])
        try:
            oversight_study_close(actor=request.user, study=study)
        except ServiceError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, "The study is closed: no more decisions are accepted.")
        return redirect("grading-oversight-detail", key=use_case.key, public_id=study.public_id)
    return render(
        request,
        "grading/oversight_detail.html",
        {
            "use_case": use_case,
            "results": oversight_results(study=study),
            "can_close": study.status == SessionStatus.OPEN and _is_owner(request, use_case),
        },
    )


@login_required
def oversight_queue_view(request: HttpRequest) -> HttpResponse:
    return render(
        request, "grading/oversight_queue.html", {"queue": oversight_queue(user=request.user)}
    )


@login_required
@require_http_methods(["GET", "POST"])
def oversight_item_view(request: HttpRequest, public_id: str) -> HttpResponse:
    item = oversight_item_for_reviewer(request.user, public_id)
    failure = None
    if request.method == "POST":
        try:
            item = oversight_item_decide(
                actor=request.user,
                item=item,
                decision=request.POST.get("decision", ""),
                flags=request.POST.getlist("flags"),
                comment=request.POST.get("comment", ""),
                elapsed_seconds=_elapsed(request.POST.get("started", "")),
                reason=request.POST.get("reason", ""),
            )
        except ServiceError as error:
            failure = error.message
        else:
            messages.success(request, f"Decision on copy {item.position} recorded.")
            following = oversight_review(item=item).next_public_id
            if following is None:
                return redirect("grading-oversight-queue")
            return redirect("grading-oversight-item", public_id=following)
    return render(
        request,
        "grading/oversight_item.html",
        {"page": oversight_review(item=item), "started": f"{time.time():.3f}", "failure": failure},
        status=400 if failure else 200,
    )


def _is_owner(request: HttpRequest, use_case: UseCase) -> bool:
    return Role.CHARTER_OWNER in user_roles(request.user, use_case)


def _elapsed(started: str) -> float:
    """Return the seconds since the page was served, from the stamp the page sent.

    A missing or unreadable stamp is refused rather than counted as 0 s, which would lower
    the study's mean review time (the service caps a stale one).
    """
    try:
        seconds = time.time() - float(started)
    except ValueError:
        seconds = math.nan
    if not 0.0 <= seconds < math.inf:
        raise ServiceError(
            "The page's time stamp is missing or unreadable, so the time on this copy is "
            "unknown; reload the page and decide again.",
            field="started",
        )
    return seconds


urlpatterns: list[URLPattern] = [
    path("oversight/", oversight_queue_view, name="grading-oversight-queue"),
    path("oversight/<str:public_id>/", oversight_item_view, name="grading-oversight-item"),
    path(
        "use-cases/<str:key>/oversight/", oversight_study_list_view, name="grading-oversight-list"
    ),
    path(
        "use-cases/<str:key>/oversight/<str:public_id>/",
        oversight_study_detail_view,
        name="grading-oversight-detail",
    ),
]
