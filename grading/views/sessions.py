"""Session management pages: the list, a new session, one session, its grades in and out.

For the charter owner (who creates, imports and closes), the reviewer and the adjudicator;
graders get 403 (they work at /grading/), outsiders 404.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from enterpriseval.errors import ServiceError
from enterpriseval.limits import upload_status
from grading.models import GradingSession, SampleDesign, SessionMode, SessionStatus, TauRule
from grading.selectors.sequential import judge_choices, sequence_plots
from grading.selectors.sessions import (
    SessionChoices,
    arms_text,
    grades_file,
    session_access,
    session_artefacts,
    session_can_write,
    session_choices,
    session_detail,
    session_for,
    session_list,
)
from grading.services.grade_import import grades_import
from grading.services.sequential import DEFAULT_TAU
from grading.services.sessions import MAX_SEED, session_close, session_create
from runs.models import Run

GRADES_CONTENT_TYPE = "application/x-ndjson"


class SessionForm(forms.Form):
    name = forms.CharField(
        max_length=120,
        help_text="Graders see it: it must not name a model, a σ or a baseline.",
    )
    runs = forms.ModelMultipleChoiceField(
        queryset=None,
        widget=forms.CheckboxSelectMultiple,
        help_text="Completed runs of one task set: their succeeded outputs of graded tasks are "
        "the population sampled.",
    )
    include_baselines = forms.BooleanField(
        required=False,
        label="Include human baseline artefacts",
        help_text="The reference artefact of each graded task that has one, graded blind "
        "beside the outputs.",
    )
    design = forms.ChoiceField(
        choices=SampleDesign.choices, initial=SampleDesign.UNIFORM, widget=forms.RadioSelect
    )
    stratify_by = forms.CharField(
        required=False,
        max_length=20,
        label="Stratify within each run by",
        help_text="Stratified design only: a task metadata key (e.g. section); each of its "
        "values within a run is a stratum, and the estimators weight it by N_h/n_h.",
    )
    sample_size = forms.IntegerField(
        min_value=1,
        required=False,
        help_text="Outputs to draw for each σ (the planned n is per σ). Blank: the size the "
        "charter plans for each σ of the runs checked.",
    )
    graders_per_artefact = forms.IntegerField(min_value=2, max_value=20, initial=2)
    graders = forms.ModelMultipleChoiceField(
        queryset=None,
        widget=forms.CheckboxSelectMultiple,
        help_text="Users holding the grader role; each artefact goes to that many of them.",
    )
    adjudicators = forms.ModelMultipleChoiceField(
        queryset=None,
        widget=forms.CheckboxSelectMultiple,
        help_text="A third person resolves the graders' disagreements; not one of the graders.",
    )
    seed = forms.IntegerField(
        min_value=0,
        max_value=MAX_SEED - 1,
        required=False,
        help_text="Blank: a random seed, recorded with the session so the sample can be redrawn.",
    )
    mode = forms.ChoiceField(
        choices=SessionMode.choices,
        initial=SessionMode.FIXED,
        required=False,
        widget=forms.RadioSelect,
        help_text="Sequential: check one run; outputs are drawn one at a time by the judge's "
        "uncertainty and grading stops when every gated metric is settled (SPEC §5.5).",
    )
    judge = forms.ModelChoiceField(
        queryset=None, required=False, help_text="Sequential: the judge whose uncertainty draws."
    )
    tau = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        initial=DEFAULT_TAU,
        required=False,
        label="τ",
        help_text="Sequential: uniform share (blank: 0.5).",
    )
    tau_rule = forms.ChoiceField(
        choices=TauRule.choices,
        initial=TauRule.FIXED,
        required=False,
        widget=forms.RadioSelect,
        label="Uniform share",
        help_text="Sequential only: fixed τ for every draw, or adaptive with τ as the floor "
        "(τ_t chosen before each draw from the grades so far, recorded with the draw).",
    )
    budget = forms.IntegerField(
        min_value=1,
        required=False,
        help_text="Sequential: most outputs graded. Blank: the charter's planned n for the σ.",
    )
    agreement_size = forms.IntegerField(
        min_value=1,
        required=False,
        help_text="Sequential: outputs of the uniform sub-sample double-graded for agreement "
        "(blank: 10).",
    )

    def __init__(self, *args: Any, choices: SessionChoices, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        runs = self.fields["runs"]
        graders = self.fields["graders"]
        adjudicators = self.fields["adjudicators"]
        assert isinstance(runs, forms.ModelMultipleChoiceField)
        assert isinstance(graders, forms.ModelMultipleChoiceField)
        assert isinstance(adjudicators, forms.ModelMultipleChoiceField)
        runs.queryset = choices.runs
        judge = self.fields["judge"]
        assert isinstance(judge, forms.ModelChoiceField)
        judge.queryset = judge_choices(runs=choices.runs)
        judge.label_from_instance = lambda j: f"{j.name} {j.version}"
        runs.label_from_instance = _run_label
        graders.queryset = choices.graders
        adjudicators.queryset = choices.adjudicators
        for field in (graders, adjudicators):
            field.label_from_instance = lambda user: user.get_username()
        if not self.is_bound:
            self.initial.update(runs=[run.pk for run in choices.default_runs])


def _run_label(run: Run) -> str:
    configuration, task_set = run.configuration, run.task_set
    return (
        f"Run {run.pk} · σ {configuration.name} v{configuration.version} "
        f"({configuration.model_ref}) · task set {task_set.name} v{task_set.version} "
        f"{run.split} · K = {run.repeats} · {run.items_done} outputs"
    )


@login_required
@require_GET
def session_list_view(request: HttpRequest, key: str) -> HttpResponse:
    use_case = session_access(request.user, key)
    return render(
        request,
        "grading/session_list.html",
        {
            "use_case": use_case,
            "sessions": session_list(use_case=use_case),
            "can_write": session_can_write(request.user, use_case),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def session_new_view(request: HttpRequest, key: str) -> HttpResponse:
    use_case = session_access(request.user, key, write=True)
    choices = session_choices(use_case=use_case)
    form = SessionForm(request.POST or None, choices=choices)
    context: dict[str, Any] = {"use_case": use_case, "form": form, "choices": choices}
    if request.method == "GET" or not form.is_valid():
        status = 400 if request.method == "POST" else 200
        return render(request, "grading/session_new.html", context, status=status)
    data = form.cleaned_data
    try:
        session = session_create(
            actor=request.user,
            use_case=use_case,
            name=data["name"],
            runs=list(data["runs"]),
            graders=list(data["graders"]),
            adjudicators=list(data["adjudicators"]),
            include_baselines=data["include_baselines"],
            design=data["design"],
            sample_size=data["sample_size"],
            graders_per_artefact=data["graders_per_artefact"],
            seed=data["seed"],
            stratify_by=data["stratify_by"],
            mode=data["mode"] or SessionMode.FIXED,
            judge=data["judge"],
            tau=DEFAULT_TAU if data["tau"] is None else data["tau"],
            tau_rule=data["tau_rule"] or TauRule.FIXED,
            budget=data["budget"],
            agreement_size=data["agreement_size"],
        )
    except ServiceError as error:
        form.add_error(error.field if error.field in form.fields else None, error.message)
        return render(request, "grading/session_new.html", context, status=400)
    messages.success(
        request,
        f"Session {session.name}: {session.sample_size} of {session.population_size} artefacts "
        f"drawn with seed {session.seed} ({arms_text(session.arms)}), each assigned to "
        f"{session.graders_per_artefact} graders.",
    )
    return redirect("grading-session-detail", key=use_case.key, public_id=session.public_id)


@login_required
@require_GET
def session_detail_view(request: HttpRequest, key: str, public_id: str) -> HttpResponse:
    use_case, session = session_for(request.user, key, public_id)
    return render(
        request,
        "grading/session_detail.html",
        {
            "use_case": use_case,
            "detail": session_detail(session=session),
            "artefacts": session_artefacts(session=session),
            "can_write": session_can_write(request.user, use_case),
            "is_open": session.status == SessionStatus.OPEN,
            "sequence_plots": sequence_plots(session=session),
        },
    )


@login_required
@require_POST
def session_close_view(request: HttpRequest, key: str, public_id: str) -> HttpResponse:
    use_case, session = session_for(request.user, key, public_id, write=True)
    if request.POST.get("confirm") != "yes":
        messages.error(request, "Tick the confirmation to close the session; it was not closed.")
    else:
        try:
            session_close(actor=request.user, session=session)
        except ServiceError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, f"Session {session.name} is closed: it accepts no grades.")
    return redirect("grading-session-detail", key=use_case.key, public_id=session.public_id)


@login_required
@require_GET
def session_export_view(request: HttpRequest, key: str, public_id: str) -> StreamingHttpResponse:
    _use_case, session = session_for(request.user, key, public_id)
    return grades_response(
        session,
        final=request.GET.get("final") == "1",
        provenance=request.GET.get("provenance") == "1",
    )


def grades_response(
    session: GradingSession, *, final: bool, provenance: bool
) -> StreamingHttpResponse:
    """Return the session's grades file as a streamed JSONL download."""
    response = StreamingHttpResponse(
        grades_file(session=session, final=final, provenance=provenance),
        content_type=GRADES_CONTENT_TYPE,
    )
    suffix = ("-final" if final else "") + ("-provenance" if provenance else "")
    response["Content-Disposition"] = (
        f'attachment; filename="grades-{session.public_id}{suffix}.jsonl"'
    )
    return response


