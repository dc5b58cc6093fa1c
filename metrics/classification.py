"""Structured judgements of one run: labels against gold, per class and overall (SPEC §4.1).

The unit is the task, as classification accuracy and macro-F1 define it (SPEC §4): each task's
label is its output's at the first repeat (repeat 0); the spread across repeats is what pass^k
under ``label_equals_gold`` measures. An unknown label (none imported, none parsed, or a failed
output) counts as wrong and is its own column of the confusion matrix. Two queries.

When the charter makes classification human-graded (its ``rubric_fields`` asks
``label_correct``), the graders' final "Classification correct?" values replace the
comparison with gold (:func:`human_label_grades`, :func:`human_classification_estimate`): the
unit is still the task, by its graded output of the lowest repeat, and the tasks are those the
grading session graded. Six queries.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from charters.models import Task
from grading.models import GradingSession
from grading.rubric import CORRECT_LABEL, LABEL_CORRECT, LABEL_KEY, YES
from grading.selectors.artefacts import output_field_finals
from metrics.estimate import MetricEstimate
from metrics.task_estimators import (
    ClassScores,
    classification_accuracy_estimate,
    classification_accuracy_graded_estimate,
    classification_class_scores,
    classification_confusion,
    classification_macro_f1_estimate,
)
from runs.models import Output, OutputStatus, Run

FIRST_REPEAT = 0
UNKNOWN_COLUMN = "unknown"


@dataclass(frozen=True)
class RunLabels:
    """The label set, and per task of the run's split its gold label and first-repeat label."""

    labels: tuple[str, ...]
    task_ids: tuple[str, ...]
    gold: tuple[str | None, ...]
    predicted: tuple[str | None, ...]

    @property
    def missing_gold(self) -> tuple[str, ...]:
        return tuple(t for t, g in zip(self.task_ids, self.gold, strict=True) if g is None)


@dataclass(frozen=True)
class RunClassification:
    """Per-class scores and the confusion matrix of one run, for the pages and the record."""

    labels: tuple[str, ...]
    confusion: NDArray[np.int64]
    scores: tuple[ClassScores, ...]
    n: int
    unknown: int

    def as_dict(self) -> dict[str, object]:
        """Return it as plain JSON values (the decision record keeps it)."""
        return {
            "labels": list(self.labels),
            "columns": [*self.labels, UNKNOWN_COLUMN],
            "confusion": self.confusion.tolist(),
            "classes": [
                {
                    "label": str(score.label),
                    "support": score.support,
                    "predicted": score.predicted,
                    "precision": score.precision,
                    "recall": score.recall,
                    "f1": score.f1,
                }
                for score in self.scores
            ],
            "n": self.n,
            "unknown": self.unknown,
            "unit": f"task (its output at repeat {FIRST_REPEAT})",
        }


def run_labels(*, run: Run) -> RunLabels | None:
    """Return the labels of ``run`` against gold, or None when the task set has no label set."""
    labels = tuple(run.task_set.label_set or ())
    if not labels:
        return None
    tasks = list(
        Task.objects.filter(task_set_id=run.task_set_id, split=run.split)
        .order_by("line_number")
        .values_list("pk", "external_id", "gold_label")
    )
    held: set[int] = set()
    given: dict[int, str | None] = {}
    for task_pk, repeat, status, label in Output.objects.filter(
        run=run, task__split=run.split
    ).values_list("task_id", "repeat_index", "status", "label"):
        held.add(task_pk)
        if repeat == FIRST_REPEAT and status == OutputStatus.SUCCEEDED:
            given[task_pk] = label
    # As for every metric, the run's outputs are the sample: a task it holds no output of is
    # outside it; a task whose first repeat failed or gave no label counts as wrong.
    mine = [row for row in tasks if row[0] in held]
    return RunLabels(
        labels=labels,
        task_ids=tuple(external for _pk, external, _gold in mine),
        gold=tuple(gold for _pk, _external, gold in mine),
        predicted=tuple(given.get(pk) for pk, _external, _gold in mine),
    )


def _missing_gold_reason(metric_id: str, labels: RunLabels | None) -> str:
    if labels is None:
        return (
            f"{metric_id} needs a label set and gold labels: the run's task set declares no "
            'label_set (a first-line header {"label_set": [...]}) and no task has a gold_label'
        )
    missing = labels.missing_gold
    if not labels.task_ids:
        return "the run holds no output"
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        return (
            f"{metric_id} needs gold_label on every task of the split; {len(missing)} lack "
            f"it ({', '.join(missing[:3])}{more})"
        )
    return ""


def classification_estimate(
    *, metric_id: str, labels: RunLabels | None, confidence: float, planned_n: int | None
) -> MetricEstimate | str:
    """Return accuracy or macro-F1 of the run's labels, or why it cannot be estimated."""
    reason = _missing_gold_reason(metric_id, labels)
    if reason:
        return reason
    assert labels is not None
    if metric_id == "classification_accuracy":
        estimate = classification_accuracy_estimate(
            labels.predicted, labels.gold, confidence=confidence, planned_n=planned_n
        )
    else:
        estimate = classification_macro_f1_estimate(
            labels.predicted,
            labels.gold,
            confidence=confidence,
            labels=labels.labels,
            planned_n=planned_n,
        )
    return estimate


