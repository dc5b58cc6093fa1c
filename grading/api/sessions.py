"""Grading sessions under /api/v1/use-cases/<key>/grading/sessions/: create, list, detail,
close, and the grades file out (export) and in (import), for firms that grade in their own
tools (docs/formats.md "Grades (JSONL)").

Management endpoints: the charter owner writes; the reviewer and adjudicator read; graders
get 403 (they use /api/v1/grading/assignments/), outsiders 404.
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict
from typing import Any

from django.contrib.auth import get_user_model
from django.http import StreamingHttpResponse
from django.urls import URLPattern, path, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import BaseParser, MultiPartParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from charters.models import UseCase
from enterpriseval.api import ErrorOutput, validated
from enterpriseval.errors import ServiceError
from grading.models import GradingSession, SampleDesign, SessionMode, TauRule
from grading.selectors.sessions import (
    session_access,
    session_artefacts,
    session_detail,
    session_for,
    session_get,
    session_list,
)
from grading.services.grade_import import grades_import
from grading.services.sessions import MAX_SEED, session_close, session_create
from grading.views.sessions import GRADES_CONTENT_TYPE, grades_response
from runs.models import Judge, Run


class JSONLinesParser(BaseParser):
    """Hand the raw request body to the view as a stream, to be read a line at a time."""

    media_type = GRADES_CONTENT_TYPE

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        return stream


class JSONLinesRenderer(BaseRenderer):
    """Accept ``application/x-ndjson``; an error is then one JSON line."""

    media_type = GRADES_CONTENT_TYPE
    format = "jsonl"

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> bytes:
        return json.dumps(data, ensure_ascii=False).encode() + b"\n"


class SessionCreateInput(serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField(max_length=120, help_text="Shown to graders: no provenance.")
    runs = serializers.ListField(
        child=serializers.IntegerField(min_value=1), help_text="Ids of completed runs."
    )
    graders = serializers.ListField(child=serializers.CharField(), help_text="User names.")
    adjudicators = serializers.ListField(child=serializers.CharField(), help_text="User names.")
    include_baselines = serializers.BooleanField(default=False)
    design = serializers.ChoiceField(choices=SampleDesign.values, default=SampleDesign.UNIFORM)
    stratify_by = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        max_length=20,
        help_text="Stratified design: a task metadata key whose values are strata within each "
        "run (weighted N_h/n_h by the estimators).",
    )
    sample_size = serializers.IntegerField(
        min_value=1,
        required=False,
        allow_null=True,
        help_text="Outputs drawn for each σ (the planned n is per σ). Default: the size the "
        "charter plans for each σ (sample_plan).",
    )
    graders_per_artefact = serializers.IntegerField(min_value=2, max_value=20, default=2)
    seed = serializers.IntegerField(
        min_value=0,
        max_value=MAX_SEED - 1,
        required=False,
        allow_null=True,
        help_text="Default: a random seed, recorded.",
    )
    mode = serializers.ChoiceField(
        choices=SessionMode.values,
        default=SessionMode.FIXED,
        help_text="fixed: the whole sample drawn now; sequential: grade until decided (one "
        "run), outputs drawn one at a time by the judge's uncertainty (SPEC §5.5).",
    )
    judge = serializers.IntegerField(
        min_value=1, required=False, allow_null=True, help_text="Sequential: the judge's id."
    )
    tau = serializers.FloatField(
        min_value=0.0,
        max_value=1.0,
        default=0.5,
        help_text="Sequential: uniform share τ (the floor, with tau_rule adaptive).",
    )
    tau_rule = serializers.ChoiceField(
        choices=TauRule.values,
        default=TauRule.FIXED,
        help_text="Sequential: fixed (every draw uses τ) or adaptive (τ_t ≥ τ chosen before "
        "each draw from the grades so far, recorded per draw); fixed-n sessions: fixed.",
    )
    budget = serializers.IntegerField(
        min_value=1,
        required=False,
        allow_null=True,
        help_text="Sequential: most outputs graded. Default: the charter's planned n for the σ.",
    )
    agreement_size = serializers.IntegerField(
        min_value=1,
        required=False,
        allow_null=True,
        help_text="Sequential: outputs of the uniform sub-sample double-graded for agreement.",
    )


class ProgressOutput(serializers.Serializer[Any]):
    artefacts = serializers.IntegerField()
    assignments = serializers.IntegerField()
    submitted = serializers.IntegerField()
    in_progress = serializers.IntegerField()
    pending = serializers.IntegerField()
    percent = serializers.FloatField()


class ArmOutput(serializers.Serializer[Any]):
    arm = serializers.CharField(help_text="sigma:<configuration id>, or baseline.")
    label = serializers.CharField()
    runs = serializers.ListField(child=serializers.IntegerField())
    population = serializers.IntegerField()
    planned = serializers.IntegerField(help_text="What the charter plans for this σ.")
    planned_by = serializers.CharField(help_text="The metric whose planned n sets it, or ''.")
    planned_units = serializers.IntegerField(allow_null=True)
    sampled = serializers.IntegerField()
    inclusion_probabilities = serializers.DictField(
        child=serializers.FloatField(), help_text="π of each stratum of the arm."
    )


class SessionOutput(serializers.Serializer[GradingSession]):
    public_id = serializers.CharField()
    name = serializers.CharField()
    use_case = serializers.CharField(source="use_case.key")
    status = serializers.CharField()
    design = serializers.CharField()
    seed = serializers.CharField(
        help_text="A decimal string: seeds go up to 2^62, beyond exact JSON numbers in JavaScript."
    )
    population_size = serializers.IntegerField()
    sample_size = serializers.IntegerField(help_text="Artefacts drawn over every arm.")
    arms = ArmOutput(many=True, help_text="The design per σ: the planned n is per σ.")
    graders_per_artefact = serializers.IntegerField()
    include_baselines = serializers.BooleanField()
    mode = serializers.CharField(help_text="fixed or sequential (SPEC §5.5).")
    tau = serializers.FloatField(allow_null=True)
    tau_rule = serializers.CharField(help_text="fixed or adaptive (τ is then the floor).")
    budget = serializers.IntegerField(allow_null=True)
    stop = serializers.JSONField(
        help_text="Sequential, once stopped: reason, grades used, each metric's sequence."
    )
    created_by = serializers.CharField(source="created_by.get_username")
    created_at = serializers.DateTimeField()
    closed_at = serializers.DateTimeField(allow_null=True)
    url = serializers.SerializerMethodField()
    grades_url = serializers.SerializerMethodField()

    def get_url(self, session: GradingSession) -> str:
        return reverse("api-grading-session-detail", args=[session.use_case.key, session.public_id])

    def get_grades_url(self, session: GradingSession) -> str:
        return reverse("api-grading-session-grades", args=[session.use_case.key, session.public_id])


class SessionSummaryOutput(SessionOutput):
    progress = ProgressOutput()


class RunRefOutput(serializers.Serializer[Run]):
    id = serializers.IntegerField(source="pk")
    sigma = serializers.CharField(source="configuration.name")
    sigma_version = serializers.IntegerField(source="configuration.version")


class StratumOutput(serializers.Serializer[Any]):
    stratum = serializers.CharField()
    label = serializers.CharField()
    sampled = serializers.IntegerField()
    population = serializers.IntegerField(allow_null=True)
    inclusion_probability = serializers.FloatField(source="pi_min")
    inclusion_probability_max = serializers.FloatField(source="pi_max")


class GraderProgressOutput(serializers.Serializer[Any]):
    username = serializers.CharField()
    assigned = serializers.IntegerField()
    submitted = serializers.IntegerField()
    in_progress = serializers.IntegerField()
    mean_minutes = serializers.FloatField(allow_null=True)


class AssignedGraderOutput(serializers.Serializer[Any]):
    username = serializers.CharField()
    status = serializers.CharField()


class ArtefactOutput(serializers.Serializer[Any]):
    public_id = serializers.CharField()
    task_id = serializers.CharField()
    kind = serializers.CharField()
    stratum = serializers.CharField()
    inclusion_probability = serializers.FloatField()
    graders = AssignedGraderOutput(many=True)


class SessionDetailOutput(SessionSummaryOutput):
    charter_version = serializers.IntegerField()
    task_set = serializers.CharField()
    runs = RunRefOutput(many=True)
    adjudicators = serializers.ListField(child=serializers.CharField())
    strata = StratumOutput(many=True)
    graders = GraderProgressOutput(many=True)
    artefacts_complete = serializers.IntegerField()
    disputes_pending = serializers.IntegerField()
    disputes_adjudicated = serializers.IntegerField()
    artefacts = ArtefactOutput(many=True)


class ExportInput(serializers.Serializer[dict[str, Any]]):
    final = serializers.BooleanField(
        default=False, help_text="One line per artefact with the final values."
    )
    provenance = serializers.BooleanField(
        default=False, help_text="Add kind, run, σ, repeat, stratum and π to each line."
    )


class GradesImportInput(serializers.Serializer[dict[str, Any]]):
    file = serializers.FileField(allow_empty_file=True)


class GradesImportOutput(serializers.Serializer[Any]):
    session = serializers.CharField()
    sha256 = serializers.CharField()
    lines = serializers.IntegerField()
    submitted = serializers.IntegerField()
    drafts = serializers.IntegerField()
    revised = serializers.IntegerField()
    revisions = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class SessionListApi(APIView):
    @extend_schema(
        responses={200: SessionSummaryOutput(many=True), 403: ErrorOutput, 404: ErrorOutput},
        summary="Grading sessions of the use case, newest first, with their progress",
        operation_id="use_case_grading_sessions_list",
    )
    def get(self, request: Request, key: str) -> Response:
        use_case = session_access(request.user, key)
        paginator = LimitOffsetPagination()
        rows = session_list(use_case=use_case)
        page = paginator.paginate_queryset(rows, request, view=self) or []
        data = [
            {**SessionOutput(row.session).data, "progress": _progress(row.progress)} for row in page
        ]
        return paginator.get_paginated_response(data)

    @extend_schema(
        request=SessionCreateInput,
        responses={
            201: SessionDetailOutput,
            400: ErrorOutput,
            403: ErrorOutput,
            404: ErrorOutput,
            409: ErrorOutput,
        },
        summary="Draw a seeded blinded sample of the runs' outputs and assign it to graders",
        operation_id="use_case_grading_sessions_create",
        description=(
            "Charter owner only. The response lists every sampled artefact with its task, "
            "stratum, inclusion probability and assigned graders (a management view: never "
            "shown to graders). Errors name the input at fault in error.field."
        ),
    )
    def post(self, request: Request, key: str) -> Response:
        use_case = session_access(request.user, key, write=True)
        data = validated(SessionCreateInput, request.data)
        session = session_create(
            actor=request.user,
            use_case=use_case,
            name=data["name"],
            runs=session_runs(use_case, data["runs"]),
            graders=session_users(data["graders"], "graders"),
            adjudicators=session_users(data["adjudicators"], "adjudicators"),
            include_baselines=data["include_baselines"],
            design=data["design"],
            sample_size=data.get("sample_size"),
            graders_per_artefact=data["graders_per_artefact"],
            seed=data.get("seed"),
            stratify_by=data["stratify_by"],
            mode=data["mode"],
            judge=session_judge(data.get("judge")),
            tau=data["tau"],
            tau_rule=data["tau_rule"],
            budget=data.get("budget"),
            agreement_size=data.get("agreement_size"),
        )
        return Response(session_detail_data(session), status=status.HTTP_201_CREATED)


class SessionDetailApi(APIView):
    @extend_schema(
        responses={200: SessionDetailOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="One grading session: seed, strata and π, progress per grader, artefacts",
        operation_id="use_case_grading_session_retrieve",
    )
    def get(self, request: Request, key: str, public_id: str) -> Response:
        _use_case, session = session_for(request.user, key, public_id)
        return Response(session_detail_data(session))


class SessionCloseApi(APIView):
    @extend_schema(
        request=None,
        responses={200: SessionDetailOutput, 403: ErrorOutput, 404: ErrorOutput, 409: ErrorOutput},
        summary="Close the session: no grade, revision or adjudication is accepted after this",
        operation_id="use_case_grading_session_close",
    )
    def post(self, request: Request, key: str, public_id: str) -> Response:
        use_case, session = session_for(request.user, key, public_id, write=True)
        session = session_close(actor=request.user, session=session)
        return Response(
            session_detail_data(session_get(use_case=use_case, public_id=session.public_id))
        )


class SessionGradesApi(APIView):
    renderer_classes = (JSONRenderer, JSONLinesRenderer)

    @extend_schema(
        parameters=[ExportInput],
        responses={
            (200, GRADES_CONTENT_TYPE): OpenApiResponse(
                OpenApiTypes.STR, description="JSON Lines, streamed (docs/formats.md)."
            ),
            400: ErrorOutput,
            403: ErrorOutput,
            404: ErrorOutput,
        },
        summary="The session's grades as JSON Lines: one line per assignment, or per artefact",
        operation_id="use_case_grading_session_grades_export",
        description=(
            "Default: one line per (artefact, grader) in each grader's blind order, in the "
            "form the import reads. final=1: one line per artefact with the final value of "
            "each field (agreed, or adjudicated) and the fields still disputed. provenance=1 "
            "adds kind, run, sigma, sigma_version, model_ref, repeat, stratum and "
            "inclusion_probability."
        ),
    )
    def get(self, request: Request, key: str, public_id: str) -> StreamingHttpResponse:
        _use_case, session = session_for(request.user, key, public_id)
        query = validated(ExportInput, request.query_params)
        return grades_response(session, final=query["final"], provenance=query["provenance"])


class SessionGradesImportApi(APIView):
    parser_classes = (MultiPartParser, JSONLinesParser)

    @extend_schema(
        request={
            "multipart/form-data": GradesImportInput,
            GRADES_CONTENT_TYPE: OpenApiTypes.BINARY,
        },
        responses={
            200: GradesImportOutput,
            400: ErrorOutput,
            403: ErrorOutput,
            404: ErrorOutput,
            409: ErrorOutput,
        },
        summary="Import grades made in another tool into the session's assignments",
        operation_id="use_case_grading_session_grades_import",
        description=(
            "A file field 'file' (multipart) or the raw body (application/x-ndjson), one line "
            "per (artefact, grader) (docs/formats.md, 'Grades (JSONL)'). All or nothing: if "
            "any line is bad nothing is imported, and the 400 response lists every bad line in "
            "error.details as {line, field, message}."
        ),
    )
    def post(self, request: Request, key: str, public_id: str) -> Response:
        _use_case, session = session_for(request.user, key, public_id, write=True)
        if request.content_type.startswith(GRADES_CONTENT_TYPE):
            stream = request.data if hasattr(request.data, "readline") else io.BytesIO()
            filename = "grades.jsonl"
        else:
            upload = validated(GradesImportInput, request.data)["file"]
            stream, filename = upload, upload.name
        result = grades_import(
            actor=request.user, session=session, fileobj=stream, filename=filename
        )
        return Response({"session": session.public_id, **asdict(result)})


def _progress(progress: Any) -> dict[str, Any]:
    return {
        "artefacts": progress.artefacts,
        "assignments": progress.assignments,
        "submitted": progress.submitted,
        "in_progress": progress.in_progress,
        "pending": progress.pending,
        "percent": progress.percent,
    }


def session_detail_data(session: GradingSession) -> dict[str, Any]:
    """Return a session as GET …/grading/sessions/<id>/ answers it."""
    detail = session_detail(session=session)
    data = dict(SessionOutput(session).data)
    data.update(
        progress=_progress(detail.progress),
        charter_version=session.charter.version,
        task_set=f"{session.task_set.name}:{session.task_set.version}",
        runs=RunRefOutput(detail.runs, many=True).data,
        adjudicators=detail.adjudicators,
        strata=StratumOutput(detail.strata, many=True).data,
        graders=GraderProgressOutput(detail.graders, many=True).data,
        artefacts_complete=detail.artefacts_complete,
        disputes_pending=detail.disputes_pending,
        disputes_adjudicated=detail.disputes_adjudicated,
        artefacts=ArtefactOutput(session_artefacts(session=session), many=True).data,
    )
    if session.is_sequential:
        # Management only (graders never reach this): τ_t of the latest draw.
        latest = session.draws.order_by("-index").values_list("tau", flat=True).first()
        data["tau_latest"] = session.tau if latest is None else latest
    return data


def session_runs(use_case: UseCase, ids: list[int]) -> list[Run]:
    """Return the use case's runs ``ids`` in that order; refuse an unknown one (field runs)."""
    found = {
        run.pk: run
        for run in Run.objects.filter(use_case=use_case, pk__in=ids).select_related("configuration")
    }
    for run_id in ids:
        if run_id not in found:
            raise ServiceError(f"runs: no run {run_id} in {use_case.key}", field="runs")
    return [found[run_id] for run_id in ids]


