"""Per-output evidence of the unit-level metrics, read from the database for the estimators.

SPEC §5.2: the sampling unit is the output. For one run and one metric this returns the
:class:`~metrics.unit_estimators.OutputUnits` of every succeeded output of the run's graded
split: the known denominator (units counted without grading), the judge's totals for every
output, and the humans' final totals (agreed or adjudicated values) for the outputs the
grading session graded completely. Judge scores and human labels go through the same
counting functions of :mod:`metrics.unit_estimators`; human labels are first mapped onto the
judge's criteria by :func:`grading.rubric.criterion_scores`, so the two are counted alike.

A session samples each σ on its own (the planned n is per σ, SPEC §5.3) and, within a σ,
each run uniformly (uniform within the σ, or stratified by run), so within one run the human
sample is uniform and the run's outputs form one stratum: π = n_run/N_run is the same for every
output of the run, and no weight across σ or runs enters a run's estimate. Outputs sampled but
not yet completely graded (a grader has not submitted, a disagreement waits for the adjudicator)
count as unlabeled; ``pending`` says how many. Guidance recall counts mandatory items only
(SPEC §4), read with one more query. Seven queries (eight for guidance recall) whatever the
number of outputs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from charters.models import GuidanceItem
from grading.models import GradingSession, SessionArtefact
from grading.rubric import criterion_scores
from grading.selectors.artefacts import submitted_field_values
from metrics.unit_estimators import (
    OutputCounts,
    OutputUnits,
    citation_precision_counts,
    citation_recall_counts,
    guidance_counts,
    hallucination_counts,
    irrelevance_counts,
    key_element_counts,
    unit_metric,
)
from runs.models import Judge, JudgeScore, Output, OutputStatus, Run, Unit

#: The unit kinds each metric reads.
METRIC_UNIT_KINDS: Mapping[str, tuple[str, ...]] = {
    "hallucination_rate": ("sentence",),
    "irrelevance_rate": ("sentence",),
    "citation_precision_lenient": ("cited_chunk",),
    "citation_precision_strict": ("cited_chunk",),
    "citation_recall": ("sentence", "cited_chunk"),
    "key_element_capture": ("key_element",),
    "guidance_precision": ("guidance_item",),
    "guidance_recall": ("guidance_item",),
}

Scores = Mapping[str, float]  # criterion → 0/1 score of one unit


@dataclass(frozen=True)
class RunEvidence:
    """The estimators' input for one metric on one run, and what was left out."""

    metric_id: str
    units: OutputUnits
    judge_complete: bool
    pending: int
    n_outputs: int


@dataclass(frozen=True)
class _Unit:
    pk: int
    output: int  # position of the output, 0..N−1
    key: str
    kind: str
    sentence_position: int | None
    mandatory: bool = True  # a guidance item's; recall counts mandatory items only


