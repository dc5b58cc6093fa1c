"""The use-case overview page and the members page."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from charters.models import Role, UseCase
from charters.permissions import use_case_for
from charters.selectors.use_cases import GRANT_ACCEPTED, grantee_get, membership_list
from charters.services.use_cases import membership_grant, membership_revoke
from enterpriseval.errors import ServiceError
from lifecycle.selectors import use_case_overview


class MembershipForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices)


@login_required
def use_case_detail(request: HttpRequest, key: str) -> HttpResponse:
    use_case = use_case_for(request.user, key)
    overview = use_case_overview(use_case=use_case, user=request.user)
    return render(request, "lifecycle/use_case_detail.html", {"overview": overview})


@login_required
@require_http_methods(["GET", "POST"])
def use_case_members(request: HttpRequest, key: str) -> HttpResponse:
    use_case: UseCase = use_case_for(request.user, key, roles=[Role.CHARTER_OWNER])
    form = MembershipForm(request.POST or None)
    if request.method == "POST":
        if "revoke" in request.POST:
            _revoke(request, use_case)
            return redirect("use-case-members", key=use_case.key)
        if form.is_valid():
            username, role = form.cleaned_data["username"], form.cleaned_data["role"]
            user = grantee_get(username=username)
            try:
                if user is not None:
                    membership_grant(actor=request.user, use_case=use_case, user=user, role=role)
            except ServiceError as error:
                form.add_error("role", error.message)
            else:
                # The same answer for an unknown user name: a grant does not reveal which exist.
                messages.success(
                    request, GRANT_ACCEPTED.format(username=username, role=Role(role).label)
                )
                return redirect("use-case-members", key=use_case.key)
    return render(
        request,
        "lifecycle/use_case_members.html",
        {"use_case": use_case, "members": membership_list(use_case=use_case), "form": form},
    )


def _revoke(request: HttpRequest, use_case: UseCase) -> None:
    username, _, role = request.POST["revoke"].partition("|")
    user = get_user_model().objects.filter(username=username).first()
    if user is None or role not in Role.values:
        messages.error(request, "Unknown member or role.")
        return
    try:
        membership_revoke(actor=request.user, use_case=use_case, user=user, role=role)
    except ServiceError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"{username} is no longer {Role(role).label}.")