class GradesImportForm(forms.Form):
    file = forms.FileField(
        allow_empty_file=True,
        help_text="JSONL: one line per (artefact, grader) (docs/formats.md, 'Grades (JSONL)').",
    )


@login_required
@require_http_methods(["GET", "POST"])
def session_import_view(request: HttpRequest, key: str, public_id: str) -> HttpResponse:
    use_case, session = session_for(request.user, key, public_id, write=True)
    form = GradesImportForm(request.POST or None, request.FILES or None)
    context: dict[str, Any] = {"use_case": use_case, "session": session, "form": form}
    if request.method == "GET" or not form.is_valid():
        status = 400 if request.method == "POST" else 200
        return render(request, "grading/session_import.html", context, status=status)
    upload = form.cleaned_data["file"]
    try:
        result = grades_import(
            actor=request.user, session=session, fileobj=upload, filename=upload.name
        )
    except ServiceError as error:
        context.update(failure=error.message, errors=error.details, filename=upload.name)
        return render(request, "grading/session_import.html", context, status=upload_status(error))
    messages.success(
        request,
        f"Imported {upload.name}: {result.submitted} submitted, {result.drafts} saved as drafts, "
        f"{result.revised} revised ({result.revisions} grade revisions), {result.unchanged} "
        "unchanged.",
    )
    return redirect("grading-session-detail", key=use_case.key, public_id=session.public_id)


urlpatterns: list[URLPattern] = [
    path("use-cases/<str:key>/grading/", session_list_view, name="grading-session-list"),
    path("use-cases/<str:key>/grading/new/", session_new_view, name="grading-session-new"),
    path(
        "use-cases/<str:key>/grading/<str:public_id>/",
        session_detail_view,
        name="grading-session-detail",
    ),
    path(
        "use-cases/<str:key>/grading/<str:public_id>/close/",
        session_close_view,
        name="grading-session-close",
    ),
    path(
        "use-cases/<str:key>/grading/<str:public_id>/grades.jsonl",
        session_export_view,
        name="grading-session-export",
    ),
    path(
        "use-cases/<str:key>/grading/<str:public_id>/import/",
        session_import_view,
        name="grading-session-import",
    ),
]
