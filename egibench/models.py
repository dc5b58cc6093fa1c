"""Stored EGI-Bench results: one immutable row per results artifact (SPEC §10)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from egibench.aggregate import BUCKET_NAMES, BUCKETS


class EgiMode(models.TextChoices):
    QUICK = "quick", "quick"
    DEEP = "deep", "deep"
    PUBLISHED = "published", "published"


class EgiResult(models.Model):
    """One EGI results artifact of one model: EGI, M1–M6, floors and the full JSON.

    ``result`` is the artifact as stored (canonical form) and ``sha256`` the SHA-256 of its
    canonical JSON, so the same artifact stored twice is one row. ``model_key`` is
    ``model_id`` with its provider prefix stripped, case-folded (see
    :func:`egibench.model_names.name_key`), for linking σ's model. Rows are immutable:
    the service only inserts, and a database trigger refuses updates.
    """

    model_id = models.CharField(max_length=200, help_text="The model as the benchmarks name it.")
    model_key = models.CharField(max_length=200, db_index=True)
    display_name = models.CharField(max_length=200, blank=True)
    mode = models.CharField(max_length=10, choices=EgiMode.choices)
    run_at = models.DateTimeField(help_text="The artifact's timestamp.")
    egi = models.FloatField(null=True, blank=True)
    partial = models.BooleanField()
    m1 = models.FloatField(null=True, blank=True)
    m2 = models.FloatField(null=True, blank=True)
    m3 = models.FloatField(null=True, blank=True)
    m4 = models.FloatField(null=True, blank=True)
    m5 = models.FloatField(null=True, blank=True)
    m6 = models.FloatField(null=True, blank=True)
    floors = models.JSONField(blank=True, help_text="{bucket: {floor, score, status}}")
    release_ready = models.BooleanField()
    missing = models.JSONField(blank=True)
    stated_rank = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The rank the source states (published entries only)."
    )
    result = models.JSONField()
    canonical_json = models.TextField()
    sha256 = models.CharField(max_length=64, unique=True)
    source = models.CharField(max_length=300)
    routing_sha256 = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["model_id", "-run_at", "-pk"]
        indexes = [models.Index(fields=["model_id", "run_at"], name="egi_model_run_at")]

    def __str__(self) -> str:
        egi = "n/a" if self.egi is None else f"{self.egi:.2f}"
        return f"EGI {egi} {self.model_id} ({self.mode}, {self.sha256[:12]})"

    @property
    def name(self) -> str:
        """Return the display name, or the model id when there is none."""
        return self.display_name or self.model_id

    def bucket_score(self, bucket: str) -> float | None:
        """Return the score of ``bucket`` (``"M1"``…``"M6"``), None when missing."""
        if bucket not in BUCKETS:
            raise ValueError(f"bucket: {bucket!r} is not one of {list(BUCKETS)}")
        value: float | None = getattr(self, bucket.lower())
        return value

    @property
    def bucket_scores(self) -> dict[str, float | None]:
        """Return ``{bucket: score or None}`` for M1–M6."""
        return {bucket: self.bucket_score(bucket) for bucket in BUCKETS}

    @property
    def bucket_rows(self) -> list[dict[str, Any]]:
        """Return M1–M6 as rows for templates: bucket, name, score, floor."""
        return [
            {
                "bucket": bucket,
                "name": BUCKET_NAMES[bucket],
                "score": self.bucket_score(bucket),
                "floor": self.floors.get(bucket),
            }
            for bucket in BUCKETS
        ]
