"""Charters under /api/v1/use-cases/<key>/charters/, and unblinding under .../unblind/."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import Http404
from django.urls import path
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from charters.catalogue import OPTIONAL_RUBRIC_FIELDS, SUCCESS_RULES
from charters.charter_document import (
    CharterDocumentError,
    document_from_text,
    document_line_finder,
    issues_with_lines,
)
from charters.models import Charter, Role, UseCase
from charters.models.charters import SIGNING_ROLES, Treatment
from charters.permissions import use_case_for, use_case_for_unblinded
from charters.selectors.charters import (
    CharterPage,
    charter_page,
    charter_versions,
    use_case_first_unblinding,
)
from charters.selectors.task_sets import task_set_supply
from charters.services.charters import (
    charter_create,
    charter_deviation_record,
    charter_revise,
    charter_sign,
    charter_update,
    use_case_unblind,
)
from charters.validation import Issue, ValidationReport, charter_validate
from enterpriseval.api import validated
from enterpriseval.errors import ServiceError
from enterpriseval.limits import UploadKind, upload_limit, upload_too_large

SIGNERS = [role.value for role in SIGNING_ROLES]


# --------------------------------------------------------------------------- bodies


@dataclass(frozen=True)
class CharterText:
    """A charter document as sent: parsed by charters.charter_document, with line numbers."""

    text: str
    fmt: str


class _CharterTextParser(BaseParser):
    fmt = "yaml"

    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: Any = None
    ) -> CharterText:
        limit = upload_limit(UploadKind.CHARTER)
        content = stream.read(limit + 1) if stream is not None else b""
        if len(content) > limit:
            raise upload_too_large(kind=UploadKind.CHARTER, filename="the request body")
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ServiceError(
                f"the charter document is not UTF-8 text (byte {error.start})"
            ) from None
        return CharterText(text=text, fmt=self.fmt)


class CharterJsonParser(_CharterTextParser):
    media_type = "application/json"
    fmt = "json"


class CharterYamlParser(_CharterTextParser):
    media_type = "application/yaml"


class CharterTextYamlParser(_CharterTextParser):
    media_type = "text/yaml"


DOCUMENT_PARSERS = [CharterJsonParser, CharterYamlParser, CharterTextYamlParser]


def _document(request: Request) -> tuple[dict[str, Any], Any]:
    """Return the request's charter document and a line finder for its fields."""
    body = request.data
    if not isinstance(body, CharterText):
        raise ServiceError(
            "send the charter document as application/json or application/yaml", field="body"
        )
    if not body.text.strip():
        raise ServiceError("the charter document is empty", field="body")
    try:
        document = document_from_text(
            body.text, fmt=body.fmt, max_bytes=upload_limit(UploadKind.CHARTER)
        )
    except CharterDocumentError as error:
        raise ServiceError(
            str(error),
            field=error.issues[0].field,
            details=[issue.to_dict() for issue in error.issues],
        ) from None
    return document, document_line_finder(body.text)


# --------------------------------------------------------------------------- serializers


class MetricDocumentSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.CharField(help_text="Metric id from the catalogue (SPEC §4).")
    treatment = serializers.ChoiceField(choices=Treatment.values)
    direction = serializers.ChoiceField(
        choices=["higher", "lower"], required=False, help_text="From the catalogue."
    )
    theta_out = serializers.FloatField(allow_null=True, required=False)
    theta_in = serializers.FloatField(allow_null=True, required=False)
    weight = serializers.FloatField(allow_null=True, required=False)
    harm_statement = serializers.CharField(allow_blank=True, required=False)
    planned_n = serializers.IntegerField(allow_null=True, required=False)
    reason = serializers.CharField(
        allow_blank=True, required=False, help_text="Why an informational metric is not gated."
    )
    agreement = serializers.DictField(
        required=False,
        allow_null=True,
        help_text=(
            "The pre-registered agreement rule of a human-graded metric (SPEC §5.1): "
            "{rule: kappa}, {rule: ac1, threshold: 0.7} or {rule: bias_bound, fraction: 0.5}; "
            "absent reads κ/α against kappa_target."
        ),
    )


