"""Charter validation: what a charter owner must fix before signing (SPEC §2, §4, §5.3, §6).

Pure: no Django import. :func:`charter_validate` takes a charter document in the shape of
:mod:`charters.charter_document` and returns a :class:`ValidationReport`: issues (errors
block signing; warnings and notes do not), the normalised gate weights, the alternative
weightings resolved over the gated metrics, the planning rows of SPEC §5.3 and the
evidence the use case's evaluation intensity E(a, c) will need (SPEC §6.4).

Every message names the metric and the field, and says which way a value must go.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scipy.stats import norm

from charters.catalogue import (
    AUTONOMY_LABELS,
    BIAS_BOUND_RULE,
    RUBRIC_ACCEPTABLE,
    RUBRIC_LABEL_CORRECT,
    SUCCESS_HUMAN_ACCEPTABLE,
    SUCCESS_KEY_ELEMENTS_PRESENT,
    SUCCESS_LABEL_EQUALS_GOLD,
    SUCCESS_RULES,
    CatalogueMetric,
    catalogue,
    threshold_pair_fault,
)
from enterpriseval.currencies import currency_problem
from enterpriseval.stats import required_sample_size
from enterpriseval.values import finite_number, is_whole, number_text, type_name
from gates.algorithm import resolve_alternative_weights
from gates.value_model import TimeInput, ValueInputs

Level = Literal["error", "warning", "info"]
# The values of charters.models.charters.Treatment, for code that imports no Django.
GATED = "gated"
INFORMATIONAL = "informational"
TREATMENTS: tuple[str, ...] = (GATED, INFORMATIONAL)
MEASUREMENT_MODES: tuple[str, ...] = ("estimated", "observed")
GRADING_MODES: tuple[str, ...] = ("H", "J", "A")
# Tolerance for "alternative weights sum to more than 1" (the gate's, gates/algorithm.py).
_SUM_TOLERANCE = 1e-9
# Minimum evidence before a decision other than Undetermined, cumulative in E (SPEC §6.4).
INTENSITY_REQUIREMENTS: dict[int, str] = {
    1: "automatic or judge metrics with CIs; n reported",
    2: "human grading with ≥ 2 graders and κ per field; cluster-robust CIs; gates on "
    "conservative bounds",
    3: "K ≥ 4 repeats with pass^1/2/4; calibrated judge with PPI; stress set reported",
    4: "adversarial injected-instruction suite; oversight study (seeded defects, ρ_catch, FAR); "
    "independent second-line sign-off",
}
MIN_REPEATS_FROM_E3 = 4
# Value-model inputs a charter states in advance (gates/value_model.py ValueInputs); the
# graded proportions and whether the baseline was observed come from the evaluation itself.
VALUE_TIME_INPUTS: tuple[str, ...] = ("t_manual", "t_gen", "t_review")
VALUE_FROM_RESULTS: dict[str, str] = {
    "hallucination": "the graded hallucination counts of the evaluation",
    "catch": "the seeded-defect oversight study",
    "baseline_observed": "measurement_mode",
}
VALUE_REQUIRED: tuple[str, ...] = tuple(
    f.name
    for f in dataclasses.fields(ValueInputs)
    if f.default is dataclasses.MISSING and f.name not in VALUE_FROM_RESULTS
)
# The ISO 4217 code every amount of the value inputs is in; required with them (SPEC §6.3).
VALUE_CURRENCY = "currency"
VALUE_INPUTS: tuple[str, ...] = (
    VALUE_CURRENCY,
    *(f.name for f in dataclasses.fields(ValueInputs) if f.name not in VALUE_FROM_RESULTS),
)
VALUE_SIGNED: tuple[str, ...] = ("quality_value", "avoided_value")


@dataclass(frozen=True)
class Issue:
    """One finding: ``level`` error (blocks signing), warning or info, at ``field``."""

    level: Level
    field: str
    message: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "field": self.field,
            "message": self.message,
            "line": self.line,
        }


#: Metrics that read each output's success by the charter's success rule (SPEC §4.1).
SUCCESS_METRICS: tuple[str, ...] = ("pass_hat_k", "dispersion", "cost_per_successful_task")
#: Metrics that read the task set's gold labels and the outputs' labels (SPEC §4.1).
LABEL_METRICS: tuple[str, ...] = ("classification_accuracy", "classification_macro_f1")
PASS_HAT_K = "pass_hat_k"  # noqa: S105 (a metric id, not a secret)


@dataclass(frozen=True)
class TaskSetSupply:
    """What one task set of the use case supplies to the metrics (SPEC §4.1).

    ``name`` is how messages name it ("controls v2"); ``gold_labels`` means it declares a
    label set and every graded task carries its gold label.
    """

    name: str
    label_set: bool
    gold_labels: bool
    key_elements: bool


@dataclass(frozen=True)
class PlanningRow:
    """SPEC §5.3 for one gated metric: the CI half-width expected at the planned n."""

    metric_id: str
    planned_n: int
    p: float
    half_width: float
    gap: float
    sufficient_n: int | None

    @property
    def enough(self) -> bool:
        return self.sufficient_n is None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"enough": self.enough}


@dataclass
class ValidationReport:
    """The outcome of :func:`charter_validate`; ``ok`` means no errors."""

    issues: list[Issue] = field(default_factory=list)
    normalised_weights: dict[str, float] = field(default_factory=dict)
    alternative_weights: dict[str, dict[str, float]] = field(default_factory=dict)
    requirements: list[str] = field(default_factory=list)
    planning: list[PlanningRow] = field(default_factory=list)
    intensity: int | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def errors(self) -> list[Issue]:
        return [issue for issue in self.issues if issue.level == "error"]

    @property
    def warnings(self) -> list[Issue]:
        return [issue for issue in self.issues if issue.level == "warning"]

    @property
    def infos(self) -> list[Issue]:
        return [issue for issue in self.issues if issue.level == "info"]

    def add(self, level: Level, field_path: str, message: str) -> None:
        self.issues.append(Issue(level, field_path, message))

    def by_metric(self) -> dict[str, list[Issue]]:
        """Return the errors and warnings at each metric's fields (``metrics[<id>]…``), by id."""
        found: dict[str, list[Issue]] = {}
        for issue in self.errors + self.warnings:
            head, bracket, rest = issue.field.partition("[")
            if head == "metrics" and bracket and "]" in rest:
                found.setdefault(rest.split("]", 1)[0], []).append(issue)
        return found

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "intensity": None if self.intensity is None else f"E{self.intensity}",
            "issues": [issue.to_dict() for issue in self.issues],
            "normalised_weights": self.normalised_weights,
            "alternative_weights": self.alternative_weights,
            "requirements": self.requirements,
            "planning": [row.to_dict() for row in self.planning],
        }


