"""The trajectory record of an agentic (A3–A4) output (SPEC §8, seed Table 9).

Pure: no Django import. A record is a JSON object with one key per phase, each optional
but at least one present; each phase is a list of steps in the order they happened. A step
is an object with at least ``at`` (an ISO 8601 date-time with a UTC offset, or a step
number ≥ 0) and ``summary`` (a non-empty string); any other keys carry the phase's details
(the tool, its arguments, authorisation and result; the checkpoint and intervention
reason; …) and are kept as given. Within a phase the steps use one kind of ``at`` and never
go back in time. docs/formats.md, "Outputs (JSONL)", shows an example.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from enterpriseval.values import json_kind

PHASES: tuple[tuple[str, str, str], ...] = (
    ("input_context", "Input and context", "sources, completeness, access policy"),
    ("planning", "Planning", "sub-tasks, stopping rule, step count"),
    ("retrieval_memory", "Retrieval and memory", "queries, documents, ranks, reads/writes"),
    ("tool_use", "Tool use", "tool, arguments, authorisation, result, retries"),
    ("synthesis", "Synthesis", "claim–evidence links"),
    ("human_oversight", "Human oversight", "checkpoint, intervention reason, action, time"),
    ("final_outcome", "Final outcome", "acceptance criteria, state check, cost"),
)
"""(key, label, what its steps record), in the order of the timeline."""
PHASE_KEYS = tuple(key for key, _label, _what in PHASES)
STEP_REQUIRED = ("at", "summary")


@dataclass(frozen=True, slots=True)
class TrajectoryProblem:
    """One problem: ``path`` is where (``tool_use[2].at``), ``message`` what was expected."""

    path: str
    message: str


@dataclass(frozen=True, slots=True)
class TimelineStep:
    at: str
    summary: str
    details: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class TimelinePhase:
    key: str
    label: str
    steps: tuple[TimelineStep, ...]


def trajectory_problems(record: Any) -> list[TrajectoryProblem]:
    """Return every problem of ``record`` as a trajectory record; empty if it is valid."""
    return list(_problems(record))


def trajectory_timeline(record: dict[str, Any]) -> list[TimelinePhase]:
    """Return the phases present in a valid record, in timeline order, steps in order.

    A step's details are its other keys, sorted, each value shown as compact JSON unless it
    is a string.
    """
    phases = []
    for key, label, _what in PHASES:
        steps = record.get(key)
        if not steps:
            continue
        phases.append(
            TimelinePhase(
                key=key,
                label=label,
                steps=tuple(
                    TimelineStep(
                        at=str(step["at"]),
                        summary=step["summary"],
                        details=tuple(
                            (name, _shown(value))
                            for name, value in sorted(step.items())
                            if name not in STEP_REQUIRED
                        ),
                    )
                    for step in steps
                ),
            )
        )
    return phases


def _problems(record: Any) -> Iterator[TrajectoryProblem]:
    if not isinstance(record, dict):
        got = json_kind(record, show_text=False)
        yield TrajectoryProblem("", f"expected an object with phases, got {got}")
        return
    unknown = [key for key in record if key not in PHASE_KEYS]
    for key in unknown:
        yield TrajectoryProblem(key, f"unknown phase; the phases are {', '.join(PHASE_KEYS)}")
    present = [key for key in PHASE_KEYS if key in record]
    if not present:
        yield TrajectoryProblem("", f"holds no phase: give at least one of {', '.join(PHASE_KEYS)}")
    for key in present:
        steps = record[key]
        if not isinstance(steps, list):
            got = json_kind(steps, show_text=False)
            yield TrajectoryProblem(key, f"expected a list of steps [...], got {got}")
            continue
        yield from _phase_problems(key, steps)


def _phase_problems(key: str, steps: list[Any]) -> Iterator[TrajectoryProblem]:
    previous: tuple[str, int | datetime, str] | None = None  # kind, value, path
    for index, step in enumerate(steps):
        path = f"{key}[{index}]"
        if not isinstance(step, dict):
            got = json_kind(step, show_text=False)
            yield TrajectoryProblem(path, f"expected a step object {{...}}, got {got}")
            continue
        summary = step.get("summary")
        if "summary" not in step:
            yield TrajectoryProblem(f"{path}.summary", "required: a non-empty string")
        elif not isinstance(summary, str) or not summary.strip():
            yield TrajectoryProblem(
                f"{path}.summary",
                f"expected a non-empty string, got {json_kind(summary, show_text=False)}",
            )
        if "at" not in step:
            yield TrajectoryProblem(
                f"{path}.at", "required: an ISO 8601 date-time with offset, or a step number"
            )
            continue
        at, problem = _at(step["at"])
        if problem:
            yield TrajectoryProblem(f"{path}.at", problem)
            continue
        assert at is not None
        kind = "step number" if isinstance(at, int) else "date-time"
        if previous is not None:
            previous_kind, previous_at, previous_path = previous
            if previous_kind != kind:
                yield TrajectoryProblem(
                    f"{path}.at",
                    f"a {kind}, but {previous_path}.at is a {previous_kind}: use one kind of "
                    "`at` within a phase",
                )
                continue
            if at < previous_at:  # type: ignore[operator]
                yield TrajectoryProblem(
                    f"{path}.at",
                    f"{step['at']} is earlier than {previous_path}.at; list the steps of a "
                    "phase in the order they happened",
                )
        previous = (kind, at, path)


def _at(value: Any) -> tuple[int | datetime | None, str | None]:
    if isinstance(value, bool):
        return None, (
            "expected an ISO 8601 date-time or a step number, got "
            + json_kind(value, show_text=False)
        )
    if isinstance(value, int):
        if value < 0:
            return None, f"a step number must be 0 or more, got {value}"
        return value, None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None, (
                f"{json.dumps(value)} is not an ISO 8601 date-time "
                "(e.g. 2026-03-02T14:05:09Z) or a step number"
            )
        if moment.tzinfo is None or moment.utcoffset() is None:
            return None, (
                f"{json.dumps(value)} has no UTC offset: add one (e.g. Z or +01:00) so the "
                "time is unambiguous"
            )
        return moment, None
    return None, (
        "expected an ISO 8601 date-time or a step number, got " + json_kind(value, show_text=False)
    )


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))
