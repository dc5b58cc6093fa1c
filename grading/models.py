"""Blinded grading sessions, assignments, grades, adjudication and oversight studies (SPEC §5.1).

Blinding is a property of the data as much as of the pages: graders reach artefacts and
assignments only through random ``public_id`` values, never through primary keys, run ids or
σ ids, and the provenance of an artefact (its output, run and σ, or "baseline") stays on the
server.
"""

from __future__ import annotations

import secrets
import string

from django.conf import settings
from django.db import models
from django.db.models import Q

from charters.models import Charter, Task, TaskSet, UseCase
from runs.models import Judge, Output, Run

PUBLIC_ID_LENGTH = 12
PUBLIC_ID_ALPHABET = string.ascii_letters + string.digits


def new_public_id() -> str:
    """Return a fresh opaque id: 12 letters and digits (71 random bits).

    Letters and digits only, so an id never starts with "-" (a command-line option) and
    reads the same in a URL, a file name and a spreadsheet.
    """
    return "".join(secrets.choice(PUBLIC_ID_ALPHABET) for _ in range(PUBLIC_ID_LENGTH))


class SampleDesign(models.TextChoices):
    UNIFORM = "uniform", "Uniform random sample"
    STRATIFIED = "stratified", "Stratified random sample (proportional)"


class SessionStatus(models.TextChoices):
    OPEN = "open", "Open"
    CLOSED = "closed", "Closed"


class SessionMode(models.TextChoices):
    FIXED = "fixed", "Fixed n (the whole sample drawn at creation)"
    SEQUENTIAL = "sequential", "Sequential (grade until decided, SPEC §5.5)"


class TauRule(models.TextChoices):
    """How a sequential session sets the uniform share τ_t of each draw (SPEC §5.5; issue 19)."""

    FIXED = "fixed", "Fixed τ"
    ADAPTIVE = "adaptive", "Adaptive, τ as floor"


class StopReason(models.TextChoices):
    DECIDED = "decided", "Every gated metric settled"
    REJECT = "reject", "A gated metric settled Reject"
    BUDGET = "budget", "Undecided at budget"
    EXHAUSTED = "exhausted", "Every output graded"
    CLOSED = "closed", "Closed by the charter owner before the rule decided"


class GradingSession(models.Model):
    """A seeded, blinded sample of artefacts, each assigned to ≥ 2 graders (SPEC §2, §5.1)."""

    use_case = models.ForeignKey(UseCase, on_delete=models.PROTECT, related_name="grading_sessions")
    public_id = models.CharField(max_length=24, unique=True, default=new_public_id)
    name = models.CharField(max_length=120)
    charter = models.ForeignKey(Charter, on_delete=models.PROTECT, related_name="+")
    task_set = models.ForeignKey(TaskSet, on_delete=models.PROTECT, related_name="+")
    runs = models.ManyToManyField(Run, related_name="grading_sessions", blank=True)
    include_baselines = models.BooleanField(default=False)
    design = models.CharField(max_length=10, choices=SampleDesign.choices)
    seed = models.BigIntegerField()
    population_size = models.PositiveIntegerField()
    sample_size = models.PositiveIntegerField()
    # The design per arm (each σ, and the baselines): population, planned and sampled n, and
    # π per stratum, as grading.services.sessions records it (SPEC §5.3: planned n per σ).
    arms = models.JSONField(default=list, blank=True)
    graders_per_artefact = models.PositiveSmallIntegerField(default=2)
    adjudicators = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="+")
    status = models.CharField(
        max_length=6, choices=SessionStatus.choices, default=SessionStatus.OPEN
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    # Sequential sessions (SPEC §5.5): outputs are drawn one at a time as grading proceeds.
    mode = models.CharField(max_length=10, choices=SessionMode.choices, default=SessionMode.FIXED)
    tau = models.FloatField(
        null=True, blank=True, help_text="Uniform share τ of q_t (the floor, when adaptive)."
    )
    tau_rule = models.CharField(
        max_length=8,
        choices=TauRule.choices,
        default=TauRule.FIXED,
        help_text="Fixed: every draw uses τ; adaptive: τ_t ≥ τ chosen before each draw.",
    )
    budget = models.PositiveIntegerField(
        null=True, blank=True, help_text="Most outputs drawn (the grading budget)."
    )
    lookahead = models.PositiveSmallIntegerField(
        default=0, help_text="Draws kept ahead of the final values, so graders are not starved."
    )
    judge = models.ForeignKey(
        Judge, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # The graders each new draw is assigned to (a fixed-n session assigns all at creation).
    graders = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="+", blank=True)
    # The uniform sub-sample double-graded for agreement (SPEC §5.1, §5.5): artefact pks.
    agreement_sample = models.JSONField(default=list, blank=True)
    # Each gated metric's sequence over the final prefix, as last evaluated; and the stop.
    sequence = models.JSONField(default=dict, blank=True)
    stop = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"grading session {self.name} ({self.sample_size} artefacts)"

    @property
    def is_sequential(self) -> bool:
        return self.mode == SessionMode.SEQUENTIAL


class ArtefactKind(models.TextChoices):
    OUTPUT = "output", "Workflow output"
    BASELINE = "baseline", "Human baseline artefact"


class SessionArtefact(models.Model):
    """One sampled artefact: an output, or a task's human reference (baseline) artefact."""

    session = models.ForeignKey(GradingSession, on_delete=models.PROTECT, related_name="artefacts")
    public_id = models.CharField(max_length=24, unique=True, default=new_public_id)
    kind = models.CharField(max_length=8, choices=ArtefactKind.choices)
    output = models.ForeignKey(
        Output, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="+")
    stratum = models.CharField(max_length=60, blank=True)
    inclusion_probability = models.FloatField()
    asks = models.JSONField(
        null=True,
        blank=True,
        default=None,
        help_text="The optional rubric fields asked of it, frozen from the charter's "
        "rubric_fields when sampled (SPEC §4.1); null = none.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["session", "output"],
                condition=Q(output__isnull=False),
                name="artefact_unique_output",
            ),
            models.UniqueConstraint(
                fields=["session", "task"],
                condition=Q(kind="baseline"),
                name="artefact_unique_baseline",
            ),
            models.CheckConstraint(
                condition=(Q(kind="output") & Q(output__isnull=False))
                | (Q(kind="baseline") & Q(output__isnull=True)),
                name="artefact_kind_matches_output",
            ),
            models.CheckConstraint(
                condition=Q(inclusion_probability__gt=0) & Q(inclusion_probability__lte=1),
                name="artefact_inclusion_probability_range",
            ),
        ]
        ordering = ["session", "pk"]

    def __str__(self) -> str:
        return f"artefact {self.public_id}"