def evaluation_intensity(autonomy: int, consequence: int) -> int:
    """Return E(a, c) = ⌈(a + c) / 2⌉ (SPEC §2)."""
    return math.ceil((autonomy + consequence) / 2)


def intensity_requirements(intensity: int) -> list[str]:
    """Return the cumulative minimum evidence of SPEC §6.4 for evaluation intensity E."""
    return [f"E{level}: {INTENSITY_REQUIREMENTS[level]}" for level in range(1, intensity + 1)]


def charter_validate(
    document: Mapping[str, Any],
    *,
    autonomy: int,
    consequence: int,
    today: dt.date | None = None,
    task_sets: Sequence[TaskSetSupply] | None = None,
) -> ValidationReport:
    """Return the validation report of a charter document for a use case's a and c.

    ``today`` (default: today in UTC) is the date a past ``next_review_date`` is judged by;
    services pass the local date of the site. ``task_sets`` describes what the use case's
    task sets supply: a gated metric whose inputs none of them supplies is an error naming
    the missing field (SPEC §4.1); ``None`` (or none imported yet) leaves that check to the
    decision, which says which field is missing.
    """
    report = ValidationReport()
    intensity = evaluation_intensity(autonomy, consequence)
    report.intensity = intensity
    report.requirements = intensity_requirements(intensity)
    if not isinstance(document, Mapping):
        report.add("error", "", f"a charter is a mapping of fields, got {type_name(document)}")
        return report
    _check_classification(document, autonomy, consequence, intensity, report)
    scalars = _check_scalars(document, report)
    gated = _check_metrics(document.get("metrics"), autonomy, _asked(document), report)
    _check_weights(gated, report)
    _check_alternatives(document.get("alternative_weights"), gated, report)
    _check_intensity(gated, scalars, intensity, _asked(document), report)
    _check_planning(gated, scalars.get("confidence"), report)
    _check_value_inputs(document.get("value_inputs"), report)
    _check_governance(document, scalars, today, report)
    _check_success(document, scalars, report)
    _check_label_grading(document, _metric_entries(document), report)
    _check_supply(document, task_sets, report)
    return report


# --------------------------------------------------------------------------- parts


@dataclass
class _Gated:
    index: int
    metric: CatalogueMetric
    entry: Mapping[str, Any]
    theta_out: float | None
    theta_in: float | None
    weight: float | None
    planned_n: int | None
    pair_valid: bool

    @property
    def path(self) -> str:
        return f"metrics[{self.metric.id}]"


