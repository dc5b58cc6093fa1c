"""HTML pages of recorded decisions."""

from django.urls import path

from gates import views

urlpatterns = [
    path("use-cases/<str:key>/decisions/", views.decision_list_page, name="decision-list"),
    path("use-cases/<str:key>/decisions/new/", views.decision_create_page, name="decision-new"),
    path(
        "use-cases/<str:key>/decisions/compare/",
        views.decision_compare_page,
        name="decision-compare",
    ),
    path(
        "use-cases/<str:key>/decisions/<int:pk>/",
        views.decision_detail_page,
        name="decision-detail",
    ),
]
