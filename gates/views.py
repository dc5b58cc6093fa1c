"""Decision pages: the list, one recorded decision with its plots, and two side by side."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from enterpriseval.errors import ServiceError
from gates.selectors import (
    decision_comparison,
    decision_detail,
    decision_get,
    decision_list,
    decision_use_case_for,
)


class DecisionCompareForm(forms.Form):
    a = forms.IntegerField(min_value=1, label="Decision A")
    b = forms.IntegerField(min_value=1, label="Decision B")


@login_required
def decision_list_page(request: HttpRequest, key: str) -> HttpResponse:
    use_case = decision_use_case_for(request.user, key)
    return render(
        request,
        "gates/decision_list.html",
        {"use_case": use_case, "decisions": list(decision_list(use_case=use_case))},
    )


@login_required
def decision_detail_page(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    use_case = decision_use_case_for(request.user, key)
    decision = decision_get(use_case=use_case, pk=pk)
    if decision is None:
        raise Http404(f"No decision {pk} in {use_case.key}.")
    return render(
        request,
        "gates/decision_detail.html",
        {"use_case": use_case, "detail": decision_detail(decision=decision)},
    )


@login_required
def decision_compare_page(request: HttpRequest, key: str) -> HttpResponse:
    use_case = decision_use_case_for(request.user, key)
    asked = "a" in request.GET or "b" in request.GET
    form = DecisionCompareForm(request.GET if asked else None)
    context: dict[str, Any] = {
        "use_case": use_case,
        "form": form,
        "decisions": list(decision_list(use_case=use_case)),
        "errors": [],
    }
    if asked:
        if form.is_valid():
            try:
                context["comparison"] = decision_comparison(
                    use_case=use_case, a=form.cleaned_data["a"], b=form.cleaned_data["b"]
                )
            except ServiceError as error:
                context["errors"].append(error.message)
        else:
            context["errors"] += [
                f"{name.upper()}: {message} Give the number of a decision of {use_case.key}."
                for name, messages in form.errors.items()
                for message in messages
            ]
    status = 400 if context["errors"] else 200
    return render(request, "gates/decision_compare.html", context, status=status)
