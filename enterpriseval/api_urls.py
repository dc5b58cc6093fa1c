"""REST API v1: each app contributes its endpoints."""

from django.urls import include, path

from enterpriseval.auth import TokenObtainApi

urlpatterns = [
    path("auth/token/", TokenObtainApi.as_view(), name="api-token"),
    path("", include("charters.api.urls")),
    path("", include("runs.api_urls")),
    path("", include("grading.api.urls")),
    path("", include("gates.api_urls")),
    path("", include("scorecards.api_urls")),
    path("", include("lifecycle.api_urls")),
]
