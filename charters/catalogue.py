"""The metric catalogue of SPEC §4, read from ``catalogue.yaml`` (the one data source).

Pure: no Django import. A charter picks its metrics from here; estimation, the gate and the
scorecard read each metric's direction, unit and grading modes from here too. The threshold
pair rule (:func:`threshold_pair_fault`) lives beside the directions it depends on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from enterpriseval.documents import config_data

CATALOGUE_PATH = Path(__file__).with_name("catalogue.yaml")
AUTONOMY_LABELS = ("A0", "A1", "A2", "A3", "A4")
Direction = Literal["higher", "lower"]
#: The agreement rules a charter may pre-register per human-graded metric (SPEC §5.1):
#: κ/α on the metric's criteria against the charter's κ target (the default), or Gwet's AC1
#: against a threshold the rule states, or a bias bound: the upper confidence limit of the final
#: labels' bias, from graders' error rates against the adjudicated values, below a stated
#: fraction of |θin − θout|.
KAPPA_RULE = "kappa"
AC1_RULE = "ac1"
BIAS_BOUND_RULE = "bias_bound"
AGREEMENT_RULES: tuple[str, ...] = (KAPPA_RULE, AC1_RULE, BIAS_BOUND_RULE)
PairFault = Literal["equal", "inverted"]
#: The success rules a charter may state (SPEC §4.1): how one output is judged a success.
SUCCESS_LABEL_EQUALS_GOLD = "label_equals_gold"
SUCCESS_KEY_ELEMENTS_PRESENT = "key_elements_present"
SUCCESS_RECORDED = "recorded"
SUCCESS_HUMAN_ACCEPTABLE = "human_acceptable"
SUCCESS_RULES: tuple[str, ...] = (
    SUCCESS_LABEL_EQUALS_GOLD,
    SUCCESS_KEY_ELEMENTS_PRESENT,
    SUCCESS_RECORDED,
    SUCCESS_HUMAN_ACCEPTABLE,
)
#: The optional rubric fields a charter may ask graders (``rubric_fields``, SPEC §4.1), in
#: rubric order (the fields themselves are ``grading.rubric``'s): whether the output's label is
#: correct, which makes classification accuracy human-graded, and "Acceptable as is?", which
#: the ``human_acceptable`` success rule reads.
RUBRIC_LABEL_CORRECT = "label_correct"
RUBRIC_ACCEPTABLE = "acceptable"
OPTIONAL_RUBRIC_FIELDS: tuple[str, ...] = (RUBRIC_LABEL_CORRECT, RUBRIC_ACCEPTABLE)
#: pass^k's gated k when the charter names none: 4 when K ≥ 4, else K (SPEC §4).
DEFAULT_PASS_K = 4


def default_pass_k(repeats: int) -> int:
    """Return the gated k of pass^k a charter without ``k`` reads: 4 when K ≥ 4, else K."""
    return DEFAULT_PASS_K if repeats >= DEFAULT_PASS_K else repeats


@dataclass(frozen=True)
class AgreementCriterion:
    """One criterion a human-graded metric uses: a rubric field collapsed to positive vs not.

    SPEC §5.1: agreement is measured on what the metric uses, not on the field's full scale
    (hallucination rate reads ``supported`` as fully-or-partially vs not).
    """

    name: str
    field: str
    positive: frozenset[str]
    label: str


@dataclass(frozen=True)
class CatalogueMetric:
    id: str
    name: str
    family: str
    direction: Direction
    unit: str
    grading: tuple[str, ...]
    level: int
    scale: str
    definition: str
    criteria: tuple[AgreementCriterion, ...] = ()
    agreement_exempt: str = ""  # why no inter-rater agreement applies to its human labels

    @property
    def level_label(self) -> str:
        return AUTONOMY_LABELS[self.level]

    @property
    def human_graded(self) -> bool:
        return "H" in self.grading

    def human_graded_when(self, rubric_fields: Iterable[str]) -> bool:
        """Return whether the metric rests on human labels under a charter asking
        ``rubric_fields``: one whose criteria read an optional rubric field (SPEC §4.1) is
        human-graded only when the charter asks that field."""
        optional = {c.field for c in self.criteria if c.field in OPTIONAL_RUBRIC_FIELDS}
        if optional:
            return self.human_graded and bool(optional & set(rubric_fields))
        return self.human_graded


@cache
def catalogue() -> dict[str, CatalogueMetric]:
    """Return the catalogue metrics by id, in catalogue order."""
    raw = config_data(CATALOGUE_PATH.read_text(encoding="utf-8"), str(CATALOGUE_PATH))
    metrics = {}
    for entry in raw["metrics"]:
        metric = CatalogueMetric(
            id=entry["id"],
            name=entry["name"],
            family=entry["family"],
            direction=entry["direction"],
            unit=entry["unit"],
            grading=tuple(entry["grading"]),
            level=int(entry["level"]),
            scale=entry["scale"],
            definition=entry["definition"],
            criteria=tuple(
                AgreementCriterion(
                    name=item["criterion"],
                    field=item["field"],
                    positive=frozenset(item["positive"]),
                    label=item["label"],
                )
                for item in entry.get("agreement") or ()
            ),
            agreement_exempt=entry.get("agreement_exempt", ""),
        )
        metrics[metric.id] = metric
    return metrics


def catalogue_metric(metric_id: str) -> CatalogueMetric:
    """Return one catalogue metric, or raise ``KeyError`` naming the unknown id."""
    try:
        return catalogue()[metric_id]
    except KeyError:
        raise KeyError(f"{metric_id!r} is not in the metric catalogue (SPEC §4)") from None


def metrics_required_at(autonomy: int) -> list[CatalogueMetric]:
    """Return the metrics whose level is at or below ``autonomy`` (each must be gated or
    informational with a reason)."""
    return [metric for metric in catalogue().values() if metric.level <= autonomy]


def threshold_pair_fault(
    *, direction: str | float, theta_out: float, theta_in: float
) -> PairFault | None:
    """Return what is wrong with a metric's threshold pair, or ``None`` if it is valid.

    Parameters
    ----------
    direction : {"higher", "lower"} or {+1, -1}
        Which way the metric is better, as a word or as the sign d.
    theta_out, theta_in : float
        The outer and inner thresholds.

    Returns
    -------
    {"equal", "inverted"} or None
        ``None`` when θin is strictly better than θout; ``"equal"`` when they coincide;
        ``"inverted"`` when θout is the better one.

    Notes
    -----
    SPEC §6.1 validity: d(θin − θout) > 0, with d = +1 where higher is better and d = −1
    where lower is better. An equal pair leaves no Conditional band and ν would divide by
    zero; an inverted one would scale a system that fails the bar it must clear.
    """
    if isinstance(direction, str):
        if direction not in ("higher", "lower"):
            raise ValueError(f"direction must be 'higher' or 'lower', got {direction!r}")
        sign = 1.0 if direction == "higher" else -1.0
    elif direction in (1, -1):
        sign = float(direction)
    else:
        raise ValueError(f"direction must be +1 or -1 as a sign, got {direction!r}")
    if sign * (theta_in - theta_out) > 0:  # SPEC §6.1 validity: d(θin − θout) > 0
        return None
    return "equal" if theta_in == theta_out else "inverted"
