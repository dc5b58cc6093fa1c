"""HTML pages of runs."""

from django.urls import path

from runs import views

urlpatterns = [
    path("use-cases/<str:key>/runs/", views.run_list_view, name="run-list"),
    path("use-cases/<str:key>/runs/new/", views.run_start_view, name="run-start"),
    path("use-cases/<str:key>/runs/import/", views.run_import_view, name="run-import"),
    path("use-cases/<str:key>/runs/<int:run_id>/", views.run_detail_view, name="run-detail"),
    path("use-cases/<str:key>/runs/<int:run_id>/judge/", views.run_judge_view, name="run-judge"),
    path(
        "use-cases/<str:key>/runs/<int:run_id>/judgings/<int:judging_id>/cancel/",
        views.judging_cancel_view,
        name="run-judging-cancel",
    ),
    path(
        "use-cases/<str:key>/runs/<int:run_id>/outputs/<int:output_id>/",
        views.output_detail_view,
        name="run-output",
    ),
]
