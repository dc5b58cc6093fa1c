"""Per-output evidence of the unit-level metrics, read from the database for the estimators.

SPEC §5.2: the sampling unit is the output. For one run and one metric this returns the
:class:`~metrics.unit_estimators.OutputUnits` of every succeeded output of the run's graded
split: the known denominator (units counted without grading), the judge's totals for every
output, and the humans' final totals (agreed or adjudicated values) for the outputs the
grading session graded completely. Judge scores and human labels go through the same
counting functions of :mod:`metrics.unit_estimators`; human labels are first mapped onto the
judge's criteria by :func:`grading.rubric.criterion_scores`, so the two are counted alike.

A session samples each σ on its own (the planned n is per σ, SPEC §5.3) and, within a σ,
each run uniformly (uniform within the σ, or stratified by run), so no weight across σ or runs
enters a run's estimate. A stratified session may also stratify within each run by a task
metadata key (``grading.sampling.stratum_label``): then every output of the run gets its
stratum from the same function and the estimators weight stratum h by N_h/n_h, in the point
and in the variance (``OutputUnits.stratum``); without it the run is one stratum. Outputs
sampled but not yet completely graded (a grader has not submitted, a disagreement waits for
the adjudicator) count as unlabeled; ``pending`` says how many. The run's evidence is read
once for all metrics (:class:`RunEvidenceSource`), in a fixed number of queries whatever the
number of outputs. Guidance recall counts mandatory items only (SPEC §4), read with one more
query.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from charters.models import GuidanceItem
from grading.models import GradingSession, SessionArtefact
from grading.rubric import criterion_scores
from grading.sampling import stratum_key, stratum_label
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
    task: int = 0  # the output's task
    ref: str = ""  # the chunk, element or item id
    mandatory: bool = True  # a guidance item's; recall counts mandatory items only


class RunEvidenceSource:
    """Everything the unit metrics of one run read, each loaded once, on first use.

    A decision estimates up to nine unit metrics on one run (issue 18): the run's outputs, its
    units, the judge's scores joined to them by run and judge (no lists of ids), and the
    session's final labels are read once here and shared by every metric, so the queries do
    not grow with the number of metrics or outputs.
    """

    def __init__(self, *, run: Run, session: GradingSession | None, judge: Judge | None) -> None:
        self.run = run
        self.session = session
        self.judge = judge

    def _scope(self, prefix: str = "") -> dict[str, object]:
        # The run's succeeded outputs on its own split: a join, not a list of ids.
        return {
            f"{prefix}run": self.run,
            f"{prefix}status": OutputStatus.SUCCEEDED,
            f"{prefix}task__split": self.run.split,
        }

    @cached_property
    def _output_rows(self) -> list[tuple[int, object]]:
        return list(
            Output.objects.filter(**self._scope())
            .order_by("pk")
            .values_list("pk", "task__metadata")
        )

    @cached_property
    def outputs(self) -> list[int]:
        return [pk for pk, _metadata in self._output_rows]

    @cached_property
    def index(self) -> dict[int, int]:
        return {pk: i for i, pk in enumerate(self.outputs)}

    @cached_property
    def units(self) -> dict[str, list[_Unit]]:
        """The run's units of every kind a unit metric reads, by kind, in (output, position)."""
        kinds = sorted({kind for kinds in METRIC_UNIT_KINDS.values() for kind in kinds})
        index = self.index
        by_kind: dict[str, list[_Unit]] = {kind: [] for kind in kinds}
        for pk, output_id, key, kind, sentence_position, task, ref in (
            Unit.objects.filter(kind__in=kinds, **self._scope("output__"))
            .order_by("output_id", "kind", "position")
            .values_list(
                "pk", "output_id", "key", "kind", "sentence_position", "output__task_id", "ref_id"
            )
        ):
            by_kind[kind].append(
                _Unit(pk, index[output_id], key, kind, sentence_position, task, ref)
            )
        return by_kind

    @cached_property
    def optional_items(self) -> set[tuple[int, str]]:
        """The (task, item id) of the non-mandatory guidance items of the run's tasks."""
        return set(
            GuidanceItem.objects.filter(
                mandatory=False, task__outputs__run=self.run, task__split=self.run.split
            )
            .values_list("task_id", "item_id")
            .distinct()
        )

    @cached_property
    def judge_scores(self) -> dict[int, dict[str, float]]:
        """The judge's criterion scores of the run's units, by unit."""
        scores: dict[int, dict[str, float]] = defaultdict(dict)
        if self.judge is None:
            return scores
        for unit_id, criterion, value in JudgeScore.objects.filter(
            judge=self.judge, **self._scope("unit__output__")
        ).values_list("unit_id", "criterion", "score"):
            scores[unit_id][criterion] = value
        return scores

    @cached_property
    def final_labels(self) -> tuple[dict[int, dict[str, dict[str, str]]], int, set[str]]:
        if self.session is None:
            return {}, 0, set()
        return _final_labels(self.session, self.run, self.index)

    @cached_property
    def stratum(self) -> NDArray[np.str_] | None:
        """Every output's stratum when the session stratified within the run, else None."""
        strata = self.final_labels[2]
        keys = {stratum_key(label) for label in strata}
        if len(keys) > 1:
            raise ValueError(f"stratum: the session's strata of run {self.run.pk} mix keys {keys}")
        key = keys.pop() if keys else ""
        if not key:
            return None
        # stratified within the run: every output's stratum, sampled or not
        stratum = np.array(
            [stratum_label(self.run.pk, metadata, key) for _pk, metadata in self._output_rows]
        )
        unknown = strata - set(stratum.tolist())
        if unknown:
            raise ValueError(f"stratum: {sorted(unknown)[0]!r} holds none of the run's outputs")
        return stratum

    def evidence(self, metric_id: str) -> RunEvidence:
        """Return the per-output evidence of ``metric_id`` (see the module docstring)."""
        spec = unit_metric(metric_id)
        kinds = METRIC_UNIT_KINDS[metric_id]
        n_outputs = len(self.outputs)
        units = [unit for kind in kinds for unit in self.units[kind]]
        if metric_id == "guidance_recall":
            optional = self.optional_items
            units = [replace(u, mandatory=(u.task, u.ref) not in optional) for u in units]

        f_num = f_den = None
        judge_complete = False
        if self.judge is not None:
            scores = self.judge_scores
            counts = _counts(
                metric_id, units, {u.pk: scores.get(u.pk, {}) for u in units}, n_outputs
            )
            if counts is not None:
                judge_complete = True
                f_num = counts.numerator
                f_den = counts.denominator if spec.denominator == "graded" else None

        labeled = np.zeros(n_outputs, dtype=bool)
        h_num = np.full(n_outputs, np.nan)
        h_den = np.full(n_outputs, np.nan)
        pending = 0
        if self.session is not None:
            labels, pending, _strata = self.final_labels
            by_output: dict[int, list[_Unit]] = defaultdict(list)
            for unit in units:
                by_output[unit.output].append(unit)
            for output_pos, unit_labels in labels.items():
                mine = by_output[output_pos]
                human = {u.pk: _human_scores(unit_labels.get(u.key, {})) for u in mine}
                counts = _counts(metric_id, mine, human, n_outputs)
                if counts is None:
                    pending += 1
                    continue
                labeled[output_pos] = True
                h_num[output_pos] = counts.numerator[output_pos]
                h_den[output_pos] = counts.denominator[output_pos]

        known = None
        if spec.denominator == "known":
            known = np.bincount(
                np.array([u.output for u in units], dtype=np.int64), minlength=n_outputs
            ).astype(np.float64)
        data = OutputUnits(
            output_id=np.array(self.outputs, dtype=np.int64),
            labeled=labeled,
            stratum=self.stratum if self.session is not None else None,
            d=known,
            f_num=f_num,
            f_den=f_den,
            h_num=h_num,
            h_den=h_den if spec.denominator == "graded" else None,
        )
        return RunEvidence(metric_id, data, judge_complete, pending, n_outputs)


