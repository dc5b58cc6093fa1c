"""The scorecard's mandatory fields (seed 003 Table 11, SPEC §7) and what makes one missing.

A scorecard's content is a JSON-able mapping assembled from a decision and everything it rests
on (:mod:`scorecards.selectors`). Every field of Table 11 is mandatory: a field is *missing*
when the content cannot state it truthfully — a person or text nobody has recorded, or
evidence the use case's evaluation intensity E requires (SPEC §6.4) that is absent. A field the
intensity does not require and the evaluation did not produce is *present*, stating so (e.g.
"no stress set was run; required from E3"). A missing field keeps the scorecard in draft.
Pure: no Django import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from charters.validation import MIN_REPEATS_FROM_E3

#: (key, label) of every Table 11 field, in the table's order.
TABLE_11: tuple[tuple[str, str], ...] = (
    ("identity", "Use case ID; business owner; model owner; second-line reviewer"),
    ("business", "Business outcome and value hypothesis"),
    ("task_specification", "Task specification T, G, R (versions)"),
    ("risk_tier", "Autonomy level a, consequence tier c, intensity E(a,c)"),
    ("configuration", "Configuration σ = ⟨M, P, Φ, U, Γ, H⟩ with versions"),
    ("baseline", "Baseline workflow and measurement mode (estimated / observed)"),
    ("gated_metrics", "Gated metrics: estimate, CI, θout, θin, ν, grading mode, κ/α"),
    ("reliability", "Reliability: K, pass^1/2/4, dispersion"),
    ("assurance", "Assurance and stress-set results"),
    ("oversight", "Oversight: ρ_catch, FAR, intervention rate, review burden"),
    ("sample_sizes", "Sample sizes (units, documents, tasks); under-sampled flags"),
    ("gate", "Gate decision and binding metric b"),
    ("efficacy", "EI and EI_G with weight-sensitivity range"),
    ("value", "Value-model inputs (N, c_h, ℓ_err, ρ_catch) and V_annual interval"),
    ("failure_modes", "Observed failure modes; conditions of use; compensating controls"),
    ("deviations", "Deviations from the charter"),
    ("monitoring", "Re-evaluation triggers and next review date"),
)
FIELD_LABELS: dict[str, str] = dict(TABLE_11)


@dataclass(frozen=True)
class MissingField:
    """A Table 11 field the scorecard cannot state yet, and why."""

    field: str
    label: str
    why: str

    def to_dict(self) -> dict[str, str]:
        return {"field": self.field, "label": self.label, "why": self.why}


def missing_fields(content: Mapping[str, Any]) -> list[MissingField]:
    """Return every Table 11 field ``content`` cannot state, in the table's order."""
    intensity = int(content.get("risk_tier", {}).get("intensity", 0) or 0)
    missing = []
    for key, label in TABLE_11:
        section = content.get(key)
        if section is None:
            missing.append(MissingField(key, label, "not assembled"))
            continue
        for why in CHECKS[key](section, intensity):
            missing.append(MissingField(key, label, why))
    return missing


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict | tuple) and not value)


def _identity(section: Mapping[str, Any], _e: int) -> list[str]:
    names = {
        "use_case": "no use-case ID",
        "business_owner": "no business owner (charter owner) is a member of the use case",
        "model_owner": "no model owner is a member of the use case",
        "second_line_reviewer": "no second-line reviewer is a member of the use case",
    }
    return [why for key, why in names.items() if _blank(section.get(key))]


def _business(section: Mapping[str, Any], _e: int) -> list[str]:
    return [
        f"no {name.replace('_', ' ')} is recorded on the use case"
        for name in ("outcome", "value_hypothesis")
        if _blank(section.get(name))
    ]


def _task_specification(section: Mapping[str, Any], intensity: int) -> list[str]:
    why = []
    if _blank(section.get("task_set")):
        why.append("no task set (T, G) is recorded")
    if _blank(section.get("rubric")):
        why.append("no rubric R is recorded")
    return why


def _risk_tier(section: Mapping[str, Any], _e: int) -> list[str]:
    return [
        f"no {name}"
        for name in ("autonomy", "consequence", "intensity")
        if _blank(section.get(name))
    ]


