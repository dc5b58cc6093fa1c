"""The oversight decisions file reader (pure): every line checked, every error located."""

from __future__ import annotations

import io

from grading.oversight_io import DecisionFileReader, DecisionRecord, ItemState

DECISIONS = ("accept", "reject")
OPEN = ItemState(("s1", "s2", "k:ke1"), True, "", (), "")
DECIDED = ItemState(("s1", "s2", "k:ke1"), True, "reject", ("s2",), "Off.")
CLOSED = ItemState(("s1",), False, "", (), "")


def read(*lines: bytes, **items: ItemState):
    reader = DecisionFileReader(
        io.BytesIO(b"\n".join(lines) + b"\n"), items=items or {"a": OPEN}, decisions=DECISIONS
    )
    records = list(reader)
    return records, reader.report()


def errors(report) -> list[tuple[int, str, str]]:
    return [(e.line, e.field, e.message) for e in report.errors]


def test_flags_come_back_in_page_order_without_repeats_and_the_text_is_trimmed():
    records, report = read(
        b'{"item":"a","decision":"reject","flags":["k:ke1","s2","s2"],"comment":" x ",'
        b'"elapsed_seconds":12.5}'
    )
    assert report.ok and (report.record_count, report.left_blank) == (1, 0)
    assert records == [DecisionRecord(1, "a", "reject", ["s2", "k:ke1"], "x", 12.5, "", False)]


def test_a_null_decision_is_left_blank_and_a_repeated_one_unchanged():
    records, report = read(
        b'{"item":"a","decision":null}',
        b'{"item":"b","decision":"reject","flags":["s2"],"comment":"Off."}',
        a=OPEN,
        b=DECIDED,
    )
    assert records == [] and report.ok
    assert (report.left_blank, report.unchanged, report.record_count) == (1, 1, 0)


def test_a_change_needs_a_reason_and_its_time():
    _, report = read(b'{"item":"b","decision":"accept"}', b=DECIDED)
    assert errors(report) == [
        (
            1,
            "elapsed_seconds",
            "required: the seconds spent on the item for this decision (its review time)",
        ),
        (1, "reason", 'item "b" is already decided (reject); changing the decision needs a reason'),
    ]
    records, report = read(
        b'{"item":"b","decision":"accept","reason":"Misread.","elapsed_seconds":0}', b=DECIDED
    )
    assert report.ok and records[0].revising and report.revised == 1


def test_hostile_values_are_named_not_raised():
    _, report = read(
        b'{"item":"a","decision":[1],"flags":[{"x":1},3],"elapsed_seconds":true}',
        b'{"item":"a","decision":"accept","elapsed_seconds":1e999}',
        b'{"item":7,"decision":"accept","elapsed_seconds":1,"comment":"\\u0000"}',
        b'{"item":"c","decision":"accept","elapsed_seconds":1}',
        a=OPEN,
        c=CLOSED,
    )
    assert errors(report) == [
        (1, "decision", "expected accept or reject, or null, got [1]"),
        (
            1,
            "flags[0]",
            '{"x": 1} is not a sentence or key element of this item; expected one of s1, s2, k:ke1',
        ),
        (
            1,
            "flags[1]",
            "3 is not a sentence or key element of this item; expected one of s1, s2, k:ke1",
        ),
        (1, "elapsed_seconds", "expected a number of seconds, got boolean true"),
        (2, "item", 'duplicate: line 1 is also item "a"; give each item once'),
        (2, "elapsed_seconds", "expected a non-negative number, got inf"),
        (3, "item", "expected the item's public id, got number 7"),
        (
            3,
            "comment",
            "the comment holds a NUL character (\\u0000) at character 1, which cannot be stored",
        ),
        (4, "item", "the oversight study is closed: no decision is accepted"),
    ]
    assert report.bad_line_count == 4


def test_an_empty_file_is_refused():
    reader = DecisionFileReader(io.BytesIO(b"\n\n"), items={}, decisions=DECISIONS)
    assert list(reader) == []
    assert errors(reader.report()) == [
        (0, "file", "the file holds no decisions: expected one JSON object per item")
    ]
