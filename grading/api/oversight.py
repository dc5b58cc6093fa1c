"""Oversight studies under /api/v1/: create, close, results (owner); review (reviewer, blind)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.urls import URLPattern, path, reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from charters.models import Role, UseCase
from charters.permissions import require_role, use_case_for
from enterpriseval.api import ErrorOutput, validated
from enterpriseval.errors import ServiceError
from grading.models import DefectKind, OversightStudy, ReviewDecision
from grading.selectors.oversight import (
    KindResult,
    OversightResults,
    Proportion,
    ReviewerResult,
    ReviewPage,
    oversight_item_for_reviewer,
    oversight_queue,
    oversight_results,
    oversight_review,
    oversight_study_get,
    oversight_study_list,
)
from grading.services.oversight import (
    MAX_ITEMS_PER_REVIEWER,
    oversight_item_decide,
    oversight_study_close,
    oversight_study_create,
)
from runs.models import Run

READ_ROLES = (Role.CHARTER_OWNER, Role.REVIEWER)


class StudyCreateInput(serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField(max_length=120)
    runs = serializers.ListField(child=serializers.IntegerField(min_value=1), min_length=1)
    reviewers = serializers.ListField(
        child=serializers.CharField(max_length=150),
        min_length=1,
        help_text="User names of members holding the grader role.",
    )
    items_per_reviewer = serializers.IntegerField(min_value=1, max_value=MAX_ITEMS_PER_REVIEWER)
    defect_share = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.3)
    kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=DefectKind.values), required=False
    )
    seed = serializers.IntegerField(min_value=0, required=False)


class StudyOutput(serializers.Serializer[OversightStudy]):
    public_id = serializers.CharField()
    name = serializers.CharField()
    status = serializers.CharField()
    seed = serializers.CharField()
    defect_share = serializers.FloatField()
    items = serializers.IntegerField(source="item_count")
    decided = serializers.IntegerField(source="decided_count")
    reviewers = serializers.IntegerField(source="reviewer_count")
    created_by = serializers.CharField(source="created_by.get_username")
    created_at = serializers.DateTimeField()
    closed_at = serializers.DateTimeField(allow_null=True)
    results_url = serializers.SerializerMethodField()

    def get_results_url(self, study: OversightStudy) -> str:
        return reverse("api-grading-oversight-results", args=[study.use_case.key, study.public_id])


class ProportionOutput(serializers.Serializer[Proportion]):
    successes = serializers.IntegerField()
    n = serializers.IntegerField()
    rate = serializers.FloatField(source="point", allow_null=True)
    ci_low = serializers.FloatField(source="lo", allow_null=True)
    ci_high = serializers.FloatField(source="hi", allow_null=True)


class KindResultOutput(serializers.Serializer[KindResult]):
    kind = serializers.CharField()
    label = serializers.CharField()
    seeded = serializers.IntegerField()
    caught = serializers.IntegerField()
    catch_rate = ProportionOutput(source="catch")
    false_acceptance_rate = ProportionOutput(source="false_acceptance")
    pending = serializers.IntegerField()


class ReviewerResultOutput(serializers.Serializer[ReviewerResult]):
    username = serializers.CharField()
    items = serializers.IntegerField()
    decided = serializers.IntegerField()
    catch_rate = ProportionOutput(source="catch")
    false_acceptance_rate = ProportionOutput(source="false_acceptance")
    false_alarm_rate = ProportionOutput(source="false_alarm")
    mean_seconds = serializers.FloatField(allow_null=True)


class SeededItemOutput(serializers.Serializer[Any]):
    item = serializers.CharField(source="public_id")
    reviewer = serializers.CharField()
    position = serializers.IntegerField()
    kind = serializers.CharField()
    target = serializers.CharField()
    detail = serializers.CharField()
    decision = serializers.CharField()
    flags = serializers.ListField(child=serializers.CharField())
    caught = serializers.BooleanField(allow_null=True)


class ResultsOutput(serializers.Serializer[OversightResults]):
    study = serializers.CharField(source="study.public_id")
    name = serializers.CharField(source="study.name")
    status = serializers.CharField(source="study.status")
    confidence = serializers.FloatField()
    caught_rule = serializers.CharField()
    items = serializers.IntegerField()
    decided = serializers.IntegerField()
    by_kind = KindResultOutput(many=True)
    overall = KindResultOutput()
    false_alarm_rate = ProportionOutput(source="false_alarm")
    mean_review_seconds = serializers.FloatField(source="mean_seconds", allow_null=True)
    reviewers = ReviewerResultOutput(many=True)
    seeded_items = SeededItemOutput(many=True)


class QueueEntryOutput(serializers.Serializer[Any]):
    item = serializers.CharField(source="public_id")
    study = serializers.CharField()
    position = serializers.IntegerField()
    decision = serializers.CharField()
    decided_at = serializers.DateTimeField(allow_null=True)
    open = serializers.BooleanField()
    url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()

    def get_url(self, entry: Any) -> str:
        return reverse("api-grading-oversight-item", args=[entry.public_id])

    def get_page_url(self, entry: Any) -> str:
        return reverse("grading-oversight-item", args=[entry.public_id])


class ReviewUnitOutput(serializers.Serializer[Any]):
    key = serializers.CharField()
    text = serializers.CharField()
    marked = serializers.BooleanField()


class ReviewSourceOutput(serializers.Serializer[Any]):
    chunk_id = serializers.CharField()
    source = serializers.CharField()
    text = serializers.CharField()


class ReviewGuidanceOutput(serializers.Serializer[Any]):
    item_id = serializers.CharField()
    text = serializers.CharField()
    mandatory = serializers.BooleanField()


class ReviewItemOutput(serializers.Serializer[ReviewPage]):
    item = serializers.CharField(source="public_id")
    study = serializers.CharField()
    position = serializers.IntegerField()
    queue_size = serializers.IntegerField()
    task_id = serializers.CharField()
    task_input = serializers.CharField()
    text = serializers.CharField()
    sentences = ReviewUnitOutput(many=True)
    key_elements = ReviewUnitOutput(many=True)
    sources = ReviewSourceOutput(many=True)
    guidance = ReviewGuidanceOutput(many=True)
    decision = serializers.CharField()
    comment = serializers.CharField()
    open = serializers.BooleanField()


class DecisionInput(serializers.Serializer[dict[str, Any]]):
    decision = serializers.ChoiceField(choices=ReviewDecision.values)
    flags = serializers.ListField(
        child=serializers.CharField(max_length=160),
        default=list,
        help_text='Sentences with a problem ("s3") and key elements missing ("k:ke2").',
    )
    comment = serializers.CharField(allow_blank=True, default="")
    elapsed_seconds = serializers.FloatField(
        min_value=0.0,
        help_text=(
            "Seconds spent on the item for this decision (the review burden; capped at 1800). "
            "Required: a decision without its time would lower the study's mean review time."
        ),
    )
    reason = serializers.CharField(
        allow_blank=True, default="", help_text="Required to change a decision already made."
    )


class OversightStudyListApi(APIView):
    @extend_schema(
        responses={200: StudyOutput(many=True), 403: ErrorOutput, 404: ErrorOutput},
        summary="Oversight studies of the use case, newest first",
        operation_id="use_case_oversight_list",
    )
    def get(self, request: Request, key: str) -> Response:
        use_case = use_case_for(request.user, key, roles=READ_ROLES)
        return Response(StudyOutput(oversight_study_list(use_case=use_case), many=True).data)

    @extend_schema(
        request=StudyCreateInput,
        responses={201: StudyOutput, 400: ErrorOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="Create an oversight study: seeded defective copies mixed blind into queues",
        operation_id="use_case_oversight_create",
        description=(
            "Charter owner only. Draws each reviewer's queue of items_per_reviewer copies of "
            "succeeded graded outputs of the runs; round(defect_share · items_per_reviewer) "
            "of each queue carry one seeded defect, kinds dealt round-robin, order shuffled."
        ),
    )
    def post(self, request: Request, key: str) -> Response:
        use_case = use_case_for(request.user, key, roles=READ_ROLES)
        require_role(request.user, use_case, [Role.CHARTER_OWNER])
        data = validated(StudyCreateInput, request.data)
        study = oversight_study_create(
            actor=request.user,
            use_case=use_case,
            name=data["name"],
            runs=_runs(use_case, data["runs"]),
            reviewers=_users(data["reviewers"]),
            items_per_reviewer=data["items_per_reviewer"],
            defect_share=data["defect_share"],
            kinds=data.get("kinds"),
            seed=data.get("seed"),
        )
        created = oversight_study_list(use_case=use_case).get(pk=study.pk)
        return Response(StudyOutput(created).data, status=status.HTTP_201_CREATED)


class OversightResultsApi(APIView):
    @extend_schema(
        responses={200: ResultsOutput, 403: ErrorOutput, 404: ErrorOutput},
        summary="ρ_catch and false acceptance rate per defect kind, with Wilson intervals",
        operation_id="use_case_oversight_results",
        description=(
            "Rates are proportions in [0, 1] with the counts they come from (successes of n), "
            "for a Beta posterior downstream. A defect is caught when its copy was rejected "
            "and its unit marked; only decided copies count."
        ),
    )
    def get(self, request: Request, key: str, public_id: str) -> Response:
        use_case = use_case_for(request.user, key, roles=READ_ROLES)
        study = oversight_study_get(use_case=use_case, public_id=public_id)
        return Response(ResultsOutput(oversight_results(study=study)).data)


class OversightStudyCloseApi(APIView):
    @extend_schema(
        request=None,
        responses={200: StudyOutput, 403: ErrorOutput, 404: ErrorOutput, 409: ErrorOutput},
        summary="Close the study: no decision or revision is accepted after this",
        operation_id="use_case_oversight_close",
        description="Charter owner only; 409 when the study is already closed.",
    )
    def post(self, request: Request, key: str, public_id: str) -> Response:
        use_case = use_case_for(request.user, key, roles=READ_ROLES)
        require_role(request.user, use_case, [Role.CHARTER_OWNER])
        study = oversight_study_get(use_case=use_case, public_id=public_id)
        oversight_study_close(actor=request.user, study=study)
        return Response(StudyOutput(oversight_study_list(use_case=use_case).get(pk=study.pk)).data)


class OversightQueueApi(APIView):
    @extend_schema(
        responses={200: QueueEntryOutput(many=True)},
        summary="Your review queue (items known by opaque ids only)",
        operation_id="oversight_items_list",
    )
    def get(self, request: Request) -> Response:
        return Response(QueueEntryOutput(oversight_queue(user=request.user), many=True).data)


class OversightItemApi(APIView):
    @extend_schema(
        responses={200: ReviewItemOutput, 404: ErrorOutput},
        summary="One item of your queue: the draft by sentence, the checklist and the sources",
        operation_id="oversight_item_retrieve",
    )
    def get(self, request: Request, public_id: str) -> Response:
        item = oversight_item_for_reviewer(request.user, public_id)
        return Response(ReviewItemOutput(oversight_review(item=item)).data)


class OversightDecisionApi(APIView):
    @extend_schema(
        request=DecisionInput,
        responses={200: ReviewItemOutput, 400: ErrorOutput, 404: ErrorOutput, 409: ErrorOutput},
        summary="Accept or reject an item of your queue, marking the units at fault",
        operation_id="oversight_item_decide",
        description=(
            "A decision is final: a second one is a logged revision and needs a reason "
            "(409 without one)."
        ),
    )
    def post(self, request: Request, public_id: str) -> Response:
        item = oversight_item_for_reviewer(request.user, public_id)
        data = validated(DecisionInput, request.data)
        item = oversight_item_decide(actor=request.user, item=item, **data)
        return Response(ReviewItemOutput(oversight_review(item=item)).data)


def _runs(use_case: UseCase, ids: list[int]) -> list[Run]:
    runs = {run.pk: run for run in Run.objects.filter(use_case=use_case, pk__in=ids)}
    for n, run_id in enumerate(ids):
        if run_id not in runs:
            raise ServiceError(f"runs[{n}]: no run {run_id} in {use_case.key}.", field=f"runs[{n}]")
    return [runs[run_id] for run_id in ids]


def _users(usernames: list[str]) -> list[Any]:
    users = {u.get_username(): u for u in get_user_model().objects.filter(username__in=usernames)}
    for n, username in enumerate(usernames):
        if username not in users:
            raise ServiceError(
                f"reviewers[{n}]: no user named {username!r}.", field=f"reviewers[{n}]"
            )
    return [users[username] for username in usernames]


urlpatterns: list[URLPattern] = [
    path(
        "use-cases/<str:key>/oversight/",
        OversightStudyListApi.as_view(),
        name="api-grading-oversight-list",
    ),
    path(
        "use-cases/<str:key>/oversight/<str:public_id>/results/",
        OversightResultsApi.as_view(),
        name="api-grading-oversight-results",
    ),
    path(
        "use-cases/<str:key>/oversight/<str:public_id>/close/",
        OversightStudyCloseApi.as_view(),
        name="api-grading-oversight-close",
    ),
    path("oversight/items/", OversightQueueApi.as_view(), name="api-grading-oversight-queue"),
    path(
        "oversight/items/<str:public_id>/",
        OversightItemApi.as_view(),
        name="api-grading-oversight-item",
    ),
    path(
        "oversight/items/<str:public_id>/decision/",
        OversightDecisionApi.as_view(),
        name="api-grading-oversight-decision",
    ),
]
