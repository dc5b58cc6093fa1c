"""Simulated expert graders for the Use Case A example, from its planted truth.

The same simulated graders as the credit-memo example (``examples/credit_memo/make_grades.py``:
three graders with known error rates of 2 %, 3 % and 5 % per rubric field, log-normal time per
artefact), grading Use Case A's outputs from ``truth-<σ>.jsonl``: a wrong classification
sentence, a false gap and the invented audit claim are assertive and not supported; the
structured export lines (classification, recommendation, guidance check) are not assertive; a
guidance item is TP/FP/FN/correct from its truth (breached, flagged), with a severity fixed
per clause of the control standard. Everything is seeded: the same inputs give the same
grades. These are SYNTHETIC graders for a demonstration.

The module offers what ``demo.grading`` reads of a grades source: ``GRADERS``,
``truth_records``, ``task_guidance``, ``true_grades``, ``grader_answers`` and
``expected_agreement_draws``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from examples.credit_memo.make_grades import (
    GRADERS,
    SimulatedGrader,
    answers_from_truth,
    expected_agreement_draws,
    read_truth,
)
from examples.credit_memo.make_grades import true_grades as _true_grades
from examples.use_case_a.make_tasks import CLAUSES, CRITICAL, HERE, read_tasks

__all__ = [
    "GRADERS",
    "expected_agreement_draws",
    "grader_answers",
    "task_guidance",
    "true_grades",
    "truth_records",
]

#: Severity of a missing requirement: high for the owner and frequency (a missing one makes
#: the design non-compliant), medium for the other mandatory clauses, low for advisory ones.
SEVERITY = {
    clause: "high" if clause in CRITICAL else "medium" if mandatory else "low"
    for clause, (_, _, mandatory) in CLAUSES.items()
}


def truth_records(sigma: str) -> dict[tuple[str, int], dict[str, Any]]:
    """Return the planted truth of one σ's graded outputs by (task id, repeat)."""
    return read_truth(HERE / f"truth-{sigma}.jsonl")


@functools.cache
def task_guidance() -> dict[str, list[str]]:
    """Return every task's guidance item ids (mandatory or advisory), in file order."""
    return {t["id"]: [g["id"] for g in t["guidance"]] for t in read_tasks()}


def true_grades(
    record: Mapping[str, Any], guidance_ids: Sequence[str]
) -> dict[str, dict[str, str]]:
    """Return the true rubric labels of every unit of one output."""
    return _true_grades(record, guidance_ids, SEVERITY)


def grader_answers(
    grader: SimulatedGrader, sigma: str, task_id: str, repeat: int
) -> tuple[dict[str, dict[str, str]], float]:
    """Return what ``grader`` answers on one output, and the seconds they take."""
    truth = true_grades(truth_records(sigma)[(task_id, repeat)], task_guidance()[task_id])
    return answers_from_truth(grader, truth, "use-case-a", sigma, task_id, repeat)
