"""Use cases and memberships under /api/v1/use-cases/."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from charters.models import Membership, Role, UseCase
from charters.permissions import require_use_case_create, use_case_for, user_roles
from charters.selectors.use_cases import GRANT_ACCEPTED, grantee_get, use_case_list
from charters.services.use_cases import membership_grant, membership_revoke, use_case_create
from enterpriseval.api import validated
from enterpriseval.errors import ServiceError


class UseCaseOutput(serializers.ModelSerializer[UseCase]):
    autonomy = serializers.CharField(source="autonomy_label")
    consequence = serializers.CharField(source="consequence_label")
    intensity = serializers.SerializerMethodField()
    stage_label = serializers.CharField(source="get_stage_display")

    class Meta:
        model = UseCase
        fields = [
            "key",
            "name",
            "business_outcome",
            "value_hypothesis",
            "autonomy",
            "consequence",
            "intensity",
            "stage",
            "stage_label",
            "created_at",
        ]

    def get_intensity(self, use_case: UseCase) -> str:
        return f"E{use_case.intensity}"


class UseCaseInput(serializers.Serializer[dict]):
    key = serializers.RegexField(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=40)
    name = serializers.CharField(max_length=200)
    business_outcome = serializers.CharField()
    value_hypothesis = serializers.CharField()
    autonomy = serializers.IntegerField(min_value=0, max_value=4)
    consequence = serializers.IntegerField(min_value=1, max_value=4)


class MembershipOutput(serializers.Serializer[Membership]):
    username = serializers.CharField(source="user.username")
    role = serializers.CharField()
    granted_at = serializers.DateTimeField()


class MembershipInput(serializers.Serializer[dict]):
    username = serializers.CharField()
    role = serializers.ChoiceField(choices=Role.choices)


class UseCaseListApi(APIView):
    @extend_schema(responses=UseCaseOutput(many=True), summary="Use cases you are a member of")
    def get(self, request: Request) -> Response:
        use_cases = list(use_case_list(user=request.user))
        payload = UseCaseOutput(use_cases, many=True).data
        for use_case, row in zip(use_cases, payload, strict=True):
            if use_case.blinded:
                # Blinding: the stage after grading is not a grader's to know (SPEC §5.1).
                del row["stage"], row["stage_label"]
        return Response(payload)

    @extend_schema(
        request=UseCaseInput, responses={201: UseCaseOutput}, summary="Create a use case"
    )
    def post(self, request: Request) -> Response:
        require_use_case_create(request.user)
        data = validated(UseCaseInput, request.data)
        use_case = use_case_create(actor=request.user, **data)
        return Response(UseCaseOutput(use_case).data, status=status.HTTP_201_CREATED)


class GrantOutput(serializers.Serializer[dict]):
    username = serializers.CharField()
    role = serializers.CharField()
    message = serializers.CharField()


class MembershipListApi(APIView):
    @extend_schema(responses=MembershipOutput(many=True), summary="Members and their roles")
    def get(self, request: Request, key: str) -> Response:
        use_case = use_case_for(request.user, key)
        members = Membership.objects.filter(use_case=use_case).select_related("user")
        if Role.GRADER in user_roles(request.user, use_case):
            # Graders see their own roles only: the others' names would tell them who else
            # grades (SPEC §5.1).
            members = members.filter(user=request.user)
        return Response(MembershipOutput(members, many=True).data)

    @extend_schema(
        request=MembershipInput,
        responses={202: GrantOutput},
        summary="Grant a role (charter owners only)",
        description=(
            "Answers 202 with the same body whether or not the user name belongs to an active "
            "account, so grants cannot be used to find out which user names exist; the "
            "members list (GET) shows who holds which role."
        ),
    )
    def post(self, request: Request, key: str) -> Response:
        use_case = use_case_for(request.user, key, roles=[Role.CHARTER_OWNER])
        data = validated(MembershipInput, request.data)
        user = grantee_get(username=data["username"])
        if user is not None:
            membership_grant(actor=request.user, use_case=use_case, user=user, role=data["role"])
        role_label = Role(data["role"]).label
        payload = {
            "username": data["username"],
            "role": data["role"],
            "message": GRANT_ACCEPTED.format(username=data["username"], role=role_label),
        }
        return Response(GrantOutput(payload).data, status=status.HTTP_202_ACCEPTED)


class MembershipDetailApi(APIView):
    @extend_schema(responses={204: None}, summary="Revoke a role")
    def delete(self, request: Request, key: str, username: str, role: str) -> Response:
        use_case = use_case_for(request.user, key, roles=[Role.CHARTER_OWNER])
        user = get_object_or_404(get_user_model(), username=username)
        if role not in Role.values:
            raise ServiceError(f"unknown role {role!r}", field="role")
        membership_revoke(actor=request.user, use_case=use_case, user=user, role=role)
        return Response(status=status.HTTP_204_NO_CONTENT)


urlpatterns = [
    path("use-cases/", UseCaseListApi.as_view(), name="api-use-case-list"),
    path("use-cases/<str:key>/members/", MembershipListApi.as_view(), name="api-membership-list"),
    path(
        "use-cases/<str:key>/members/<str:username>/<str:role>/",
        MembershipDetailApi.as_view(),
        name="api-membership-detail",
    ),
]
