"""Run pages: the list, starting a run, importing outputs, a run with its progress, outputs and
judgings, judging a run, one output."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from charters.models import Configuration, TaskSet, UseCase
from charters.models.charters import Treatment
from charters.models.tasks import Split
from enterpriseval.errors import ServiceError
from enterpriseval.limits import upload_status
from runs.judges.rubric import RUBRIC_VERSION
from runs.models import OutputStatus, Run, RunStatus
from runs.selectors.runs import (
    can_write,
    judging_get,
    judging_list,
    output_get,
    run_access,
    run_detail,
    run_get,
    run_list,
    run_outputs,
)
from runs.services.judging import JUDGE_KINDS, PURPOSE_CHOICES, judging_cancel, run_judge_start
from runs.services.outputs import MAX_REPEATS, output_import
from runs.services.runs import DEFAULT_CONCURRENCY, MAX_CONCURRENCY, run_create, run_start


class ServiceErrorForm(forms.Form):
    def add_service_error(self, error: ServiceError) -> None:
        """Show a refusal next to the field it names, or above the form."""
        self.add_error(error.field if error.field in self.fields else None, error.message)


class RunSourcesForm(ServiceErrorForm):
    """σ, task set, split and K: what a run is made of, whether started here or imported."""

    configuration = forms.ModelChoiceField(
        queryset=Configuration.objects.none(), label="σ", help_text="A frozen configuration."
    )
    task_set = forms.ModelChoiceField(queryset=TaskSet.objects.none())
    split = forms.ChoiceField(choices=Split.choices, initial=Split.GRADED)
    repeats = forms.IntegerField(
        min_value=1,
        max_value=MAX_REPEATS,
        initial=1,
        label="Repeats K",
        help_text="Each task is run K times; repeats are numbered 0 to K − 1.",
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


class RunImportForm(RunSourcesForm):
    file = forms.FileField(
        allow_empty_file=True, help_text="JSONL: one output per line (docs/formats.md)."
    )

    field_order = ["configuration", "task_set", "split", "repeats", "file"]


class RunStartForm(RunSourcesForm):
    concurrency = forms.IntegerField(
        min_value=1,
        max_value=MAX_CONCURRENCY,
        initial=DEFAULT_CONCURRENCY,
        help_text="Model calls in flight at once, per chunk of tasks.",
    )
    cost_budget_usd = forms.DecimalField(
        required=False,
        min_value=0,
        max_digits=12,
        decimal_places=6,
        label="Cost budget (USD)",
        help_text="The run stops once it has spent this much; empty: no budget.",
    )


class RunJudgeForm(ServiceErrorForm):
    judge = forms.ChoiceField(
        choices=[
            ("offline", "Built-in offline judge (no model)"),
            ("litellm", "LLM judge through litellm"),
        ],
        initial="offline",
        widget=forms.RadioSelect,
    )
    purpose = forms.ChoiceField(choices=PURPOSE_CHOICES, initial=Treatment.GATED)
    model_ref = forms.CharField(
        required=False,
        max_length=200,
        label="Model",
        help_text="LLM judge: provider/model as litellm names it, e.g. openai/gpt-4o.",
    )
    api_base = forms.CharField(
        required=False,
        max_length=300,
        label="Endpoint (api_base)",
        help_text="LLM judge: URL of an OpenAI-compatible endpoint; empty: the provider's.",
    )
    api_key_env = forms.CharField(
        required=False,
        max_length=100,
        label="API key variable",
        help_text="LLM judge: the NAME of the workers' environment variable that holds the "
        "API key, e.g. JUDGE_API_KEY. Never the key itself.",
    )
    concurrency = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_CONCURRENCY,
        help_text="LLM judge: calls in flight at once; empty: the default (32, or the "
        "setting JUDGE_LLM_CONCURRENCY).",
    )
    rubric_version = forms.ChoiceField(
        choices=[(RUBRIC_VERSION, f"Rubric version {RUBRIC_VERSION}")], initial=RUBRIC_VERSION
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
def run_start_view(request: HttpRequest, key: str) -> HttpResponse:
    use_case, _roles = run_access(request.user, key, write=True)
    form = RunStartForm(request.POST or None, use_case=use_case)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = run_create(
                actor=request.user,
                use_case=use_case,
                configuration=data["configuration"],
                task_set=data["task_set"],
                split=data["split"],
                repeats=data["repeats"],
                concurrency=data["concurrency"],
                cost_budget_usd=data["cost_budget_usd"],
            )
            run_start(actor=request.user, run=run)
        except ServiceError as error:
            form.add_service_error(error)
        else:
            messages.success(request, f"Run {run.pk} started: {run.items_total} items.")
            return redirect("run-detail", key=use_case.key, run_id=run.pk)
    status = 400 if request.method == "POST" else 200
    return render(
        request, "runs/run_start.html", {"use_case": use_case, "form": form}, status=status
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
        return render(request, "runs/run_import.html", context, status=upload_status(error))
    messages.success(request, f"Imported {run.items_done} outputs as run {run.pk}.")
    return redirect("run-detail", key=use_case.key, run_id=run.pk)


@login_required
def run_detail_view(request: HttpRequest, key: str, run_id: int) -> HttpResponse:
    use_case, roles, run = _run(request, key, run_id)
    return _detail(request, use_case, roles, run, RunJudgeForm())


@login_required
@require_http_methods(["GET", "POST"])
def run_judge_view(request: HttpRequest, key: str, run_id: int) -> HttpResponse:
    use_case, roles, run = _run(request, key, run_id, write=True)
    if request.method == "GET":
        return redirect(f"{run_detail_url(use_case, run)}#judge")
    form = RunJudgeForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            judging = run_judge_start(
                actor=request.user,
                run=run,
                kind=JUDGE_KINDS[data["judge"]],
                purpose=data["purpose"],
                model_ref=data["model_ref"],
                api_base=data["api_base"],
                api_key_env=data["api_key_env"],
                concurrency=data["concurrency"],
                rubric_version=data["rubric_version"],
            )
        except ServiceError as error:
            form.add_service_error(error)
        else:
            messages.success(
                request, f"Judging {judging.pk} of run {run.pk} by {judging.judge} requested."
            )
            return redirect(f"{run_detail_url(use_case, run)}#judgings")
    return _detail(request, use_case, roles, run, form, status=400)


@login_required
@require_http_methods(["POST"])
def judging_cancel_view(
    request: HttpRequest, key: str, run_id: int, judging_id: int
) -> HttpResponse:
    use_case, _roles, run = _run(request, key, run_id, write=True)
    judging = judging_get(run=run, judging_id=judging_id)
    if judging is None:
        raise Http404("No such judging.")
    try:
        judging_cancel(actor=request.user, judging=judging, reason=request.POST.get("reason", ""))
    except ServiceError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Judging {judging.pk} of run {run.pk} cancelled.")
    return redirect(f"{run_detail_url(use_case, run)}#judging-{judging.pk}")


@login_required
def output_detail_view(request: HttpRequest, key: str, run_id: int, output_id: int) -> HttpResponse:
    use_case, _roles, run = _run(request, key, run_id)
    view = output_get(run=run, output_id=output_id)
    if view is None:
        raise Http404("No such output.")
    return render(
        request, "runs/output_detail.html", {"use_case": use_case, "run": run, "view": view}
    )


def _run(
    request: HttpRequest, key: str, run_id: int, *, write: bool = False
) -> tuple[UseCase, set[str], Run]:
    use_case, roles = run_access(request.user, key, write=write)
    run = run_get(use_case=use_case, run_id=run_id)
    if run is None:
        raise Http404("No such run.")
    return use_case, roles, run


def _detail(
    request: HttpRequest,
    use_case: UseCase,
    roles: set[str],
    run: Run,
    judge_form: RunJudgeForm,
    status: int = 200,
) -> HttpResponse:
    output_status = request.GET.get("status") or None
    if output_status not in (None, *OutputStatus.values):
        output_status = None
    return render(
        request,
        "runs/run_detail.html",
        {
            "use_case": use_case,
            "detail": run_detail(run=run),
            "page": run_outputs(run=run, offset=_offset(request), status=output_status),
            "status_filter": output_status,
            "judgings": judging_list(run=run),
            "judge_form": judge_form,
            "run_active": run.status in (RunStatus.PENDING, RunStatus.RUNNING),
            "can_write": can_write(roles),
        },
        status=status,
    )


def run_detail_url(use_case: UseCase, run: Run) -> str:
    return reverse("run-detail", args=[use_case.key, run.pk])


def _offset(request: HttpRequest) -> int:
    try:
        return max(int(request.GET.get("offset", 0)), 0)
    except ValueError:
        return 0
