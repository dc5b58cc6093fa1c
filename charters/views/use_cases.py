"""The use-case dashboard and the page that creates a use case."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_http_methods

from charters.models.use_cases import Autonomy, Consequence
from charters.permissions import require_use_case_create
from charters.selectors.use_cases import use_case_list
from charters.services.use_cases import use_case_create
from enterpriseval.errors import ServiceError


class UseCaseForm(forms.Form):
    key = forms.RegexField(regex=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=40)
    name = forms.CharField(max_length=200)
    business_outcome = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    value_hypothesis = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    autonomy = forms.TypedChoiceField(choices=Autonomy.choices, coerce=int)
    consequence = forms.TypedChoiceField(choices=Consequence.choices, coerce=int)


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    return render(
        request, "charters/dashboard.html", {"use_cases": use_case_list(user=request.user)}
    )


@login_required
@require_http_methods(["GET", "POST"])
def use_case_new(request: HttpRequest) -> HttpResponse:
    require_use_case_create(request.user)
    form = UseCaseForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            use_case = use_case_create(actor=request.user, **form.cleaned_data)
        except ServiceError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(request, f"Use case {use_case.key} created; you are its owner.")
            return redirect("use-case-detail", key=use_case.key)
    return render(request, "charters/use_case_new.html", {"form": form})


urlpatterns = [
    path("", dashboard, name="dashboard"),
    path("use-cases/new/", use_case_new, name="use-case-new"),
]
