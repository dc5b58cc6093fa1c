"""REST endpoints of the roof under /api/v1/."""

from django.urls import path

from lifecycle import api

urlpatterns = [
    path("use-cases/<str:key>/", api.UseCaseDetailApi.as_view(), name="api-use-case-detail"),
]
