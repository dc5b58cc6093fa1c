"""HTML pages of EGI results."""

from django.urls import path

from egibench import views

urlpatterns = [
    path("benchmarks/", views.roster_page, name="egi-roster"),
    path("benchmarks/results/<int:pk>/", views.result_page, name="egi-result"),
    path("benchmarks/models/<path:model_id>/", views.model_page, name="egi-model"),
]