class CharterDocumentSerializer(serializers.Serializer[dict[str, Any]]):
    """The charter document (docs/formats.md); derived fields are checked, not stored."""

    version = serializers.IntegerField(required=False, allow_null=True)
    use_case = serializers.CharField(required=False, allow_null=True)
    autonomy = serializers.CharField(required=False, allow_null=True, help_text="A0..A4")
    consequence = serializers.CharField(required=False, allow_null=True, help_text="C1..C4")
    intensity = serializers.CharField(required=False, allow_null=True, help_text="E1..E4")
    metrics = MetricDocumentSerializer(many=True)
    nu_max = serializers.FloatField(required=False)
    confidence = serializers.FloatField(required=False)
    kappa_target = serializers.FloatField(required=False)
    repeats_k = serializers.IntegerField(required=False)
    success_rule = serializers.ChoiceField(
        choices=list(SUCCESS_RULES),
        required=False,
        help_text="How one output is judged a success (SPEC §4.1); absent: not stated.",
    )
    rubric_fields = serializers.ListField(
        child=serializers.ChoiceField(choices=list(OPTIONAL_RUBRIC_FIELDS)),
        required=False,
        help_text="Optional rubric fields graders are asked (SPEC §4.1); absent: none.",
    )
    alternative_weights = serializers.DictField(
        child=serializers.DictField(child=serializers.FloatField()), required=False
    )
    baseline = serializers.CharField(allow_blank=True, required=False)
    measurement_mode = serializers.ChoiceField(choices=["estimated", "observed"], required=False)
    value_inputs = serializers.DictField(required=False)
    reevaluation_triggers = serializers.ListField(child=serializers.CharField(), required=False)
    next_review_date = serializers.DateField(required=False, allow_null=True)


class IssueSerializer(serializers.Serializer[Issue]):
    level = serializers.ChoiceField(choices=["error", "warning", "info"])
    field = serializers.CharField()
    message = serializers.CharField()
    line = serializers.IntegerField(allow_null=True)


class PlanningSerializer(serializers.Serializer[Any]):
    metric_id = serializers.CharField()
    planned_n = serializers.IntegerField()
    p = serializers.FloatField()
    half_width = serializers.FloatField()
    gap = serializers.FloatField()
    sufficient_n = serializers.IntegerField(allow_null=True)
    enough = serializers.BooleanField()


class ValidationReportSerializer(serializers.Serializer[ValidationReport]):
    ok = serializers.BooleanField()
    intensity = serializers.CharField()
    issues = IssueSerializer(many=True)
    normalised_weights = serializers.DictField(child=serializers.FloatField())
    alternative_weights = serializers.DictField(
        child=serializers.DictField(child=serializers.FloatField())
    )
    requirements = serializers.ListField(child=serializers.CharField())
    planning = PlanningSerializer(many=True)


class SignatureOutput(serializers.Serializer[Any]):
    role = serializers.CharField()
    user = serializers.CharField(source="user.username")
    content_sha256 = serializers.CharField()
    signed_at = serializers.DateTimeField()


class RoleStatusOutput(serializers.Serializer[Any]):
    role = serializers.CharField()
    status = serializers.ChoiceField(choices=["signed", "stale", "missing"])
    user = serializers.CharField(source="signature.user.username", allow_null=True)
    signed_at = serializers.DateTimeField(source="signature.signed_at", allow_null=True)


class DiffEntryOutput(serializers.Serializer[Any]):
    path = serializers.CharField()
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)


class DeviationOutput(serializers.Serializer[Any]):
    from_version = serializers.IntegerField()
    to_version = serializers.IntegerField()
    reason = serializers.CharField()
    created_by = serializers.CharField(source="created_by.username")
    created_at = serializers.DateTimeField()
    final = serializers.BooleanField(help_text="The new version is signed: the diff is final.")
    diff = DiffEntryOutput(many=True)


class CharterSummaryOutput(serializers.Serializer[Charter]):
    version = serializers.IntegerField()
    status = serializers.SerializerMethodField()
    sha256 = serializers.CharField(allow_blank=True)
    frozen_at = serializers.DateTimeField(allow_null=True)
    created_by = serializers.CharField(source="created_by.username")
    created_at = serializers.DateTimeField()
    previous_version = serializers.IntegerField(source="previous.version", allow_null=True)
    revision_reason = serializers.CharField(allow_blank=True)
    deviation = serializers.SerializerMethodField()

    def get_status(self, charter: Charter) -> str:
        return "signed" if charter.is_frozen else "draft"

    def get_deviation(self, charter: Charter) -> bool:
        return hasattr(charter, "deviation")


class CharterDetailOutput(serializers.Serializer[CharterPage]):
    version = serializers.IntegerField(source="charter.version")
    status = serializers.SerializerMethodField()
    sha256 = serializers.CharField(source="charter.sha256", allow_blank=True)
    content_sha256 = serializers.CharField(
        help_text="SHA-256 of the canonical JSON of the current content: what is signed."
    )
    frozen_at = serializers.DateTimeField(source="charter.frozen_at", allow_null=True)
    latest = serializers.BooleanField(source="is_latest")
    previous_version = serializers.IntegerField(source="charter.previous.version", allow_null=True)
    revision_reason = serializers.CharField(source="charter.revision_reason")
    document = CharterDocumentSerializer()
    signatures = SignatureOutput(source="charter.signatures.all", many=True)
    signing = RoleStatusOutput(many=True)
    deviation = DeviationOutput(allow_null=True)
    deviations = DeviationOutput(many=True)
    first_unblinded_at = serializers.DateTimeField(
        source="first_unblinding.occurred_at", allow_null=True
    )
    validation = ValidationReportSerializer(source="validation.to_dict")

    def get_status(self, page: CharterPage) -> str:
        return "signed" if page.charter.is_frozen else "draft"


