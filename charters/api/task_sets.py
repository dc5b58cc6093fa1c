"""task_sets api (being written)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
