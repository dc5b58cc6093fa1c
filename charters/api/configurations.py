"""Configurations σ under /api/v1/use-cases/<key>/configurations/, and the σ JSON Schema."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import Http404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import BaseParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from charters.configurations import configuration_schema
from charters.models import Configuration, UseCase
from charters.selectors.configurations import (
    configuration_get,
    configuration_list,
    configuration_parity,
    configuration_use_case_for,
)
from charters.services.configurations import configuration_upload
from enterpriseval.api import ErrorOutput
from enterpriseval.errors import ServiceError
from enterpriseval.limits import UploadKind, upload_limit, upload_size_check, upload_too_large


@dataclass(frozen=True)
class RawDocument:
    content: bytes
    media_type: str


class _RawDocumentParser(BaseParser):
    """Keep the body as bytes: the service parses σ itself, with line numbers in its errors."""

    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: Any = None
    ) -> RawDocument:
        limit = upload_limit(UploadKind.SIGMA)
        content = stream.read(limit + 1) if stream is not None else b""
        return RawDocument(content=content, media_type=media_type or self.media_type)


class YamlDocumentParser(_RawDocumentParser):
    media_type = "application/yaml"


class TextYamlDocumentParser(_RawDocumentParser):
    media_type = "text/yaml"


class JsonDocumentParser(_RawDocumentParser):
    media_type = "application/json"


class ConfigurationOutput(serializers.ModelSerializer[Configuration]):
    created_by = serializers.CharField(source="created_by.get_username")

    class Meta:
        model = Configuration
        fields = (
            "name",
            "version",
            "sha256",
            "model_ref",
            "source_format",
            "created_by",
            "created_at",
        )


class ConfigurationDetailOutput(ConfigurationOutput):
    use_case = serializers.CharField(source="use_case.key")

    class Meta(ConfigurationOutput.Meta):
        fields = (*ConfigurationOutput.Meta.fields, "use_case", "canonical_json", "document")


class ConfigurationUploadInput(serializers.Serializer[dict]):
    name = serializers.RegexField(
        r"^[-a-zA-Z0-9_]{1,80}$",
        help_text="Version series this σ belongs to, e.g. gemini-2-5-pro.",
    )
    file = serializers.FileField(help_text="The σ document, YAML or JSON.")


class LeafDifferenceOutput(serializers.Serializer[dict]):
    path = serializers.CharField()
    a = serializers.JSONField(allow_null=True)
    b = serializers.JSONField(allow_null=True)
    a_present = serializers.BooleanField()
    b_present = serializers.BooleanField()


class ComponentParityOutput(serializers.Serializer[dict]):
    symbol = serializers.CharField(help_text="M, P, Φ, U, Γ or H.")
    key = serializers.CharField()
    label = serializers.CharField()
    differs = serializers.BooleanField()
    differences = LeafDifferenceOutput(many=True)


class ParityOutput(serializers.Serializer[dict]):
    a = ConfigurationOutput()
    b = ConfigurationOutput()
    identical = serializers.BooleanField()
    attributable_to_model_alone = serializers.BooleanField()
    label = serializers.CharField()
    differing_components = serializers.ListField(child=serializers.CharField())
    components = ComponentParityOutput(many=True)
    metadata_differences = LeafDifferenceOutput(many=True)


class ConfigurationListApi(APIView):
    parser_classes = (
        MultiPartParser,
        YamlDocumentParser,
        TextYamlDocumentParser,
        JsonDocumentParser,
    )

    @extend_schema(
        responses=ConfigurationOutput(many=True),
        summary="σ versions of a use case (not for graders)",
    )
    def get(self, request: Request, key: str) -> Response:
        use_case = configuration_use_case_for(request.user, key)
        return Response(ConfigurationOutput(configuration_list(use_case=use_case), many=True).data)

    @extend_schema(
        request={
            "multipart/form-data": ConfigurationUploadInput,
            "application/yaml": OpenApiTypes.STR,
            "text/yaml": OpenApiTypes.STR,
            "application/json": OpenApiTypes.OBJECT,
        },
        parameters=[
            OpenApiParameter(
                "name",
                str,
                OpenApiParameter.QUERY,
                required=False,
                description="Version series, when the σ document is the raw request body.",
            )
        ],
        responses={201: ConfigurationDetailOutput, 400: ErrorOutput, 409: ErrorOutput},
        summary="Upload σ as a new immutable version",
        description=(
            "Send the σ document as the multipart file field `file` with a `name` field, or "
            "as the raw body (Content-Type application/yaml, text/yaml or application/json) "
            "with `?name=`. Every schema problem is returned in `error.details` with its "
            "field path and line. A document identical to the latest version of the name is "
            "refused with 409."
        ),
    )
    def post(self, request: Request, key: str) -> Response:
        use_case = configuration_use_case_for(request.user, key, upload=True)
        configuration = configuration_upload(
            actor=request.user, use_case=use_case, **_upload_arguments(request)
        )
        return Response(
            ConfigurationDetailOutput(configuration).data, status=status.HTTP_201_CREATED
        )


def _upload_arguments(request: Request) -> dict[str, Any]:
    data = request.data
    if isinstance(data, RawDocument):
        name = request.query_params.get("name", "")
        content, filename, media_type = data.content, None, data.media_type
    else:
        upload = request.FILES.get("file")
        if upload is None:
            raise ServiceError(
                "send the σ document as the multipart file field 'file', or as the request "
                "body with Content-Type application/yaml, text/yaml or application/json",
                field="file",
            )
        name = data.get("name") or request.query_params.get("name", "")
        upload_size_check(kind=UploadKind.SIGMA, filename=upload.name, size=upload.size)
        content = upload.read(upload_limit(UploadKind.SIGMA) + 1)
        filename, media_type = upload.name, upload.content_type
    if not name:
        raise ServiceError(
            "name is required: the version series this σ belongs to, e.g. gemini-2-5-pro",
            field="name",
        )
    if len(content) > upload_limit(UploadKind.SIGMA):
        raise upload_too_large(kind=UploadKind.SIGMA, filename=filename or "the request body")
    return {"name": name, "content": content, "filename": filename, "content_type": media_type}


def _version_or_404(use_case: UseCase, name: str, version: int) -> Configuration:
    configuration = configuration_get(use_case=use_case, name=name, version=version)
    if configuration is None:
        raise Http404(f"{use_case.key} has no σ {name} version {version}.")
    return configuration


class ConfigurationDetailApi(APIView):
    @extend_schema(
        responses=ConfigurationDetailOutput,
        summary="One σ version with its canonical JSON and SHA-256",
    )
    def get(self, request: Request, key: str, name: str, version: int) -> Response:
        use_case = configuration_use_case_for(request.user, key)
        return Response(ConfigurationDetailOutput(_version_or_404(use_case, name, version)).data)


def parse_reference(text: str | None, field: str) -> tuple[str, int]:
    """Return ``(name, version)`` from ``name:version``; raise a ServiceError naming ``field``."""
    name, _, version = (text or "").rpartition(":")
    if not name or not version.isdigit() or int(version) < 1:
        raise ServiceError(
            f"{field} must be name:version of a σ, e.g. gemini-2-5-pro:1 (got {text!r})",
            field=field,
        )
    return name, int(version)


class ConfigurationParityApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("a", str, OpenApiParameter.QUERY, description="name:version"),
            OpenApiParameter("b", str, OpenApiParameter.QUERY, description="name:version"),
        ],
        responses={200: ParityOutput, 400: ErrorOutput},
        summary="Harness parity: which σ components differ (SPEC §9)",
        description=(
            "`attributable_to_model_alone` is true only when the model (M) differs and "
            "nothing else does; otherwise comparisons of the two are labelled "
            '"not attributable to the model alone".'
        ),
    )
    def get(self, request: Request, key: str) -> Response:
        use_case = configuration_use_case_for(request.user, key)
        a = _version_or_404(use_case, *parse_reference(request.query_params.get("a"), "a"))
        b = _version_or_404(use_case, *parse_reference(request.query_params.get("b"), "b"))
        report = configuration_parity(a=a, b=b)
        return Response(ParityOutput({"a": a, "b": b, **report.as_dict()}).data)


class ConfigurationSchemaApi(APIView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT},
        summary="JSON Schema (Draft 2020-12) of a configuration σ",
    )
    def get(self, request: Request) -> Response:
        return Response(configuration_schema())


urlpatterns = [
    path(
        "use-cases/<str:key>/configurations/",
        ConfigurationListApi.as_view(),
        name="api-configuration-list",
    ),
    path(
        "use-cases/<str:key>/configurations/parity/",
        ConfigurationParityApi.as_view(),
        name="api-configuration-parity",
    ),
    path(
        "use-cases/<str:key>/configurations/<slug:name>/<int:version>/",
        ConfigurationDetailApi.as_view(),
        name="api-configuration-detail",
    ),
    path(
        "schemas/configuration.json",
        ConfigurationSchemaApi.as_view(),
        name="api-configuration-schema",
    ),
]