class SignInput(serializers.Serializer[dict[str, Any]]):
    role = serializers.ChoiceField(choices=SIGNERS)


class ReasonInput(serializers.Serializer[dict[str, Any]]):
    reason = serializers.CharField(allow_blank=True, required=False, default="")


class UnblindInput(serializers.Serializer[dict[str, Any]]):
    reason = serializers.CharField(max_length=300, help_text="To whom and why results are shown.")


class DeviationInput(serializers.Serializer[dict[str, Any]]):
    reason = serializers.CharField(help_text="Why the charter changes after unblinding.")


class SignatureCreatedOutput(serializers.Serializer[Any]):
    role = serializers.CharField()
    user = serializers.CharField(source="user.username")
    content_sha256 = serializers.CharField()
    signed_at = serializers.DateTimeField()
    frozen = serializers.BooleanField(source="charter.is_frozen")
    sha256 = serializers.CharField(source="charter.sha256", allow_blank=True)


class UnblindOutput(serializers.Serializer[Any]):
    charter_version = serializers.IntegerField(source="charter.version")
    reason = serializers.CharField()
    actor = serializers.CharField(source="actor.username")
    occurred_at = serializers.DateTimeField()
    first = serializers.BooleanField()


CHARTER_BODY = {
    "application/json": CharterDocumentSerializer,
    "application/yaml": OpenApiTypes.STR,
}
YAML_EXAMPLE = OpenApiExample(
    "Charter file",
    value={
        "metrics": [
            {
                "id": "hallucination_rate",
                "treatment": "gated",
                "theta_out": 10,
                "theta_in": 5,
                "weight": 1,
                "planned_n": 800,
                "harm_statement": "Unsupported statements reach a credit memo.",
            }
        ]
    },
    request_only=True,
)


# --------------------------------------------------------------------------- views


def _page(use_case: UseCase, version: int) -> CharterPage:
    page = charter_page(use_case=use_case, version=version, today=timezone.localdate())
    if page is None:
        raise Http404(f"{use_case.key} has no charter v{version}.")
    return page


def _detail(use_case: UseCase, version: int) -> dict[str, Any]:
    return dict(CharterDetailOutput(_page(use_case, version)).data)


class CharterListApi(APIView):
    parser_classes = DOCUMENT_PARSERS

    @extend_schema(
        responses=CharterSummaryOutput(many=True),
        summary="Charter versions of a use case, oldest first",
    )
    def get(self, request: Request, key: str) -> Response:
        use_case = use_case_for_unblinded(request.user, key, what="the charter")
        return Response(CharterSummaryOutput(charter_versions(use_case=use_case), many=True).data)

    @extend_schema(
        request=CHARTER_BODY,
        responses={201: CharterDetailOutput},
        examples=[YAML_EXAMPLE],
        summary="Create the first charter draft (v1) from a JSON or YAML charter document",
    )
    def post(self, request: Request, key: str) -> Response:
        use_case = use_case_for(request.user, key, roles=[Role.CHARTER_OWNER])
        document, _ = _document(request)
        charter = charter_create(actor=request.user, use_case=use_case, document=document)
        return Response(_detail(use_case, charter.version), status=status.HTTP_201_CREATED)


class CharterDetailApi(APIView):
    parser_classes = DOCUMENT_PARSERS

    @extend_schema(
        responses=CharterDetailOutput,
        summary="One charter version: document, status, hashes, signatures, deviations",
    )
    def get(self, request: Request, key: str, version: int) -> Response:
        use_case = use_case_for_unblinded(request.user, key, what="the charter")
        return Response(_detail(use_case, version))

    @extend_schema(
        request=CHARTER_BODY,
        responses={200: CharterDetailOutput},
        summary="Replace a draft's content (409 on a signed charter)",
    )
    def put(self, request: Request, key: str, version: int) -> Response:
        use_case = use_case_for(request.user, key, roles=[Role.CHARTER_OWNER])
        charter = _charter(use_case, version)
        document, _ = _document(request)
        charter_update(actor=request.user, charter=charter, document=document)
        return Response(_detail(use_case, version))


