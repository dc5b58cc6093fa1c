"""Reading an executed output's label by σ's label format (SPEC §4.1)."""

from __future__ import annotations

from runs.labels import label_reader

LABELS = ("compliant", "partially compliant", "non-compliant")
FORMAT = {"kind": "label", "pattern": r"^Judgement:\s*(?P<label>[^\n]+)$"}


def test_the_label_is_searched_in_multiline_mode_stripped_and_matched_ignoring_case():
    reader = label_reader(FORMAT, LABELS)
    assert reader is not None
    text = "Control C-7 reviewed.\nJudgement:   Partially Compliant  \nRecommendation: …"
    read = reader.read(text, task_id="C-7", repeat=2)
    assert (read.label, read.problem) == ("partially compliant", "")


def test_an_unreadable_label_is_unknown_with_a_message_naming_the_output():
    reader = label_reader(FORMAT, LABELS)
    assert reader is not None
    missing = reader.read("No judgement here.", task_id="C-7", repeat=2)
    assert missing.label is None
    assert missing.problem.startswith("task C-7, repeat 2: no label: σ's output format pattern")
    outside = reader.read("Judgement: mostly fine", task_id="C-8", repeat=0)
    assert outside.label is None
    assert outside.problem == (
        'task C-8, repeat 0: the output\'s label "mostly fine" is not in the label set '
        '["compliant", "partially compliant", "non-compliant"]'
    )


def test_free_text_formats_and_task_sets_without_labels_read_no_label():
    assert label_reader("Memo section in prose.", LABELS) is None
    assert label_reader(None, LABELS) is None
    assert label_reader(FORMAT, ()) is None
