"""Agreement and judge calibration of a grading session under /api/v1/use-cases/<key>/grading/.

The same numbers as the agreement dashboard and the calibration page. Undefined statistics
(one category only, too few units or artefacts) are ``null``, never NaN.
"""

from __future__ import annotations

import math
from typing import Any

from django.urls import URLPattern, path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from enterpriseval.api import ErrorOutput
from grading.selectors.agreement import agreement_report, agreement_session, calibration_report


class FiniteFloatField(serializers.FloatField):
    """A float that is ``null`` when undefined (NaN), as strict JSON requires."""

    def to_representation(self, value: Any) -> float | None:
        if value is None or not math.isfinite(value):
            return None
        return float(value)


class FieldAgreementOutput(serializers.Serializer[Any]):
    field = serializers.CharField(source="agreement.field")
    level = serializers.CharField(source="agreement.level")
    statistic = serializers.CharField(
        source="agreement.statistic", help_text='"cohen_kappa" or "krippendorff_alpha".'
    )
    weights = serializers.CharField(source="agreement.weights", allow_null=True)
    point = FiniteFloatField(source="agreement.point", allow_null=True)
    lo = FiniteFloatField(source="agreement.lo", allow_null=True)
    hi = FiniteFloatField(source="agreement.hi", allow_null=True)
    confidence = serializers.FloatField(source="agreement.confidence")
    n_units = serializers.IntegerField(
        source="agreement.n_units", help_text="Units with at least two ratings."
    )
    n_artefacts = serializers.IntegerField(source="agreement.n_artefacts")
    n_raters = serializers.IntegerField(source="agreement.n_raters")
    percent_agreement = FiniteFloatField(source="agreement.percent_agreement", allow_null=True)
    n_resamples = serializers.IntegerField(
        source="agreement.n_resamples", help_text="Bootstrap resamples with a defined value."
    )
    n_degenerate = serializers.IntegerField(
        source="agreement.n_degenerate", help_text="Resamples dropped: statistic undefined."
    )
    target = serializers.FloatField()
    passes = serializers.BooleanField()


class CriterionAgreementOutput(serializers.Serializer[Any]):
    criterion = serializers.CharField(source="criterion.name")
    field = serializers.CharField(source="criterion.field")
    label = serializers.CharField(source="criterion.label", help_text="positive vs not")
    statistic = serializers.CharField(help_text='"cohen_kappa" or "krippendorff_alpha".')
    point = FiniteFloatField(allow_null=True, help_text="κ or α on the collapsed ratings.")
    lo = FiniteFloatField(allow_null=True)
    hi = FiniteFloatField(allow_null=True)
    n_units = serializers.IntegerField()
    prevalence = FiniteFloatField(source="profile.prevalence", allow_null=True)
    positive_agreement = FiniteFloatField(source="profile.positive_agreement", allow_null=True)
    negative_agreement = FiniteFloatField(source="profile.negative_agreement", allow_null=True)
    ac1 = FiniteFloatField(source="profile.ac1", allow_null=True, help_text="Gwet's AC1.")
    low_prevalence = serializers.BooleanField(
        help_text="The rarer category is under 10 %: κ/α are low even for accurate graders."
    )


class EligibilityOutput(serializers.Serializer[Any]):
    metric_id = serializers.CharField()
    name = serializers.CharField()
    treatment = serializers.CharField()
    fields = serializers.ListField(child=serializers.CharField(), source="field_names")
    eligible = serializers.BooleanField(
        allow_null=True, help_text="null: no rubric field measures this metric."
    )
    blocking_fields = serializers.ListField(child=serializers.CharField())
    blocking_criteria = serializers.ListField(child=serializers.CharField(), source="blocking")
    rule = serializers.CharField(
        source="rule_text", help_text="The charter's agreement rule for this metric."
    )
    reason = serializers.CharField()
    field_lower_bounds = serializers.SerializerMethodField(
        help_text="Per field it uses, the lower limit of the bootstrap CI on its criterion."
    )
    criteria = CriterionAgreementOutput(many=True, source="agreements")

    def get_field_lower_bounds(self, row: Any) -> dict[str, float | None]:
        return {a.criterion.field: a.lo if a.has_interval else None for a in row.agreements}