def _check_classification(
    document: Mapping[str, Any],
    autonomy: int,
    consequence: int,
    intensity: int,
    report: ValidationReport,
) -> None:
    expected = {
        "autonomy": ("A", autonomy),
        "consequence": ("C", consequence),
        "intensity": ("E", intensity),
    }
    for name, (prefix, value) in expected.items():
        given = document.get(name)
        if given is None:
            continue
        label = f"{prefix}{value}"
        if str(given) != label and given != value:
            report.add(
                "error",
                name,
                f"{name} is {given!r} in the charter but the use case is {label}; a charter is "
                f"written for its use case's classification (A{autonomy}/C{consequence} → "
                f"E{intensity})",
            )


def _metric_entries(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    raw = document.get("metrics")
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        return {}
    return {
        entry["id"]: entry
        for entry in raw
        if isinstance(entry, Mapping) and isinstance(entry.get("id"), str)
    }


def _check_success(
    document: Mapping[str, Any], scalars: Mapping[str, Any], report: ValidationReport
) -> None:
    """The success rule and pass^k's k (SPEC §4, §4.1)."""
    rule = document.get("success_rule")
    if rule is not None and rule not in SUCCESS_RULES:
        report.add(
            "error",
            "success_rule",
            f"success_rule must be one of {', '.join(SUCCESS_RULES)}, got {rule!r}",
        )
        rule = None
    entries = _metric_entries(document)
    asked = _asked(document)
    for metric_id in SUCCESS_METRICS:
        entry = entries.get(metric_id)
        if entry is not None and rule == SUCCESS_HUMAN_ACCEPTABLE:
            _check_acceptable(metric_id, entry, asked, report)
            continue
        if entry is None or rule:
            continue
        gated = entry.get("treatment") == GATED
        report.add(
            "error" if gated else "warning",
            "success_rule",
            f"{metric_id} counts successful tasks, but the charter states no success_rule "
            f"({', '.join(SUCCESS_RULES)}): producing an output is completion, not success, so "
            f"{metric_id} would have no estimate",
        )
    for metric_id, entry in entries.items():
        k = entry.get("k")
        if k is None:
            continue
        path = f"metrics[{metric_id}].k"
        if metric_id != PASS_HAT_K:
            report.add("error", path, f"k belongs to pass_hat_k only; remove it from {metric_id}")
        elif not is_whole(k) or k < 1:
            report.add("error", path, f"pass_hat_k: k must be a whole number ≥ 1, got {k!r}")
        elif is_whole(scalars.get("repeats_k")) and k > scalars["repeats_k"]:
            report.add(
                "error",
                path,
                f"pass_hat_k: k = {k} needs at least {k} repeats, but repeats_k is "
                f"{scalars['repeats_k']}",
            )


def _asked(document: Mapping[str, Any]) -> tuple[str, ...]:
    raw = document.get("rubric_fields") or ()
    return tuple(name for name in raw if isinstance(name, str))


def _check_acceptable(
    metric_id: str, entry: Mapping[str, Any], asked: Sequence[str], report: ValidationReport
) -> None:
    """Success by human_acceptable reads the "Acceptable as is?" grade of every output."""
    if RUBRIC_ACCEPTABLE not in asked:
        report.add(
            "error" if entry.get("treatment") == GATED else "warning",
            "rubric_fields",
            f"{metric_id} reads success by human_acceptable, but the charter's rubric_fields "
            f'does not ask {RUBRIC_ACCEPTABLE!r} ("Acceptable as is?"), so no output\'s success '
            f"would be known; add {RUBRIC_ACCEPTABLE} to rubric_fields",
        )
        return
    report.add(
        "info",
        f"metrics[{metric_id}]",
        f"{metric_id} by human_acceptable: an output's success is its adjudicated \"Acceptable "
        'as is?" grade, and an output not graded is unknown (never a success), so the run '
        "has an estimate only when the grading session grades every output of it, all K "
        "repeats of each task (a sample of outputs leaves it with no estimate)",
    )


def _check_label_grading(
    document: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]], report: ValidationReport
) -> None:
    """A classification metric graded by humans needs the ``label_correct`` field asked."""
    asked = RUBRIC_LABEL_CORRECT in _asked(document)
    for metric_id in LABEL_METRICS:
        entry = entries.get(metric_id)
        if entry is None:
            continue
        grading = entry.get("grading")
        modes = [grading] if isinstance(grading, str) else grading
        if isinstance(modes, Sequence) and "H" in modes and not asked:
            report.add(
                "error",
                "rubric_fields",
                f"{metric_id} is graded by humans (grading H), but the charter's rubric_fields "
                f'does not ask {RUBRIC_LABEL_CORRECT!r} ("Classification correct?"); add it',
            )
    if asked and not any(metric_id in entries for metric_id in LABEL_METRICS):
        report.add(
            "warning",
            "rubric_fields",
            f"{RUBRIC_LABEL_CORRECT} is asked of graders, but the charter has no classification "
            "metric (classification_accuracy, classification_macro_f1) to read it",
        )


