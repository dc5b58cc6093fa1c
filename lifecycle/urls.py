"""HTML pages of the roof: a use case's overview and its members."""

from django.urls import path

from lifecycle import views

urlpatterns = [
    path("use-cases/<str:key>/", views.use_case_detail, name="use-case-detail"),
    path("use-cases/<str:key>/members/", views.use_case_members, name="use-case-members"),
]
