"""The metric catalogue of SPEC §4, read from ``catalogue.yaml`` (the one data source)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

import yaml

CATALOGUE_PATH = Path(__file__).with_name("catalogue.yaml")
AUTONOMY_LABELS = ("A0", "A1", "A2", "A3", "A4")


@dataclass(frozen=True)
class CatalogueMetric:
    id: str
    name: str
    family: str
    direction: Literal["higher", "lower"]
    unit: str
    grading: tuple[str, ...]
    level: int
    scale: str
    definition: str

    @property
    def level_label(self) -> str:
        return AUTONOMY_LABELS[self.level]

    @property
    def human_graded(self) -> bool:
        return "H" in self.grading


@cache
def catalogue() -> dict[str, CatalogueMetric]:
    """Return the catalogue metrics by id, in catalogue order."""
    raw = yaml.safe_load(CATALOGUE_PATH.read_text(encoding="utf-8"))
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