class AssignmentStatus(models.TextChoices):
    PENDING = "pending", "Not started"
    IN_PROGRESS = "in_progress", "In progress"
    SUBMITTED = "submitted", "Submitted"
    WITHDRAWN = "withdrawn", "Withdrawn"


class Assignment(models.Model):
    """One grader's work on one artefact, at a position in that grader's blind order."""

    session = models.ForeignKey(
        GradingSession, on_delete=models.PROTECT, related_name="assignments"
    )
    artefact = models.ForeignKey(
        SessionArtefact, on_delete=models.PROTECT, related_name="assignments"
    )
    grader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="grading_assignments"
    )
    public_id = models.CharField(max_length=24, unique=True, default=new_public_id)
    position = models.PositiveIntegerField()
    status = models.CharField(
        max_length=11, choices=AssignmentStatus.choices, default=AssignmentStatus.PENDING
    )
    seconds_spent = models.FloatField(default=0.0)
    started_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["artefact", "grader"], name="assignment_one_grader_once"
            ),
            models.UniqueConstraint(
                fields=["session", "grader", "position"], name="assignment_unique_position"
            ),
        ]
        ordering = ["session", "grader", "position"]

    def __str__(self) -> str:
        return f"assignment {self.public_id}"

    @property
    def is_submitted(self) -> bool:
        return self.status == AssignmentStatus.SUBMITTED


class SequentialDraw(models.Model):
    """One draw of a sequential session: which artefact came t-th and with what q_t (§5.5).

    Append-only: the database refuses every UPDATE and DELETE (``grading.0003``). ``q`` is
    the probability the drawn output had at draw time, computed from what was known then;
    ``remaining`` is |U_t| and ``undecided`` the gated metrics s_i summed over. ``tau`` is
    the uniform share τ_t of q_t (null on draws recorded before it was: the session's τ);
    with an adaptive share, ``tau_grades`` is the final prefix τ_t was computed from.
    """

    session = models.ForeignKey(GradingSession, on_delete=models.PROTECT, related_name="draws")
    index = models.PositiveIntegerField()
    artefact = models.OneToOneField(SessionArtefact, on_delete=models.PROTECT, related_name="draw")
    q = models.FloatField()
    remaining = models.PositiveIntegerField()
    undecided = models.JSONField(default=list)
    tau = models.FloatField(null=True, blank=True)
    tau_grades = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "index"], name="draw_unique_index"),
            models.CheckConstraint(
                condition=Q(q__gt=0) & Q(q__lte=1), name="draw_probability_range"
            ),
            models.CheckConstraint(
                condition=Q(tau__isnull=True) | (Q(tau__gt=0) & Q(tau__lte=1)),
                name="draw_tau_range",
            ),
        ]
        ordering = ["session", "index"]

    def __str__(self) -> str:
        return f"draw {self.index} of session {self.session_id}"


