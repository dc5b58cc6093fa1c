"""Per-output evidence of the unit-level metrics: judge scores for all, final grades for a sample.

SPEC §5.2: the sampling unit is the output. For one run and one metric this gathers, for
every succeeded output of the run's graded split:

- ``d``: the known denominator (sentences, cited chunks, key elements) — counted without
  grading, from the stored units;
- ``f_num``/``f_den``: the judge's numerator (and denominator, where it needs grading) summed
  over the output's units;
- ``labeled``, ``h_num``/``h_den``: whether humans graded the output completely in a
  session (every assignment submitted and every disputed field adjudicated), and the final
  human numerator/denominator (agreed or adjudicated values);
- ``stratum`` and ``inclusion_probability`` of the session's sample.

Outputs sampled but not yet completely graded count as unlabeled (missing at random within
their stratum); ``pending`` says how many. Seven queries whatever the number of outputs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grading.models import GradingSession, SessionArtefact
from grading.selectors.artefacts import submitted_field_values
from runs.models import Judge, JudgeScore, Output, OutputStatus, Run, Unit

Labels = Mapping[str, str]  # field → final human value of one unit
Scores = Mapping[str, float]  # judge criterion → score of one unit


@dataclass(frozen=True)
class UnitRule:
    """How one metric counts its units: which unit kind, and numerator/denominator per unit."""

    unit_kind: str
    human_num: Callable[[Labels], float | None]
    judge_num: Callable[[Scores], float | None]
    human_den: Callable[[Labels], float | None] | None = None  # None: the denominator is known
    judge_den: Callable[[Scores], float | None] | None = None


def _flag(value: bool) -> float:
    return 1.0 if value else 0.0


def _score(scores: Scores, criterion: str) -> float | None:
    return scores.get(criterion)


def _hallucinated_h(labels: Labels) -> float | None:
    if "assertive" not in labels:
        return None
    return _flag(labels["assertive"] == "Y" and labels.get("supported") == "not")


def _hallucinated_j(scores: Scores) -> float | None:
    assertive, supported = scores.get("assertive"), scores.get("supported")
    if assertive is None or supported is None:
        return None
    return assertive * (1.0 - supported)


def _irrelevant_j(scores: Scores) -> float | None:
    relevant = scores.get("relevant")
    return None if relevant is None else 1.0 - relevant


#: SPEC §4, the unit-level metrics a judge and humans both grade (guidance metrics are
#: human-only: the judge says whether an item is flagged, not whether it is truly breached).
UNIT_RULES: Mapping[str, UnitRule] = {
    "hallucination_rate": UnitRule("sentence", _hallucinated_h, _hallucinated_j),
    "irrelevance_rate": UnitRule(
        "sentence",
        lambda labels: None if "relevant" not in labels else _flag(labels["relevant"] == "N"),
        _irrelevant_j,
    ),
    "citation_precision_lenient": UnitRule(
        "cited_chunk",
        lambda labels: None if "citation" not in labels else _flag(labels["citation"] != "not"),
        lambda scores: _score(scores, "citation_lenient"),
    ),
    "citation_precision_strict": UnitRule(
        "cited_chunk",
        lambda labels: None if "citation" not in labels else _flag(labels["citation"] == "strict"),
        lambda scores: _score(scores, "citation_strict"),
    ),
    "key_element_capture": UnitRule(
        "key_element",
        lambda labels: (
            None
            if "key_element" not in labels
            else _flag(labels["key_element"] == "present_correct")
        ),
        lambda scores: _score(scores, "key_element_captured"),
    ),
    "guidance_precision": UnitRule(
        "guidance_item",
        lambda labels: None if "guidance" not in labels else _flag(labels["guidance"] == "TP"),
        lambda _scores: None,
        human_den=lambda labels: (
            None if "guidance" not in labels else _flag(labels["guidance"] in ("TP", "FP"))
        ),
        judge_den=lambda scores: _score(scores, "flagged"),
    ),
    "guidance_recall": UnitRule(
        "guidance_item",
        lambda labels: None if "guidance" not in labels else _flag(labels["guidance"] == "TP"),
        lambda _scores: None,
        human_den=lambda labels: (
            None if "guidance" not in labels else _flag(labels["guidance"] in ("TP", "FN"))
        ),
        judge_den=lambda _scores: None,
    ),
}


@dataclass(frozen=True)
class OutputEvidence:
    """Arrays aligned by output (see the module docstring); NaN where a value is absent."""

    metric_id: str
    output_ids: NDArray[np.int64]
    d: NDArray[np.float64]
    f_num: NDArray[np.float64]
    f_den: NDArray[np.float64]
    labeled: NDArray[np.bool_]
    h_num: NDArray[np.float64]
    h_den: NDArray[np.float64]
    stratum: list[str]
    inclusion_probability: NDArray[np.float64]
    judge_complete: bool
    pending: int

    @property
    def n_outputs(self) -> int:
        return len(self.output_ids)

    @property
    def n_labeled(self) -> int:
        return int(self.labeled.sum())


def unit_metric_evidence(
    *, metric_id: str, run: Run, session: GradingSession | None, judge: Judge | None
) -> OutputEvidence:
    """Return the per-output evidence of ``metric_id`` for ``run`` (see the module docstring)."""
    if metric_id not in UNIT_RULES:
        raise ValueError(
            f"metric_id: {metric_id!r} is not a unit-level metric ({', '.join(UNIT_RULES)})"
        )
    rule = UNIT_RULES[metric_id]
    outputs = list(
        Output.objects.filter(run=run, status=OutputStatus.SUCCEEDED, task__split="graded")
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    index = {pk: i for i, pk in enumerate(outputs)}
    size = len(outputs)
    d = np.zeros(size)
    units: dict[int, tuple[int, str]] = {}
    for unit_pk, output_id, key in Unit.objects.filter(
        output_id__in=outputs, kind=rule.unit_kind
    ).values_list("pk", "output_id", "key"):
        d[index[output_id]] += 1
        units[unit_pk] = (output_id, key)

    f_num = np.full(size, np.nan)
    f_den = np.full(size, np.nan)
    judge_complete = False
    if judge is not None:
        scores: dict[int, dict[str, float]] = defaultdict(dict)
        for unit_id, criterion, value in JudgeScore.objects.filter(
            judge=judge, unit_id__in=list(units)
        ).values_list("unit_id", "criterion", "score"):
            scores[unit_id][criterion] = value
        f_num, f_den, judge_complete = _judge_sums(rule, units, scores, index, size)

    labeled = np.zeros(size, dtype=bool)
    h_num = np.full(size, np.nan)
    h_den = np.full(size, np.nan)
    stratum = [""] * size
    probability = np.ones(size)
    pending = 0
    if session is not None:
        artefacts = list(
            SessionArtefact.objects.filter(session=session, output__run=run).order_by("pk")
        )
        for artefact in artefacts:
            i = index.get(artefact.output_id or -1)
            if i is not None:
                stratum[i] = artefact.stratum
                probability[i] = artefact.inclusion_probability
        by_artefact: dict[int, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
        undecided: set[int] = set()
        for value in submitted_field_values(artefacts):
            if value.final is None:
                undecided.add(value.artefact_id)
            else:
                by_artefact[value.artefact_id][value.unit_key][value.field] = value.final
        keys_of: dict[int, list[str]] = defaultdict(list)
        for output_id, key in units.values():
            keys_of[output_id].append(key)
        for artefact in artefacts:
            i = index.get(artefact.output_id or -1)
            if i is None:
                continue
            if artefact.pk not in by_artefact or artefact.pk in undecided:
                pending += 1
                continue
            labels = by_artefact[artefact.pk]
            num = [rule.human_num(labels.get(key, {})) for key in keys_of[artefact.output_id]]
            if any(v is None for v in num):
                pending += 1
                continue
            labeled[i] = True
            h_num[i] = float(sum(v for v in num if v is not None))
            if rule.human_den is not None:
                den = [rule.human_den(labels.get(k, {})) for k in keys_of[artefact.output_id]]
                h_den[i] = float(sum(v for v in den if v is not None))
    return OutputEvidence(
        metric_id=metric_id,
        output_ids=np.array(outputs, dtype=np.int64),
        d=d,
        f_num=f_num,
        f_den=f_den,
        labeled=labeled,
        h_num=h_num,
        h_den=h_den,
        stratum=stratum,
        inclusion_probability=probability,
        judge_complete=judge_complete,
        pending=pending,
    )


def _judge_sums(
    rule: UnitRule,
    units: Mapping[int, tuple[int, str]],
    scores: Mapping[int, Mapping[str, float]],
    index: Mapping[int, int],
    size: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64], bool]:
    f_num = np.zeros(size)
    f_den = np.zeros(size)
    complete = True
    for unit_id, (output_id, _key) in units.items():
        unit_scores = scores.get(unit_id, {})
        num = rule.judge_num(unit_scores)
        if num is None:
            complete = False
        else:
            f_num[index[output_id]] += num
        if rule.judge_den is not None:
            den = rule.judge_den(unit_scores)
            if den is None:
                complete = False
            else:
                f_den[index[output_id]] += den
    if not complete:
        f_num[:] = np.nan
        f_den[:] = np.nan
    return f_num, f_den, complete and bool(units)
