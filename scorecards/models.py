"""Scorecards: one per decision, draft until complete and signed off, then immutable (SPEC §7)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from charters.models import UseCase
from gates.models import Decision


class ScorecardStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    FINAL = "final", "Final"


class Scorecard(models.Model):
    """The scorecard of one recorded decision.

    The committee's fields (observed failure modes, conditions of use, compensating controls,
    re-evaluation triggers, next review date) are written while it is a draft; everything else
    is read from the decision and what it rests on. Sign-off by a second-line reviewer freezes
    the whole content into ``content`` (with its canonical JSON and SHA-256): from then on the
    row is immutable (service, API and admin refuse; a database trigger is the last line).
    The PDF rendered at sign-off is kept with it (``pdf``, ``pdf_sha256``): the document the
    reviewer signed, served as it was and packed into the evidence pack.
    A final scorecard that has gone stale keeps its content and gains
    :class:`ReevaluationFlag` rows, which make it read "re-evaluation required".
    """

    use_case = models.ForeignKey(UseCase, on_delete=models.PROTECT, related_name="scorecards")
    decision = models.OneToOneField(Decision, on_delete=models.PROTECT, related_name="scorecard")
    status = models.CharField(
        max_length=8, choices=ScorecardStatus.choices, default=ScorecardStatus.DRAFT
    )
    failure_modes = models.TextField(blank=True)
    conditions_of_use = models.TextField(blank=True)
    compensating_controls = models.TextField(blank=True)
    reevaluation_triggers = models.JSONField(default=list, blank=True)
    next_review_date = models.DateField(null=True, blank=True)
    content = models.JSONField(null=True, blank=True)
    canonical_json = models.TextField(blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    pdf = models.BinaryField(null=True, blank=True, editable=False)
    pdf_sha256 = models.CharField(max_length=64, blank=True)
    signed_off_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    signed_off_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"scorecard {self.pk} of decision {self.decision_id} ({self.status})"

    @property
    def is_final(self) -> bool:
        return self.status == ScorecardStatus.FINAL


class ReevaluationKind(models.TextChoices):
    NEW_CONFIGURATION = "new_configuration", "New configuration σ version"
    DEVIATION = "deviation", "Charter deviation"
    REVIEW_DATE = "review_date", "Next review date passed"


class ReevaluationFlag(models.Model):
    """Why a final scorecard needs re-evaluation (SPEC §7): one row per trigger event.

    ``source`` identifies the event (e.g. ``configuration:12``) so raising the same trigger
    twice is a no-op. ``notified_at`` is set once the owners were e-mailed.
    """

    scorecard = models.ForeignKey(
        Scorecard, on_delete=models.PROTECT, related_name="reevaluation_flags"
    )
    kind = models.CharField(max_length=20, choices=ReevaluationKind.choices)
    source = models.CharField(max_length=80)
    reason = models.CharField(max_length=400)
    raised_at = models.DateTimeField(auto_now_add=True)
    notified_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["raised_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["scorecard", "kind", "source"], name="reevaluation_flag_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.reason}"
