"""REST endpoints of recorded decisions under /api/v1/."""

from django.urls import path

from gates import api

urlpatterns = [
    path(
        "use-cases/<str:key>/decisions/",
        api.DecisionListApi.as_view(),
        name="api-decision-list",
    ),
    path(
        "use-cases/<str:key>/decisions/compare/",
        api.DecisionCompareApi.as_view(),
        name="api-decision-compare",
    ),
    path(
        "use-cases/<str:key>/decisions/<int:pk>/",
        api.DecisionDetailApi.as_view(),
        name="api-decision-detail",
    ),
]
