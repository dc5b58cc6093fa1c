"""Run pages: the list, importing outputs, a run with its progress and outputs, one output."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from charters.models import Configuration, TaskSet, UseCase
from charters.models.tasks import Split
from enterpriseval.errors import ServiceError
from runs.models import OutputStatus, Run
from runs.selectors.runs import (
    can_write,
    output_get,
    run_access,
    run_detail,
    run_get,
    run_list,
    run_outputs,
)
from runs.services.outputs import MAX_REPEATS, output_import


class RunImportForm(forms.Form):
    configuration = forms.ModelChoiceField(
        queryset=Configuration.objects.none(), help_text="The σ that produced the outputs."
    )
    task_set = forms.ModelChoiceField(queryset=TaskSet.objects.none())
    split = forms.ChoiceField(choices=Split.choices, initial=Split.GRADED)
    repeats = forms.IntegerField(
        min_value=1,
        max_value=MAX_REPEATS,
        initial=1,
        label="Repeats K",
        help_text="Each task was run K times; repeats are numbered 0 to K − 1.",
    )
    file = forms.FileField(
        allow_empty_file=True, help_text="JSONL: one output per line (docs/formats.md)."
    )

    def __init__(self, *args: Any, use_case: UseCase, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        configurations = self.fields["configuration"]
        task_sets = self.fields["task_set"]
        assert isinstance(configurations, forms.ModelChoiceField)
        assert isinstance(task_sets, forms.ModelChoiceField)
        configurations.queryset = Configuration.objects.filter(use_case=use_case).defer(
            "document", "canonical_json"
        )
        configurations.label_from_instance = lambda c: f"{c.name} v{c.version} ({c.model_ref})"
        task_sets.queryset = TaskSet.objects.filter(use_case=use_case)
        task_sets.label_from_instance = lambda t: (
            f"{t.name} v{t.version} (dev {t.split_counts.get('dev', 0)}, graded "
            f"{t.split_counts.get('graded', 0)}, stress {t.split_counts.get('stress', 0)})"
        )


@login_required
def run_list_view(request: HttpRequest, key: str) -> HttpResponse:
    use_case, roles = run_access(request.user, key)
    return render(
        request,
        "runs/run_list.html",
        {"use_case": use_case, "runs": run_list(use_case=use_case), "can_write": can_write(roles)},
    )


@login_required
@require_http_methods(["GET", "POST"])
def run_import_view(request: HttpRequest, key: str) -> HttpResponse:
    use_case, _roles = run_access(request.user, key, write=True)
    form = RunImportForm(request.POST or None, request.FILES or None, use_case=use_case)
    context: dict[str, Any] = {"use_case": use_case, "form": form}
    if request.method == "GET" or not form.is_valid():
        status = 400 if request.method == "POST" else 200
        return render(request, "runs/run_import.html", context, status=status)
    upload = form.cleaned_data["file"]
    try:
        run = output_import(
            actor=request.user,
            use_case=use_case,
            configuration=form.cleaned_data["configuration"],
            task_set=form.cleaned_data["task_set"],
            split=form.cleaned_data["split"],
            repeats=form.cleaned_data["repeats"],
            fileobj=upload,
            filename=upload.name,
        )
    except ServiceError as error:
        context.update(failure=error.message, errors=error.details, filename=upload.name)
        return render(request, "runs/run_import.html", context, status=400)
    messages.success(request, f"Imported {run.items_done} outputs as run {run.pk}.")
    return redirect("run-detail", key=use_case.key, run_id=run.pk)


@login_required
def run_detail_view(request: HttpRequest, key: str, run_id: int) -> HttpResponse:
    use_case, run = _run(request, key, run_id)
    status = request.GET.get("status") or None
    if status not in (None, *OutputStatus.values):
        status = None
    return render(
        request,
        "runs/run_detail.html",
        {
            "use_case": use_case,
            "detail": run_detail(run=run),
            "page": run_outputs(run=run, offset=_offset(request), status=status),
            "status_filter": status,
        },
    )


@login_required
def output_detail_view(request: HttpRequest, key: str, run_id: int, output_id: int) -> HttpResponse:
    use_case, run = _run(request, key, run_id)
    view = output_get(run=run, output_id=output_id)
    if view is None:
        raise Http404("No such output.")
    return render(
        request, "runs/output_detail.html", {"use_case": use_case, "run": run, "view": view}
    )


def _run(request: HttpRequest, key: str, run_id: int) -> tuple[UseCase, Run]:
    use_case, _roles = run_access(request.user, key)
    run = run_get(use_case=use_case, run_id=run_id)
    if run is None:
        raise Http404("No such run.")
    return use_case, run


def _offset(request: HttpRequest) -> int:
    try:
        return max(int(request.GET.get("offset", 0)), 0)
    except ValueError:
        return 0
