"""The grades file reader: every line checked against the session and the rubric, by line."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from grading.grade_io import (
    ArtefactSpec,
    GradeFileReader,
    dump_line,
    grades_differences,
)

ROOT = Path(__file__).resolve().parents[2]
# A small session: artefact A1 graded by ann and bob, A2 by bob and cat.
ARTEFACTS = {
    "A1": ArtefactSpec(
        "t1",
        ("s1", "s2", "c1:ch-1", "k:ke1", "g:gi1", "artefact"),
        frozenset({"ann", "bob"}),
    ),
    "A2": ArtefactSpec("t2", ("s1", "artefact"), frozenset({"bob", "cat"})),
}
GRADERS = frozenset({"ann", "bob", "cat"})
COMPLETE = {
    "s1": {"assertive": "Y", "supported": "partially", "relevant": "Y"},
    "s2": {"assertive": "N", "relevant": "N"},
    "c1:ch-1": {"citation": "strict"},
    "k:ke1": {"key_element": "absent"},
    "g:gi1": {"guidance": "TP", "severity": "high"},
    "artefact": {"value_add": "2"},
}
A2_COMPLETE = {
    "s1": {"assertive": "Y", "supported": "fully", "relevant": "Y"},
    "artefact": {"value_add": "0"},
}


def line(artefact="A1", grader="ann", grades=None, **fields) -> dict:
    return {"artefact": artefact, "grader": grader, "grades": grades or COMPLETE, **fields}


def jsonl(*objects) -> bytes:
    return b"".join(o if isinstance(o, bytes) else dump_line(o) for o in objects)


def read(data: bytes, **kwargs):
    reader = GradeFileReader(io.BytesIO(data), artefacts=ARTEFACTS, graders=GRADERS, **kwargs)
    records = list(reader)
    return records, reader.report()


def errors_of(data: bytes, **kwargs) -> list[tuple[int, str]]:
    return [(e.line, e.field) for e in read(data, **kwargs)[1].errors]


def message_of(data: bytes) -> str:
    _records, report = read(data)
    assert len(report.errors) == 1, report.errors
    return report.errors[0].message


def test_a_good_file_yields_each_assignment_with_its_grades():
    records, report = read(
        jsonl(
            line(seconds=61.25),
            line("A1", "bob", submitted=False, grades={"s1": {"assertive": "N"}}),
            line("A2", "cat", A2_COMPLETE),
        )
    )
    assert report.ok and report.record_count == 3
    first, draft, third = records
    assert (first.line, first.artefact, first.grader) == (1, "A1", "ann")
    assert first.grades == COMPLETE and first.seconds == 61.25 and first.submitted
    assert not first.revise and first.reason == ""
    assert draft.submitted is False and draft.grades == {"s1": {"assertive": "N"}}
    assert third.seconds is None


def test_the_hash_is_the_sha256_of_the_bytes_including_blank_lines():
    data = jsonl(line()) + b"\n   \n" + jsonl(line("A2", "cat", A2_COMPLETE))
    records, report = read(data)
    assert [r.line for r in records] == [1, 4]
    assert report.sha256 == hashlib.sha256(data).hexdigest()


def test_export_fields_and_provenance_are_read_back_and_ignored():
    exported = line(
        task_id="t1",
        submitted_at="2026-03-02T14:05:09+00:00",
        kind="output",
        run=12,
        sigma="gemini",
        sigma_version=1,
        model_ref="vertex/gemini",
        repeat=0,
        stratum="run:12",
        inclusion_probability=0.25,
    )
    records, report = read(jsonl(exported))
    assert report.ok and records[0].grades == COMPLETE


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"{not json\n", [(1, "line")]),
        (b"[1, 2]\n", [(1, "line")]),
        (b'"A1"\n', [(1, "line")]),
        (b'{"artefact": "A1", "artefact": "A2"}\n', [(1, "artefact")]),
        (b"\xff\xfe\n", [(1, "line")]),
    ],
    ids=["malformed JSON", "a list", "a string", "key given twice", "not UTF-8"],
)
def test_a_line_that_is_not_one_json_object_is_an_error_on_that_line(data, expected):
    assert errors_of(jsonl(line()) + data) == [(2, field) for _line, field in expected]


CASES = {
    "unknown field": (line(colour="red"), "colour", "unknown field"),
    "no artefact": ({"grader": "ann", "grades": COMPLETE}, "artefact", "required"),
    "artefact not a string": (line(artefact=7), "artefact", "got number 7"),
    "unknown artefact": (line(artefact="Z9"), "artefact", 'unknown artefact "Z9"'),
    "unknown grader": (line(grader="eve"), "grader", '"eve" is not a grader of this session'),
    "grader not assigned": (line(grader="cat"), "grader", 'not assigned to artefact "A1"'),
    "task id mismatch": (line(task_id="t2"), "task_id", 'is task "t1", not "t2"'),
    "no grades": ({"artefact": "A1", "grader": "ann"}, "grades", "required"),
    "grades not an object": (line(grades=[1]), "grades", "expected an object of units"),
    "unknown unit key": (
        line(grades={**COMPLETE, "s9": {"assertive": "Y"}}),
        "grades.s9",
        "not a unit of this artefact",
    ),
    "unit not an object": (line(grades={**COMPLETE, "s1": "Y"}), "grades.s1", "object of fields"),
    "field not asked of the unit kind": (
        line(grades={**COMPLETE, "c1:ch-1": {"citation": "strict", "assertive": "Y"}}),
        "grades.c1:ch-1.assertive",
        "not asked of a cited chunk",
    ),
    "not a rubric field": (
        line(grades={**COMPLETE, "artefact": {"value_add": "1", "mood": "ok"}}),
        "grades.artefact.mood",
        "not a rubric field",
    ),
    "value not in the rubric": (
        line(grades={**COMPLETE, "s1": {**COMPLETE["s1"], "supported": "mostly"}}),
        "grades.s1.supported",
        "must be one of fully, partially, not",
    ),
    "value not a string": (
        line(grades={**COMPLETE, "artefact": {"value_add": 2}}),
        "grades.artefact.value_add",
        "expected one of 0, 1, 2, got number 2",
    ),
    "supported of a sentence not assertive": (
        line(grades={**COMPLETE, "s2": {"assertive": "N", "supported": "not", "relevant": "N"}}),
        "grades.s2.supported",
        'asked only of assertive sentences, and assertive is "N"',
    ),
    "severity of a sound item": (
        line(grades={**COMPLETE, "g:gi1": {"guidance": "FP", "severity": "low"}}),
        "grades.g:gi1.severity",
        "asked only of breaches",
    ),
    "missing grades to submit": (
        line(grades={k: v for k, v in COMPLETE.items() if k != "k:ke1"}),
        "grades.k:ke1.key_element",
        "1 grade(s) missing to submit: k:ke1 key_element",
    ),
    "seconds negative": (line(seconds=-1), "seconds", "got number -1"),
    "seconds not a number": (line(seconds="61"), "seconds", 'got string "61"'),
    "seconds too many": (line(seconds=10**6), "seconds", "0 to 86,400"),
    "submitted not a boolean": (line(submitted="yes"), "submitted", "expected true or false"),
    "revise without a reason": (line(revise=True), "reason", 'required with "revise": true'),
    "a reason without revise": (line(reason="typo"), "reason", 'goes with "revise": true'),
    "revise a draft": (
        line(revise=True, reason="typo", submitted=False),
        "revise",
        'needs "submitted": true',
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_bad_field_is_named_with_its_line_and_what_was_expected(case):
    bad, field, fragment = CASES[case]
    data = jsonl(line("A2", "bob", A2_COMPLETE), bad)
    records, report = read(data)
    assert [(e.line, e.field) for e in report.errors] == [(2, field)]
    assert fragment in report.errors[0].message
    assert [r.line for r in records] == [1]


def test_a_draft_may_be_incomplete_and_keep_a_grade_not_asked():
    draft = {"s2": {"assertive": "N", "supported": "not"}}
    records, report = read(jsonl(line(grades=draft, submitted=False)))
    assert report.ok and records[0].grades == draft


def test_every_missing_grade_is_counted_in_one_error_per_line():
    message = message_of(jsonl(line(grades={"artefact": {"value_add": "1"}})))
    # s1: 3, s2: 3 (supported is asked until assertive is N), citation, key element, guidance
    assert message.startswith("9 grade(s) missing to submit: s1 assertive, s1 supported")
    assert "and 4 more" in message and '"submitted": false' in message


def test_a_repeated_assignment_is_an_error_on_the_later_line_naming_the_first():
    data = jsonl(line(), line("A2", "cat", A2_COMPLETE), line())
    records, report = read(data)
    assert [(e.line, e.field) for e in report.errors] == [(3, "artefact")]
    assert "line 1 is also artefact" in report.errors[0].message
    assert [r.line for r in records] == [1, 2]


def test_one_line_may_carry_several_errors_each_named():
    bad = line(grader="cat", seconds=-3, grades={**COMPLETE, "s7": {"assertive": "Y"}})
    assert errors_of(jsonl(bad)) == [(1, "grader"), (1, "seconds"), (1, "grades.s7")]


def test_an_empty_file_is_an_error_about_the_file():
    for data in (b"", b"\n\n  \n"):
        assert errors_of(data) == [(0, "file")]


def test_an_over_long_line_is_an_error_and_the_lines_after_it_are_read():
    long = line(grades={**COMPLETE}, task_id="t1" + "x" * 400)
    data = jsonl(line("A2", "cat", A2_COMPLETE), long, line())
    records, report = read(data, max_line_bytes=300)
    assert [(e.line, e.field) for e in report.errors] == [(2, "line")]
    assert "longer than 300 bytes" in report.errors[0].message
    assert [r.line for r in records] == [1, 3]
    assert report.sha256 == hashlib.sha256(data).hexdigest()


def test_only_the_first_errors_by_line_are_kept_but_all_are_counted():
    data = jsonl(*[line(artefact=f"Z{n}", grader="ann") for n in range(12)])
    _records, report = read(data, max_errors=5)
    assert report.error_count == 12 and report.bad_line_count == 12
    assert [e.line for e in report.errors] == [1, 2, 3, 4, 5]
    details = report.details()
    assert len(details) == 6
    assert details[-1] == {
        "line": None,
        "field": "file",
        "message": "and 7 more error(s) after line 5",
    }


def test_an_error_the_caller_finds_is_listed_and_counted_with_the_others():
    reader = GradeFileReader(
        io.BytesIO(jsonl(line(), line(artefact="Z1"))), artefacts=ARTEFACTS, graders=GRADERS
    )
    for record in reader:
        reader.add_error(record.line, "grades.s1.relevant", "differs from the submitted grade")
    report = reader.report()
    assert [(e.line, e.field) for e in report.errors] == [
        (1, "grades.s1.relevant"),
        (2, "artefact"),
    ]
    assert report.bad_line_count == 2


def test_the_file_is_read_line_by_line_and_never_whole():
    limits: list[int] = []

    class LineOnly(io.BytesIO):
        def read(self, size=-1):
            raise AssertionError("read() would load the file")

        def readline(self, size=-1):
            limits.append(size)
            return super().readline(size)

        def __iter__(self):
            raise AssertionError("iteration is not bounded by a line limit")

    data = jsonl(*[line(artefact="A1", grader=g) for g in ("ann", "bob")] * 20)
    reader = GradeFileReader(LineOnly(data), artefacts=ARTEFACTS, graders=GRADERS)
    assert len(list(reader)) == 2
    assert reader.report().error_count == 38
    assert limits and all(0 < limit <= 1024 * 1024 + 1 for limit in limits)


def test_a_text_mode_file_is_refused_and_a_reader_reads_once():
    with pytest.raises(TypeError, match="binary mode"):
        list(GradeFileReader(io.StringIO("{}\n"), artefacts=ARTEFACTS, graders=GRADERS))  # type: ignore[arg-type]
    reader = GradeFileReader(io.BytesIO(jsonl(line())), artefacts=ARTEFACTS, graders=GRADERS)
    list(reader)
    with pytest.raises(RuntimeError, match="once"):
        list(reader)


def test_differences_list_changed_added_and_removed_values():
    stored = {"s1": {"assertive": "Y", "supported": "fully"}, "s2": {"assertive": "Y"}}
    wanted = {"s1": {"assertive": "N"}, "s2": {"assertive": "Y"}, "artefact": {"value_add": "1"}}
    assert grades_differences(stored, wanted) == [
        ("artefact", "value_add", "", "1"),
        ("s1", "assertive", "Y", "N"),
        ("s1", "supported", "fully", ""),
    ]
    assert grades_differences(wanted, wanted) == []


def test_a_line_is_compact_utf8_json():
    assert dump_line({"reason": "reçu", "n": 1}) == '{"reason":"reçu","n":1}\n'.encode()
    assert json.loads(dump_line(line())) == line()


def test_the_module_imports_without_django():
    code = (
        "import sys, grading.grade_io; "
        "print(','.join(m for m in ('django', 'rest_framework') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
