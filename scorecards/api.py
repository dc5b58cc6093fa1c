"""Scorecards under /api/v1/use-cases/<key>/scorecards/: the GRC export and the drafting calls.

The detail response is the export a firm's GRC system reads; its schema is documented in
docs/scorecard-export.md and published as JSON Schema at ``scorecards/export_schema.json``.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import Http404, HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from enterpriseval.api import ErrorOutput, validated
from gates.selectors import decision_get
from scorecards.models import Scorecard
from scorecards.selectors import (
    SCHEMA,
    scorecard_get,
    scorecard_list,
    scorecard_state,
    scorecard_use_case_for,
    scorecard_view,
)
from scorecards.services import (
    scorecard_create,
    scorecard_evidence_pack,
    scorecard_pdf_bytes,
    scorecard_sign_off,
    scorecard_update,
)


class ScorecardSummaryOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    decision = serializers.IntegerField()
    state = serializers.ChoiceField(choices=["draft", "final", "re-evaluation required"])
    sha256 = serializers.CharField(allow_blank=True)
    signed_off_at = serializers.DateTimeField(allow_null=True)
    url = serializers.CharField()


class ScorecardCreateInput(serializers.Serializer[Any]):
    decision = serializers.IntegerField(min_value=1)


class ScorecardUpdateInput(serializers.Serializer[Any]):
    failure_modes = serializers.CharField(required=False, allow_blank=True)
    conditions_of_use = serializers.CharField(required=False, allow_blank=True)
    compensating_controls = serializers.CharField(required=False, allow_blank=True)
    reevaluation_triggers = serializers.ListField(child=serializers.CharField(), required=False)
    next_review_date = serializers.DateField(required=False, allow_null=True)


class FlagOutput(serializers.Serializer[Any]):
    kind = serializers.CharField()
    reason = serializers.CharField()
    source = serializers.CharField()
    raised_at = serializers.DateTimeField()


class ScorecardExportOutput(serializers.Serializer[Any]):
    schema = serializers.CharField()
    id = serializers.IntegerField()
    use_case = serializers.CharField()
    state = serializers.ChoiceField(choices=["draft", "final", "re-evaluation required"])
    sha256 = serializers.CharField()
    signed_off_by = serializers.CharField(allow_null=True)
    signed_off_at = serializers.DateTimeField(allow_null=True)
    reevaluation = FlagOutput(many=True)
    missing = serializers.ListField(child=serializers.DictField())
    content = serializers.JSONField()
    links = serializers.DictField(child=serializers.CharField())


def _summary(scorecard: Scorecard, key: str) -> dict[str, Any]:
    flags = list(scorecard.reevaluation_flags.all())
    return {
        "id": scorecard.pk,
        "decision": scorecard.decision_id,
        "state": scorecard_state(scorecard, flags),
        "sha256": scorecard.sha256,
        "signed_off_at": scorecard.signed_off_at,
        "url": reverse("api-scorecard-detail", args=[key, scorecard.pk]),
    }


def scorecard_export(scorecard: Scorecard) -> dict[str, Any]:
    """Return the GRC export of ``scorecard`` (docs/scorecard-export.md)."""
    view = scorecard_view(scorecard=scorecard)
    key = scorecard.use_case.key
    return {
        "schema": SCHEMA,
        "id": scorecard.pk,
        "use_case": key,
        "state": view.state,
        "sha256": view.sha256,
        "signed_off_by": scorecard.signed_off_by.get_username()
        if scorecard.signed_off_by
        else None,
        "signed_off_at": scorecard.signed_off_at,
        "reevaluation": [
            {"kind": f.kind, "reason": f.reason, "source": f.source, "raised_at": f.raised_at}
            for f in view.flags
        ],
        "missing": [m.to_dict() for m in view.missing],
        "content": view.content,
        "links": {
            "page": reverse("scorecard-detail", args=[key, scorecard.pk]),
            "pdf": reverse("scorecard-pdf", args=[key, scorecard.pk]),
            "evidence_pack": reverse("scorecard-evidence", args=[key, scorecard.pk]),
            "decision": reverse("api-decision-detail", args=[key, scorecard.decision_id]),
        },
    }


class ScorecardListApi(APIView):
    @extend_schema(
        responses={200: ScorecardSummaryOutput(many=True), 403: ErrorOutput, 404: ErrorOutput},
        summary="Scorecards of the use case, newest first",
        operation_id="use_case_scorecards_list",
    )
    def get(self, request: Request, key: str) -> Response:
        use_case = scorecard_use_case_for(request.user, key)
        return Response([_summary(s, use_case.key) for s in scorecard_list(use_case=use_case)])

    @extend_schema(
        request=ScorecardCreateInput,
        responses={
            201: ScorecardExportOutput,
            400: ErrorOutput,
            403: ErrorOutput,
            409: ErrorOutput,
        },
        summary="Draft the scorecard of a recorded decision",
        operation_id="use_case_scorecard_create",
    )
    def post(self, request: Request, key: str) -> Response:
        use_case = scorecard_use_case_for(request.user, key)
        data = validated(ScorecardCreateInput, request.data)
        decision = decision_get(use_case=use_case, pk=data["decision"])
        if decision is None:
            raise Http404(f"No decision {data['decision']} in {use_case.key}.")
        scorecard = scorecard_create(actor=request.user, decision=decision)  # type: ignore[arg-type]
        scorecard = scorecard_get(use_case=use_case, pk=scorecard.pk)
        assert scorecard is not None
        return Response(ScorecardExportOutput(scorecard_export(scorecard)).data, status=201)


class ScorecardDetailApi(APIView):
    def _get(self, request: Request, key: str, pk: int) -> Scorecard:
        use_case = scorecard_use_case_for(request.user, key)
        scorecard = scorecard_get(use_case=use_case, pk=pk)
        if scorecard is None:
            raise Http404(f"No scorecard {pk} in {use_case.key}.")
        return scorecard

    @extend_schema(
        responses={200: ScorecardExportOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="The scorecard's data for a GRC system (schema: docs/scorecard-export.md)",
        operation_id="use_case_scorecard_retrieve",
        description=(
            "For a final scorecard, sha256 is the SHA-256 of the canonical JSON of `content` "
            "(audit/canonical.py: sorted keys, no spaces, UTF-8) and is printed in every PDF "
            "footer; for a draft it is the hash of the content as assembled now."
        ),
    )
    def get(self, request: Request, key: str, pk: int) -> Response:
        return Response(ScorecardExportOutput(scorecard_export(self._get(request, key, pk))).data)

    @extend_schema(
        request=ScorecardUpdateInput,
        responses={
            200: ScorecardExportOutput,
            400: ErrorOutput,
            403: ErrorOutput,
            409: ErrorOutput,
        },
        summary="Write the committee's fields of a draft scorecard (a final one: 409)",
        operation_id="use_case_scorecard_update",
    )
    def patch(self, request: Request, key: str, pk: int) -> Response:
        scorecard = self._get(request, key, pk)
        data = validated(ScorecardUpdateInput, request.data, partial=True)
        scorecard_update(actor=request.user, scorecard=scorecard, changes=data)  # type: ignore[arg-type]
        return Response(ScorecardExportOutput(scorecard_export(self._get(request, key, pk))).data)


class ScorecardSignOffApi(APIView):
    @extend_schema(
        request=None,
        responses={200: ScorecardExportOutput, 403: ErrorOutput, 409: ErrorOutput},
        summary="Sign the scorecard off as second-line reviewer: it becomes final and immutable",
        operation_id="use_case_scorecard_sign_off",
    )
    def post(self, request: Request, key: str, pk: int) -> Response:
        use_case = scorecard_use_case_for(request.user, key)
        scorecard = scorecard_get(use_case=use_case, pk=pk)
        if scorecard is None:
            raise Http404(f"No scorecard {pk} in {use_case.key}.")
        scorecard_sign_off(actor=request.user, scorecard=scorecard)  # type: ignore[arg-type]
        scorecard = scorecard_get(use_case=use_case, pk=pk)
        assert scorecard is not None
        return Response(ScorecardExportOutput(scorecard_export(scorecard)).data)


class _FileRenderer(BaseRenderer):
    """Accept a file's media type; an error is then the API's JSON error body."""

    charset = None

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> bytes:
        return data if isinstance(data, bytes) else json.dumps(data, ensure_ascii=False).encode()


class PdfRenderer(_FileRenderer):
    media_type = "application/pdf"
    format = "pdf"


class ZipRenderer(_FileRenderer):
    media_type = "application/zip"
    format = "zip"


class ScorecardPdfApi(APIView):
    renderer_classes = (JSONRenderer, PdfRenderer)

    @extend_schema(
        responses={
            (200, "application/pdf"): OpenApiTypes.BINARY,
            403: ErrorOutput,
            404: ErrorOutput,
        },
        summary="The scorecard's PDF: as signed for a final scorecard, rendered now for a draft",
        operation_id="use_case_scorecard_pdf",
    )
    def get(self, request: Request, key: str, pk: int) -> HttpResponse:
        scorecard = _scorecard(request, key, pk)
        base = request.build_absolute_uri("/").rstrip("/")
        response = HttpResponse(
            scorecard_pdf_bytes(scorecard=scorecard, base_url=base), content_type="application/pdf"
        )
        name = f"scorecard-{scorecard.use_case.key}-{scorecard.pk}.pdf"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


class ScorecardEvidenceApi(APIView):
    renderer_classes = (JSONRenderer, ZipRenderer)

    @extend_schema(
        responses={
            (200, "application/zip"): OpenApiTypes.BINARY,
            403: ErrorOutput,
            404: ErrorOutput,
        },
        summary="The scorecard's evidence pack (zip with a SHA-256 manifest; its export audited)",
        operation_id="use_case_scorecard_evidence_pack",
    )
    def get(self, request: Request, key: str, pk: int) -> HttpResponse:
        scorecard = _scorecard(request, key, pk)
        base = request.build_absolute_uri("/").rstrip("/")
        data = scorecard_evidence_pack(actor=request.user, scorecard=scorecard, base_url=base)  # type: ignore[arg-type]
        response = HttpResponse(data, content_type="application/zip")
        name = f"evidence-{scorecard.use_case.key}-scorecard-{scorecard.pk}.zip"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


def _scorecard(request: Request, key: str, pk: int) -> Scorecard:
    use_case = scorecard_use_case_for(request.user, key)
    scorecard = scorecard_get(use_case=use_case, pk=pk)
    if scorecard is None:
        raise Http404(f"No scorecard {pk} in {use_case.key}.")
    return scorecard