def _check_supply(
    document: Mapping[str, Any],
    task_sets: Sequence[TaskSetSupply] | None,
    report: ValidationReport,
) -> None:
    """Refuse to gate what no task set of the use case can supply, naming the field."""
    if not task_sets:
        return
    names = ", ".join(supply.name for supply in task_sets)
    entries = _metric_entries(document)
    human_labels = RUBRIC_LABEL_CORRECT in _asked(document)
    for metric_id in LABEL_METRICS:
        entry = entries.get(metric_id)
        if entry is None or entry.get("treatment") != GATED:
            continue
        if human_labels and not any(supply.label_set for supply in task_sets):
            report.add(
                "error",
                f"metrics[{metric_id}]",
                f"{metric_id} graded by humans ({RUBRIC_LABEL_CORRECT}) needs a label_set: the "
                f"graders are shown each output's label; no task set of the use case declares "
                f"one ({names})",
            )
        elif not human_labels and not any(supply.gold_labels for supply in task_sets):
            report.add(
                "error",
                f"metrics[{metric_id}]",
                f"{metric_id} needs gold_label on every graded task (and a label_set header); "
                f"no task set of the use case has them ({names}): import one with labels, or "
                "make the metric informational",
            )
    rule = document.get("success_rule")
    if rule == SUCCESS_LABEL_EQUALS_GOLD and not any(s.label_set for s in task_sets):
        report.add(
            "error",
            "success_rule",
            "label_equals_gold needs a label_set (and gold_label on the tasks); no task set of "
            f"the use case declares one ({names})",
        )
    if rule == SUCCESS_KEY_ELEMENTS_PRESENT and not any(s.key_elements for s in task_sets):
        report.add(
            "error",
            "success_rule",
            "key_elements_present needs key_elements on the tasks; no task set of the use case "
            f"has any ({names})",
        )


def _check_scalars(document: Mapping[str, Any], report: ValidationReport) -> dict[str, Any]:
    values: dict[str, Any] = {}
    nu_max = finite_number(document.get("nu_max", 3.0))
    if nu_max is None or nu_max <= 0:
        report.add(
            "error",
            "nu_max",
            f"ν_max must be a number > 0 (default 3), got {document.get('nu_max')!r}",
        )
    values["nu_max"] = nu_max
    confidence = finite_number(document.get("confidence", 0.95))
    if confidence is None or not 0 < confidence < 1:
        report.add(
            "error",
            "confidence",
            f"the confidence level must be in the open interval (0, 1), e.g. 0.95, got "
            f"{document.get('confidence')!r}",
        )
        confidence = None
    values["confidence"] = confidence
    kappa = finite_number(document.get("kappa_target", 0.6))
    if kappa is None or not -1 <= kappa <= 1:
        report.add(
            "error",
            "kappa_target",
            f"the κ target must be in [-1, 1] (default 0.6), got {document.get('kappa_target')!r}",
        )
    values["kappa_target"] = kappa
    repeats = document.get("repeats_k", 1)
    if not is_whole(repeats) or repeats < 1:
        report.add("error", "repeats_k", f"K repeats must be a whole number ≥ 1, got {repeats!r}")
        repeats = None
    values["repeats_k"] = repeats
    mode = document.get("measurement_mode", "estimated")
    if mode not in MEASUREMENT_MODES:
        report.add(
            "error",
            "measurement_mode",
            f"measurement_mode must be 'estimated' or 'observed', got {mode!r}",
        )
    values["measurement_mode"] = mode
    return values


