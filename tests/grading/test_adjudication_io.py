"""The adjudications file reader (pure): line numbers, blank lines, limits, the dispute checks."""

from __future__ import annotations

import io

import pytest

from grading.adjudication_io import (
    AdjudicationFileReader,
    ArtefactDisputes,
    ProblemKind,
    choice_problem,
    dump_line,
)

DISPUTES = ArtefactDisputes(
    unit_keys=frozenset({"s1", "s2", "artefact"}),
    complete=True,
    graded={
        ("s1", "relevant"): ("Y", "N"),
        ("s1", "assertive"): ("Y", "Y"),
        ("s2", "supported"): ("fully", None),
        ("artefact", "value_add"): ("0", "2"),
    },
    final={("artefact", "value_add"): "1"},
)


def read(data: bytes, **options):
    reader = AdjudicationFileReader(io.BytesIO(data), artefacts={"A1": DISPUTES}, **options)
    return list(reader), reader.report()


def line(**fields) -> bytes:
    return dump_line({"artefact": "A1", "unit_key": "s1", "field": "relevant", **fields})


def test_a_bom_blank_lines_and_a_null_value_are_read_with_editor_line_numbers():
    records, report = read(
        b"\xef\xbb\xbf"
        + line(value="N", note=" why ")
        + b"\r\n\n"
        + line(unit_key="s2", field="supported", value=None)
    )
    assert [(r.line, r.unit_key, r.value, r.note) for r in records] == [(1, "s1", "N", "why")]
    assert report.ok and (report.record_count, report.left_blank) == (1, 1)


def test_a_blank_line_counts_and_the_error_names_the_editors_line():
    _records, report = read(line(value="N") + b"\n" + line(value="N"))
    assert [(e.line, e.field) for e in report.errors] == [(3, "field")]
    assert "duplicate: line 1" in report.errors[0].message


def test_the_line_limit_is_checked_before_parsing():
    _records, report = read(line(value="N", note="x" * 500), max_line_bytes=200)
    assert [(e.line, e.field) for e in report.errors] == [(1, "line")]


def test_only_the_lowest_errors_are_kept_but_all_are_counted():
    data = b"".join(line(unit_key="s9", value="N") for _ in range(5))
    _records, report = read(data, max_errors=2)
    assert report.error_count == 9  # 5 not a unit + 4 duplicates
    assert [e.line for e in report.errors] == [1, 2]


@pytest.mark.parametrize(
    ("unit_key", "field", "value", "kind", "named"),
    [
        ("s9", "relevant", "N", ProblemKind.INVALID, "unit_key"),
        ("s1", "citation", "strict", ProblemKind.INVALID, "value"),
        ("s1", "relevant", "maybe", ProblemKind.INVALID, "value"),
        ("s1", "assertive", "Y", ProblemKind.CONFLICT, "field"),
        ("s2", "relevant", "Y", ProblemKind.CONFLICT, "field"),
        ("artefact", "value_add", "2", ProblemKind.FINAL, "field"),
    ],
)
def test_choice_problem(unit_key, field, value, kind, named):
    problem = choice_problem(DISPUTES, unit_key, field, value)
    assert problem is not None and (problem.kind, problem.field) == (kind, named)


def test_an_unfinished_artefact_and_a_pending_field():
    unfinished = ArtefactDisputes(DISPUTES.unit_keys, False, {}, {})
    assert choice_problem(unfinished, "s1", "relevant", "N").kind == ProblemKind.CONFLICT
    assert choice_problem(DISPUTES, "s1", "relevant", "N") is None
    assert DISPUTES.is_pending("s1", "relevant") and not DISPUTES.is_pending(
        "artefact", "value_add"
    )
