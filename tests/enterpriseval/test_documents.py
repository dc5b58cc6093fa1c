"""The one YAML/JSON document reader (pure): booleans, duplicate keys, lines of field paths."""

from __future__ import annotations

import pytest

from enterpriseval.documents import (
    DocumentSyntaxError,
    DuplicateKey,
    DuplicateKeyError,
    config_data,
    document_lines,
    document_read,
    json_unique_object,
)

CHARTER = """\
metrics:
  - id: hallucination_rate
    treatment: gated
    theta_in: 5
  - id: irrelevance_rate
    treatment: informational
alternative_weights:
  a.b:
    hallucination_rate: 2
"""


@pytest.mark.parametrize("word", ["yes", "no", "on", "off", "y", "n", "Yes", "OFF"])
def test_yaml_1_1_boolean_words_stay_text(word):
    assert document_read(f"flag: {word}\n", fmt="yaml").data == {"flag": word}


@pytest.mark.parametrize(("word", "value"), [("true", True), ("False", False), ("TRUE", True)])
def test_only_true_and_false_are_booleans(word, value):
    assert document_read(f"flag: {word}\n", fmt="yaml").data == {"flag": value}


def test_dates_stay_text():
    assert document_read("next_review_date: 2027-03-31\n", fmt="yaml").data == {
        "next_review_date": "2027-03-31"
    }


def test_every_repeated_yaml_key_is_reported_with_its_path_and_both_lines():
    text = "a: 1\nb:\n  c: 1\n  c: 2\na: 3\n"
    with pytest.raises(DuplicateKeyError) as raised:
        document_read(text, fmt="yaml")
    assert raised.value.duplicates == (
        DuplicateKey("c", "b.c", line=4, first_line=3),
        DuplicateKey("a", "a", line=5, first_line=1),
    )


def test_a_repeated_json_key_is_refused_naming_the_key():
    with pytest.raises(DuplicateKeyError) as raised:
        document_read('{"a": 1, "a": 2}', fmt="json")
    assert raised.value.duplicates == (DuplicateKey("a"),)


def test_syntax_errors_give_the_line_and_column():
    with pytest.raises(DocumentSyntaxError) as raised:
        document_read('{\n  "model": {,}\n}', fmt="json")
    assert (raised.value.line, raised.value.column) == (2, 13)
    assert raised.value.message == (
        "not valid JSON: Expecting property name enclosed in double quotes (column 13)"
    )
    with pytest.raises(DocumentSyntaxError) as raised:
        document_read("model:\n  provider: [openai\n", fmt="yaml")
    assert raised.value.line == 3
    # An unclosed bracket is noticed on a later line: the reason says where it was opened.
    assert raised.value.message.startswith("not valid YAML: while parsing a flow sequence (line 2)")


def test_an_unknown_tag_is_a_syntax_error_without_a_column():
    with pytest.raises(DocumentSyntaxError) as raised:
        document_read("a: !!python/object:os.system x\n", fmt="yaml")
    assert raised.value.line == 1 and raised.value.column is None


def test_the_line_of_a_field_path_is_that_of_its_deepest_field_in_the_text():
    lines = document_read(CHARTER, fmt="yaml").lines
    assert lines.line("metrics") == 1
    assert lines.line("metrics[1]") == 5
    assert lines.line("metrics[0].theta_in") == 4
    assert lines.line("metrics[0].weight") == 2  # absent: the metric's line
    assert lines.line("metrics[irrelevance_rate].treatment") == 6  # a list item by its id
    assert lines.line("alternative_weights.a.b.hallucination_rate") == 9  # a key with a dot
    assert lines.line(("metrics", 0, "theta_in")) == 4
    assert lines.line("nu_max") is None
    assert lines.line("metrics[0].weight", exact=True) is None
    assert lines.line("metrics[0].theta_in", exact=True) == 4
    assert lines.line("") is None
    assert lines.root_line == 1


def test_json_text_has_lines_too_and_an_unreadable_text_has_none():
    lines = document_lines('{\n  "metrics": [\n    {"id": "x"}\n  ]\n}')
    assert lines.line("metrics[0].id") == 3
    assert document_lines("a: [").line("a") is None
    assert document_lines("a: [").root_line is None


def test_a_configuration_file_reads_yaml_1_2_and_words_its_faults_in_one_line_naming_the_file():
    assert config_data("flag: yes\nday: 2027-03-31\n", "c.yaml") == {
        "flag": "yes",
        "day": "2027-03-31",
    }
    with pytest.raises(ValueError) as raised:
        config_data("a: 1\n b: 2\n", "c.yaml")
    assert str(raised.value) == (
        "c.yaml: not valid YAML (line 2, column 3: mapping values are not allowed here)"
    )
    with pytest.raises(LookupError) as raised:
        config_data("a: 1\nb:\n  c: 1\n  c: 2\n", "c.yaml", error=LookupError)
    assert str(raised.value) == (
        "c.yaml: not valid YAML (line 4: key 'b.c' appears twice, first on line 3; "
        "give each key once)"
    )


def test_the_json_hook_refuses_a_repeated_key_and_keeps_the_order():
    assert list(json_unique_object([("b", 1), ("a", 2)])) == ["b", "a"]
    with pytest.raises(DuplicateKeyError) as raised:
        json_unique_object([("a", 1), ("a", 2)])
    assert raised.value.duplicates == (DuplicateKey("a"),)
