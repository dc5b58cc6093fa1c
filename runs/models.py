"""Runs of a frozen σ over a task split, their outputs, gradable units and judge scores."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from charters.models import Configuration, Task, TaskSet, UseCase
from charters.models.charters import Treatment
from charters.models.tasks import Split


class RunMode(models.TextChoices):
    EXECUTED = "executed", "Executed (Celery + litellm)"
    IMPORTED = "imported", "Imported (JSONL)"


class RunStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    BUDGET_EXHAUSTED = "budget_exhausted", "Stopped: cost budget reached"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class Run(models.Model):
    """σ × split × K repeats (SPEC §2 Run)."""

    use_case = models.ForeignKey(UseCase, on_delete=models.PROTECT, related_name="runs")
    configuration = models.ForeignKey(Configuration, on_delete=models.PROTECT, related_name="runs")
    task_set = models.ForeignKey(TaskSet, on_delete=models.PROTECT, related_name="runs")
    split = models.CharField(max_length=6, choices=Split.choices)
    repeats = models.PositiveSmallIntegerField(default=1)
    mode = models.CharField(max_length=8, choices=RunMode.choices)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING)
    concurrency = models.PositiveSmallIntegerField(default=8)
    cost_budget_usd = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    items_total = models.PositiveIntegerField(default=0)
    items_done = models.PositiveIntegerField(default=0)
    items_failed = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    cost_unknown_items = models.PositiveIntegerField(default=0)
    stop_reason = models.TextField(blank=True)
    source_filename = models.CharField(max_length=255, blank=True)
    source_sha256 = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"run {self.pk} of σ {self.configuration.name} v{self.configuration.version}"


class OutputStatus(models.TextChoices):
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class Output(models.Model):
    """One output of one task at one repeat; unique per (run, task, repeat)."""

    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="outputs")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="outputs")
    repeat_index = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=9, choices=OutputStatus.choices)
    text = models.TextField(blank=True)
    cited_chunk_ids = models.JSONField(default=list, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    cost_usd = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True, help_text="Null = unknown."
    )
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    generation_seconds = models.FloatField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=1)
    success = models.BooleanField(null=True, blank=True, help_text="Automatic success flag.")
    label = models.CharField(  # noqa: DJ001 (null = unknown, "" is not a label)
        max_length=120,
        null=True,
        blank=True,
        help_text="The label the output gave (structured judgement); null = unknown.",
    )
    label_error = models.TextField(
        blank=True, help_text="Why no label could be parsed from the executed output."
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "task", "repeat_index"], name="output_unique_unit_of_work"
            )
        ]
        ordering = ["run", "task", "repeat_index"]

    def __str__(self) -> str:
        return f"output of {self.task.external_id} #{self.repeat_index} ({self.status})"


class Trajectory(models.Model):
    """The SPEC §8 trajectory record of an agentic (A3–A4) output."""

    output = models.OneToOneField(Output, on_delete=models.PROTECT, related_name="trajectory")
    record = models.JSONField()

    def __str__(self) -> str:
        return f"trajectory of {self.output}"


class UnitKind(models.TextChoices):
    SENTENCE = "sentence", "Sentence"
    CITED_CHUNK = "cited_chunk", "Cited chunk"
    KEY_ELEMENT = "key_element", "Key element"
    GUIDANCE_ITEM = "guidance_item", "Guidance item"


class Unit(models.Model):
    """A gradable unit of an output, with an id stable across re-segmentation."""

    output = models.ForeignKey(Output, on_delete=models.PROTECT, related_name="units")
    kind = models.CharField(max_length=13, choices=UnitKind.choices)
    key = models.CharField(max_length=160, help_text="Stable id within the output, e.g. s3.")
    position = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    ref_id = models.CharField(max_length=120, blank=True, help_text="Chunk, element or item id.")
    sentence_position = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["output", "key"], name="unit_unique_key")]
        indexes = [models.Index(fields=["output", "kind"])]
        ordering = ["output", "kind", "position"]

    def __str__(self) -> str:
        return f"{self.kind} {self.key}"


class JudgeKind(models.TextChoices):
    OFFLINE = "offline", "Built-in offline judge"
    LLM = "llm", "LLM judge (litellm)"


class Judge(models.Model):
    """A versioned automatic grader: its rubric prompt and model are fixed per version."""

    name = models.SlugField(max_length=80)
    version = models.CharField(max_length=40)
    kind = models.CharField(max_length=7, choices=JudgeKind.choices)
    model_ref = models.CharField(max_length=200, blank=True)
    rubric = models.TextField(blank=True)
    rubric_sha256 = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="judge_unique_version")
        ]
        ordering = ["name", "version"]

    def __str__(self) -> str:
        return f"judge {self.name} {self.version}"


class JudgeScore(models.Model):
    """One criterion's score of one unit by one judge version."""

    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="scores")
    unit = models.ForeignKey(Unit, on_delete=models.PROTECT, related_name="judge_scores")
    criterion = models.CharField(max_length=40)
    score = models.FloatField()
    label = models.CharField(max_length=40, blank=True)
    rationale = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "unit", "criterion"], name="judge_score_unique"
            )
        ]
        ordering = ["unit", "criterion"]

    def __str__(self) -> str:
        return f"{self.judge} {self.criterion}={self.score} on {self.unit}"


class JudgingStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    INCOMPLETE = "incomplete", "Finished with outputs left unjudged"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class Judging(models.Model):
    """One request to judge a run: the judge, how it is called, and its progress.

    Keys are never stored: ``api_key_env`` names the environment variable of the worker that
    holds the judge's API key.
    """

    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="judgings")
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="judgings")
    purpose = models.CharField(max_length=13, choices=Treatment.choices)
    api_base = models.CharField(max_length=300, blank=True)
    api_key_env = models.CharField(max_length=100, blank=True)
    concurrency = models.PositiveSmallIntegerField(null=True, blank=True)
    status = models.CharField(
        max_length=10, choices=JudgingStatus.choices, default=JudgingStatus.PENDING
    )
    self_graded = models.BooleanField(default=False)
    outputs_total = models.PositiveIntegerField(default=0)
    outputs_done = models.PositiveIntegerField(
        default=0, help_text="Outputs judged, skipped (judged before) or failed so far."
    )
    outputs_judged = models.PositiveIntegerField(default=0)
    outputs_failed = models.PositiveIntegerField(default=0)
    outputs_without_units = models.PositiveIntegerField(default=0)
    units_scored = models.PositiveIntegerField(default=0)
    scores_written = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"judging {self.pk} of run {self.run_id} by {self.judge}"
