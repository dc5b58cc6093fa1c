"""Task sets under /api/v1/use-cases/<key>/task-sets/: import, list, manifest, tasks."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import path, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param
from rest_framework.views import APIView

from charters.models import Task, TaskSet, UseCase
from charters.models.tasks import Split
from charters.permissions import use_case_for, use_case_for_unblinded
from charters.selectors.task_sets import (
    MAX_TASK_PAGE_SIZE,
    task_set_get,
    task_set_list,
    task_set_tasks,
)
from charters.services.task_sets import IMPORT_ROLES, task_set_import
from enterpriseval.api import ErrorOutput, validated


class SplitCountsOutput(serializers.Serializer[dict[str, int]]):
    dev = serializers.IntegerField()
    graded = serializers.IntegerField()
    stress = serializers.IntegerField()


class TaskSetOutput(serializers.Serializer[TaskSet]):
    use_case = serializers.CharField(source="use_case.key")
    name = serializers.CharField()
    version = serializers.IntegerField()
    filename = serializers.CharField(source="source_filename")
    sha256 = serializers.CharField(source="manifest_sha256")
    task_count = serializers.IntegerField(source="line_count")
    split_counts = SplitCountsOutput()
    label_set = serializers.ListField(child=serializers.CharField(), allow_null=True)
    created_by = serializers.CharField(source="created_by.get_username")
    created_at = serializers.DateTimeField()
    url = serializers.SerializerMethodField()
    tasks_url = serializers.SerializerMethodField()

    def get_url(self, task_set: TaskSet) -> str:
        return reverse("api-task-set-detail", args=_task_set_args(task_set))

    def get_tasks_url(self, task_set: TaskSet) -> str:
        return reverse("api-task-set-tasks", args=_task_set_args(task_set))


class TaskSetImportInput(serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField(max_length=80)
    file = serializers.FileField(allow_empty_file=True)


class SourceOutput(serializers.Serializer[Any]):
    id = serializers.CharField(source="chunk_id")
    source = serializers.CharField()
    text = serializers.CharField()


class KeyElementOutput(serializers.Serializer[Any]):
    id = serializers.CharField(source="element_id")
    text = serializers.CharField()


class GuidanceOutput(serializers.Serializer[Any]):
    id = serializers.CharField(source="item_id")
    text = serializers.CharField()
    mandatory = serializers.BooleanField()


class TaskOutput(serializers.Serializer[Task]):
    id = serializers.CharField(source="external_id")
    split = serializers.CharField()
    line = serializers.IntegerField(source="line_number")
    input = serializers.CharField()
    input_sha256 = serializers.CharField()
    sources = SourceOutput(source="source_chunks", many=True)
    key_elements = KeyElementOutput(many=True)
    guidance = GuidanceOutput(source="guidance_items", many=True)
    reference = serializers.CharField()
    expected_abstention = serializers.BooleanField()
    gold_label = serializers.CharField(allow_null=True)
    metadata = serializers.DictField()


class TaskPageInput(serializers.Serializer[dict[str, Any]]):
    offset = serializers.IntegerField(min_value=0, default=0)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_TASK_PAGE_SIZE, default=100)
    split = serializers.ChoiceField(choices=Split.values, required=False)


class TaskPageOutput(serializers.Serializer[Any]):
    count = serializers.IntegerField()
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    results = TaskOutput(many=True)


class TaskSetListApi(APIView):
    parser_classes = (MultiPartParser, FormParser)

    @extend_schema(
        responses=TaskSetOutput(many=True),
        summary="Task sets of the use case, every version, with counts per split",
        parameters=[
            OpenApiParameter("limit", OpenApiTypes.INT, OpenApiParameter.QUERY),
            OpenApiParameter("offset", OpenApiTypes.INT, OpenApiParameter.QUERY),
        ],
    )
    def get(self, request: Request, key: str) -> Response:
        use_case = use_case_for_unblinded(request.user, key, what="task sets")
        paginator = LimitOffsetPagination()
        page = paginator.paginate_queryset(task_set_list(use_case=use_case), request, view=self)
        return paginator.get_paginated_response(TaskSetOutput(page, many=True).data)

    @extend_schema(
        request={"multipart/form-data": TaskSetImportInput},
        responses={201: TaskSetOutput, 400: ErrorOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="Import a JSONL task file as the next version of a task set",
        description=(
            "All or nothing: if any line is bad nothing is imported, and the 400 response "
            "lists every bad line in error.details as {line, field, message} (the first "
            "1,000 by line, then one 'and N more' entry)."
        ),
    )
    def post(self, request: Request, key: str) -> Response:
        use_case = use_case_for(request.user, key, roles=IMPORT_ROLES)
        data = validated(TaskSetImportInput, request.data)
        upload = data["file"]
        task_set = task_set_import(
            actor=request.user,
            use_case=use_case,
            name=data["name"],
            fileobj=upload,
            filename=upload.name,
        )
        return Response(TaskSetOutput(task_set).data, status=status.HTTP_201_CREATED)


class TaskSetDetailApi(APIView):
    @extend_schema(
        responses={200: TaskSetOutput, 404: ErrorOutput},
        summary="Manifest of one task-set version: SHA-256 of the file and counts per split",
    )
    def get(self, request: Request, key: str, name: str, version: int) -> Response:
        task_set = _task_set(request, key, name, version)
        return Response(TaskSetOutput(task_set).data)


class TaskSetTasksApi(APIView):
    @extend_schema(
        parameters=[TaskPageInput],
        responses={200: TaskPageOutput, 400: ErrorOutput, 404: ErrorOutput},
        summary="Tasks of one task-set version in file order, with sources and gold",
    )
    def get(self, request: Request, key: str, name: str, version: int) -> Response:
        task_set = _task_set(request, key, name, version)
        query = validated(TaskPageInput, request.query_params)
        page = task_set_tasks(
            task_set=task_set,
            offset=query["offset"],
            limit=query["limit"],
            split=query.get("split"),
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
                "results": TaskOutput(page.tasks, many=True).data,
            }
        )


def _task_set(request: Request, key: str, name: str, version: int) -> TaskSet:
    use_case: UseCase = use_case_for_unblinded(request.user, key, what="task sets")
    task_set = task_set_get(use_case=use_case, name=name, version=version)
    if task_set is None:
        raise Http404(f"No task set {name} v{version} in {use_case.key}.")
    return task_set


def _task_set_args(task_set: TaskSet) -> list[object]:
    return [task_set.use_case.key, task_set.name, task_set.version]


urlpatterns = [
    path("use-cases/<str:key>/task-sets/", TaskSetListApi.as_view(), name="api-task-set-list"),
    path(
        "use-cases/<str:key>/task-sets/<slug:name>/<int:version>/",
        TaskSetDetailApi.as_view(),
        name="api-task-set-detail",
    ),
    path(
        "use-cases/<str:key>/task-sets/<slug:name>/<int:version>/tasks/",
        TaskSetTasksApi.as_view(),
        name="api-task-set-tasks",
    ),
]
