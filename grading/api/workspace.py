"""A grader's own assignments under /api/v1/grading/assignments/: read, autosave, submit.

Blind (SPEC §5.1): an assignment is reached by its ``public_id`` and only by its grader
(anyone else gets 404); no response names the artefact's kind, output, run or σ.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import URLPattern, path, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from charters.api.task_sets import GuidanceOutput, KeyElementOutput, SourceOutput
from enterpriseval.api import ErrorOutput, validated
from grading.models import Assignment
from grading.rubric import FIELDS, FIELDS_BY_KIND
from grading.selectors.artefacts import assignment_for_grader
from grading.selectors.workspace import (
    Workspace,
    assignment_grading_state,
    assignment_list,
    assignment_workspace,
)
from grading.services.grades import (
    GradeChange,
    assignment_heartbeat,
    assignment_submit,
    grades_save,
)
from grading.views.workspace import page_after_submit


class AssignmentOutput(serializers.Serializer[Assignment]):
    public_id = serializers.CharField()
    session = serializers.CharField(source="session.public_id")
    session_name = serializers.CharField(source="session.name")
    session_status = serializers.CharField(source="session.status")
    position = serializers.IntegerField()
    total = serializers.SerializerMethodField()
    status = serializers.CharField()
    seconds_spent = serializers.FloatField()
    started_at = serializers.DateTimeField(allow_null=True)
    submitted_at = serializers.DateTimeField(allow_null=True)
    url = serializers.SerializerMethodField()
    workspace_url = serializers.SerializerMethodField()

    def get_total(self, assignment: Assignment) -> int:
        total = getattr(assignment, "session_total", None)
        return int(total if total is not None else self.context["total"])

    def get_url(self, assignment: Assignment) -> str:
        return reverse("api-grading-assignment-detail", args=[assignment.public_id])

    def get_workspace_url(self, assignment: Assignment) -> str:
        return reverse("grading-workspace", args=[assignment.public_id])


class RubricFieldOutput(serializers.Serializer[Any]):
    name = serializers.CharField()
    unit_kind = serializers.CharField()
    question = serializers.CharField()
    values = serializers.ListField(child=serializers.CharField())
    labels = serializers.ListField(child=serializers.CharField())
    keys = serializers.ListField(child=serializers.CharField())
    level = serializers.CharField()


class UnitOutput(serializers.Serializer[Any]):
    key = serializers.CharField()
    kind = serializers.CharField()
    position = serializers.IntegerField()
    text = serializers.CharField(allow_blank=True)
    ref_id = serializers.CharField(allow_blank=True)
    sentence_position = serializers.IntegerField(allow_null=True)
    asks = serializers.SerializerMethodField(help_text="The rubric fields of this unit.")

    def get_asks(self, unit: Any) -> list[str]:
        return [spec.name for spec in FIELDS_BY_KIND[unit.kind]]


class TaskOutput(serializers.Serializer[Workspace]):
    task_id = serializers.CharField()
    input = serializers.CharField(source="task.input")
    sources = SourceOutput(source="task.sources", many=True)
    key_elements = KeyElementOutput(source="task.key_elements", many=True)
    guidance = GuidanceOutput(source="task.guidance_items", many=True)


class MissingOutput(serializers.Serializer[tuple[str, str]]):
    unit_key = serializers.CharField()
    field = serializers.CharField()

    def to_representation(self, instance: tuple[str, str]) -> dict[str, str]:
        unit_key, field = instance
        return {"unit_key": unit_key, "field": field}


class AssignmentDetailOutput(AssignmentOutput):
    task = serializers.SerializerMethodField()
    text = serializers.SerializerMethodField()
    units = serializers.SerializerMethodField()
    rubric = serializers.SerializerMethodField()
    label_set = serializers.SerializerMethodField(
        help_text="The values of an open rubric field (correct_label): the task set's labels; "
        "empty unless the artefact's label is asked."
    )
    grades = serializers.SerializerMethodField()
    missing = serializers.SerializerMethodField()
    previous_url = serializers.SerializerMethodField()
    next_url = serializers.SerializerMethodField()

    def _workspace(self) -> Workspace:
        workspace: Workspace = self.context["workspace"]
        return workspace

    def get_task(self, _assignment: Assignment) -> dict[str, Any]:
        return dict(TaskOutput(self._workspace()).data)

    def get_text(self, _assignment: Assignment) -> str:
        return self._workspace().text

    def get_units(self, _assignment: Assignment) -> list[Any]:
        return list(UnitOutput(self._workspace().units, many=True).data)

    def get_label_set(self, _assignment: Assignment) -> list[str]:
        return list(self._workspace().label_set)

    def get_rubric(self, _assignment: Assignment) -> list[Any]:
        return list(RubricFieldOutput(FIELDS, many=True).data)

    def get_grades(self, _assignment: Assignment) -> dict[str, dict[str, str]]:
        return self._workspace().grades

    def get_missing(self, _assignment: Assignment) -> list[Any]:
        return list(MissingOutput(self._workspace().missing, many=True).data)

    def get_previous_url(self, _assignment: Assignment) -> str | None:
        neighbour = self._workspace().previous
        return _detail_url(neighbour.public_id) if neighbour else None

    def get_next_url(self, _assignment: Assignment) -> str | None:
        neighbour = self._workspace().next
        return _detail_url(neighbour.public_id) if neighbour else None


class GradeChangeInput(serializers.Serializer[dict[str, Any]]):
    unit_key = serializers.CharField(max_length=160)
    field = serializers.CharField(max_length=20)
    value = serializers.CharField(max_length=20, allow_blank=True, help_text='"" clears.')


class GradesInput(serializers.Serializer[dict[str, Any]]):
    changes = GradeChangeInput(many=True)
    elapsed_seconds = serializers.FloatField(
        min_value=0, default=0, help_text="Seconds on the artefact since the last call."
    )
    reason = serializers.CharField(
        allow_blank=True,
        default="",
        max_length=2000,
        help_text="Required once the assignment is submitted: each change is a logged revision.",
    )


class ElapsedInput(serializers.Serializer[dict[str, Any]]):
    elapsed_seconds = serializers.FloatField(min_value=0, default=0)


class GradesSavedOutput(serializers.Serializer[Assignment]):
    status = serializers.CharField()
    seconds_spent = serializers.FloatField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    grades = serializers.SerializerMethodField()
    missing = serializers.SerializerMethodField()

    def get_grades(self, _assignment: Assignment) -> dict[str, dict[str, str]]:
        grades: dict[str, dict[str, str]] = self.context["grades"]
        return grades

    def get_missing(self, _assignment: Assignment) -> list[Any]:
        return list(MissingOutput(self.context["missing"], many=True).data)


class SubmittedOutput(AssignmentOutput):
    next_page = serializers.SerializerMethodField()

    def get_next_page(self, assignment: Assignment) -> str:
        return page_after_submit(assignment)


class AssignmentListApi(APIView):
    @extend_schema(
        responses=AssignmentOutput(many=True),
        summary="Your own grading assignments, newest session first, in your blind order",
        parameters=[
            OpenApiParameter("limit", OpenApiTypes.INT, OpenApiParameter.QUERY),
            OpenApiParameter("offset", OpenApiTypes.INT, OpenApiParameter.QUERY),
        ],
    )
    def get(self, request: Request) -> Response:
        paginator = LimitOffsetPagination()
        page = paginator.paginate_queryset(assignment_list(user=request.user), request, view=self)
        return paginator.get_paginated_response(AssignmentOutput(page, many=True).data)


class AssignmentDetailApi(APIView):
    @extend_schema(
        responses={200: AssignmentDetailOutput, 404: ErrorOutput},
        summary="One of your assignments: the artefact's units, the task, your grades",
        description=(
            "Blind: the artefact is its text and units only. `missing` lists the asked "
            "fields still to grade, in unit order."
        ),
    )
    def get(self, request: Request, public_id: str) -> Response:
        assignment = assignment_for_grader(request.user, public_id)
        workspace = assignment_workspace(assignment=assignment)
        context = {"workspace": workspace, "total": workspace.total}
        return Response(AssignmentDetailOutput(assignment, context=context).data)


class AssignmentGradesApi(APIView):
    @extend_schema(
        request=GradesInput,
        responses={200: GradesSavedOutput, 400: ErrorOutput, 404: ErrorOutput, 409: ErrorOutput},
        summary="Autosave grade changes (and the time spent since the last call)",
        description=(
            'Each change is {unit_key, field, value}; value "" clears the field. After '
            "submission every change is a logged revision and `reason` is required."
        ),
    )
    def post(self, request: Request, public_id: str) -> Response:
        assignment = assignment_for_grader(request.user, public_id, for_write=True)
        data = validated(GradesInput, request.data)
        assignment = grades_save(
            actor=request.user,
            assignment=assignment,
            changes=[GradeChange(**change) for change in data["changes"]],
            elapsed_seconds=data["elapsed_seconds"],
            reason=data["reason"],
        )
        grades, missing = assignment_grading_state(assignment=assignment)
        context = {"grades": grades, "missing": missing}
        return Response(GradesSavedOutput(assignment, context=context).data)


class AssignmentHeartbeatApi(APIView):
    @extend_schema(
        request=ElapsedInput,
        responses={200: AssignmentOutput, 400: ErrorOutput, 404: ErrorOutput, 409: ErrorOutput},
        summary="Add the time spent on the artefact since the last call (capped per call)",
    )
    def post(self, request: Request, public_id: str) -> Response:
        assignment = _timed(request, public_id, assignment_heartbeat)
        return Response(AssignmentOutput(assignment, context=_total(assignment)).data)


class AssignmentSubmitApi(APIView):
    @extend_schema(
        request=ElapsedInput,
        responses={200: SubmittedOutput, 400: ErrorOutput, 404: ErrorOutput, 409: ErrorOutput},
        summary="Submit a complete assignment",
        description=(
            "Refused (400) while an asked field is ungraded: error.details lists every "
            "missing {unit_key, field}. `next_page` is your next unsubmitted artefact."
        ),
    )
    def post(self, request: Request, public_id: str) -> Response:
        assignment = _timed(request, public_id, assignment_submit)
        return Response(SubmittedOutput(assignment, context=_total(assignment)).data)


def _timed(request: Request, public_id: str, service: Callable[..., Assignment]) -> Assignment:
    """Call ``service`` on the user's own assignment with the body's ``elapsed_seconds``."""
    assignment = assignment_for_grader(request.user, public_id, for_write=True)
    data = validated(ElapsedInput, request.data)
    return service(
        actor=request.user, assignment=assignment, elapsed_seconds=data["elapsed_seconds"]
    )


def _total(assignment: Assignment) -> dict[str, int]:
    total = Assignment.objects.filter(
        session_id=assignment.session_id, grader_id=assignment.grader_id
    ).count()
    return {"total": total}


def _detail_url(public_id: str) -> str:
    return reverse("api-grading-assignment-detail", args=[public_id])


PREFIX = "grading/assignments/<str:public_id>/"

urlpatterns: list[URLPattern] = [
    path("grading/assignments/", AssignmentListApi.as_view(), name="api-grading-assignment-list"),
    path(PREFIX, AssignmentDetailApi.as_view(), name="api-grading-assignment-detail"),
    path(f"{PREFIX}grades/", AssignmentGradesApi.as_view(), name="api-grading-assignment-grades"),
    path(
        f"{PREFIX}heartbeat/",
        AssignmentHeartbeatApi.as_view(),
        name="api-grading-assignment-heartbeat",
    ),
    path(f"{PREFIX}submit/", AssignmentSubmitApi.as_view(), name="api-grading-assignment-submit"),
]
