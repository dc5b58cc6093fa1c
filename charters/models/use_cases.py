"""Use cases, per-use-case memberships and the lifecycle (SPEC §1–§3)."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from charters.validation import evaluation_intensity


class Autonomy(models.IntegerChoices):
    A0 = 0, "A0 informational (user-led, no action)"
    A1 = 1, "A1 assistive drafting (human edits every output)"
    A2 = 2, "A2 structured judgements a human approves"
    A3 = 3, "A3 agent that plans and acts with checkpoints"
    A4 = 4, "A4 autonomous agent with exception-only oversight"


class Consequence(models.IntegerChoices):
    C1 = 1, "C1 low"
    C2 = 2, "C2 moderate"
    C3 = 3, "C3 high (material financial, customer or regulatory harm)"
    C4 = 4, "C4 critical"


class Stage(models.IntegerChoices):
    CHARTER = 1, "1 Charter"
    CONFIGURE = 2, "2 Configure and freeze σ"
    GOLD_SET = 3, "3 Build gold set and sample"
    RUN = 4, "4 Run"
    GRADE = 5, "5 Grade"
    GATE = 6, "6 Gate"
    DECIDE = 7, "7 Decide and monitor"


class Role(models.TextChoices):
    CHARTER_OWNER = "charter_owner", "Charter owner"
    MODEL_OWNER = "model_owner", "Model owner"
    GRADER = "grader", "Grader"
    ADJUDICATOR = "adjudicator", "Adjudicator"
    REVIEWER = "reviewer", "Second-line reviewer / risk committee"


class UseCase(models.Model):
    key = models.CharField(
        max_length=40,
        unique=True,
        validators=[RegexValidator(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", "letters, digits, . _ -")],
        help_text="Short stable identifier, e.g. CREDIT-MEMO-B.",
    )
    name = models.CharField(max_length=200)
    business_outcome = models.TextField()
    value_hypothesis = models.TextField()
    autonomy = models.PositiveSmallIntegerField(choices=Autonomy.choices)
    consequence = models.PositiveSmallIntegerField(
        choices=Consequence.choices, validators=[MinValueValidator(1), MaxValueValidator(4)]
    )
    stage = models.PositiveSmallIntegerField(choices=Stage.choices, default=Stage.CHARTER)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return f"{self.key} — {self.name}"

    @property
    def intensity(self) -> int:
        return evaluation_intensity(self.autonomy, self.consequence)

    @property
    def autonomy_label(self) -> str:
        return f"A{self.autonomy}"

    @property
    def consequence_label(self) -> str:
        return f"C{self.consequence}"


class StageEvent(models.Model):
    """One entry into a lifecycle stage, with its timestamp (SPEC §3)."""

    use_case = models.ForeignKey(UseCase, on_delete=models.CASCADE, related_name="stage_events")
    stage = models.PositiveSmallIntegerField(choices=Stage.choices)
    entered_at = models.DateTimeField(auto_now_add=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, related_name="+"
    )
    note = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["entered_at", "pk"]

    def __str__(self) -> str:
        return f"{self.use_case.key}: stage {self.stage} at {self.entered_at:%Y-%m-%d %H:%M}"


class Membership(models.Model):
    """A user's role on one use case; it gives nothing on any other use case (SPEC §1)."""

    use_case = models.ForeignKey(UseCase, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, related_name="+"
    )
    granted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["use_case", "user", "role"], name="membership_unique_role"
            )
        ]
        ordering = ["use_case", "role", "user"]

    def __str__(self) -> str:
        return f"{self.user} is {self.get_role_display()} on {self.use_case.key}"