def session_judge(judge_id: int | None) -> Judge | None:
    """Return the judge ``judge_id`` (None for none); refuse an unknown one (field judge)."""
    if judge_id is None:
        return None
    judge = Judge.objects.filter(pk=judge_id).first()
    if judge is None:
        raise ServiceError(f"judge: no judge {judge_id}", field="judge")
    return judge


def session_users(usernames: list[str], field: str) -> list[Any]:
    """Return the users ``usernames`` in that order; refuse an unknown one naming ``field``."""
    found = {u.get_username(): u for u in get_user_model().objects.filter(username__in=usernames)}
    for name in usernames:
        if name not in found:
            raise ServiceError(f"{field}: no user {name!r}", field=field)
    return [found[name] for name in usernames]


PREFIX = "use-cases/<str:key>/grading/sessions/"

urlpatterns: list[URLPattern] = [
    path(PREFIX, SessionListApi.as_view(), name="api-grading-session-list"),
    path(
        f"{PREFIX}<str:public_id>/", SessionDetailApi.as_view(), name="api-grading-session-detail"
    ),
    path(
        f"{PREFIX}<str:public_id>/close/",
        SessionCloseApi.as_view(),
        name="api-grading-session-close",
    ),
    path(
        f"{PREFIX}<str:public_id>/grades.jsonl",
        SessionGradesApi.as_view(),
        name="api-grading-session-grades",
    ),
    path(
        f"{PREFIX}<str:public_id>/grades/import/",
        SessionGradesImportApi.as_view(),
        name="api-grading-session-grades-import",
    ),
]