def _configuration(section: Mapping[str, Any], _e: int) -> list[str]:
    return [
        f"no {name}" for name in ("name", "version", "sha256", "model") if _blank(section.get(name))
    ]


def _baseline(section: Mapping[str, Any], _e: int) -> list[str]:
    why = []
    if _blank(section.get("workflow")):
        why.append("the charter names no baseline workflow")
    if section.get("measurement_mode") not in ("estimated", "observed"):
        why.append("no measurement mode (estimated / observed)")
    return why


def _gated_metrics(section: Any, _e: int) -> list[str]:
    if not section:
        return ["the charter gates no metric"]
    return [
        f"{row['id']}: no estimate with an interval ({row.get('reason') or 'none recorded'})"
        for row in section
        if row.get("estimate") is None or row.get("ci") is None
    ]


def _reliability(section: Mapping[str, Any], intensity: int) -> list[str]:
    if _blank(section.get("k")):
        return ["the number of repeats K is not recorded"]
    if intensity < 3:
        return []
    why = []
    if int(section["k"]) < MIN_REPEATS_FROM_E3:
        why.append(
            f"E{intensity} needs K ≥ {MIN_REPEATS_FROM_E3} repeats; the run has K = {section['k']}"
        )
    values = section.get("pass_k") or {}
    for k in ("1", "2", "4"):
        if (values.get(k) or {}).get("point") is None:
            why.append(f"E{intensity} needs pass^{k}; it could not be estimated")
    return why


def _assurance(section: Mapping[str, Any], intensity: int) -> list[str]:
    if intensity >= 3 and section.get("stress_run") is None:
        return [f"E{intensity} needs the stress set reported; no stress-split run was evaluated"]
    return []


def _oversight(section: Mapping[str, Any], intensity: int) -> list[str]:
    if intensity < 4:
        return []
    return [
        f"E{intensity} needs an oversight study with {name}"
        for key, name in (("catch_rate", "ρ_catch"), ("false_acceptance_rate", "FAR"))
        if (section.get(key) or {}).get("point") is None
    ]


def _sample_sizes(section: Mapping[str, Any], _e: int) -> list[str]:
    return ["no task count is recorded"] if _blank(section.get("tasks")) else []


def _gate(section: Mapping[str, Any], _e: int) -> list[str]:
    return [] if section.get("decision") else ["no gate decision"]


def _efficacy(section: Mapping[str, Any], _e: int) -> list[str]:
    if section.get("ei") is None and not section.get("not_computed"):
        return [section.get("why") or "EI was not computed"]
    return []


def _value(section: Mapping[str, Any], _e: int) -> list[str]:
    if section.get("v_annual") is None:
        return [f"no V_annual interval: {section.get('unavailable') or 'not computed'}"]
    if not section.get("currency"):
        return ["no currency: the charter's value_inputs.currency (ISO 4217) names none"]
    return []


def _failure_modes(section: Mapping[str, Any], _e: int) -> list[str]:
    return [
        f"no {name.replace('_', ' ')} recorded"
        for name in ("failure_modes", "conditions_of_use", "compensating_controls")
        if _blank((section.get(name) or "").strip() if isinstance(section.get(name), str) else "")
    ]


def _deviations(section: Mapping[str, Any], _e: int) -> list[str]:
    return [] if isinstance(section.get("items"), list) else ["deviations were not read"]


def _monitoring(section: Mapping[str, Any], _e: int) -> list[str]:
    why = []
    if _blank(section.get("triggers")):
        why.append("no re-evaluation triggers recorded")
    if _blank(section.get("next_review_date")):
        why.append("no next review date recorded")
    return why


CHECKS: dict[str, Callable[[Any, int], list[str]]] = {
    "identity": _identity,
    "business": _business,
    "task_specification": _task_specification,
    "risk_tier": _risk_tier,
    "configuration": _configuration,
    "baseline": _baseline,
    "gated_metrics": _gated_metrics,
    "reliability": _reliability,
    "assurance": _assurance,
    "oversight": _oversight,
    "sample_sizes": _sample_sizes,
    "gate": _gate,
    "efficacy": _efficacy,
    "value": _value,
    "failure_modes": _failure_modes,
    "deviations": _deviations,
    "monitoring": _monitoring,
}
