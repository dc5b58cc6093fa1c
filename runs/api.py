"""Runs under /api/v1/use-cases/<key>/runs/: start, import, list, progress, outputs, judging."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from django.http import Http404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param
from rest_framework.views import APIView

from charters.models import Configuration, TaskSet, UseCase
from charters.models.charters import Treatment
from charters.models.tasks import Split
from charters.selectors.configurations import configuration_get
from charters.selectors.task_sets import task_set_get
from enterpriseval.api import ErrorOutput, validated
from enterpriseval.errors import ServiceError
from runs.judges.rubric import RUBRIC_VERSION
from runs.models import Judging, OutputStatus, Run
from runs.selectors.runs import (
    MAX_OUTPUT_PAGE_SIZE,
    OUTPUT_PAGE_SIZE,
    judging_get,
    judging_list,
    judging_percent,
    output_get,
    run_access,
    run_detail,
    run_get,
    run_list,
    run_outputs,
)
from runs.services.judging import (
    JUDGE_KINDS,
    MAX_CANCEL_REASON,
    PURPOSE_CHOICES,
    judging_cancel,
    run_judge_start,
)
from runs.services.outputs import MAX_REPEATS, output_import
from runs.services.runs import MAX_CONCURRENCY, run_create, run_start

VERSIONED_NAME = re.compile(r"^(?P<name>[-a-zA-Z0-9_]{1,80}):v?(?P<version>[0-9]{1,9})\Z")


class ConfigurationRefOutput(serializers.Serializer[Configuration]):
    name = serializers.CharField()
    version = serializers.IntegerField()
    sha256 = serializers.CharField()
    model_ref = serializers.CharField()


class TaskSetRefOutput(serializers.Serializer[TaskSet]):
    name = serializers.CharField()
    version = serializers.IntegerField()
    manifest_sha256 = serializers.CharField()


class RunOutput(serializers.Serializer[Run]):
    id = serializers.IntegerField(source="pk")
    use_case = serializers.CharField(source="use_case.key")
    mode = serializers.CharField()
    status = serializers.CharField()
    configuration = ConfigurationRefOutput()
    task_set = TaskSetRefOutput()
    split = serializers.CharField()
    repeats = serializers.IntegerField()
    items_total = serializers.IntegerField()
    items_done = serializers.IntegerField()
    items_failed = serializers.IntegerField()
    cost_usd = serializers.DecimalField(max_digits=14, decimal_places=6)
    cost_unknown_items = serializers.IntegerField()
    stop_reason = serializers.CharField()
    filename = serializers.CharField(source="source_filename")
    sha256 = serializers.CharField(source="source_sha256")
    created_by = serializers.CharField(source="created_by.get_username")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.SerializerMethodField()
    outputs_url = serializers.SerializerMethodField()

    def get_url(self, run: Run) -> str:
        return reverse("api-run-detail", args=[run.use_case.key, run.pk])

    def get_outputs_url(self, run: Run) -> str:
        return reverse("api-run-outputs", args=[run.use_case.key, run.pk])


class OutputCountsOutput(serializers.Serializer[dict[str, int]]):
    succeeded = serializers.IntegerField()
    failed = serializers.IntegerField()


class UnitCountsOutput(serializers.Serializer[dict[str, int]]):
    sentence = serializers.IntegerField()
    cited_chunk = serializers.IntegerField()
    key_element = serializers.IntegerField()
    guidance_item = serializers.IntegerField()


class RunDetailOutput(RunOutput):
    percent = serializers.FloatField()
    throughput_per_second = serializers.FloatField(allow_null=True)
    eta_seconds = serializers.FloatField(allow_null=True)
    outputs = OutputCountsOutput()
    units = UnitCountsOutput()
    trajectories = serializers.IntegerField()


class RunImportInput(serializers.Serializer[dict[str, Any]]):
    file = serializers.FileField(allow_empty_file=True)
    configuration = serializers.RegexField(
        VERSIONED_NAME,
        help_text='σ as "name:version", e.g. "gemini-2-5:1".',
        error_messages={"invalid": 'expected σ as "name:version", e.g. "gemini-2-5:1"'},
    )
    task_set = serializers.RegexField(
        VERSIONED_NAME,
        help_text='Task set as "name:version", e.g. "credit-memo:1".',
        error_messages={"invalid": 'expected the task set as "name:version", e.g. "memo:1"'},
    )
    split = serializers.ChoiceField(choices=Split.values)
    repeats = serializers.IntegerField(min_value=1, max_value=MAX_REPEATS, default=1)


class RunCreateInput(serializers.Serializer[dict[str, Any]]):
    configuration = serializers.RegexField(
        VERSIONED_NAME,
        help_text='σ as "name:version", e.g. "gemini-2-5:1".',
        error_messages={"invalid": 'expected σ as "name:version", e.g. "gemini-2-5:1"'},
    )
    task_set = serializers.RegexField(
        VERSIONED_NAME,
        help_text='Task set as "name:version", e.g. "credit-memo:1".',
        error_messages={"invalid": 'expected the task set as "name:version", e.g. "memo:1"'},
    )
    split = serializers.ChoiceField(choices=Split.values)
    repeats = serializers.IntegerField(min_value=1, max_value=MAX_REPEATS, default=1)
    concurrency = serializers.IntegerField(min_value=1, max_value=512, required=False)
    cost_budget_usd = serializers.DecimalField(
        max_digits=12, decimal_places=6, min_value=Decimal("0"), required=False
    )


class RunJudgeInput(serializers.Serializer[dict[str, Any]]):
    judge = serializers.ChoiceField(
        choices=list(JUDGE_KINDS),
        help_text="offline: the built-in judge; litellm: an LLM judge called through litellm.",
    )
    model_ref = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text='The LLM judge\'s litellm model string, e.g. "openai/gpt-4o".',
    )
    name = serializers.CharField(
        required=False,
        max_length=80,
        help_text='The judge\'s name (default "offline", or "llm-" and the model).',
    )
    purpose = serializers.ChoiceField(
        choices=PURPOSE_CHOICES,
        default=Treatment.GATED,
        help_text="gated: the scores may decide a gated metric, so the judge's model must "
        "differ from σ's; informational: they may not.",
    )
    api_base = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=300,
        help_text="URL of an OpenAI-compatible endpoint (default: the provider's).",
    )
    api_key_env = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="NAME of the workers' environment variable holding the API key (never the key).",
    )
    concurrency = serializers.IntegerField(
        min_value=1, max_value=MAX_CONCURRENCY, required=False, help_text="Calls in flight."
    )
    rubric_version = serializers.CharField(default=RUBRIC_VERSION, max_length=40)


class JudgeRefOutput(serializers.Serializer[Any]):
    name = serializers.CharField()
    version = serializers.CharField()
    kind = serializers.CharField()
    model_ref = serializers.CharField()
    rubric_sha256 = serializers.CharField()


class JudgingOutput(serializers.Serializer[Judging]):
    id = serializers.IntegerField(source="pk")
    run = serializers.IntegerField(source="run_id")
    judge = JudgeRefOutput()
    purpose = serializers.CharField()
    api_base = serializers.CharField()
    api_key_env = serializers.CharField()
    concurrency = serializers.IntegerField(allow_null=True)
    status = serializers.CharField()
    self_graded = serializers.BooleanField()
    outputs_total = serializers.IntegerField()
    outputs_done = serializers.IntegerField()
    outputs_judged = serializers.IntegerField()
    outputs_failed = serializers.IntegerField()
    outputs_without_units = serializers.IntegerField()
    units_scored = serializers.IntegerField()
    scores_written = serializers.IntegerField()
    percent = serializers.SerializerMethodField()
    error = serializers.CharField()
    requested_by = serializers.CharField(source="requested_by.get_username")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.SerializerMethodField()

    def get_percent(self, judging: Judging) -> float:
        return judging_percent(judging)

    def get_url(self, judging: Judging) -> str:
        return reverse(
            "api-run-judging", args=[judging.run.use_case.key, judging.run_id, judging.pk]
        )


class UnitOutput(serializers.Serializer[Any]):
    kind = serializers.CharField()
    key = serializers.CharField()
    position = serializers.IntegerField()
    text = serializers.CharField()
    ref_id = serializers.CharField()
    sentence_position = serializers.IntegerField(allow_null=True)


class OutputOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField(source="pk")
    task_id = serializers.CharField(source="task.external_id")
    repeat = serializers.IntegerField(source="repeat_index")
    status = serializers.CharField()
    text = serializers.CharField()
    cited_chunk_ids = serializers.ListField(child=serializers.CharField())
    prompt_tokens = serializers.IntegerField(allow_null=True)
    completion_tokens = serializers.IntegerField(allow_null=True)
    cost_usd = serializers.DecimalField(max_digits=12, decimal_places=6, allow_null=True)
    latency_ms = serializers.IntegerField(allow_null=True)
    generation_seconds = serializers.FloatField(allow_null=True)
    success = serializers.BooleanField(allow_null=True)
    label = serializers.CharField(allow_null=True)
    label_error = serializers.CharField()
    error = serializers.CharField()


class OutputSummaryOutput(OutputOutput):
    sentence_units = serializers.IntegerField()
    cited_chunk_units = serializers.IntegerField()
    url = serializers.SerializerMethodField()

    def get_url(self, output: Any) -> str:
        run = self.context["run"]
        return reverse("api-run-output", args=[run.use_case.key, run.pk, output.pk])


class OutputDetailOutput(OutputOutput):
    units = UnitOutput(many=True)
    trajectory = serializers.DictField(allow_null=True)


class OutputPageInput(serializers.Serializer[dict[str, Any]]):
    offset = serializers.IntegerField(min_value=0, default=0)
    limit = serializers.IntegerField(
        min_value=1, max_value=MAX_OUTPUT_PAGE_SIZE, default=OUTPUT_PAGE_SIZE
    )
    status = serializers.ChoiceField(choices=OutputStatus.values, required=False)


class OutputPageOutput(serializers.Serializer[Any]):
    count = serializers.IntegerField()
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    results = OutputSummaryOutput(many=True)


class RunListApi(APIView):
    @extend_schema(
        request=RunCreateInput,
        responses={201: RunDetailOutput, 400: ErrorOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="Execute σ over a split K times: create the run and enqueue its chunks",
        operation_id="use_case_runs_create",
        description=(
            "The run executes on the Celery workers; poll GET …/runs/<id>/ for progress. The "
            "API key is read by the workers from the environment variable σ names "
            "(model.api_key_env); it is never sent or stored."
        ),
    )
    def post(self, request: Request, key: str) -> Response:
        use_case, _roles = run_access(request.user, key, write=True)
        data = validated(RunCreateInput, request.data)
        run = run_create(
            actor=request.user,
            use_case=use_case,
            configuration=_configuration(use_case, data["configuration"]),
            task_set=_task_set(use_case, data["task_set"]),
            split=data["split"],
            repeats=data["repeats"],
            concurrency=data.get("concurrency"),
            cost_budget_usd=data.get("cost_budget_usd"),
        )
        run_start(actor=request.user, run=run)
        run.refresh_from_db()
        return Response(run_detail_data(run), status=status.HTTP_201_CREATED)

    @extend_schema(
        responses={200: RunOutput(many=True), 403: ErrorOutput, 404: ErrorOutput},
        summary="Runs of the use case, newest first",
        operation_id="use_case_runs_list",
        parameters=[
            OpenApiParameter("limit", OpenApiTypes.INT, OpenApiParameter.QUERY),
            OpenApiParameter("offset", OpenApiTypes.INT, OpenApiParameter.QUERY),
        ],
    )
    def get(self, request: Request, key: str) -> Response:
        use_case, _roles = run_access(request.user, key)
        paginator = LimitOffsetPagination()
        page = paginator.paginate_queryset(run_list(use_case=use_case), request, view=self)
        return paginator.get_paginated_response(RunOutput(page, many=True).data)


class RunImportApi(APIView):
    parser_classes = (MultiPartParser, FormParser)

    @extend_schema(
        request={"multipart/form-data": RunImportInput},
        responses={201: RunDetailOutput, 400: ErrorOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="Import a JSONL file of outputs made elsewhere as a completed run",
        operation_id="use_case_runs_import",
        description=(
            "One output per line (docs/formats.md, 'Outputs (JSONL)'). All or nothing: if any "
            "line is bad nothing is imported, and the 400 response lists every bad line in "
            "error.details as {line, field, message} (the first 1,000 by line, then one "
            "'and N more' entry)."
        ),
    )
    def post(self, request: Request, key: str) -> Response:
        use_case, _roles = run_access(request.user, key, write=True)
        data = validated(RunImportInput, request.data)
        upload = data["file"]
        run = output_import(
            actor=request.user,
            use_case=use_case,
            configuration=_configuration(use_case, data["configuration"]),
            task_set=_task_set(use_case, data["task_set"]),
            split=data["split"],
            repeats=data["repeats"],
            fileobj=upload,
            filename=upload.name,
        )
        return Response(run_detail_data(run), status=status.HTTP_201_CREATED)


class RunDetailApi(APIView):
    @extend_schema(
        responses={200: RunDetailOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="One run: its progress (polled by the run page) and counts",
        operation_id="use_case_run_retrieve",
        description=(
            "throughput_per_second = items_done / seconds since started_at and eta_seconds = "
            "(items_total − items_done) / throughput, both null unless the run is running."
        ),
    )
    def get(self, request: Request, key: str, run_id: int) -> Response:
        return Response(run_detail_data(_run(request, key, run_id)))


class RunOutputsApi(APIView):
    @extend_schema(
        parameters=[OutputPageInput],
        responses={200: OutputPageOutput, 400: ErrorOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="Outputs of a run by task (task-file order) then repeat",
        operation_id="use_case_run_outputs_list",
    )
    def get(self, request: Request, key: str, run_id: int) -> Response:
        run = _run(request, key, run_id)
        query = validated(OutputPageInput, request.query_params)
        page = run_outputs(
            run=run, offset=query["offset"], limit=query["limit"], status=query.get("status")
        )
        url = request.build_absolute_uri()
        previous = None
        if page.has_previous:
            previous = replace_query_param(url, "offset", page.previous_offset)
            if page.previous_offset == 0:
                previous = remove_query_param(previous, "offset")
        return Response(
            {
                "count": page.total,
                "next": (
                    replace_query_param(url, "offset", page.next_offset) if page.has_next else None
                ),
                "previous": previous,
                "results": OutputSummaryOutput(page.outputs, many=True, context={"run": run}).data,
            }
        )


class RunOutputApi(APIView):
    @extend_schema(
        responses={200: OutputDetailOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="One output with its units (stable keys) and trajectory record",
        operation_id="use_case_run_output_retrieve",
    )
    def get(self, request: Request, key: str, run_id: int, output_id: int) -> Response:
        run = _run(request, key, run_id)
        view = output_get(run=run, output_id=output_id)
        if view is None:
            raise Http404(f"No output {output_id} in run {run.pk}.")
        data = OutputOutput(view.output).data
        data["units"] = UnitOutput(
            [unit for units in view.units.values() for unit in units], many=True
        ).data
        data["trajectory"] = view.trajectory
        return Response(data)


class RunJudgeApi(APIView):
    @extend_schema(
        request=RunJudgeInput,
        responses={
            202: JudgingOutput,
            400: ErrorOutput,
            403: ErrorOutput,
            404: ErrorOutput,
            409: ErrorOutput,
        },
        summary="Judge every unit of a finished run: register the judge and enqueue the work",
        operation_id="use_case_run_judge",
        description=(
            "The judging runs on the Celery workers; poll its url (GET …/judgings/<id>/) for "
            "progress. Refused (400, field judge) when the judge's model is σ's model and the "
            "purpose is gated (SPEC §2), naming both models; 409 while the run is still "
            "running or the same judge is judging it already. The API key is read by the "
            "workers from the environment variable api_key_env names; it is never sent or "
            "stored."
        ),
    )
    def post(self, request: Request, key: str, run_id: int) -> Response:
        use_case, _roles = run_access(request.user, key, write=True)
        run = run_get(use_case=use_case, run_id=run_id)
        if run is None:
            raise Http404(f"No run {run_id} in {use_case.key}.")
        data = validated(RunJudgeInput, request.data)
        judging = run_judge_start(
            actor=request.user,
            run=run,
            kind=JUDGE_KINDS[data["judge"]],
            purpose=data["purpose"],
            model_ref=data.get("model_ref", ""),
            name=data.get("name"),
            api_base=data.get("api_base", ""),
            api_key_env=data.get("api_key_env", ""),
            concurrency=data.get("concurrency"),
            rubric_version=data["rubric_version"],
        )
        judging.refresh_from_db()
        return Response(JudgingOutput(judging).data, status=status.HTTP_202_ACCEPTED)


class RunJudgingListApi(APIView):
    @extend_schema(
        responses={200: JudgingOutput(many=True), 403: ErrorOutput, 404: ErrorOutput},
        summary="The judgings of a run, newest first",
        operation_id="use_case_run_judgings_list",
    )
    def get(self, request: Request, key: str, run_id: int) -> Response:
        run = _run(request, key, run_id)
        rows = judging_list(run=run)
        return Response(JudgingOutput([row.judging for row in rows], many=True).data)


class RunJudgingApi(APIView):
    @extend_schema(
        responses={200: JudgingOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="One judging of a run: its progress (polled by the run page) and counts",
        operation_id="use_case_run_judging_retrieve",
    )
    def get(self, request: Request, key: str, run_id: int, judging_id: int) -> Response:
        run = _run(request, key, run_id)
        judging = judging_get(run=run, judging_id=judging_id)
        if judging is None:
            raise Http404(f"No judging {judging_id} of run {run.pk}.")
        return Response(JudgingOutput(judging).data)


class JudgingCancelInput(serializers.Serializer[dict[str, Any]]):
    reason = serializers.CharField(
        max_length=MAX_CANCEL_REASON, required=False, allow_blank=True, default=""
    )


class RunJudgingCancelApi(APIView):
    @extend_schema(
        request=JudgingCancelInput,
        responses={200: JudgingOutput, 403: ErrorOutput, 404: ErrorOutput, 409: ErrorOutput},
        summary="Cancel a pending or running judging (a stuck one); the worker stops",
        operation_id="use_case_run_judging_cancel",
        description=(
            "The judging becomes cancelled at once; its worker stops before its next batch. "
            "Scores already written stay. 409 when the judging has already finished."
        ),
    )
    def post(self, request: Request, key: str, run_id: int, judging_id: int) -> Response:
        use_case, _roles = run_access(request.user, key, write=True)
        run = run_get(use_case=use_case, run_id=run_id)
        if run is None:
            raise Http404(f"No run {run_id} in {use_case.key}.")
        judging = judging_get(run=run, judging_id=judging_id)
        if judging is None:
            raise Http404(f"No judging {judging_id} of run {run.pk}.")
        data = validated(JudgingCancelInput, request.data)
        judging_cancel(actor=request.user, judging=judging, reason=data["reason"])
        return Response(JudgingOutput(judging_get(run=run, judging_id=judging_id)).data)


def _run(request: Request, key: str, run_id: int) -> Run:
    use_case, _roles = run_access(request.user, key)
    run = run_get(use_case=use_case, run_id=run_id)
    if run is None:
        raise Http404(f"No run {run_id} in {use_case.key}.")
    return run


def run_detail_data(run: Run) -> dict[str, Any]:
    """Return a run as GET …/runs/<id>/ answers it: progress, counts by status and kind."""
    detail = run_detail(run=run)
    data = dict(RunOutput(run).data)
    progress = detail.progress
    data.update(
        percent=progress.percent,
        throughput_per_second=progress.throughput_per_second,
        eta_seconds=progress.eta_seconds,
        outputs=detail.outputs_by_status,
        units=detail.units_by_kind,
        trajectories=detail.trajectories,
    )
    return data


def _configuration(use_case: UseCase, reference: str) -> Configuration:
    name, version = _versioned(reference)
    configuration = configuration_get(use_case=use_case, name=name, version=version)
    if configuration is None:
        raise ServiceError(
            f"configuration: no σ {name} v{version} in {use_case.key}", field="configuration"
        )
    return configuration


def _task_set(use_case: UseCase, reference: str) -> TaskSet:
    name, version = _versioned(reference)
    task_set = task_set_get(use_case=use_case, name=name, version=version)
    if task_set is None:
        raise ServiceError(
            f"task_set: no task set {name} v{version} in {use_case.key}", field="task_set"
        )
    return task_set


def _versioned(reference: str) -> tuple[str, int]:
    match = VERSIONED_NAME.match(reference)
    assert match is not None  # the input serializer checked it
    return match["name"], int(match["version"])