class Grade(models.Model):
    """The current value of one rubric field of one unit in one assignment."""

    assignment = models.ForeignKey(Assignment, on_delete=models.PROTECT, related_name="grades")
    unit_key = models.CharField(max_length=160)
    field = models.CharField(max_length=20)
    value = models.CharField(max_length=20)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "unit_key", "field"], name="grade_unique_field"
            )
        ]
        ordering = ["assignment", "pk"]

    def __str__(self) -> str:
        return f"{self.unit_key}.{self.field}={self.value}"


class GradeRevision(models.Model):
    """A change to a grade after its assignment was submitted (append-only)."""

    assignment = models.ForeignKey(Assignment, on_delete=models.PROTECT, related_name="revisions")
    unit_key = models.CharField(max_length=160)
    field = models.CharField(max_length=20)
    old_value = models.CharField(max_length=20, blank=True)
    new_value = models.CharField(max_length=20, blank=True)
    reason = models.TextField()
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["assignment", "created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.unit_key}.{self.field}: {self.old_value} → {self.new_value}"


class Adjudication(models.Model):
    """The final value of a field on which an artefact's graders disagreed."""

    artefact = models.ForeignKey(
        SessionArtefact, on_delete=models.PROTECT, related_name="adjudications"
    )
    unit_key = models.CharField(max_length=160)
    field = models.CharField(max_length=20)
    value = models.CharField(max_length=20)
    note = models.TextField(blank=True)
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["artefact", "unit_key", "field"], name="adjudication_unique_field"
            )
        ]
        ordering = ["artefact", "pk"]

    def __str__(self) -> str:
        return f"adjudicated {self.unit_key}.{self.field}={self.value}"


class DefectKind(models.TextChoices):
    CHANGED_FIGURE = "changed_figure", "A figure changed"
    CITATION_REMOVED = "citation_removed", "A citation removed"
    CITATION_WRONG = "citation_wrong", "A citation pointing at the wrong source"
    UNSUPPORTED_CLAIM = "unsupported_claim", "An unsupported claim inserted"
    MISSED_MANDATORY = "missed_mandatory", "A mandatory item left out"


class OversightStudy(models.Model):
    """Seeded defects mixed blind into reviewers' queues to measure oversight (SPEC §4)."""

    use_case = models.ForeignKey(
        UseCase, on_delete=models.PROTECT, related_name="oversight_studies"
    )
    public_id = models.CharField(max_length=24, unique=True, default=new_public_id)
    name = models.CharField(max_length=120)
    runs = models.ManyToManyField(Run, related_name="oversight_studies")
    seed = models.BigIntegerField()
    defect_share = models.FloatField(help_text="Share of queued copies that carry a defect.")
    status = models.CharField(
        max_length=6, choices=SessionStatus.choices, default=SessionStatus.OPEN
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"oversight study {self.name}"


class ReviewDecision(models.TextChoices):
    ACCEPT = "accept", "Accept"
    REJECT = "reject", "Reject"


class OversightItem(models.Model):
    """A copy of an output in one reviewer's queue, clean or carrying seeded defects."""

    study = models.ForeignKey(OversightStudy, on_delete=models.PROTECT, related_name="items")
    public_id = models.CharField(max_length=24, unique=True, default=new_public_id)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="oversight_items"
    )
    position = models.PositiveIntegerField()
    source_output = models.ForeignKey(Output, on_delete=models.PROTECT, related_name="+")
    text = models.TextField(help_text="What the reviewer sees: the output, or a defective copy.")
    defects = models.JSONField(
        default=list, blank=True, help_text="Seeded defects: [{kind, target, detail}]."
    )
    decision = models.CharField(max_length=6, choices=ReviewDecision.choices, blank=True)
    flags = models.JSONField(
        default=list, blank=True, help_text="What the reviewer marked: unit keys (s3, k:ke2)."
    )
    comment = models.TextField(blank=True)
    seconds_spent = models.FloatField(default=0.0)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "reviewer", "position"], name="oversight_item_unique_position"
            )
        ]
        ordering = ["study", "reviewer", "position"]

    def __str__(self) -> str:
        return f"oversight item {self.public_id}"

    @property
    def is_seeded(self) -> bool:
        return bool(self.defects)