def unit_metric_evidence(
    *, metric_id: str, run: Run, session: GradingSession | None, judge: Judge | None
) -> RunEvidence:
    """Return the per-output evidence of ``metric_id`` for ``run`` (see the module docstring)."""
    spec = unit_metric(metric_id)
    kinds = METRIC_UNIT_KINDS[metric_id]
    outputs = list(
        Output.objects.filter(run=run, status=OutputStatus.SUCCEEDED, task__split=run.split)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    index = {pk: i for i, pk in enumerate(outputs)}
    rows = list(
        Unit.objects.filter(output_id__in=outputs, kind__in=kinds)
        .order_by("output_id", "kind", "position")
        .values_list(
            "pk", "output_id", "key", "kind", "sentence_position", "ref_id", "output__task_id"
        )
    )
    optional = (
        _optional_items({task for *_rest, task in rows})
        if metric_id == "guidance_recall"
        else set()
    )
    units = [
        _Unit(pk, index[output_id], key, kind, sentence_position, (task, ref) not in optional)
        for pk, output_id, key, kind, sentence_position, ref, task in rows
    ]

    f_num = f_den = None
    judge_complete = False
    if judge is not None:
        scores: dict[int, dict[str, float]] = defaultdict(dict)
        for unit_id, criterion, value in JudgeScore.objects.filter(
            judge=judge, unit_id__in=[u.pk for u in units]
        ).values_list("unit_id", "criterion", "score"):
            scores[unit_id][criterion] = value
        counts = _counts(
            metric_id, units, {u.pk: scores.get(u.pk, {}) for u in units}, len(outputs)
        )
        if counts is not None:
            judge_complete = True
            f_num = counts.numerator
            f_den = counts.denominator if spec.denominator == "graded" else None

    labeled = np.zeros(len(outputs), dtype=bool)
    h_num = np.full(len(outputs), np.nan)
    h_den = np.full(len(outputs), np.nan)
    pending = 0
    if session is not None:
        labels, pending = _final_labels(session, run, index)
        by_output: dict[int, list[_Unit]] = defaultdict(list)
        for unit in units:
            by_output[unit.output].append(unit)
        for output_pos, unit_labels in labels.items():
            mine = by_output[output_pos]
            human = {u.pk: _human_scores(unit_labels.get(u.key, {})) for u in mine}
            counts = _counts(metric_id, mine, human, len(outputs))
            if counts is None:
                pending += 1
                continue
            labeled[output_pos] = True
            h_num[output_pos] = counts.numerator[output_pos]
            h_den[output_pos] = counts.denominator[output_pos]

    known = None
    if spec.denominator == "known":
        known = np.zeros(len(outputs))
        for unit in units:
            known[unit.output] += 1
    data = OutputUnits(
        output_id=np.array(outputs, dtype=np.int64),
        labeled=labeled,
        d=known,
        f_num=f_num,
        f_den=f_den,
        h_num=h_num,
        h_den=h_den if spec.denominator == "graded" else None,
    )
    return RunEvidence(metric_id, data, judge_complete, pending, len(outputs))


def _optional_items(task_pks: set[int]) -> set[tuple[int, str]]:
    """Return the (task, item id) of the non-mandatory guidance items of ``task_pks``."""
    return set(
        GuidanceItem.objects.filter(task_id__in=task_pks, mandatory=False).values_list(
            "task_id", "item_id"
        )
    )


def _human_scores(labels: Mapping[str, str]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for field, value in labels.items():
        scores.update(criterion_scores(field, value))
    return scores


def _final_labels(
    session: GradingSession, run: Run, index: Mapping[int, int]
) -> tuple[dict[int, dict[str, dict[str, str]]], int]:
    """Return the final labels of the run's completely graded outputs, by output position."""
    artefacts = list(SessionArtefact.objects.filter(session=session, output__run=run))
    labels: dict[int, dict[str, dict[str, str]]] = {}
    by_artefact: dict[int, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    undecided: set[int] = set()
    for value in submitted_field_values(artefacts):
        if value.moot:  # not asked given its parent's final value: no label
            continue
        if value.final is None:
            undecided.add(value.artefact_id)
        else:
            by_artefact[value.artefact_id][value.unit_key][value.field] = value.final
    pending = 0
    for artefact in artefacts:
        position = index.get(artefact.output_id or -1)
        if position is None:
            continue
        if artefact.pk not in by_artefact or artefact.pk in undecided:
            pending += 1
            continue
        labels[position] = by_artefact[artefact.pk]
    return labels, pending


def _counts(
    metric_id: str, units: list[_Unit], scores: Mapping[int, Scores], n_outputs: int
) -> OutputCounts | None:
    """Count one metric from per-unit criterion scores; None when a needed score is missing."""
    try:
        return _count(metric_id, units, scores, n_outputs)
    except KeyError:
        return None


def _column(
    units: list[_Unit], scores: Mapping[int, Scores], criterion: str
) -> NDArray[np.float64]:
    return np.array([scores[u.pk][criterion] for u in units], dtype=float)


def _count(
    metric_id: str, units: list[_Unit], scores: Mapping[int, Scores], n_outputs: int
) -> OutputCounts:
    sentences = [u for u in units if u.kind == "sentence"]
    others = [u for u in units if u.kind != "sentence"]
    where = np.array([u.output for u in sentences or others], dtype=np.int64)
    if metric_id in ("hallucination_rate", "citation_recall"):
        assertive = _column(sentences, scores, "assertive")
        supported = np.array(
            [
                scores[u.pk]["supported"] if a > 0 else scores[u.pk].get("supported", np.nan)
                for u, a in zip(sentences, assertive, strict=True)
            ],
            dtype=float,
        )
        if metric_id == "hallucination_rate":
            return hallucination_counts(
                output_index=where, assertive=assertive, supported=supported, n_outputs=n_outputs
            )
        position = {(u.output, int(u.key[1:])): i for i, u in enumerate(sentences)}
        chunks = [u for u in units if u.kind == "cited_chunk"]
        return citation_recall_counts(
            output_index=where,
            assertive=assertive,
            supported=supported,
            chunk_sentence=np.array(
                [position[(u.output, u.sentence_position or 0)] for u in chunks], dtype=np.int64
            ),
            chunk_used=_column(chunks, scores, "citation_lenient"),
            n_outputs=n_outputs,
        )
    if metric_id == "irrelevance_rate":
        return irrelevance_counts(
            output_index=where, relevant=_column(sentences, scores, "relevant"), n_outputs=n_outputs
        )
    if metric_id in ("citation_precision_lenient", "citation_precision_strict"):
        criterion = "citation_lenient" if metric_id.endswith("lenient") else "citation_strict"
        return citation_precision_counts(
            output_index=where, used=_column(others, scores, criterion), n_outputs=n_outputs
        )
    if metric_id == "key_element_capture":
        return key_element_counts(
            output_index=where,
            captured=_column(others, scores, "key_element_captured"),
            n_outputs=n_outputs,
        )
    measure = "precision" if metric_id == "guidance_precision" else "recall"
    return guidance_counts(
        output_index=where,
        flagged=_column(others, scores, "flagged"),
        breached=_column(others, scores, "breached"),
        n_outputs=n_outputs,
        measure=measure,
        mandatory=np.array([u.mandatory for u in others], dtype=float),
    )
