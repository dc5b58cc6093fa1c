"""Configurations σ = ⟨M, P, Φ, U, Γ, H⟩: immutable, canonical, hashed versions (SPEC §2)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from charters.models.use_cases import UseCase


class Configuration(models.Model):
    use_case = models.ForeignKey(UseCase, on_delete=models.PROTECT, related_name="configurations")
    name = models.SlugField(max_length=80)
    version = models.PositiveIntegerField()
    document = models.JSONField(help_text="The validated σ document.")
    canonical_json = models.TextField()
    sha256 = models.CharField(max_length=64, db_index=True)
    model_ref = models.CharField(max_length=200, help_text="provider/model id of M.")
    source_format = models.CharField(max_length=4, choices=[("yaml", "YAML"), ("json", "JSON")])
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["use_case", "name", "version"], name="configuration_unique_version"
            )
        ]
        ordering = ["use_case", "name", "version"]

    def __str__(self) -> str:
        return f"σ {self.name} v{self.version} ({self.sha256[:12]})"
