"""Adjudication under /api/v1/use-cases/<key>/grading/sessions/<id>/adjudication/."""

from __future__ import annotations

import io
from dataclasses import asdict
from typing import Any

from django.http import Http404, StreamingHttpResponse
from django.urls import URLPattern, path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from enterpriseval.api import ErrorOutput, validated
from enterpriseval.errors import ServiceError
from grading.api.sessions import JSONLinesParser
from grading.models import Adjudication, GradingSession, SessionArtefact
from grading.selectors.adjudication import (
    adjudication_access,
    adjudication_item,
    adjudication_queue,
    queue_progress,
)
from grading.services.adjudication import (
    ALL,
    AdjudicationOutcome,
    FinalValue,
    adjudication_take,
    adjudications_import,
    adjudications_record,
)
from grading.services.grades import adjudication_record
from grading.views.adjudication import ADJUDICATIONS_CONTENT_TYPE, adjudications_response


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


class FieldRefInput(serializers.Serializer[dict[str, Any]]):
    unit_key = serializers.CharField(max_length=160)
    field = serializers.CharField(max_length=20)


class FinalValueInput(FieldRefInput):
    value = serializers.CharField(max_length=20)
    note = serializers.CharField(max_length=4000, required=False, allow_blank=True, default="")


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "enum": [ALL]},
            {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "unit_key": {"type": "string"},
                        "field": {"type": "string"},
                    },
                    "required": ["unit_key", "field"],
                },
            },
        ]
    }
)
class TakeFieldsField(serializers.Field):  # type: ignore[type-arg]
    """``"all"`` (every pending field) or a list of ``{"unit_key", "field"}``."""

    default_error_messages = {
        "invalid": 'Expected "all" or a list of {{"unit_key": …, "field": …}} objects.',
    }

    def to_internal_value(self, data: Any) -> Any:
        if data == ALL:
            return ALL
        if not isinstance(data, list) or not data:
            self.fail("invalid")
        refs = FieldRefInput(data=data, many=True)
        if not refs.is_valid():
            self.fail("invalid")
        return [(ref["unit_key"], ref["field"]) for ref in refs.validated_data]

    def to_representation(self, value: Any) -> Any:
        return value


class TakeInput(serializers.Serializer[dict[str, Any]]):
    grader = serializers.IntegerField(
        min_value=1, max_value=20, help_text='The number shown on the artefact: 1 for "Grader 1".'
    )
    fields = TakeFieldsField(help_text='"all": every pending field; or the fields listed.')
    note = serializers.CharField(max_length=4000, required=False, allow_blank=True, default="")


class ArtefactRecordInput(serializers.Serializer[dict[str, Any]]):
    values = FinalValueInput(many=True, required=False, default=list)
    take_rest_from = serializers.IntegerField(
        min_value=1,
        max_value=20,
        required=False,
        allow_null=True,
        default=None,
        help_text="Every other pending field takes this grader's value.",
    )


class FieldRefOutput(serializers.Serializer[Any]):
    unit_key = serializers.CharField()
    field = serializers.CharField()


class OutcomeOutput(serializers.Serializer[Any]):
    recorded = AdjudicationOutput(many=True)
    not_asked = FieldRefOutput(
        many=True, help_text="Left pending: the grader taken was not asked these fields."
    )
    moot = FieldRefOutput(
        many=True,
        help_text="Closed: a dependent field no longer asked given its parent's final value.",
    )
    pending = serializers.IntegerField(help_text="The artefact's fields still pending.")


class ArtefactDisputesOutput(serializers.Serializer[Any]):
    artefact = serializers.CharField(source="public_id")
    task_id = serializers.CharField()
    pending = serializers.IntegerField()
    resolved = serializers.IntegerField()
    fields = DisputeOutput(source="disputes", many=True)


class AdjudicationImportInput(serializers.Serializer[dict[str, Any]]):
    file = serializers.FileField(allow_empty_file=True)


class AdjudicationImportOutput(serializers.Serializer[Any]):
    session = serializers.CharField()
    sha256 = serializers.CharField()
    lines = serializers.IntegerField()
    adjudicated = serializers.IntegerField()
    artefacts = serializers.IntegerField()
    left_blank = serializers.IntegerField()


def _artefact(session: GradingSession, public_id: str) -> SessionArtefact:
    artefact = session.artefacts.filter(public_id=public_id).first()
    if artefact is None:
        raise Http404("No such artefact in this session.")
    return artefact


def _outcome(
    session: GradingSession, artefact: SessionArtefact, outcome: AdjudicationOutcome
) -> Response:
    item = adjudication_item(session=session, artefact_public_id=artefact.public_id)
    data = {
        "recorded": outcome.recorded,
        "not_asked": [{"unit_key": k, "field": f} for k, f in outcome.not_asked],
        "moot": [{"unit_key": k, "field": f} for k, f in outcome.moot],
        "pending": item.pending if item is not None else 0,
    }
    return Response(OutcomeOutput(data).data, status=status.HTTP_201_CREATED)


_WRITE_ERRORS = {
    201: OutcomeOutput,
    400: ErrorOutput,
    403: ErrorOutput,
    404: ErrorOutput,
    409: ErrorOutput,
}


