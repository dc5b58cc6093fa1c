"""Root URL configuration."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from enterpriseval import views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include("enterpriseval.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("runs.urls")),
    path("", include("grading.urls")),
    path("", include("gates.urls")),
    path("", include("scorecards.urls")),
    path("", include("charters.urls")),
    path("", include("lifecycle.urls")),
    path("", include("egibench.urls")),
]
