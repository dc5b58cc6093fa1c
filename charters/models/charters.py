"""Charters: pre-registered metrics and thresholds, signatures, deviations (SPEC §2)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from charters.catalogue import (
    SUCCESS_HUMAN_ACCEPTABLE,
    SUCCESS_KEY_ELEMENTS_PRESENT,
    SUCCESS_LABEL_EQUALS_GOLD,
    SUCCESS_RECORDED,
)
from charters.models.use_cases import Role, UseCase


class MeasurementMode(models.TextChoices):
    ESTIMATED = "estimated", "Estimated baseline"
    OBSERVED = "observed", "Observed baseline"


class Treatment(models.TextChoices):
    GATED = "gated", "Gated"
    INFORMATIONAL = "informational", "Informational"


SIGNING_ROLES = (Role.CHARTER_OWNER, Role.MODEL_OWNER, Role.REVIEWER)


class SuccessRule(models.TextChoices):
    """How the use case decides that one output is a success (SPEC §4.1)."""

    LABEL_EQUALS_GOLD = SUCCESS_LABEL_EQUALS_GOLD, "Label equals the gold label"
    KEY_ELEMENTS_PRESENT = (
        SUCCESS_KEY_ELEMENTS_PRESENT,
        "Every key element present (judge or human)",
    )
    RECORDED = SUCCESS_RECORDED, "The automatic success flag recorded with the output"
    HUMAN_ACCEPTABLE = SUCCESS_HUMAN_ACCEPTABLE, "Graded acceptable by a human"


class CharterQuerySet(models.QuerySet["Charter"]):
    def frozen(self) -> CharterQuerySet:
        return self.filter(frozen_at__isnull=False)

    def drafts(self) -> CharterQuerySet:
        return self.filter(frozen_at__isnull=True)


class Charter(models.Model):
    """One version of a use case's charter; frozen (immutable) once all three have signed."""

    use_case = models.ForeignKey(UseCase, on_delete=models.PROTECT, related_name="charters")
    version = models.PositiveIntegerField()
    previous = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="next_version"
    )
    nu_max = models.FloatField(default=3.0)
    confidence = models.FloatField(default=0.95)
    kappa_target = models.FloatField(default=0.6)
    repeats_k = models.PositiveSmallIntegerField(default=1)
    # Nullable (null = not stated) so SQLite keeps the frozen-charter trigger of the table.
    success_rule = models.CharField(  # noqa: DJ001
        max_length=20,
        choices=SuccessRule.choices,
        null=True,
        blank=True,
        default=None,
        help_text="How one output's success is decided (SPEC §4.1); null = not stated.",
    )
    rubric_fields = models.JSONField(
        null=True,
        blank=True,
        default=None,
        help_text="Optional rubric fields graders are asked (label_correct, acceptable; SPEC "
        "§4.1); null = none.",
    )
    alternative_weights = models.JSONField(default=dict, blank=True)
    baseline = models.TextField(blank=True)
    measurement_mode = models.CharField(
        max_length=12, choices=MeasurementMode.choices, default=MeasurementMode.ESTIMATED
    )
    value_inputs = models.JSONField(default=dict, blank=True)
    reevaluation_triggers = models.JSONField(default=list, blank=True)
    next_review_date = models.DateField(null=True, blank=True)
    revision_reason = models.TextField(blank=True)
    canonical_json = models.TextField(blank=True, editable=False)
    sha256 = models.CharField(max_length=64, blank=True, editable=False)
    frozen_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CharterQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["use_case", "version"], name="charter_unique_version")
        ]
        ordering = ["use_case", "version"]

    def __str__(self) -> str:
        state = "signed" if self.is_frozen else "draft"
        return f"{self.use_case.key} charter v{self.version} ({state})"

    @property
    def is_frozen(self) -> bool:
        return self.frozen_at is not None


class CharterMetric(models.Model):
    """A catalogue metric in a charter: gated with thresholds, or informational with a reason."""

    charter = models.ForeignKey(Charter, on_delete=models.PROTECT, related_name="metrics")
    metric_id = models.CharField(max_length=60)
    treatment = models.CharField(max_length=14, choices=Treatment.choices)
    theta_out = models.FloatField(null=True, blank=True)
    theta_in = models.FloatField(null=True, blank=True)
    weight = models.FloatField(null=True, blank=True)
    harm_statement = models.TextField(blank=True)
    planned_n = models.PositiveIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True, help_text="Why the metric is informational.")
    agreement = models.JSONField(
        null=True,
        blank=True,
        default=None,
        help_text="The pre-registered agreement rule (SPEC §5.1); null reads the default κ/α.",
    )
    k = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="pass^k: the k gated (SPEC §4); null reads 4 when K ≥ 4, else K.",
    )
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["charter", "metric_id"], name="charter_metric_unique")
        ]
        ordering = ["charter", "position", "pk"]

    def __str__(self) -> str:
        return f"{self.metric_id} ({self.treatment})"


class Signature(models.Model):
    """A signature on the exact content (hash) of a charter draft."""

    charter = models.ForeignKey(Charter, on_delete=models.PROTECT, related_name="signatures")
    role = models.CharField(max_length=20, choices=[(r.value, r.label) for r in SIGNING_ROLES])
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    content_sha256 = models.CharField(max_length=64)
    signed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["charter", "role", "content_sha256"], name="signature_unique_role"
            )
        ]
        ordering = ["charter", "signed_at", "pk"]

    def __str__(self) -> str:
        return f"{self.user} signed {self.charter} as {self.get_role_display()}"


class Deviation(models.Model):
    """A change to the charter after results were first shown to anyone (SPEC §2)."""

    charter = models.OneToOneField(Charter, on_delete=models.PROTECT, related_name="deviation")
    previous = models.ForeignKey(Charter, on_delete=models.PROTECT, related_name="+")
    reason = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"Deviation v{self.previous.version} → v{self.charter.version}"


class UnblindingEvent(models.Model):
    """Results were shown to someone; the first one fixes the pre-registration (SPEC §2)."""

    use_case = models.ForeignKey(UseCase, on_delete=models.PROTECT, related_name="unblindings")
    charter = models.ForeignKey(Charter, on_delete=models.PROTECT, related_name="+")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reason = models.CharField(max_length=300)
    occurred_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["occurred_at", "pk"]

    def __str__(self) -> str:
        return f"{self.use_case.key} unblinded at {self.occurred_at:%Y-%m-%d %H:%M}"