class CharterValidateApi(APIView):
    parser_classes = DOCUMENT_PARSERS

    @extend_schema(
        request=CHARTER_BODY,
        responses=ValidationReportSerializer,
        summary="Validate a proposed charter document for this version, without saving",
    )
    def post(self, request: Request, key: str, version: int) -> Response:
        use_case = use_case_for_unblinded(request.user, key, what="the charter")
        _charter(use_case, version)
        try:
            document, line_of = _document(request)
        except ServiceError as error:
            report = ValidationReport(
                issues=[
                    Issue("error", d.get("field", ""), d.get("message", ""), d.get("line"))
                    for d in error.details
                ]
                or [Issue("error", error.field or "", error.message)],
            )
            return Response(ValidationReportSerializer(report.to_dict()).data)
        report = charter_validate(
            document,
            autonomy=use_case.autonomy,
            consequence=use_case.consequence,
            today=timezone.localdate(),
            task_sets=task_set_supply(use_case=use_case),
        )
        report.issues = issues_with_lines(report.issues, line_of)
        return Response(ValidationReportSerializer(report.to_dict()).data)


class CharterSignApi(APIView):
    @extend_schema(
        request=SignInput,
        responses={201: SignatureCreatedOutput},
        summary="Sign the draft's current content in one of your roles; the third freezes it",
    )
    def post(self, request: Request, key: str, version: int) -> Response:
        use_case = use_case_for(request.user, key, roles=SIGNERS)
        charter = _charter(use_case, version)
        data = validated(SignInput, request.data)
        signature = charter_sign(actor=request.user, charter=charter, role=data["role"])
        return Response(SignatureCreatedOutput(signature).data, status=status.HTTP_201_CREATED)


class CharterReviseApi(APIView):
    @extend_schema(
        request=ReasonInput,
        responses={201: CharterDetailOutput},
        summary="Start version n + 1 from signed version n (a deviation after unblinding)",
    )
    def post(self, request: Request, key: str, version: int) -> Response:
        use_case = use_case_for(request.user, key, roles=[Role.CHARTER_OWNER])
        charter = _charter(use_case, version)
        data = validated(ReasonInput, request.data)
        revision = charter_revise(actor=request.user, charter=charter, reason=data["reason"])
        return Response(_detail(use_case, revision.version), status=status.HTTP_201_CREATED)


class CharterDeviationApi(APIView):
    @extend_schema(
        request=DeviationInput,
        responses={201: CharterDetailOutput},
        summary="Record the reason of a revision that became a deviation when results were shown",
    )
    def post(self, request: Request, key: str, version: int) -> Response:
        use_case = use_case_for(request.user, key, roles=[Role.CHARTER_OWNER])
        charter = _charter(use_case, version)
        data = validated(DeviationInput, request.data)
        charter_deviation_record(actor=request.user, charter=charter, reason=data["reason"])
        return Response(_detail(use_case, version), status=status.HTTP_201_CREATED)


class UnblindApi(APIView):
    @extend_schema(
        request=UnblindInput,
        responses={201: UnblindOutput},
        summary="Record that results are shown; from the first time, changes are deviations",
    )
    def post(self, request: Request, key: str) -> Response:
        use_case = use_case_for(request.user, key, roles=[Role.CHARTER_OWNER, Role.REVIEWER])
        data = validated(UnblindInput, request.data)
        event = use_case_unblind(actor=request.user, use_case=use_case, reason=data["reason"])
        first = use_case_first_unblinding(use_case=use_case)
        fields = _event_fields(event) | {"first": first is not None and first.pk == event.pk}
        payload = dict(UnblindOutput(fields).data)
        return Response(payload, status=status.HTTP_201_CREATED)


def _event_fields(event: Any) -> dict[str, Any]:
    return {
        "charter": event.charter,
        "reason": event.reason,
        "actor": event.actor,
        "occurred_at": event.occurred_at,
    }


def _charter(use_case: UseCase, version: int) -> Charter:
    charter = Charter.objects.filter(use_case=use_case, version=version).first()
    if charter is None:
        raise Http404(f"{use_case.key} has no charter v{version}.")
    charter.use_case = use_case
    return charter


PREFIX = "use-cases/<str:key>/charters/"
urlpatterns = [
    path(PREFIX, CharterListApi.as_view(), name="api-charter-list"),
    path(f"{PREFIX}<int:version>/", CharterDetailApi.as_view(), name="api-charter-detail"),
    path(
        f"{PREFIX}<int:version>/validate/",
        CharterValidateApi.as_view(),
        name="api-charter-validate",
    ),
    path(f"{PREFIX}<int:version>/sign/", CharterSignApi.as_view(), name="api-charter-sign"),
    path(f"{PREFIX}<int:version>/revise/", CharterReviseApi.as_view(), name="api-charter-revise"),
    path(
        f"{PREFIX}<int:version>/deviation/",
        CharterDeviationApi.as_view(),
        name="api-charter-deviation",
    ),
    path("use-cases/<str:key>/unblind/", UnblindApi.as_view(), name="api-use-case-unblind"),
]
