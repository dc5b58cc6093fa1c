"""A use case with its lifecycle and next steps under /api/v1/use-cases/<key>/."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from charters.api.use_cases import UseCaseOutput
from charters.models import Role
from charters.permissions import use_case_for
from lifecycle.selectors import use_case_overview


class UseCaseDetailApi(APIView):
    @extend_schema(responses=UseCaseOutput, summary="A use case with its lifecycle and next steps")
    def get(self, request: Request, key: str) -> Response:
        use_case = use_case_for(request.user, key)
        overview = use_case_overview(use_case=use_case, user=request.user)
        payload = UseCaseOutput(use_case).data
        payload["your_roles"] = overview.roles
        if Role.GRADER in overview.roles:
            # Blinding: the stage after grading is not a grader's to know (SPEC §5.1).
            del payload["stage"], payload["stage_label"]
        payload["stages"] = [
            {"stage": row.stage, "label": row.label, "entered_at": row.entered_at}
            for row in overview.stages
        ]
        payload["requirements"] = overview.requirements
        payload["next_steps"] = overview.next_steps
        return Response(payload)
