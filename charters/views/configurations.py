"""configurations views (being written)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
