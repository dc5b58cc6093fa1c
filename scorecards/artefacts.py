"""The artefacts a scorecard links to, by kind (SPEC §7, seed 003 Table 10).

A regulatory pack maps each clause to the kinds of artefact that evidence it; a scorecard
resolves every kind to one artefact with a link and a SHA-256. The kinds are fixed here, so a
pack naming any other kind is refused when it is loaded. Pure: no Django import.
"""

from __future__ import annotations

from dataclasses import dataclass

#: kind → what the artefact is, as printed in the scorecard's appendix.
ARTEFACT_KINDS: dict[str, str] = {
    "charter": (
        "Signed charter: intended use, a, c, E(a,c), gated metrics, θout/θin, weights, harms"
    ),
    "deviations": "Charter deviations after unblinding (who, when, why, diff)",
    "configuration": "Frozen configuration σ = ⟨M, P, Φ, U, Γ, H⟩ with its versions",
    "task_set": "Task set and gold artefacts (T, G) with their splits",
    "sampling_frame": "Grading sample: design, seed, population, inclusion probabilities",
    "run": "Run outputs the decision was computed on",
    "grading_records": "Blinded human grades and adjudications",
    "agreement": "Inter-rater agreement κ/α per rubric field against the κ target",
    "judge_calibration": "Judge rubric and its calibration against human grades (PPI)",
    "oversight_study": "Oversight study: seeded defects, ρ_catch, FAR, review burden",
    "stress_results": "Assurance and stress-set results, reported apart from the gate",
    "decision": "Gate decision: per-metric status, binding metric, ν, EI, EI_G and band",
    "value_model": "Value-and-risk model inputs and V_annual interval",
    "scorecard": "This scorecard: sign-off, conditions of use, compensating controls",
    "monitoring": "Re-evaluation triggers and next review date",
    "audit_log": "Hash-chained audit log extract up to the decision",
}


@dataclass(frozen=True)
class ArtefactRef:
    """One artefact of a scorecard: what it is, where to see it, and its SHA-256.

    ``url`` is a site-relative link (``/use-cases/…``); ``sha256`` is empty only when the
    artefact does not exist for this scorecard (e.g. no oversight study was run), and then
    ``missing`` says why.
    """

    kind: str
    title: str
    url: str
    sha256: str
    missing: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ARTEFACT_KINDS:
            raise ValueError(f"kind: unknown artefact kind {self.kind!r}")
