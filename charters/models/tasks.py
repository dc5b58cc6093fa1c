"""Task sets: tasks with permitted sources, gold key elements, guidance items and splits."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from charters.models.use_cases import UseCase


class Split(models.TextChoices):
    DEV = "dev", "dev (tuning)"
    GRADED = "graded", "graded (the evaluation)"
    STRESS = "stress", "stress"


class TaskSet(models.Model):
    use_case = models.ForeignKey(UseCase, on_delete=models.PROTECT, related_name="task_sets")
    name = models.SlugField(max_length=80)
    version = models.PositiveIntegerField()
    source_filename = models.CharField(max_length=255)
    manifest_sha256 = models.CharField(max_length=64, help_text="SHA-256 of the imported file.")
    line_count = models.PositiveIntegerField()
    split_counts = models.JSONField(default=dict)
    # Nullable so SQLite adds the column in place, keeping the table's immutability trigger.
    label_set = models.JSONField(
        null=True,
        blank=True,
        default=None,
        help_text="The declared labels of a structured judgement; null = none declared.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["use_case", "name", "version"], name="task_set_unique_version"
            )
        ]
        ordering = ["use_case", "name", "version"]

    def __str__(self) -> str:
        return f"task set {self.name} v{self.version} ({self.line_count} tasks)"


class Task(models.Model):
    task_set = models.ForeignKey(TaskSet, on_delete=models.PROTECT, related_name="tasks")
    external_id = models.CharField(max_length=120)
    split = models.CharField(max_length=6, choices=Split.choices)
    input = models.TextField()
    input_sha256 = models.CharField(max_length=64)
    reference = models.TextField(blank=True)
    expected_abstention = models.BooleanField(default=False)
    # Nullable (null = no gold label) so SQLite keeps the table's immutability trigger.
    gold_label = models.CharField(  # noqa: DJ001
        max_length=120,
        null=True,
        blank=True,
        default=None,
        help_text="The frozen gold label (one of the label set); null = none.",
    )
    metadata = models.JSONField(default=dict, blank=True)
    line_number = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task_set", "external_id"], name="task_unique_id")
        ]
        indexes = [models.Index(fields=["task_set", "split"])]
        ordering = ["task_set", "line_number"]

    def __str__(self) -> str:
        return f"task {self.external_id} ({self.split})"


class SourceChunk(models.Model):
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="source_chunks")
    chunk_id = models.CharField(max_length=120)
    source = models.CharField(max_length=255, blank=True)
    text = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task", "chunk_id"], name="source_chunk_unique_id")
        ]
        ordering = ["task", "pk"]

    def __str__(self) -> str:
        return self.chunk_id


class KeyElement(models.Model):
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="key_elements")
    element_id = models.CharField(max_length=120)
    text = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task", "element_id"], name="key_element_unique_id")
        ]
        ordering = ["task", "pk"]

    def __str__(self) -> str:
        return self.element_id


class GuidanceItem(models.Model):
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="guidance_items")
    item_id = models.CharField(max_length=120)
    text = models.TextField()
    mandatory = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task", "item_id"], name="guidance_item_unique_id")
        ]
        ordering = ["task", "pk"]

    def __str__(self) -> str:
        return self.item_id
