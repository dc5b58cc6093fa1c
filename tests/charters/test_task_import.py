"""The streaming task-file reader: every check, with the line and field it names."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from charters.task_import import (
    FILE_LINE,
    LineError,
    TaskFileReader,
    check_task_file,
    content_sha256,
)

ROOT = Path(__file__).resolve().parents[2]


def task(**fields):
    base = {"id": "t1", "split": "graded", "input": "Draft the liquidity section."}
    base.update(fields)
    return {key: value for key, value in base.items() if value is not ...}


def jsonl(*objects) -> bytes:
    return b"".join(
        (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n" for obj in objects
    )


def check(data: bytes, **kwargs):
    return check_task_file(io.BytesIO(data), **kwargs)


def read(data: bytes):
    reader = TaskFileReader(io.BytesIO(data))
    records = list(reader)
    return records, reader.report()


def errors_of(data: bytes) -> list[tuple[int, str]]:
    return [(e.line, e.field) for e in check(data).errors]


def test_it_yields_a_valid_task_with_its_defaults():
    records, report = read(jsonl(task()))
    assert report.ok
    [record] = records
    assert (record.line, record.id, record.split) == (1, "t1", "graded")
    assert record.sources == () and record.key_elements == () and record.guidance == ()
    assert record.reference == ""
    assert record.expected_abstention is False
    assert record.metadata == {}


def test_it_reads_sources_key_elements_guidance_and_optional_fields():
    line = task(
        sources=[
            {"id": "c1", "text": "Revenue $10m.", "source": "10-K p.4"},
            {"id": "c2", "text": "x"},
        ],
        key_elements=[{"id": "k1", "text": "Revenue $10m"}],
        guidance=[{"id": "g1", "text": "Cite"}, {"id": "g2", "text": "Period", "mandatory": False}],
        reference="Revenue was $10m [c1].",
        expected_abstention=True,
        metadata={"section": "liquidity", "n": [1, 2.5]},
    )
    [record], report = read(jsonl(line))
    assert report.ok
    assert [(s.id, s.source, s.text) for s in record.sources] == [
        ("c1", "10-K p.4", "Revenue $10m."),
        ("c2", "", "x"),
    ]
    assert [(k.id, k.text) for k in record.key_elements] == [("k1", "Revenue $10m")]
    assert [(g.id, g.mandatory) for g in record.guidance] == [("g1", True), ("g2", False)]
    assert record.reference == "Revenue was $10m [c1]."
    assert record.expected_abstention is True
    assert record.metadata == {"section": "liquidity", "n": [1, 2.5]}


def test_the_manifest_hash_is_the_sha256_of_the_bytes_including_blank_lines():
    data = jsonl(task(), b"", task(id="t2", split="dev", input="Other"))
    report = check(data)
    assert report.ok
    assert report.sha256 == hashlib.sha256(data).hexdigest()
    assert report.task_count == 2
    assert report.split_counts == {"dev": 1, "graded": 1, "stress": 0}


def test_the_content_hash_is_of_the_nfc_normalised_stripped_input():
    decomposed = "Cafe\u0301 memo  \n"
    assert content_sha256(decomposed) == hashlib.sha256("Café memo".encode()).hexdigest()
    [record], _ = read(jsonl(task(input=decomposed)))
    assert record.input == decomposed
    assert record.input_sha256 == content_sha256("Café memo")


def test_a_utf8_decode_error_names_the_line():
    data = jsonl(task(), b'{"id": "t2", "split": "dev", "input": "caf\xe9"}')
    [error] = check(data).errors
    assert (error.line, error.field) == (2, "line")
    assert "not valid UTF-8: byte 0xe9" in error.message


def test_a_byte_order_mark_on_the_first_line_is_accepted():
    records, report = read(b"\xef\xbb\xbf" + jsonl(task()))
    assert report.ok and records[0].id == "t1"


def test_crlf_line_endings_are_accepted():
    data = jsonl(task()).replace(b"\n", b"\r\n") + jsonl(task(id="t2", input="b")).replace(
        b"\n", b"\r\n"
    )
    assert check(data).task_count == 2


def test_a_line_that_is_not_json_or_not_an_object_is_an_error_on_that_line():
    report = check(jsonl(task(), b"{oops", b"[1, 2]", b'"text"'))
    assert [(e.line, e.field) for e in report.errors] == [(2, "line"), (3, "line"), (4, "line")]
    assert "not valid JSON" in report.errors[0].message
    assert report.errors[1].message == "expected a JSON object {...}, got a list"
    assert report.bad_line_count == 3


def test_nan_and_infinity_are_refused():
    report = check(jsonl(b'{"id": "t1", "split": "dev", "input": "x", "metadata": {"v": NaN}}'))
    assert report.errors[0].message == "not valid JSON: NaN is not a JSON number"


def test_a_field_given_twice_in_one_object_is_an_error():
    [error] = check(jsonl(b'{"id": "a", "split": "dev", "split": "graded", "input": "x"}')).errors
    assert (error.line, error.field) == (1, "split")
    assert "twice" in error.message


def test_unknown_top_level_fields_are_named():
    report = check(jsonl(task(gold="x", notes=1)))
    assert [(e.line, e.field) for e in report.errors] == [(1, "gold"), (1, "notes")]
    assert report.errors[0].message.startswith("unknown field; the fields are id, split, input")


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"id": ...}, "id", "required: a non-empty string"),
        ({"id": ""}, "id", "must not be empty"),
        ({"id": 7}, "id", "expected a string, got number 7"),
        ({"id": " t1"}, "id", "must not start or end with whitespace"),
        ({"id": "x" * 121}, "id", "at most 120 characters, got 121"),
        ({"split": ...}, "split", "required: one of dev, graded, stress"),
        ({"split": "test"}, "split", 'expected one of dev, graded, stress, got "test"'),
        ({"input": ...}, "input", "required: a non-empty string"),
        ({"input": "   "}, "input", "must not be empty"),
        ({"input": None}, "input", "expected a string, got null"),
        ({"reference": ["a"]}, "reference", "expected a string, got a list"),
        (
            {"expected_abstention": "yes"},
            "expected_abstention",
            'expected true or false, got string "yes"',
        ),
        ({"metadata": [1]}, "metadata", "expected an object {...}, got a list"),
        ({"sources": {"id": "c1"}}, "sources", "expected a list [...], got an object"),
        ({"sources": ["c1"]}, "sources[0]", 'expected an object {...}, got string "c1"'),
        ({"sources": [{"id": "c1"}]}, "sources[0].text", "required: a non-empty string"),
        ({"sources": [{"text": "t"}]}, "sources[0].id", "required: a non-empty string"),
        (
            {"sources": [{"id": "c1", "text": "t", "source": "s" * 256}]},
            "sources[0].source",
            "at most 255 characters, got 256",
        ),
        (
            {"sources": [{"id": "c1", "text": "t", "page": 3}]},
            "sources[0].page",
            "unknown field; the fields are id, text, source",
        ),
        ({"key_elements": [{"id": "k1", "text": ""}]}, "key_elements[0].text", "must not be empty"),
        (
            {"key_elements": [{"id": "k1", "text": "t", "weight": 1}]},
            "key_elements[0].weight",
            "unknown field; the fields are id, text",
        ),
        (
            {"guidance": [{"id": "g1", "text": "t", "mandatory": 1}]},
            "guidance[0].mandatory",
            "expected true or false, got number 1",
        ),
        (
            {"input": "a\u0000b"},
            "input",
            "the text holds a NUL character (\\u0000) at character 2, which cannot be stored",
        ),
        (
            {"metadata": {"a": {"b": ["ok", "x\u0000"]}}},
            "metadata.a.b[1]",
            "the text holds a NUL character (\\u0000) at character 2, which cannot be stored",
        ),
    ],
)
def test_each_bad_field_is_named_with_what_was_expected(fields, field, message):
    report = check(jsonl(task(**fields)))
    assert [e.as_dict() for e in report.errors] == [{"line": 1, "field": field, "message": message}]
    assert report.task_count == 0


def test_a_lone_surrogate_is_refused():
    report = check(jsonl(b'{"id": "t1", "split": "dev", "input": "x\\ud800"}'))
    assert report.errors[0].field == "input"
    assert "unpaired surrogate" in report.errors[0].message


def test_a_number_out_of_range_in_metadata_is_refused():
    report = check(jsonl(b'{"id": "t1", "split": "dev", "input": "x", "metadata": {"v": 1e400}}'))
    assert (report.errors[0].field, report.errors[0].message) == (
        "metadata.v",
        "the number inf is out of range for JSON",
    )


@pytest.mark.parametrize(
    ("name", "label"),
    [("sources", "chunk id"), ("key_elements", "key-element id"), ("guidance", "guidance-item id")],
)
def test_child_ids_must_be_unique_within_a_task(name, label):
    items = [{"id": "a", "text": "one"}, {"id": "b", "text": "two"}, {"id": "a", "text": "three"}]
    [error] = check(jsonl(task(**{name: items}))).errors
    assert error.field == f"{name}[2].id"
    assert error.message == (
        f'duplicate {label} "a" (also {name}[0].id); ids must be unique within the task'
    )


def test_child_ids_may_repeat_across_tasks():
    items = [{"id": "c1", "text": "x"}]
    assert check(jsonl(task(sources=items), task(id="t2", input="y", sources=items))).ok


def test_a_repeated_id_is_an_error_on_the_later_line_naming_the_earlier():
    data = jsonl(task(id="a", input="1"), task(id="b", input="2"), task(id="a", input="3"))
    [error] = check(data).errors
    assert error == LineError(3, "id", "duplicate id: line 1 has the same id; ids must be unique")


def test_a_graded_input_equal_to_a_dev_input_is_an_error_on_the_later_line():
    data = jsonl(
        task(id="d1", split="dev", input="Draft the covenants section."),
        task(id="g1", split="graded", input="Other"),
        task(id="g2", split="graded", input="  Draft the covenants section.\n"),
    )
    [error] = check(data).errors
    assert (error.line, error.field) == (3, "input")
    assert error.message == (
        "this graded task has the same input (content hash) as the dev task on line 1; dev "
        "and graded must be disjoint"
    )


def test_a_dev_input_equal_to_an_earlier_graded_input_names_the_graded_line():
    data = jsonl(
        task(id="g1", split="graded", input="Same"), task(id="d1", split="dev", input="Same")
    )
    [error] = check(data).errors
    assert error.line == 2
    assert "this dev task has the same input (content hash) as the graded task on line 1" in (
        error.message
    )


def test_inputs_may_repeat_within_a_split_and_in_stress():
    data = jsonl(
        task(id="g1", split="graded", input="Same"),
        task(id="g2", split="graded", input="Same"),
        task(id="s1", split="stress", input="Same"),
        task(id="d1", split="dev", input="Other"),
        task(id="s2", split="stress", input="Other"),
    )
    assert check(data).ok


def test_an_empty_file_is_an_error():
    for data in (b"", b"\n \n\r\n"):
        report = check(data)
        assert [e.as_dict() for e in report.errors] == [
            {
                "line": FILE_LINE,
                "field": "file",
                "message": "the file holds no tasks: expected one JSON object per line",
            }
        ]
        assert report.bad_line_count == 1


def test_blank_lines_are_skipped_but_keep_the_line_numbers():
    data = jsonl(task(), b"", b"   ", task(id="t2", input="b", split="bad"))
    assert errors_of(data) == [(4, "split")]


def test_an_over_long_line_is_an_error_and_the_lines_after_it_are_read():
    long_line = json.dumps(task(input="x" * 5000)).encode()
    data = jsonl(task(id="a"), long_line, task(id="c", input="c", split="bad"))
    reader = TaskFileReader(io.BytesIO(data), max_line_bytes=1000)
    assert [r.id for r in reader] == ["a"]
    report = reader.report()
    assert [(e.line, e.field) for e in report.errors] == [(2, "line"), (3, "split")]
    assert report.errors[0].message == "the line is longer than 1,000 bytes; split the task"
    assert report.sha256 == hashlib.sha256(data).hexdigest()


def test_only_the_first_errors_by_line_are_kept_but_all_are_counted():
    lines = [task(id=f"t{n}", input=f"in {n}", split="bad") for n in range(1, 11)]
    lines.append(task(id="t1", input="again"))  # a cross-line error found last, on line 11
    report = check(jsonl(*lines), max_errors=3)
    assert report.error_count == 11
    assert [e.line for e in report.errors] == [1, 2, 3]
    assert report.bad_line_count == 11


def test_cross_line_errors_found_at_the_end_displace_later_lines_when_the_list_is_full():
    lines = [
        task(id="d", split="dev", input="Same"),
        task(id="g", split="graded", input="Same"),
        *[task(id=f"t{n}", input=f"{n}", split="bad") for n in range(5)],
    ]
    report = check(jsonl(*lines), max_errors=2)
    assert [(e.line, e.field) for e in report.errors] == [(2, "input"), (3, "split")]


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

    data = jsonl(*[task(id=f"t{n}", input=str(n)) for n in range(50)])
    stream = LineOnly(data)
    report = check_task_file(stream)
    assert report.task_count == 50
    assert limits and all(0 < limit <= 8 * 1024 * 1024 + 1 for limit in limits)


def test_a_text_mode_file_is_refused_with_a_clear_message():
    with pytest.raises(TypeError, match="binary mode"):
        check_task_file(io.StringIO('{"id": "t"}\n'))  # type: ignore[arg-type]


def test_a_reader_is_read_once():
    reader = TaskFileReader(io.BytesIO(jsonl(task())))
    list(reader)
    with pytest.raises(RuntimeError, match="once"):
        list(reader)


def test_the_module_imports_without_django():
    code = (
        "import sys, charters.task_import; "
        "print(','.join(m for m in ('django', 'rest_framework') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_a_file_of_only_bad_lines_is_not_also_called_empty():
    assert errors_of(b"\xff\n") == [(1, "line")]
    assert errors_of(b"[]\n") == [(1, "line")]


# --- label set header and gold labels (SPEC §4.1) -------------------------------------------

LABELS = {"label_set": ["compliant", "partially compliant", "non-compliant"]}


def test_a_label_set_header_is_read_and_each_task_keeps_its_gold_label():
    data = jsonl(
        LABELS,
        task(id="a", gold_label="compliant"),
        task(id="b", split="dev", input="Other.", gold_label="non-compliant"),
        task(id="c", split="stress", input="Third."),
    )
    records, report = read(data)
    assert report.ok and report.task_count == 3
    assert report.label_set == ("compliant", "partially compliant", "non-compliant")
    assert [r.gold_label for r in records] == ["compliant", "non-compliant", ""]
    assert [r.line for r in records] == [2, 3, 4]  # the header is not a task


def test_without_a_header_there_is_no_label_set():
    _records, report = read(jsonl(task()))
    assert report.ok and report.label_set == ()


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        # a gold label outside the set, on its line and field
        ((LABELS, task(gold_label="compliant-ish")), [(2, "gold_label")]),
        # graded and dev tasks need one once a label set is declared
        ((LABELS, task()), [(2, "gold_label")]),
        # a gold label without a header label set
        ((task(gold_label="compliant"),), [(1, "gold_label")]),
        # the header only on the first line
        ((task(), LABELS), [(2, "label_set")]),
        # a header holds only the label set, a non-empty list of distinct strings
        (({"label_set": ["a"], "note": 1}, task(gold_label="a")), [(1, "note")]),
        (({"label_set": []}, task()), [(1, "label_set")]),
        (({"label_set": ["a", "A"]}, task(gold_label="a")), [(1, "label_set[1]")]),
        (({"label_set": ["a", 3]}, task()), [(1, "label_set[1]")]),
        (({"label_set": [" a"]}, task()), [(1, "label_set[0]")]),
    ],
)
def test_label_errors_name_the_line_and_the_field(objects, expected):
    assert errors_of(jsonl(*objects)) == expected


def test_the_messages_say_what_was_expected():
    report = check(jsonl(LABELS, task(gold_label="compliant-ish"), task(id="t2", input="x")))
    messages = [e.message for e in report.errors]
    assert messages[0] == (
        '"compliant-ish" is not in the label set ["compliant", "partially compliant", '
        '"non-compliant"]'
    )
    assert messages[1].startswith("required on graded tasks: the task set declares the label set")
    [error] = check(jsonl(task(gold_label="compliant"))).errors
    assert "needs a label set" in error.message and '{"label_set": [...]}' in error.message


def test_a_file_holding_only_a_header_holds_no_task():
    report = check(jsonl(LABELS))
    assert [(e.line, e.field) for e in report.errors] == [(FILE_LINE, "file")]
