"""REST API v1: each app contributes its endpoints."""

from django.urls import include, path
from rest_framework.authtoken.views import obtain_auth_token

urlpatterns = [
    path("auth/token/", obtain_auth_token, name="api-token"),
    path("", include("charters.api.urls")),
    path("", include("runs.api_urls")),
    path("", include("grading.api.urls")),
    path("", include("gates.api_urls")),
    path("", include("scorecards.api_urls")),
    path("", include("lifecycle.api_urls")),
]
