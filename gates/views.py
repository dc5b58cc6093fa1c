"""Decision pages: the list, recording one, one decision with its plots, two side by side."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from enterpriseval.errors import ServiceError
from gates.selectors import (
    DecisionChoices,
    decision_choices,
    decision_comparison,
    decision_detail,
    decision_get,
    decision_inputs,
    decision_list,
    decision_recorder_use_case_for,
    decision_use_case_for,
)
from gates.services import decision_create


class DecisionCompareForm(forms.Form):
    a = forms.IntegerField(min_value=1, label="Decision A")
    b = forms.IntegerField(min_value=1, label="Decision B")


class DecisionCreateForm(forms.Form):
    charter = forms.TypedChoiceField(coerce=int, label="Charter version")
    run = forms.TypedChoiceField(coerce=int, label="Run")
    session = forms.ChoiceField(required=False, label="Grading session")
    judge = forms.TypedChoiceField(coerce=int, required=False, empty_value=None, label="Judge")
    oversight_study = forms.ChoiceField(required=False, label="Oversight study")
    stress_run = forms.TypedChoiceField(
        coerce=int,
        required=False,
        empty_value=None,
        label="Stress-split run",
        help_text="The same σ on the stress split, reported apart (SPEC §9); required "
        "evidence from E3.",
    )

    def __init__(self, *args: Any, choices: DecisionChoices, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        none = [("", "— none —")]
        fields = self.fields
        fields["charter"].choices = [
            (c.version, f"v{c.version}") for c in choices.charters if c.is_frozen
        ]
        fields["run"].choices = [
            (
                r.pk,
                f"run {r.pk} · σ {r.configuration.name} v{r.configuration.version} · "
                f"{r.split}, K = {r.repeats}",
            )
            for r in choices.runs
        ]
        fields["session"].choices = none + [
            (s.public_id, f"{s.name} ({s.public_id}, {s.get_status_display().lower()})")
            for s in choices.sessions
        ]
        fields["judge"].choices = none + [
            (j.pk, f"{j.name} {j.version}" + (f" · {j.model_ref}" if j.model_ref else ""))
            for j in choices.judges
        ]
        fields["oversight_study"].choices = none + [
            (s.public_id, f"{s.name} ({s.public_id})") for s in choices.studies
        ]
        fields["stress_run"].choices = none + [
            (
                r.pk,
                f"run {r.pk} · σ {r.configuration.name} v{r.configuration.version} · "
                f"K = {r.repeats}",
            )
            for r in choices.runs
            if r.split == "stress"
        ]


@login_required
@require_http_methods(["GET", "POST"])
def decision_create_page(request: HttpRequest, key: str) -> HttpResponse:
    use_case = decision_recorder_use_case_for(request.user, key)
    form = DecisionCreateForm(request.POST or None, choices=decision_choices(use_case=use_case))
    context = {"use_case": use_case, "form": form}
    if request.method == "GET" or not form.is_valid():
        status = 400 if request.method == "POST" else 200
        return render(request, "gates/decision_new.html", context, status=status)
    data = form.cleaned_data
    try:
        inputs = decision_inputs(
            use_case=use_case,
            charter_version=data["charter"],
            run_id=data["run"],
            session_id=data["session"] or None,
            judge_id=data["judge"],
            study_id=data["oversight_study"] or None,
            stress_run_id=data["stress_run"],
        )
        decision = decision_create(
            actor=request.user,
            charter=inputs.charter,
            run=inputs.run,
            session=inputs.session,
            judge=inputs.judge,
            oversight_study=inputs.oversight_study,
            stress_run=inputs.stress_run,
        )
    except ServiceError as error:
        form.add_error(error.field if error.field in form.fields else None, error.message)
        return render(request, "gates/decision_new.html", context, status=400)
    return redirect("decision-detail", use_case.key, decision.pk)


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
