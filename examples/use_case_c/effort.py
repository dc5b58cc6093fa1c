"""Use Case C's per-document effort (seed 003 Table 7) and its Δeff per pipeline version.

``effort.yaml`` beside this file holds the table; :func:`load_effort` reads and checks it and
:func:`time_reductions` computes Δeff like-for-like for each version (SPEC §11).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from enterpriseval.documents import config_data
from enterpriseval.values import finite_number
from metrics.estimate import MetricEstimate
from metrics.task_estimators import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Baseline,
    net_time_reduction_like_for_like,
)

EFFORT_PATH = Path(__file__).with_name("effort.yaml")


@dataclass(frozen=True)
class UseCaseCEffort:
    """Hours per document: manual, and per pipeline version (``None``: no output assessed)."""

    unit: str
    baseline: Baseline
    manual: dict[str, float]
    versions: dict[str, dict[str, float | None]]
    titles: dict[str, str]


def _hours(value: Any, where: str, *, optional: bool) -> float | None:
    if value is None and optional:
        return None
    number = finite_number(value)
    if number is None or number < 0:
        kind = "a non-negative number of hours or null" if optional else "a positive number"
        raise ValueError(f"{where} must be {kind}, got {value!r}")
    if not optional and number == 0:
        raise ValueError(f"{where} must be a positive number, got 0")
    return number


def load_effort(path: Path = EFFORT_PATH) -> UseCaseCEffort:
    """Return the effort table in ``path``, or raise ``ValueError`` naming the faulty entry."""
    raw = config_data(path.read_text(encoding="utf-8"), str(path))
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected a mapping with baseline, versions and documents")
    baseline = raw.get("baseline")
    if baseline not in ("observed", "estimated"):
        raise ValueError(f"{path}: baseline must be 'observed' or 'estimated', got {baseline!r}")
    versions = raw.get("versions")
    if not isinstance(versions, list) or not versions:
        raise ValueError(f"{path}: versions must be a non-empty list of version names")
    documents = raw.get("documents")
    if not isinstance(documents, list) or not documents:
        raise ValueError(f"{path}: documents must be a non-empty list")
    manual: dict[str, float] = {}
    by_version: dict[str, dict[str, float | None]] = {str(name): {} for name in versions}
    titles: dict[str, str] = {}
    for index, entry in enumerate(documents):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise ValueError(f"{path}: documents[{index}] needs an id written as a string")
        doc = entry["id"]
        where = f"{path}: documents[{index}] ({doc})"
        if doc in manual:
            raise ValueError(f"{where}: the id repeats an earlier document")
        hours = _hours(entry.get("manual"), f"{where}: manual", optional=False)
        assert hours is not None
        manual[doc] = hours
        titles[doc] = str(entry.get("title", ""))
        for name in by_version:
            if name not in entry:
                raise ValueError(f"{where}: {name} is missing (write null for no output)")
            by_version[name][doc] = _hours(entry[name], f"{where}: {name}", optional=True)
    return UseCaseCEffort(
        unit=str(raw.get("unit", "hours")),
        baseline=baseline,
        manual=manual,
        versions=by_version,
        titles=titles,
    )


def time_reductions(
    effort: UseCaseCEffort,
    *,
    confidence: float,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, MetricEstimate]:
    """Return Δeff per pipeline version, like-for-like on the documents each version covers."""
    return {
        version: net_time_reduction_like_for_like(
            effort.manual,
            hours,
            baseline=effort.baseline,
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
        )
        for version, hours in effort.versions.items()
    }