def unit_metric_evidence(
    *,
    metric_id: str,
    run: Run,
    session: GradingSession | None,
    judge: Judge | None,
    source: RunEvidenceSource | None = None,
) -> RunEvidence:
    """Return the per-output evidence of ``metric_id`` for ``run`` (see the module docstring).

    Pass the same ``source`` (built for this run, session and judge) to every metric of one
    decision so the run's evidence is read once.
    """
    unit_metric(metric_id)  # an unknown or non-unit metric is a ValueError naming it
    if source is None:
        source = RunEvidenceSource(run=run, session=session, judge=judge)
    elif (source.run, source.session, source.judge) != (run, session, judge):
        raise ValueError("source: built for another run, session or judge")
    return source.evidence(metric_id)


def unit_metrics_evidence(
    *, metric_ids: list[str], run: Run, session: GradingSession | None, judge: Judge | None
) -> dict[str, RunEvidence]:
    """Return the evidence of several metrics of one run, reading the run's evidence once."""
    source = RunEvidenceSource(run=run, session=session, judge=judge)
    return {metric_id: source.evidence(metric_id) for metric_id in metric_ids}


def _human_scores(labels: Mapping[str, str]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for field, value in labels.items():
        scores.update(criterion_scores(field, value))
    return scores


@dataclass(frozen=True)
class GradedOutputs:
    """How many of a run's outputs a session graded completely, sampled, and could sample."""

    complete: int
    sampled: int
    population: int


def graded_outputs(*, session: GradingSession, run: Run) -> GradedOutputs:
    """Return the run's outputs graded completely by ``session``, sampled by it, and in all.

    Complete: every assignment submitted and every disagreement adjudicated, as the
    estimators count them; a sampled output short of that is not "graded". The population
    is the run's succeeded outputs on its split. Four queries.
    """
    source = RunEvidenceSource(run=run, session=session, judge=None)
    labels, pending, _strata = source.final_labels
    return GradedOutputs(
        complete=len(labels), sampled=len(labels) + pending, population=len(source.index)
    )


def _final_labels(
    session: GradingSession, run: Run, index: Mapping[int, int]
) -> tuple[dict[int, dict[str, dict[str, str]]], int, set[str]]:
    """Return the final labels of the run's completely graded outputs, by output position,
    how many sampled outputs are pending, and the strata the run's outputs were drawn from."""
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
    return labels, pending, {artefact.stratum for artefact in artefacts}


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