def _check_metrics(
    raw: Any, autonomy: int, asked: Sequence[str], report: ValidationReport
) -> list[_Gated]:
    known = catalogue()
    gated: list[_Gated] = []
    covered: set[str] = set()
    if raw is None:
        raw = []
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        report.add("error", "metrics", f"metrics must be a list, got {type_name(raw)}")
        raw = []
    seen: set[str] = set()
    for index, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            report.add(
                "error",
                f"metrics[{index}]",
                f"each metric is a mapping with an id, got {type_name(entry)}",
            )
            continue
        metric_id = entry.get("id")
        if not isinstance(metric_id, str) or metric_id not in known:
            close = difflib.get_close_matches(str(metric_id), list(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            report.add(
                "error",
                f"metrics[{index}].id",
                f"unknown metric id {metric_id!r}: not in the metric catalogue (SPEC §4){hint}",
            )
            continue
        if metric_id in seen:
            report.add(
                "error",
                f"metrics[{metric_id}]",
                f"{metric_id} appears twice; each catalogue metric appears once",
            )
            continue
        seen.add(metric_id)
        metric = known[metric_id]
        path = f"metrics[{metric_id}]"
        _check_catalogue_fields(entry, metric, path, report)
        _check_agreement_rule(entry, metric, path, asked, report)
        treatment = entry.get("treatment")
        if treatment == GATED:
            covered.add(metric_id)
            gated.append(_check_gated(index, entry, metric, report))
        elif treatment == INFORMATIONAL:
            if _text(entry.get("reason")):
                covered.add(metric_id)
            else:
                report.add(
                    "error",
                    f"{path}.reason",
                    f"{metric_id} is informational and needs the reason it is not gated "
                    "(e.g. it maps to no material harm of this use case)",
                )
            _check_informational(entry, metric, path, report)
        else:
            report.add(
                "error",
                f"{path}.treatment",
                f"{metric_id}: treatment must be 'gated' or 'informational', got {treatment!r} "
                "(leave a metric out of the charter to not use it)",
            )
    if not gated:
        report.add(
            "error", "metrics", "a charter gates at least one metric (θout, θin and a weight)"
        )
    missing = [
        metric.id
        for metric in known.values()
        if metric.level <= autonomy and metric.id not in covered and metric.id not in seen
    ]
    if missing:
        label = AUTONOMY_LABELS[autonomy] if 0 <= autonomy < len(AUTONOMY_LABELS) else autonomy
        report.add(
            "error",
            "metrics",
            f"at autonomy {label} every catalogue metric of level ≤ {label} must be gated, or "
            f"informational with a reason (SPEC §6.4); missing: {', '.join(missing)}",
        )
    return gated


def _check_catalogue_fields(
    entry: Mapping[str, Any], metric: CatalogueMetric, path: str, report: ValidationReport
) -> None:
    direction = entry.get("direction")
    if direction is not None and direction != metric.direction:
        report.add(
            "error",
            f"{path}.direction",
            f"{metric.id}: the catalogue says {metric.direction} is better, the charter says "
            f"{direction!r}; the direction comes from the catalogue",
        )
    grading = entry.get("grading")
    if grading is None:
        return
    modes = [grading] if isinstance(grading, str) else grading
    if not isinstance(modes, Sequence) or not all(isinstance(m, str) for m in modes):
        report.add(
            "error",
            f"{path}.grading",
            f"{metric.id}: grading is a list of modes (H, J, A), got {grading!r}",
        )
        return
    allowed = ", ".join(metric.grading)
    for mode in modes:
        if mode not in GRADING_MODES:
            report.add(
                "error",
                f"{path}.grading",
                f"{metric.id}: unknown grading mode {mode!r}; expected H, J or A",
            )
        elif mode not in metric.grading:
            what = "automatically (A)" if mode == "A" else f"as {mode}"
            report.add(
                "error",
                f"{path}.grading",
                f"{metric.id} cannot be graded {what}: the catalogue allows {allowed}",
            )
    report.add(
        "info",
        f"{path}.grading",
        f"{metric.id}: the charter records the catalogue's grading modes ({allowed}); the "
        "grading mode of each estimate is reported with it at gate time",
    )


def _check_agreement_rule(
    entry: Mapping[str, Any],
    metric: CatalogueMetric,
    path: str,
    asked: Sequence[str],
    report: ValidationReport,
) -> None:
    """A pre-registered agreement rule belongs to a metric with human labels (SPEC §5.1)."""
    if entry.get("agreement") is None:
        return
    if not metric.human_graded_when(asked) or not metric.criteria:
        report.add(
            "error",
            f"{path}.agreement",
            f"{metric.id} is not human-graded, so it has no agreement rule; remove "
            "agreement from this row",
        )
        return
    rule = entry["agreement"].get("rule") if isinstance(entry["agreement"], Mapping) else None
    thresholds = (finite_number(entry.get("theta_in")), finite_number(entry.get("theta_out")))
    if rule == BIAS_BOUND_RULE and None in thresholds:
        report.add(
            "error",
            f"{path}.agreement",
            f"{metric.id}: rule {BIAS_BOUND_RULE} compares the bias bound with a fraction of "
            "|θin − θout|, so it needs both thresholds (a gated metric); choose kappa or ac1 "
            "for an informational metric",
        )


def _check_gated(
    index: int, entry: Mapping[str, Any], metric: CatalogueMetric, report: ValidationReport
) -> _Gated:
    path = f"metrics[{metric.id}]"
    theta_out = _threshold(entry, "theta_out", metric, path, report)
    theta_in = _threshold(entry, "theta_in", metric, path, report)
    pair_valid = False
    if theta_out is not None and theta_in is not None:
        fault = threshold_pair_fault(
            direction=metric.direction, theta_out=theta_out, theta_in=theta_in
        )
        if fault is None:
            pair_valid = True
        else:
            kind = f"{fault} pair"
            relation = "above" if metric.direction == "higher" else "below"
            report.add(
                "error",
                f"{path}.theta_in",
                f"{metric.id}: {kind} — θout = {_fmt(theta_out)}, θin = {_fmt(theta_in)}; "
                f"{metric.direction} is better, so θin must be strictly {relation} θout "
                f"(SPEC §6.1)",
            )
        _check_scale(metric, path, theta_out, theta_in, report)
    weight = finite_number(entry.get("weight"))
    if weight is None or weight <= 0:
        given = entry.get("weight")
        report.add(
            "error",
            f"{path}.weight",
            f"{metric.id} is gated and needs a weight > 0, got "
            f"{'nothing' if given is None else repr(given)}",
        )
        weight = None
    planned = entry.get("planned_n")
    planned_n: int | None = None
    if planned is not None:
        if is_whole(planned) and planned >= 1:
            planned_n = int(planned)
        else:
            report.add(
                "error",
                f"{path}.planned_n",
                f"{metric.id}: planned n must be a whole number ≥ 1, got {planned!r}",
            )
    if not _text(entry.get("harm_statement")):
        report.add(
            "warning",
            f"{path}.harm_statement",
            f"{metric.id} is gated but states no harm; say which material harm it guards against",
        )
    return _Gated(index, metric, entry, theta_out, theta_in, weight, planned_n, pair_valid)


def _threshold(
    entry: Mapping[str, Any],
    name: str,
    metric: CatalogueMetric,
    path: str,
    report: ValidationReport,
) -> float | None:
    value = entry.get(name)
    number = finite_number(value)
    symbol = "θout" if name == "theta_out" else "θin"
    if value is None:
        report.add("error", f"{path}.{name}", f"{metric.id} is gated and needs {symbol}")
    elif number is None:
        report.add(
            "error",
            f"{path}.{name}",
            f"{metric.id}: {symbol} must be a finite number, got {value!r}",
        )
    return number


def _check_scale(
    metric: CatalogueMetric,
    path: str,
    theta_out: float,
    theta_in: float,
    report: ValidationReport,
) -> None:
    bounds = {"percent": (0.0, 100.0), "proportion": (0.0, 1.0)}.get(metric.scale)
    if bounds is None:
        if min(theta_out, theta_in) < 0:
            report.add(
                "error",
                f"{path}.theta_out",
                f"{metric.id} is a {metric.scale}; thresholds cannot be negative",
            )
        return
    low, high = bounds
    for name, value in (("theta_out", theta_out), ("theta_in", theta_in)):
        if not low <= value <= high:
            report.add(
                "error",
                f"{path}.{name}",
                f"{metric.id} is on a {metric.scale} scale ({_fmt(low)}–{_fmt(high)}), "
                f"got {_fmt(value)}",
            )
    if metric.scale == "percent" and max(theta_out, theta_in) <= 1 and max(theta_out, theta_in) > 0:
        report.add(
            "warning",
            f"{path}.theta_out",
            f"{metric.id} is a percentage (0–100) but both thresholds are ≤ 1 "
            f"({_fmt(theta_out)}, {_fmt(theta_in)}); did you give fractions?",
        )


def _check_informational(
    entry: Mapping[str, Any], metric: CatalogueMetric, path: str, report: ValidationReport
) -> None:
    unused = [name for name in ("theta_out", "theta_in", "weight") if entry.get(name) is not None]
    if unused:
        report.add(
            "warning",
            f"{path}.{unused[0]}",
            f"{metric.id} is informational: its {', '.join(unused)} will not be used by the gate",
        )


def _check_weights(gated: list[_Gated], report: ValidationReport) -> None:
    weighted = [g for g in gated if g.weight is not None]
    total = math.fsum(g.weight for g in weighted if g.weight is not None)
    if not weighted or total <= 0:
        return
    report.normalised_weights = {
        g.metric.id: g.weight / total for g in weighted if g.weight is not None
    }


def _check_alternatives(raw: Any, gated: list[_Gated], report: ValidationReport) -> None:
    if raw is None:
        return
    if not isinstance(raw, Mapping):
        report.add(
            "error",
            "alternative_weights",
            f"expected a mapping of weighting name → {{metric id: weight}}, got {type_name(raw)}",
        )
        return
    ids = [g.metric.id for g in gated]
    for name, weights in raw.items():
        path = f"alternative_weights.{name}"
        if not isinstance(weights, Mapping) or not weights:
            report.add(
                "error", path, f"weighting {name!r}: expected a mapping of gated metric id → weight"
            )
            continue
        usable = True
        named: dict[str, float] = {}
        for metric_id, weight in weights.items():
            number = finite_number(weight)
            if metric_id not in ids:
                report.add(
                    "error",
                    f"{path}.{metric_id}",
                    f"weighting {name!r} names {metric_id!r}, which is not a gated metric of "
                    f"this charter; expected one of {', '.join(ids) or '(none gated)'}",
                )
                usable = False
            elif number is None or number < 0:
                report.add(
                    "error",
                    f"{path}.{metric_id}",
                    f"weighting {name!r}: {metric_id} needs a weight ≥ 0, got {weight!r}",
                )
                usable = False
            else:
                named[metric_id] = number
        if not usable:
            continue
        total = math.fsum(named.values())
        if total > 1 + _SUM_TOLERANCE:
            # The gate refuses this too (gates/algorithm.py): the weights are on the
            # normalised scale, and metrics a weighting does not name share 1 − Σ named.
            report.add(
                "error",
                path,
                f"weighting {name!r}: weights sum to {_fmt(total)}, more than 1; they are on the "
                "normalised scale and the metrics it does not name share 1 minus their sum",
            )
            continue
        try:
            resolved = resolve_alternative_weights(named, ids)
        except ValueError as error:
            report.add("error", path, f"weighting {name!r}: {error}")
            continue
        report.alternative_weights[str(name)] = {
            metric_id: float(weight) for metric_id, weight in zip(ids, resolved, strict=True)
        }


def _check_intensity(
    gated: list[_Gated],
    scalars: Mapping[str, Any],
    intensity: int,
    asked: Sequence[str],
    report: ValidationReport,
) -> None:
    repeats = scalars.get("repeats_k")
    if intensity >= 3 and repeats is not None and repeats < MIN_REPEATS_FROM_E3:
        report.add(
            "error",
            "repeats_k",
            f"at E{intensity} the evaluation needs K ≥ {MIN_REPEATS_FROM_E3} repeats to report "
            f"pass^1/2/4 (SPEC §6.4), got K = {repeats}",
        )
    if intensity >= 2:
        for g in gated:
            human = g.metric.human_graded_when(asked)
            if human and g.planned_n is None and g.entry.get("planned_n") is None:
                report.add(
                    "error",
                    f"{g.path}.planned_n",
                    f"{g.metric.id} is human-graded and at E{intensity} needs a planned n "
                    f"(units to grade) before signing (SPEC §5.3, §6.4)",
                )
    if scalars.get("measurement_mode") == "estimated":
        report.add(
            "info",
            "measurement_mode",
            "the baseline is estimated: a value claim needs an observed baseline "
            "(measurement_mode 'observed', SPEC §6.3); until then value is labelled estimated",
        )


def _check_planning(
    gated: list[_Gated], confidence: float | None, report: ValidationReport
) -> None:
    if confidence is None:
        return
    alpha = 1 - confidence
    z = float(norm.ppf(1 - alpha / 2))
    level = f"{_fmt(confidence * 100)}%"
    for g in gated:
        if (
            g.planned_n is None
            or not g.pair_valid
            or g.metric.scale not in ("percent", "proportion")
        ):
            continue
        assert g.theta_in is not None and g.theta_out is not None
        unit = 100.0 if g.metric.scale == "percent" else 1.0
        p = g.theta_in / unit
        points = " points" if unit == 100 else ""
        if not 0 < p < 1:
            report.add(
                "info",
                f"{g.path}.planned_n",
                f"{g.metric.id}: θin = {_fmt(g.theta_in)} is at the edge of the scale, so the "
                "normal-approximation half-width at the planned n cannot be stated",
            )
            continue
        half_width = z * math.sqrt(p * (1 - p) / g.planned_n) * unit  # SPEC §5.3
        gap = abs(g.theta_in - g.theta_out)
        sufficient = None
        if gap < half_width:
            sufficient = required_sample_size(p, margin=gap / unit, alpha=alpha)
            report.add(
                "warning",
                f"{g.path}.planned_n",
                f"{g.metric.id}: the gap |θin − θout| = {_fmt(gap)}{points} is smaller than the "
                f"expected {level} CI half-width ±{_fmt(half_width, 2)}{points} at planned "
                f"n = {g.planned_n} (p = θin = {_fmt(p, 4)}); about n = {sufficient} units "
                f"would suffice (SPEC §5.3)",
            )
        else:
            report.add(
                "info",
                f"{g.path}.planned_n",
                f"{g.metric.id}: at planned n = {g.planned_n} the expected {level} CI half-width "
                f"is ±{_fmt(half_width, 2)}{points} (z·√(p(1−p)/n), p = θin = {_fmt(p, 4)}), "
                f"within the gap |θin − θout| = {_fmt(gap)}{points}",
            )
        report.planning.append(
            PlanningRow(g.metric.id, g.planned_n, p, half_width, gap, sufficient)
        )


def _check_value_inputs(raw: Any, report: ValidationReport) -> None:
    if raw is None or raw == {}:
        report.add(
            "warning",
            "value_inputs",
            "no value-model inputs: the scorecard's value interval (SPEC §6.3) needs "
            + ", ".join((VALUE_CURRENCY, *VALUE_REQUIRED)),
        )
        return
    if not isinstance(raw, Mapping):
        report.add(
            "error",
            "value_inputs",
            f"expected a mapping of value-model inputs, got {type_name(raw)}",
        )
        return
    for name, value in raw.items():
        path = f"value_inputs.{name}"
        if name in VALUE_FROM_RESULTS:
            report.add(
                "error",
                path,
                f"{name} is not a charter input: it comes from {VALUE_FROM_RESULTS[name]}",
            )
        elif name not in VALUE_INPUTS:
            close = difflib.get_close_matches(str(name), VALUE_INPUTS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            report.add(
                "error",
                path,
                f"unknown value-model input {name!r}; expected one of "
                f"{', '.join(VALUE_INPUTS)}{hint}",
            )
        elif name == VALUE_CURRENCY:
            problem = currency_problem(value)
            if problem is not None:
                report.add("error", path, problem)
        elif name in VALUE_TIME_INPUTS:
            _check_time_input(name, value, path, report)
        else:
            number = finite_number(value)
            if number is None:
                report.add("error", path, f"{name} must be a finite number, got {value!r}")
            elif number < 0 and name not in VALUE_SIGNED:
                report.add("error", path, f"{name} cannot be negative, got {_fmt(number)}")
    if VALUE_CURRENCY not in raw:
        report.add(
            "error",
            f"value_inputs.{VALUE_CURRENCY}",
            "missing: state the ISO 4217 code the amounts are in (for example currency: GBP); "
            "an amount in an unnamed currency cannot be read or compared",
        )
    absent = [name for name in VALUE_REQUIRED if name not in raw]
    if absent:
        report.add(
            "warning", "value_inputs", f"value-model inputs still missing: {', '.join(absent)}"
        )


def _check_time_input(name: str, value: Any, path: str, report: ValidationReport) -> None:
    hint = "hours per task: a number, or {low, mode, high}"
    try:
        if isinstance(value, Mapping):
            unknown = set(value) - {"low", "mode", "high"}
            if unknown:
                raise ValueError(f"unknown keys {', '.join(sorted(map(str, unknown)))}")
            parts = [finite_number(value.get(key)) for key in ("low", "mode", "high")]
            if any(part is None for part in parts):
                raise ValueError("a range needs numbers for low, mode and high")
            TimeInput.triangular(*parts)  # type: ignore[arg-type]
        else:
            number = finite_number(value)
            if number is None:
                raise ValueError(f"got {value!r}")
            TimeInput.fixed(number)
    except ValueError as error:
        report.add("error", path, f"{name} ({hint}): {error}")


def _check_governance(
    document: Mapping[str, Any],
    scalars: Mapping[str, Any],
    today: dt.date | None,
    report: ValidationReport,
) -> None:
    if not _text(document.get("baseline")):
        report.add(
            "warning",
            "baseline",
            "no baseline workflow: the scorecard needs the baseline the AI workflow is "
            "compared with, and how it is measured",
        )
    triggers = document.get("reevaluation_triggers")
    if not triggers:
        report.add(
            "warning",
            "reevaluation_triggers",
            "no re-evaluation triggers: the scorecard needs them (SPEC §7)",
        )
    raw_date = document.get("next_review_date")
    if raw_date in (None, ""):
        report.add(
            "warning", "next_review_date", "no next review date: the scorecard needs one (SPEC §7)"
        )
        return
    review = _date(raw_date)
    if review is None:
        report.add("error", "next_review_date", f"expected a date YYYY-MM-DD, got {raw_date!r}")
        return
    today = today or dt.datetime.now(dt.UTC).date()
    if review < today:
        report.add(
            "warning",
            "next_review_date",
            f"the next review date {review.isoformat()} is in the past (today is "
            f"{today.isoformat()}); passing it marks the scorecard for re-evaluation",
        )


# --------------------------------------------------------------------------- helpers


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            return None
    return None


def _fmt(value: float, digits: int = 6) -> str:
    """Return ``value`` compactly: 50 for 50.0, 6.89 for 6.8948 with ``digits=2``."""
    return number_text(value, digits)
