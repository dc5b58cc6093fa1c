"""Adjudication under /api/v1/use-cases/<key>/grading/sessions/<id>/adjudication/."""

from __future__ import annotations

from typing import Any

from django.urls import URLPattern, path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from enterpriseval.api import ErrorOutput, validated
from enterpriseval.errors import ServiceError
from grading.models import Adjudication
from grading.selectors.adjudication import (
    adjudication_access,
    adjudication_queue,
    queue_progress,
)
from grading.services.grades import adjudication_record


class GraderValueOutput(serializers.Serializer[Any]):
    grader = serializers.CharField(help_text='"Grader 1", "Grader 2", … numbered per artefact.')
    value = serializers.CharField(allow_null=True, help_text="null: the field was not asked.")
    label = serializers.CharField()


class CitedSourceOutput(serializers.Serializer[Any]):
    chunk_id = serializers.CharField()
    source = serializers.CharField()
    text = serializers.CharField()


class DisputeOutput(serializers.Serializer[Any]):
    unit_key = serializers.CharField()
    unit_kind = serializers.CharField()
    field = serializers.CharField()
    question = serializers.CharField()
    unit_text = serializers.CharField()
    cited_source = CitedSourceOutput(allow_null=True)
    values = GraderValueOutput(many=True)
    final = serializers.CharField(allow_null=True)
    adjudicator = serializers.CharField()
    adjudicated_at = serializers.DateTimeField(allow_null=True)
    note = serializers.CharField()


class QueueItemOutput(serializers.Serializer[Any]):
    artefact = serializers.CharField(source="public_id")
    task_id = serializers.CharField()
    disputed = serializers.IntegerField()
    pending = serializers.IntegerField()
    fields = DisputeOutput(source="disputes", many=True)


class QueueOutput(serializers.Serializer[Any]):
    session = serializers.CharField()
    status = serializers.CharField()
    can_adjudicate = serializers.BooleanField()
    disputed = serializers.IntegerField()
    resolved = serializers.IntegerField()
    pending = serializers.IntegerField()
    artefacts = QueueItemOutput(many=True)


class AdjudicationInput(serializers.Serializer[dict[str, Any]]):
    artefact = serializers.CharField(max_length=24, help_text="The artefact's public id.")
    unit_key = serializers.CharField(max_length=160)
    field = serializers.CharField(max_length=20)
    value = serializers.CharField(max_length=20)
    note = serializers.CharField(max_length=4000, required=False, allow_blank=True, default="")


class AdjudicationOutput(serializers.Serializer[Adjudication]):
    artefact = serializers.CharField(source="artefact.public_id")
    unit_key = serializers.CharField()
    field = serializers.CharField()
    value = serializers.CharField()
    note = serializers.CharField()
    adjudicator = serializers.CharField(source="adjudicator.get_username")
    created_at = serializers.DateTimeField()


class AdjudicationQueueApi(APIView):
    @extend_schema(
        responses={200: QueueOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="The session's disagreements: every disputed field, graders anonymised",
        operation_id="grading_session_adjudication_list",
        description=(
            "Artefacts whose graders have all submitted and disagree on a field, pending first. "
            "Graders are numbered per artefact; no provenance is given. Readable by the "
            "session's named adjudicators, the charter owner and the reviewer."
        ),
    )
    def get(self, request: Request, key: str, public_id: str) -> Response:
        access = adjudication_access(request.user, key, public_id)
        items = adjudication_queue(session=access.session)
        progress = queue_progress(items)
        data = {
            "session": access.session.public_id,
            "status": access.session.status,
            "can_adjudicate": access.can_adjudicate,
            "disputed": progress.disputed,
            "resolved": progress.resolved,
            "pending": progress.pending,
            "artefacts": items,
        }
        return Response(QueueOutput(data).data)

    @extend_schema(
        request=AdjudicationInput,
        responses={
            201: AdjudicationOutput,
            400: ErrorOutput,
            403: ErrorOutput,
            404: ErrorOutput,
            409: ErrorOutput,
        },
        summary="Record the final value of a disputed field",
        operation_id="grading_session_adjudication_create",
        description=(
            "Named adjudicators only. 409 when the graders agree, have not all submitted, or "
            "the field is already adjudicated: the adjudicated value is final."
        ),
    )
    def post(self, request: Request, key: str, public_id: str) -> Response:
        access = adjudication_access(request.user, key, public_id, write=True)
        data = validated(AdjudicationInput, request.data)
        artefact = access.session.artefacts.filter(public_id=data["artefact"]).first()
        if artefact is None:
            raise ServiceError(
                f"artefact: no artefact {data['artefact']!r} in this session.", field="artefact"
            )
        adjudication = adjudication_record(
            actor=request.user,
            artefact=artefact,
            unit_key=data["unit_key"],
            field=data["field"],
            value=data["value"],
            note=data["note"].strip(),
        )
        return Response(AdjudicationOutput(adjudication).data, status=status.HTTP_201_CREATED)


urlpatterns: list[URLPattern] = [
    path(
        "use-cases/<str:key>/grading/sessions/<str:public_id>/adjudication/",
        AdjudicationQueueApi.as_view(),
        name="api-grading-adjudication",
    ),
]
