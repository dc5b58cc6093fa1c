"""Recorded gate decisions: immutable, hashed, with everything they rest on (SPEC §6, §7)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from charters.models import Charter, Configuration, UseCase
from grading.models import GradingSession, OversightStudy
from runs.models import Judge, Run


class DecisionStatus(models.TextChoices):
    SCALE = "Scale", "Scale"
    CONDITIONAL = "Conditional", "Conditional"
    REJECT = "Reject", "Reject"
    UNDETERMINED = "Undetermined", "Undetermined"


class Decision(models.Model):
    """One gate decision on one σ's run under one signed charter version.

    ``record`` is the whole decision as shown and signed (metric estimates with their
    intervals and estimators, statuses, ν, EI, EI_G and band, reasons, recommendations,
    value estimate) and ``evidence`` the SHA-256 of everything it rests on (charter, σ, task
    set, run source, grades, judge rubric); ``sha256`` hashes both in canonical JSON. Rows are
    immutable: the service only inserts, and a database trigger refuses updates.
    """

    use_case = models.ForeignKey(UseCase, on_delete=models.PROTECT, related_name="decisions")
    charter = models.ForeignKey(Charter, on_delete=models.PROTECT, related_name="decisions")
    configuration = models.ForeignKey(
        Configuration, on_delete=models.PROTECT, related_name="decisions"
    )
    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="decisions")
    session = models.ForeignKey(
        GradingSession, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    judge = models.ForeignKey(
        Judge, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    oversight_study = models.ForeignKey(
        OversightStudy, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    status = models.CharField(max_length=12, choices=DecisionStatus.choices)
    binding_metric = models.CharField(max_length=60, blank=True)
    ei = models.FloatField(null=True, blank=True)
    ei_g = models.FloatField(null=True, blank=True)
    ei_band_lo = models.FloatField(null=True, blank=True)
    ei_band_hi = models.FloatField(null=True, blank=True)
    record = models.JSONField()
    evidence = models.JSONField()
    canonical_json = models.TextField()
    sha256 = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"decision {self.status} on {self.configuration} ({self.sha256[:12]})"
