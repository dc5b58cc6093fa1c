"""REST endpoints of scorecards under /api/v1/ (the GRC export)."""

from django.urls import path

from scorecards import api

urlpatterns = [
    path(
        "use-cases/<str:key>/scorecards/",
        api.ScorecardListApi.as_view(),
        name="api-scorecard-list",
    ),
    path(
        "use-cases/<str:key>/scorecards/<int:pk>/",
        api.ScorecardDetailApi.as_view(),
        name="api-scorecard-detail",
    ),
    path(
        "use-cases/<str:key>/scorecards/<int:pk>/sign-off/",
        api.ScorecardSignOffApi.as_view(),
        name="api-scorecard-sign-off",
    ),
    path(
        "use-cases/<str:key>/scorecards/<int:pk>/scorecard.pdf",
        api.ScorecardPdfApi.as_view(),
        name="api-scorecard-pdf",
    ),
    path(
        "use-cases/<str:key>/scorecards/<int:pk>/evidence.zip",
        api.ScorecardEvidenceApi.as_view(),
        name="api-scorecard-evidence",
    ),
]
