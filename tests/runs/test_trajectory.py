"""Trajectory records (SPEC §8): their shape is checked, and they read as a timeline."""

from __future__ import annotations

import pytest

from runs.trajectory import PHASE_KEYS, trajectory_problems, trajectory_timeline

RECORD = {
    "final_outcome": [
        {"at": "2026-03-02T14:07:30Z", "summary": "Draft accepted", "cost_usd": 0.012}
    ],
    "planning": [
        {"at": 1, "summary": "Split into revenue and leverage sub-tasks", "step_count": 2},
        {"at": 2, "summary": "Stop after both sections are drafted"},
    ],
    "tool_use": [
        {
            "at": "2026-03-02T14:05:09+01:00",
            "summary": "Fetched the spreads",
            "tool": "spreads.get",
            "arguments": {"borrower": "Kestrel", "year": 2024},
            "authorised": True,
        },
        {"at": "2026-03-02T14:05:09+01:00", "summary": "Retried once", "retries": 1},
    ],
}


def problems(record) -> list[tuple[str, str]]:
    return [(p.path, p.message) for p in trajectory_problems(record)]


def test_a_record_with_some_phases_and_ordered_steps_is_valid():
    assert problems(RECORD) == []


def test_the_timeline_lists_phases_in_spec_order_and_steps_in_the_order_given():
    timeline = trajectory_timeline(RECORD)
    assert [phase.key for phase in timeline] == ["planning", "tool_use", "final_outcome"]
    assert [phase.label for phase in timeline] == ["Planning", "Tool use", "Final outcome"]
    assert [step.summary for step in timeline[1].steps] == ["Fetched the spreads", "Retried once"]
    assert timeline[0].steps[0].at == "1"
    assert timeline[1].steps[0].details == (
        ("arguments", '{"borrower": "Kestrel", "year": 2024}'),
        ("authorised", "true"),
        ("tool", "spreads.get"),
    )


def test_the_seven_phases_are_those_of_spec_section_8():
    assert PHASE_KEYS == (
        "input_context",
        "planning",
        "retrieval_memory",
        "tool_use",
        "synthesis",
        "human_oversight",
        "final_outcome",
    )


@pytest.mark.parametrize(
    ("record", "path", "fragment"),
    [
        ([], "", "expected an object with phases, got a list"),
        ({}, "", "holds no phase"),
        ({"planing": [], "planning": []}, "planing", "unknown phase"),
        ({"planning": {"at": 1}}, "planning", "expected a list of steps"),
        ({"planning": ["step one"]}, "planning[0]", "expected a step object"),
        ({"planning": [{"summary": "x"}]}, "planning[0].at", "required"),
        ({"planning": [{"at": 1}]}, "planning[0].summary", "required"),
        ({"planning": [{"at": 1, "summary": " "}]}, "planning[0].summary", "non-empty string"),
        ({"planning": [{"at": -1, "summary": "x"}]}, "planning[0].at", "0 or more"),
        ({"planning": [{"at": True, "summary": "x"}]}, "planning[0].at", "boolean true"),
        ({"planning": [{"at": 1.5, "summary": "x"}]}, "planning[0].at", "number 1.5"),
        ({"planning": [{"at": "yesterday", "summary": "x"}]}, "planning[0].at", "not an ISO"),
        (
            {"planning": [{"at": "2026-03-02T14:05:09", "summary": "x"}]},
            "planning[0].at",
            "no UTC offset",
        ),
        (
            {"tool_use": [{"at": 1, "summary": "a"}, {"at": "2026-03-02T14:05Z", "summary": "b"}]},
            "tool_use[1].at",
            "use one kind of `at`",
        ),
        (
            {
                "tool_use": [
                    {"at": "2026-03-02T14:05:00Z", "summary": "a"},
                    {"at": "2026-03-02T15:04:00+01:00", "summary": "b"},
                ]
            },
            "tool_use[1].at",
            "earlier than tool_use[0].at",
        ),
        (
            {"planning": [{"at": 3, "summary": "a"}, {"at": 2, "summary": "b"}]},
            "planning[1].at",
            "in the order they happened",
        ),
    ],
)
def test_each_shape_problem_names_its_path(record, path, fragment):
    found = problems(record)
    assert [p for p, _m in found] == [path]
    assert fragment in found[0][1]


def test_every_problem_of_a_record_is_reported_not_only_the_first():
    record = {"notes": [], "planning": [{"at": 1}, {"summary": "x"}], "synthesis": "links"}
    assert [path for path, _m in problems(record)] == [
        "notes",
        "planning[0].summary",
        "planning[1].at",
        "synthesis",
    ]


def test_an_empty_phase_is_allowed_and_absent_from_the_timeline():
    record = {"planning": [], "synthesis": [{"at": 0, "summary": "Linked claim 1 to c2"}]}
    assert problems(record) == []
    assert [phase.key for phase in trajectory_timeline(record)] == ["synthesis"]
