"""Fixtures of the EGI app tests: published-roster-shaped artifacts."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from egibench.aggregate import (
    BUCKET_NAMES,
    BUCKETS,
    DEFAULT_EGI_WEIGHTS,
    DEFAULT_FLOORS,
    DEFAULT_ROUTING,
    aggregate,
    load_routing,
)
from egibench.result_shape import floor_status

STAMP = "2026-10-21T00:12:48+00:00"

# One value per Table 6 route, chosen so each bucket's mean is easy to check by hand.
RAW = {
    "crmarena": {
        "case_routing": 0.9,
        "handle_time": 0.8,
        "transfer_count": 0.7,
        "top_issue_identification": 0.6,
        "best_region_identification": 0.5,
        "monthly_trend_analysis": 0.4,
        "named_entity_disambiguation": 0.8,
        "knowledge_qa": 0.6,
        "policy_violation_identification": 0.9,
    },
    "herb": {"entity_f1": 50.0, "content_correctness": 70.0, "unanswerable_null_rate": 0.8},
    "personabench": {"qa_accuracy": 0.6},
    "userbench": {"micro_avg": 0.2},
    "mcp_universe": {
        "pass_rate_financial_analysis": 0.8,
        "pass_rate_web_search": 0.7,
        "pass_rate_location_navigation": 0.6,
    },
    "mcpeval": {"flexible_average_score": 0.9},
    "benchforce": {"accuracy_all": 0.5, "finished_ratio": 0.9, "accuracy_finished": 0.6},
    "locobench": {
        "functional_correctness": 0.5,
        "software_engineering": 0.6,
        "code_quality": 0.5,
        "longcontext_utilization": 0.4,
    },
}


def published_artifact(
    model: str,
    *,
    stamp: str = STAMP,
    egi: float | None = 50.0,
    display_name: str = "",
    **scores: float,
) -> dict[str, Any]:
    """Return a ``mode: published`` artifact with the given bucket scores (others missing)."""
    values = {bucket: scores.get(bucket) for bucket in BUCKETS}
    floors = {
        bucket: {
            "floor": floor,
            "score": values[bucket],
            "status": floor_status(values[bucket], floor),
        }
        for bucket, floor in DEFAULT_FLOORS.items()
    }
    return {
        "model": model,
        "display_name": display_name,
        "mode": "published",
        "timestamp": stamp,
        "egi": egi,
        "partial": False,
        "egi_weights": dict(DEFAULT_EGI_WEIGHTS),
        "buckets": {
            bucket: {"name": BUCKET_NAMES[bucket], "score": values[bucket], "contributors": []}
            for bucket in BUCKETS
        },
        "missing": [{"field": b, "reason": "not stated"} for b in BUCKETS if values[b] is None],
        "floors": floors,
        "release_ready": all(row["status"] == "pass" for row in floors.values()),
        "routing": {"source": "test", "sha256": None},
    }


@pytest.fixture
def published() -> Callable[..., dict[str, Any]]:
    """Return :func:`published_artifact`."""
    return published_artifact


def measured_artifact(
    raw: Any = None,
    *,
    model: str = "gemini-2.5-pro",
    mode: str = "quick",
    stamp: str = "2026-11-01T10:00:00+00:00",
) -> dict[str, Any]:
    """Return an ``egi-bench`` artifact scored from ``raw`` (default :data:`RAW`)."""
    result = aggregate(RAW if raw is None else raw, routing=load_routing(DEFAULT_ROUTING))
    return {"model": model, "mode": mode, "timestamp": stamp, **result.to_dict()}


@pytest.fixture
def measured() -> Callable[..., dict[str, Any]]:
    """Return :func:`measured_artifact`."""
    return measured_artifact


@pytest.fixture
def egi_raw() -> dict[str, dict[str, float]]:
    """Return a copy of :data:`RAW`, one value per Table 6 route."""
    return copy.deepcopy(RAW)


@pytest.fixture(autouse=True)
def _egi_bench_without_the_database(monkeypatch):
    """`egi-bench` stores results in the app's database too; CLI tests keep to files.

    tests/egibench/test_egi_cli_database.py turns it back on against the test database.
    """
    monkeypatch.setenv("EGI_BENCH_DB", "0")
