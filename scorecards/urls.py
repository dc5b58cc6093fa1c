"""Scorecard pages."""

from django.urls import path

from scorecards import views

urlpatterns = [
    path("use-cases/<str:key>/scorecards/", views.scorecard_list_page, name="scorecard-list"),
    path(
        "use-cases/<str:key>/decisions/<int:decision_pk>/scorecard/",
        views.scorecard_create_view,
        name="scorecard-create",
    ),
    path(
        "use-cases/<str:key>/scorecards/<int:pk>/",
        views.scorecard_detail_page,
        name="scorecard-detail",
    ),
    path(
        "use-cases/<str:key>/scorecards/<int:pk>/edit/",
        views.scorecard_edit_view,
        name="scorecard-edit",
    ),
    path(
        "use-cases/<str:key>/scorecards/<int:pk>/sign-off/",
        views.scorecard_sign_off_view,
        name="scorecard-sign-off",
    ),
    path(
        "use-cases/<str:key>/scorecards/<int:pk>/scorecard.pdf",
        views.scorecard_pdf_view,
        name="scorecard-pdf",
    ),
    path(
        "use-cases/<str:key>/scorecards/<int:pk>/evidence.zip",
        views.scorecard_evidence_view,
        name="scorecard-evidence",
    ),
]
