"""REST endpoints of runs under /api/v1/."""

from django.urls import path

from runs import api

urlpatterns = [
    path("use-cases/<str:key>/runs/", api.RunListApi.as_view(), name="api-run-list"),
    path("use-cases/<str:key>/runs/import/", api.RunImportApi.as_view(), name="api-run-import"),
    path(
        "use-cases/<str:key>/runs/<int:run_id>/", api.RunDetailApi.as_view(), name="api-run-detail"
    ),
    path(
        "use-cases/<str:key>/runs/<int:run_id>/outputs/",
        api.RunOutputsApi.as_view(),
        name="api-run-outputs",
    ),
    path(
        "use-cases/<str:key>/runs/<int:run_id>/outputs/<int:output_id>/",
        api.RunOutputApi.as_view(),
        name="api-run-output",
    ),
    path(
        "use-cases/<str:key>/runs/<int:run_id>/judge/",
        api.RunJudgeApi.as_view(),
        name="api-run-judge",
    ),
    path(
        "use-cases/<str:key>/runs/<int:run_id>/judgings/",
        api.RunJudgingListApi.as_view(),
        name="api-run-judgings",
    ),
    path(
        "use-cases/<str:key>/runs/<int:run_id>/judgings/<int:judging_id>/",
        api.RunJudgingApi.as_view(),
        name="api-run-judging",
    ),
    path(
        "use-cases/<str:key>/runs/<int:run_id>/judgings/<int:judging_id>/cancel/",
        api.RunJudgingCancelApi.as_view(),
        name="api-run-judging-cancel",
    ),
]
