"""Recorded decisions under /api/v1/use-cases/<key>/decisions/: the list, recording one, one."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from charters.api.configurations import ParityOutput
from enterpriseval.api import ErrorOutput, validated
from gates.models import Decision
from gates.selectors import (
    DecisionComparison,
    decision_comparison,
    decision_get,
    decision_inputs,
    decision_list,
    decision_use_case_for,
)
from gates.services import decision_create


class DecisionConfigurationOutput(serializers.Serializer[Any]):
    name = serializers.CharField()
    version = serializers.IntegerField()
    sha256 = serializers.CharField()


class DecisionOutput(serializers.Serializer[Decision]):
    id = serializers.IntegerField(source="pk")
    status = serializers.CharField()
    binding_metric = serializers.CharField()
    ei = serializers.FloatField(allow_null=True)
    ei_g = serializers.FloatField(allow_null=True)
    ei_band = serializers.SerializerMethodField()
    charter_version = serializers.IntegerField(source="charter.version")
    configuration = DecisionConfigurationOutput()
    run = serializers.IntegerField(source="run_id")
    sha256 = serializers.CharField()
    created_by = serializers.CharField(source="created_by.get_username")
    created_at = serializers.DateTimeField()
    url = serializers.SerializerMethodField()

    def get_ei_band(self, decision: Decision) -> list[float] | None:
        if decision.ei_band_lo is None or decision.ei_band_hi is None:
            return None
        return [decision.ei_band_lo, decision.ei_band_hi]

    def get_url(self, decision: Decision) -> str:
        return reverse("api-decision-detail", args=[self.context["key"], decision.pk])


class DecisionDetailOutput(DecisionOutput):
    record = serializers.JSONField()
    evidence = serializers.JSONField()


class DecisionCreateInput(serializers.Serializer[Any]):
    charter = serializers.IntegerField(min_value=1, help_text="Version of a signed charter.")
    run = serializers.IntegerField(min_value=1, help_text="Id of a completed run of the use case.")
    session = serializers.CharField(
        required=False, allow_blank=True, help_text="Public id of a closed grading session."
    )
    judge = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="Id of a judge that scored the run."
    )
    oversight_study = serializers.CharField(
        required=False, allow_blank=True, help_text="Public id of an oversight study."
    )
    stress_run = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="Id of a completed stress-split run of the same σ, reported apart (SPEC §9).",
    )


class DecisionListApi(APIView):
    @extend_schema(
        responses={200: DecisionOutput(many=True), 403: ErrorOutput, 404: ErrorOutput},
        summary="Recorded decisions of the use case, newest first",
        operation_id="use_case_decisions_list",
        parameters=[
            OpenApiParameter("limit", OpenApiTypes.INT, OpenApiParameter.QUERY),
            OpenApiParameter("offset", OpenApiTypes.INT, OpenApiParameter.QUERY),
        ],
        description="Graders get 403: a decision shows results (SPEC §1, §5.1).",
    )
    def get(self, request: Request, key: str) -> Response:
        use_case = decision_use_case_for(request.user, key)
        paginator = LimitOffsetPagination()
        page = paginator.paginate_queryset(decision_list(use_case=use_case), request, view=self)
        data = DecisionOutput(page, many=True, context={"key": use_case.key}).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        request=DecisionCreateInput,
        responses={
            201: DecisionDetailOutput,
            400: ErrorOutput,
            403: ErrorOutput,
            404: ErrorOutput,
            409: ErrorOutput,
        },
        summary="Record a decision: gate a run under a signed charter on its evidence",
        operation_id="use_case_decision_create",
        description=(
            "Estimates every charter metric on the run (with the grading session, judge and "
            "oversight study given), gates on conservative bounds and records the decision "
            "(SPEC §6.1). Refused, with a message saying what to do and the field at fault: a "
            "draft charter (409), a run of another use case or whose σ belongs to another "
            "(400), an open grading session (409), a judge whose model is σ's own while the "
            "charter gates a metric (409), a session, judge or study of another use case or "
            "run (400). Charter owners and reviewers record; graders get 403 even holding "
            "another role, outsiders 404."
        ),
    )
    def post(self, request: Request, key: str) -> Response:
        use_case = decision_use_case_for(request.user, key)
        data = validated(DecisionCreateInput, request.data)
        inputs = decision_inputs(
            use_case=use_case,
            charter_version=data["charter"],
            run_id=data["run"],
            session_id=data.get("session") or None,
            judge_id=data.get("judge"),
            study_id=data.get("oversight_study") or None,
            stress_run_id=data.get("stress_run"),
        )
        decision = decision_create(
            actor=request.user,
            charter=inputs.charter,
            run=inputs.run,
            session=inputs.session,
            judge=inputs.judge,
            oversight_study=inputs.oversight_study,
            stress_run=inputs.stress_run,
        )
        decision = decision_get(use_case=use_case, pk=decision.pk)
        return Response(
            DecisionDetailOutput(decision, context={"key": use_case.key}).data, status=201
        )


class DecisionDetailApi(APIView):
    @extend_schema(
        responses={200: DecisionDetailOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="One recorded decision: its record, the evidence it rests on and its SHA-256",
        operation_id="use_case_decision_retrieve",
        description=(
            "sha256 is the SHA-256 of the canonical JSON (audit/canonical.py: sorted keys, "
            'no spaces, UTF-8) of {"record": record, "evidence": evidence}, so anyone can '
            "recompute it from this response."
        ),
    )
    def get(self, request: Request, key: str, pk: int) -> Response:
        use_case = decision_use_case_for(request.user, key)
        decision = decision_get(use_case=use_case, pk=pk)
        if decision is None:
            raise Http404(f"No decision {pk} in {use_case.key}.")
        return Response(DecisionDetailOutput(decision, context={"key": use_case.key}).data)


class DecisionCompareInput(serializers.Serializer[Any]):
    a = serializers.IntegerField(min_value=1, help_text="Id of decision A.")
    b = serializers.IntegerField(min_value=1, help_text="Id of decision B.")


class MetricPairOutput(serializers.Serializer[Any]):
    id = serializers.CharField()
    label = serializers.CharField()
    direction = serializers.CharField()
    theta_out = serializers.FloatField()
    theta_in = serializers.FloatField()
    a = serializers.JSONField(allow_null=True, help_text="Decision A's gate result of the metric.")
    b = serializers.JSONField(allow_null=True, help_text="Decision B's gate result of the metric.")


class DecisionComparisonOutput(serializers.Serializer[Any]):
    a = DecisionOutput()
    b = DecisionOutput()
    verdict = serializers.CharField()
    attributable_to_model_alone = serializers.BooleanField()
    parity = ParityOutput()
    run_differences = serializers.ListField(child=serializers.CharField())
    metrics = MetricPairOutput(many=True)
    value_a = serializers.JSONField(allow_null=True)
    value_b = serializers.JSONField(allow_null=True)


def comparison_data(comparison: DecisionComparison, key: str) -> dict[str, Any]:
    """Return a comparison as ``GET …/decisions/compare/`` answers it."""
    a, b = comparison.a, comparison.b
    data = {
        "a": a,
        "b": b,
        "verdict": comparison.verdict,
        "attributable_to_model_alone": comparison.attributable_to_model_alone,
        "parity": {"a": a.configuration, "b": b.configuration, **comparison.parity.as_dict()},
        "run_differences": comparison.run_differences,
        "metrics": [
            {
                "id": pair.id,
                "label": pair.label,
                "direction": pair.direction,
                "theta_out": pair.theta_out,
                "theta_in": pair.theta_in,
                "a": pair.a.to_dict() if pair.a is not None else None,
                "b": pair.b.to_dict() if pair.b is not None else None,
            }
            for pair in comparison.metrics
        ],
        "value_a": comparison.value_a.to_dict() if comparison.value_a is not None else None,
        "value_b": comparison.value_b.to_dict() if comparison.value_b is not None else None,
    }
    return dict(DecisionComparisonOutput(data, context={"key": key}).data)


class DecisionCompareApi(APIView):
    @extend_schema(
        parameters=[DecisionCompareInput],
        responses={200: DecisionComparisonOutput, 400: ErrorOutput, 403: ErrorOutput},
        summary="Two decisions side by side under one charter version, with σ's harness parity",
        operation_id="use_case_decisions_compare",
        description=(
            "As the comparison page: each gated metric as both decisions read it, both value "
            "estimates, the σ components that differ (SPEC §9) and the verdict (identical, "
            "attributable to the model alone, or not). 400 naming a or b when a decision is "
            "not of this use case, both are the same, or their charter versions differ."
        ),
    )
    def get(self, request: Request, key: str) -> Response:
        use_case = decision_use_case_for(request.user, key)
        query = validated(DecisionCompareInput, request.query_params)
        comparison = decision_comparison(use_case=use_case, a=query["a"], b=query["b"])
        return Response(comparison_data(comparison, use_case.key))