def run_classification(*, labels: RunLabels | None) -> RunClassification | None:
    """Return the confusion matrix and per-class scores, or None without full gold labels."""
    if labels is None or not labels.task_ids or labels.missing_gold:
        return None
    confusion = classification_confusion(labels.predicted, labels.gold, labels=labels.labels)
    return RunClassification(
        labels=labels.labels,
        confusion=confusion,
        scores=classification_class_scores(labels.predicted, labels.gold, labels=labels.labels),
        n=len(labels.task_ids),
        unknown=int(confusion[:, -1].sum()),
    )


@dataclass(frozen=True)
class HumanLabelGrades:
    """Per task the session graded, the label its graded output gave and the graders' final
    "Classification correct?" value (``None`` while disputed), at the lowest graded repeat."""

    labels: tuple[str, ...]
    task_ids: tuple[str, ...]
    predicted: tuple[str | None, ...]
    correct: tuple[bool | None, ...]
    #: The right label by the graders: the output's when correct, else their final
    #: ``correct_label`` (``None`` while disputed).
    right: tuple[str | None, ...]

    @property
    def disputed(self) -> tuple[str, ...]:
        return tuple(
            t
            for t, c, r in zip(self.task_ids, self.correct, self.right, strict=True)
            if c is None or r is None
        )


def human_label_grades(*, run: Run, session: GradingSession) -> HumanLabelGrades:
    """Return the human "Classification correct?" grades of ``run``'s outputs in ``session``."""
    finals = output_field_finals(
        session=session, run=run, unit_key=LABEL_KEY, fields=(LABEL_CORRECT, CORRECT_LABEL)
    )
    rows = sorted(
        Output.objects.filter(pk__in=list(finals), run=run, task__split=run.split).values_list(
            "task__line_number", "repeat_index", "pk", "task__external_id", "label"
        )
    )
    first: dict[str, tuple[int, str | None]] = {}
    for _line, _repeat, pk, external_id, label in rows:
        first.setdefault(external_id, (pk, label))
    values = [finals[pk] for pk, _label in first.values()]
    correct = [unit.get(LABEL_CORRECT) for unit in values]
    return HumanLabelGrades(
        labels=tuple(run.task_set.label_set or ()),
        task_ids=tuple(first),
        predicted=tuple(label for _pk, label in first.values()),
        correct=tuple(None if value is None else value == YES for value in correct),
        right=tuple(
            label if verdict == YES else unit.get(CORRECT_LABEL)
            for (_pk, label), verdict, unit in zip(first.values(), correct, values, strict=True)
        ),
    )


def human_run_labels(*, run: Run, session: GradingSession | None) -> RunLabels | None:
    """Return the graded tasks' labels against the graders' right labels, for the confusion
    matrix of a charter that grades classification by humans (None without a session, or
    while a disagreement awaits its adjudicator)."""
    if session is None:
        return None
    grades = human_label_grades(run=run, session=session)
    if grades.disputed or not grades.task_ids:
        return None
    return RunLabels(
        labels=grades.labels,
        task_ids=grades.task_ids,
        gold=grades.right,
        predicted=grades.predicted,
    )


def human_classification_estimate(
    *,
    metric_id: str,
    grades: HumanLabelGrades | None,
    confidence: float,
    planned_n: int | None,
) -> MetricEstimate | str:
    """Return accuracy or macro-F1 from the human grades, or why it cannot be estimated."""
    if grades is None:
        return (
            f"{metric_id} is graded by humans (the charter asks label_correct), but the "
            "decision has no grading session"
        )
    if not grades.task_ids:
        return f"{metric_id}: no output of the run has been graded 'Classification correct?'"
    if grades.disputed:
        shown = ", ".join(grades.disputed[:3])
        return (
            f"{metric_id}: the graders' 'Classification correct?' disagreement on "
            f"{len(grades.disputed)} task(s) ({shown}) awaits adjudication"
        )
    if metric_id == "classification_accuracy":
        return classification_accuracy_graded_estimate(
            [int(bool(c)) for c in grades.correct], confidence=confidence, planned_n=planned_n
        )
    outside = [
        (task, label)
        for task, label in zip(grades.task_ids, grades.right, strict=True)
        if label not in grades.labels
    ]
    if outside:
        task, label = outside[0]
        return (
            f"{metric_id}: task {task}'s right label by the graders, {label!r}, is not in the "
            f"label set ({', '.join(grades.labels)})"
        )
    # SPEC §4.1: macro-F1 of the output's label against the graders' right label
    estimate = classification_macro_f1_estimate(
        grades.predicted,
        grades.right,
        confidence=confidence,
        labels=grades.labels,
        planned_n=planned_n,
    )
    return replace(estimate, mode="H")