class AdjudicationArtefactApi(APIView):
    parser_classes = (JSONParser,)

    @extend_schema(
        responses={200: ArtefactDisputesOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="One artefact's disputed fields, graders anonymised",
        operation_id="grading_session_adjudication_artefact",
        description="404 unless the artefact is in the queue (all graders submitted, a dispute).",
    )
    def get(self, request: Request, key: str, public_id: str, artefact_id: str) -> Response:
        access = adjudication_access(request.user, key, public_id)
        item = adjudication_item(session=access.session, artefact_public_id=artefact_id)
        if item is None:
            raise Http404("This artefact has no disagreement to adjudicate.")
        return Response(ArtefactDisputesOutput(item).data)

    @extend_schema(
        request=ArtefactRecordInput,
        responses=_WRITE_ERRORS,
        summary="Record the final values of several disputed fields of one artefact at once",
        operation_id="grading_session_adjudication_artefact_record",
        description=(
            "Named adjudicators only. All or nothing: if any value is refused (not disputed, "
            "already adjudicated, not an allowed value) nothing is recorded and error.details "
            "lists every refused field. take_rest_from: N gives every other pending field "
            "Grader N's value."
        ),
    )
    def post(self, request: Request, key: str, public_id: str, artefact_id: str) -> Response:
        access = adjudication_access(request.user, key, public_id, write=True)
        data = validated(ArtefactRecordInput, request.data)
        artefact = _artefact(access.session, artefact_id)
        outcome = adjudications_record(
            actor=request.user,
            artefact=artefact,
            values=[
                FinalValue(v["unit_key"], v["field"], v["value"], v["note"].strip())
                for v in data["values"]
            ],
            take_rest_from=data["take_rest_from"],
            via="api",
        )
        return _outcome(access.session, artefact, outcome)


class AdjudicationTakeApi(APIView):
    parser_classes = (JSONParser,)

    @extend_schema(
        request=TakeInput,
        responses=_WRITE_ERRORS,
        summary="Take Grader N's value as final, for some fields or every pending field",
        operation_id="grading_session_adjudication_take",
        description=(
            'Named adjudicators only. fields "all": every pending field of the artefact (a '
            "field Grader N was not asked stays pending and is listed in not_asked, unless "
            "the parent value taken no longer asks it: then it is closed and listed in moot); "
            "a list: those fields, each refused if not pending or not asked of Grader N. A "
            "dependent field (supported, severity) is taken only with or after its parent. "
            "All or nothing."
        ),
    )
    def post(self, request: Request, key: str, public_id: str, artefact_id: str) -> Response:
        access = adjudication_access(request.user, key, public_id, write=True)
        data = validated(TakeInput, request.data)
        artefact = _artefact(access.session, artefact_id)
        outcome = adjudication_take(
            actor=request.user,
            artefact=artefact,
            grader=data["grader"],
            fields=data["fields"],
            note=data["note"].strip(),
        )
        return _outcome(access.session, artefact, outcome)


class AdjudicationExportApi(APIView):
    @extend_schema(
        responses={
            (200, ADJUDICATIONS_CONTENT_TYPE): OpenApiResponse(
                OpenApiTypes.STR, description="JSON Lines, streamed (docs/formats.md)."
            ),
            403: ErrorOutput,
            404: ErrorOutput,
        },
        summary="The session's pending disputed fields as JSON Lines, to fill in and import",
        operation_id="grading_session_adjudication_export",
        description=(
            'One line per pending disputed field, "value": null, with the question, the '
            "allowed values and the graders' values (docs/formats.md, 'Adjudications (JSONL)')."
        ),
    )
    def get(self, request: Request, key: str, public_id: str) -> StreamingHttpResponse:
        access = adjudication_access(request.user, key, public_id)
        return adjudications_response(access.session)


class AdjudicationImportApi(APIView):
    parser_classes = (MultiPartParser, JSONLinesParser)

    @extend_schema(
        request={
            "multipart/form-data": AdjudicationImportInput,
            ADJUDICATIONS_CONTENT_TYPE: OpenApiTypes.BINARY,
        },
        responses={
            200: AdjudicationImportOutput,
            400: ErrorOutput,
            403: ErrorOutput,
            404: ErrorOutput,
            409: ErrorOutput,
        },
        summary="Import final values of disputed fields from an adjudications file",
        operation_id="grading_session_adjudication_import",
        description=(
            "Named adjudicators only. A file field 'file' (multipart) or the raw body "
            "(application/x-ndjson), one line per disputed field (docs/formats.md, "
            "'Adjudications (JSONL)'). All or nothing: if any line is bad nothing is recorded "
            "and the 400 response lists every bad line in error.details as {line, field, "
            "message}."
        ),
    )
    def post(self, request: Request, key: str, public_id: str) -> Response:
        access = adjudication_access(request.user, key, public_id, write=True)
        if request.content_type.startswith(ADJUDICATIONS_CONTENT_TYPE):
            stream = request.data if hasattr(request.data, "readline") else io.BytesIO()
            filename = "adjudications.jsonl"
        else:
            upload = validated(AdjudicationImportInput, request.data)["file"]
            stream, filename = upload, upload.name
        result = adjudications_import(
            actor=request.user, session=access.session, fileobj=stream, filename=filename
        )
        return Response(
            AdjudicationImportOutput({"session": access.session.public_id, **asdict(result)}).data
        )


_BASE = "use-cases/<str:key>/grading/sessions/<str:public_id>/adjudication/"

urlpatterns: list[URLPattern] = [
    path(_BASE, AdjudicationQueueApi.as_view(), name="api-grading-adjudication"),
    path(
        f"{_BASE}adjudications.jsonl",
        AdjudicationExportApi.as_view(),
        name="api-grading-adjudication-export",
    ),
    path(
        f"{_BASE}import/",
        AdjudicationImportApi.as_view(),
        name="api-grading-adjudication-import",
    ),
    path(
        f"{_BASE}<str:artefact_id>/",
        AdjudicationArtefactApi.as_view(),
        name="api-grading-adjudication-artefact",
    ),
    path(
        f"{_BASE}<str:artefact_id>/take/",
        AdjudicationTakeApi.as_view(),
        name="api-grading-adjudication-take",
    ),
]