class FinalAgreementOutput(serializers.Serializer[Any]):
    field = serializers.CharField()
    n = serializers.IntegerField()
    agree = serializers.IntegerField()
    percent = FiniteFloatField(allow_null=True)


class GraderOutput(serializers.Serializer[Any]):
    grader = serializers.CharField(help_text="Username (this endpoint is for managers only).")
    artefacts_assigned = serializers.IntegerField()
    artefacts_submitted = serializers.IntegerField()
    mean_seconds = FiniteFloatField(allow_null=True)
    label_percent = serializers.DictField(
        child=serializers.DictField(child=FiniteFloatField(allow_null=True)),
        help_text="Per field, the share (%) of this grader's ratings with each label.",
    )
    agreement_with_final = FinalAgreementOutput(many=True)


class AgreementOutput(serializers.Serializer[Any]):
    session = serializers.CharField(source="session.public_id")
    kappa_target = serializers.FloatField()
    confidence = serializers.FloatField()
    artefacts_total = serializers.IntegerField()
    artefacts_complete = serializers.IntegerField()
    fields = FieldAgreementOutput(many=True)
    eligibility = EligibilityOutput(many=True)
    per_grader = GraderOutput(many=True, source="graders")


class JudgeChoiceOutput(serializers.Serializer[Any]):
    ref = serializers.CharField(help_text='"name:version"')
    n_scores = serializers.IntegerField()
    latest = serializers.DateTimeField()


class CalibrationRowOutput(serializers.Serializer[Any]):
    criterion = serializers.CharField()
    n_units = serializers.IntegerField()
    n_artefacts = serializers.IntegerField()
    kappa = FiniteFloatField(allow_null=True)
    percent_agreement = FiniteFloatField(allow_null=True)
    judge_rate = FiniteFloatField(allow_null=True)
    human_rate = FiniteFloatField(allow_null=True)
    bias = FiniteFloatField(allow_null=True, help_text="mean(f − h)")
    bias_lo = FiniteFloatField(allow_null=True)
    bias_hi = FiniteFloatField(allow_null=True)
    confidence = serializers.FloatField()


class CalibrationOutput(serializers.Serializer[Any]):
    session = serializers.CharField(source="session.public_id")
    confidence = serializers.FloatField()
    judge = serializers.CharField(source="judge.ref", allow_null=True, default=None)
    judges = JudgeChoiceOutput(many=True)
    artefacts_total = serializers.IntegerField()
    artefacts_complete = serializers.IntegerField()
    output_artefacts_complete = serializers.IntegerField()
    rows = CalibrationRowOutput(many=True)


class AgreementApi(APIView):
    @extend_schema(
        responses={200: AgreementOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="Inter-rater agreement per rubric field, gate eligibility, per-grader statistics",
        operation_id="grading_session_agreement",
        description=(
            "Cohen's κ when the same two graders rated every unit of a field, else "
            "Krippendorff's α (nominal or ordinal); percentile bootstrap CI over artefacts "
            "at the charter's confidence. For the charter owner, reviewer and adjudicator."
        ),
    )
    def get(self, request: Request, key: str, public_id: str) -> Response:
        session = agreement_session(request.user, key, public_id)
        return Response(AgreementOutput(agreement_report(session=session)).data)


class CalibrationApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "judge",
                OpenApiTypes.STR,
                OpenApiParameter.QUERY,
                description='"name:version"; default the judge that scored last.',
            )
        ],
        responses={200: CalibrationOutput, 400: ErrorOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="Judge calibration: κ and bias mean(f − h) per judge criterion",
        operation_id="grading_session_calibration",
    )
    def get(self, request: Request, key: str, public_id: str) -> Response:
        session = agreement_session(request.user, key, public_id)
        report = calibration_report(session=session, judge_ref=request.query_params.get("judge"))
        return Response(CalibrationOutput(report).data)


urlpatterns: list[URLPattern] = [
    path(
        "use-cases/<str:key>/grading/sessions/<str:public_id>/agreement/",
        AgreementApi.as_view(),
        name="api-grading-agreement",
    ),
    path(
        "use-cases/<str:key>/grading/sessions/<str:public_id>/calibration/",
        CalibrationApi.as_view(),
        name="api-grading-calibration",
    ),
]
