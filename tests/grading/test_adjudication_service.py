"""Adjudication services: an artefact's fields at once, taking a value, the file import."""

from __future__ import annotations

import io
import json

import pytest

from audit.models import AuditEntry
from demo.testing.grading import grade_apart
from enterpriseval.errors import ConflictError, ImmutableError, ServiceError
from grading.adjudication_io import dump_line
from grading.models import Adjudication
from grading.selectors.adjudication import adjudication_item, adjudications_file
from grading.selectors.sessions import session_detail
from grading.services.adjudication import (
    FinalValue,
    adjudication_take,
    adjudications_import,
    adjudications_record,
)
from grading.services.grades import adjudication_record
from grading.services.sessions import session_close

#: The disputes :func:`grade_apart` makes on every artefact, with Grader 1's and 2's values.
DISPUTES = {
    ("s1", "relevant"): ("Y", "N"),
    ("s2", "assertive"): ("Y", "N"),
    ("s2", "supported"): ("fully", None),
    ("k:ke1", "key_element"): ("present_correct", "absent"),
    ("artefact", "value_add"): ("0", "2"),
}


def two(world):
    return list(world.session.artefacts.order_by("public_id"))[:2]


def finals(artefact) -> dict[tuple[str, str], str]:
    return {(a.unit_key, a.field): a.value for a in Adjudication.objects.filter(artefact=artefact)}


def pending(world, artefact) -> int:
    item = adjudication_item(session=world.session, artefact_public_id=artefact.public_id)
    return item.pending


def test_several_fields_of_an_artefact_are_recorded_in_one_call(grading_world):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    outcome = adjudications_record(
        actor=grading_world.adjudicator,
        artefact=artefact,
        values=[
            FinalValue("s1", "relevant", "N", "restates s2"),
            FinalValue("artefact", "value_add", "1"),
        ],
    )
    assert len(outcome.recorded) == 2
    assert finals(artefact) == {("s1", "relevant"): "N", ("artefact", "value_add"): "1"}
    entries = AuditEntry.objects.filter(action="adjudication.record").order_by("pk")
    assert [(e.payload["unit_key"], e.payload["value"]) for e in entries] == [
        ("s1", "N"),
        ("artefact", "1"),
    ]
    assert entries[0].payload["grader_values"] == ["N", "Y"]
    assert entries[0].payload["note"] == "restates s2"
    assert pending(grading_world, artefact) == 3


def test_one_refused_value_records_none_and_every_refusal_is_listed(grading_world):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    adjudication_record(
        actor=grading_world.adjudicator,
        artefact=artefact,
        unit_key="s1",
        field="relevant",
        value="N",
    )
    with pytest.raises(ServiceError) as caught:
        adjudications_record(
            actor=grading_world.adjudicator,
            artefact=artefact,
            values=[
                FinalValue("artefact", "value_add", "1"),
                FinalValue("k:ke1", "key_element", "maybe"),
                FinalValue("s1", "assertive", "Y"),
                FinalValue("s1", "relevant", "Y"),
                FinalValue("s99", "relevant", "Y"),
            ],
        )
    error = caught.value
    assert error.field == "value"
    assert [(d["unit_key"], d["field"]) for d in error.details] == [
        ("k:ke1", "key_element"),
        ("s1", "assertive"),
        ("s1", "relevant"),
        ("s99", "relevant"),
    ]
    messages = [d["message"] for d in error.details]
    assert "value must be one of present_correct, present_wrong, absent" in messages[0]
    assert messages[1] == "The graders agree on s1 assertive; there is nothing to adjudicate."
    assert messages[2] == "s1 relevant is already adjudicated; the adjudicated value is final (N)."
    assert messages[3] == "'s99' is not a unit of this artefact."
    assert finals(artefact) == {("s1", "relevant"): "N"}  # the value-add was not kept


def test_a_field_given_twice_is_refused(grading_world):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    with pytest.raises(ServiceError, match="s1 relevant is given twice"):
        adjudications_record(
            actor=grading_world.adjudicator,
            artefact=artefact,
            values=[FinalValue("s1", "relevant", "N"), FinalValue("s1", "relevant", "Y")],
        )
    assert not Adjudication.objects.exists()


def test_taking_grader_one_for_every_pending_field(grading_world):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    outcome = adjudication_take(actor=grading_world.adjudicator, artefact=artefact, grader=1)
    assert finals(artefact) == {key: first for key, (first, _second) in DISPUTES.items()}
    assert outcome.not_asked == []
    assert pending(grading_world, artefact) == 0
    entries = AuditEntry.objects.filter(action="adjudication.record")
    assert entries.count() == len(DISPUTES)
    assert {e.payload["via"] for e in entries} == {"take Grader 1"}


def test_taking_the_grader_who_called_s2_not_assertive_closes_s2_supported_as_moot(
    grading_world,
):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    outcome = adjudication_take(actor=grading_world.adjudicator, artefact=artefact, grader=2)
    assert outcome.not_asked == []
    assert outcome.moot == [("s2", "supported")]
    assert finals(artefact) == {
        key: second for key, (_first, second) in DISPUTES.items() if second is not None
    }
    assert pending(grading_world, artefact) == 0
    assert session_detail(session=grading_world.session).disputes_pending == 0
    with pytest.raises(ConflictError, match="not asked once s2 assertive is 'N'"):
        adjudication_take(
            actor=grading_world.adjudicator,
            artefact=artefact,
            grader=1,
            fields=[("s2", "supported")],
        )


def test_taking_the_grader_who_called_s2_assertive_takes_s2_supported_in_the_same_step(
    grading_world,
):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    outcome = adjudication_take(actor=grading_world.adjudicator, artefact=artefact, grader=1)
    assert outcome.moot == [] and outcome.not_asked == []
    assert finals(artefact)[("s2", "assertive")] == "Y"
    assert finals(artefact)[("s2", "supported")] == "fully"
    assert pending(grading_world, artefact) == 0


def test_a_dependent_field_waits_for_its_parent_and_follows_it_per_field(grading_world):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    with pytest.raises(ConflictError, match="choose s2 assertive first"):
        adjudication_record(
            actor=grading_world.adjudicator,
            artefact=artefact,
            unit_key="s2",
            field="supported",
            value="fully",
        )
    with pytest.raises(ConflictError, match="not asked once s2 assertive is 'N'"):
        adjudications_record(
            actor=grading_world.adjudicator,
            artefact=artefact,
            values=[FinalValue("s2", "assertive", "N"), FinalValue("s2", "supported", "fully")],
        )
    assert not Adjudication.objects.exists()
    adjudication_record(
        actor=grading_world.adjudicator,
        artefact=artefact,
        unit_key="s2",
        field="assertive",
        value="Y",
    )
    adjudication_record(
        actor=grading_world.adjudicator,
        artefact=artefact,
        unit_key="s2",
        field="supported",
        value="partially",
    )
    assert finals(artefact)[("s2", "supported")] == "partially"


def test_taking_named_fields_and_refusing_one_the_grader_was_not_asked(grading_world):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    adjudication_take(
        actor=grading_world.adjudicator,
        artefact=artefact,
        grader=2,
        fields=[("s1", "relevant"), ("artefact", "value_add")],
        note="as grader two",
    )
    assert finals(artefact) == {("s1", "relevant"): "N", ("artefact", "value_add"): "2"}
    assert set(Adjudication.objects.values_list("note", flat=True)) == {"as grader two"}
    with pytest.raises(ServiceError) as caught:
        adjudication_take(
            actor=grading_world.adjudicator,
            artefact=artefact,
            grader=2,
            fields=[("k:ke1", "key_element"), ("s2", "supported")],
        )
    assert caught.value.field == "grader"
    assert "Grader 2 was not asked s2 supported; choose its final value." in caught.value.message
    assert len(finals(artefact)) == 2  # k:ke1 was not taken either
    with pytest.raises(ImmutableError, match="already adjudicated"):
        adjudication_take(
            actor=grading_world.adjudicator,
            artefact=artefact,
            grader=1,
            fields=[("s1", "relevant")],
        )
    with pytest.raises(ServiceError, match="no Grader 3 on this artefact"):
        adjudication_take(actor=grading_world.adjudicator, artefact=artefact, grader=3)


def test_the_page_save_with_take_gives_the_other_fields_the_graders_values(grading_world):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    adjudications_record(
        actor=grading_world.adjudicator,
        artefact=artefact,
        values=[FinalValue("s2", "assertive", "Y"), FinalValue("s2", "supported", "partially")],
        take_rest_from=2,
    )
    expected = {key: second for key, (_first, second) in DISPUTES.items() if second is not None}
    assert finals(artefact) == {
        **expected,
        ("s2", "assertive"): "Y",
        ("s2", "supported"): "partially",
    }


def test_only_named_adjudicators_of_an_open_session_record(grading_world):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    for user in (grading_world.owner, grading_world.graders[0]):
        with pytest.raises(ServiceError, match="named adjudicators"):
            adjudication_take(actor=user, artefact=artefact, grader=1)
    session_close(actor=grading_world.owner, session=grading_world.session)
    with pytest.raises(ImmutableError, match="closed"):
        adjudication_take(actor=grading_world.adjudicator, artefact=artefact, grader=1)
    assert not Adjudication.objects.exists()


def test_an_unfinished_artefact_is_refused(grading_world):
    artefact = two(grading_world)[0]
    grade_apart(artefact, both_submit=False)
    with pytest.raises(ConflictError, match="no submitted grades from every grader yet"):
        adjudications_record(
            actor=grading_world.adjudicator,
            artefact=artefact,
            values=[FinalValue("s1", "relevant", "N")],
        )


# The file


def as_file(lines: list[dict | str]) -> io.BytesIO:
    return io.BytesIO(
        b"".join(
            line.encode() + b"\n" if isinstance(line, str) else dump_line(line) for line in lines
        )
    )


def run_import(world, lines, actor=None):
    return adjudications_import(
        actor=actor or world.adjudicator,
        session=world.session,
        fileobj=as_file(lines),
        filename="adj.jsonl",
    )


def line(artefact, unit_key="s1", field="relevant", value="N", **extra) -> dict:
    return {
        "artefact": artefact.public_id,
        "unit_key": unit_key,
        "field": field,
        "value": value,
        **extra,
    }


def test_the_export_filled_in_is_imported(grading_world):
    first, second = two(grading_world)
    grade_apart(first)
    grade_apart(second)
    exported = [json.loads(raw) for raw in adjudications_file(session=grading_world.session)]
    assert len(exported) == 2 * len(DISPUTES)
    assert {(e["unit_key"], e["field"]) for e in exported} == set(DISPUTES)
    assert all(e["value"] is None for e in exported)
    supported = next(e for e in exported if e["field"] == "supported")
    assert supported["grader_values"] == {"Grader 1": "fully", "Grader 2": None}
    assert supported["choices"] == ["fully", "partially", "not"]
    for entry in exported:
        if entry["artefact"] == first.public_id:
            entry["value"] = entry["grader_values"]["Grader 1"]
            entry["note"] = "Grader 1 read the source"
    result = run_import(grading_world, exported)
    assert (result.adjudicated, result.artefacts, result.left_blank, result.lines) == (5, 1, 5, 10)
    assert finals(first) == {key: v1 for key, (v1, _v2) in DISPUTES.items()}
    assert finals(second) == {}
    assert AuditEntry.objects.filter(action="adjudication.record").count() == 5
    entry = AuditEntry.objects.get(action="adjudications.import")
    assert entry.payload["filename"] == "adj.jsonl"
    assert entry.payload["sha256"] == result.sha256
    remaining = [json.loads(raw) for raw in adjudications_file(session=grading_world.session)]
    assert {e["artefact"] for e in remaining} == {second.public_id}


def test_every_refusal_names_its_line_and_field_and_nothing_is_recorded(grading_world):
    first, second, third = list(grading_world.session.artefacts.order_by("public_id"))[:3]
    grade_apart(first)
    grade_apart(second, both_submit=False)
    grade_apart(third)
    adjudication_record(
        actor=grading_world.adjudicator,
        artefact=first,
        unit_key="k:ke1",
        field="key_element",
        value="absent",
    )
    lines = [
        line(first, "artefact", "value_add", "1"),  # 1: fine
        line(first, "s1", "assertive", "Y"),  # 2: agreed
        line(first, "k:ke1", "key_element", "absent"),  # 3: already adjudicated
        line(first, "s1", "relevant", "maybe"),  # 4: not an allowed value
        {"artefact": "nosuchartefact", "unit_key": "s1", "field": "relevant", "value": "N"},  # 5
        line(first, "artefact", "value_add", "2"),  # 6: duplicate of line 1
        line(second, "s1", "relevant", "N"),  # 7: not every grader submitted
        line(first, "s99", "relevant", "N"),  # 8: not a unit
        line(first, "s1", "citation", "strict"),  # 9: not a field of a sentence
        {"artefact": first.public_id, "unit_key": "s2", "field": "assertive"},  # 10: no value
        line(first, "s2", "supported", "fully", colour="red"),  # 11: unknown field
        "[1, 2]",  # 12: not an object
        line(third, "s1", "relevant", 1),  # 13: value not a string
        line(third, "s2", "assertive", "N", note=5),  # 14: bad note
        "",  # 15: blank, counted
        '{"artefact": "x", "artefact": "y"}',  # 16: a key twice
    ]
    with pytest.raises(ServiceError) as caught:
        run_import(grading_world, lines)
    error = caught.value
    assert error.field == "file"
    assert "nothing was imported" in error.message
    found = {(d["line"], d["field"]) for d in error.details}
    assert found == {
        (2, "field"),
        (3, "field"),
        (4, "value"),
        (5, "artefact"),
        (6, "field"),
        (7, "field"),
        (8, "unit_key"),
        (9, "field"),
        (10, "value"),
        (11, "colour"),
        (12, "line"),
        (13, "value"),
        (14, "note"),
        (16, "artefact"),
    }
    by_line = {d["line"]: d["message"] for d in error.details}
    assert "agree on s1 assertive" in by_line[2]
    assert "already adjudicated; the adjudicated value is final (absent)" in by_line[3]
    assert "value must be one of Y, N" in by_line[4]
    assert "unknown artefact" in by_line[5]
    assert "duplicate: line 1 is also artefact value_add" in by_line[6]
    assert "no submitted grades from every grader yet" in by_line[7]
    assert "not asked of a sentence" in by_line[9]
    assert finals(first) == {("k:ke1", "key_element"): "absent"}
    assert not AuditEntry.objects.filter(action="adjudications.import").exists()


def test_an_empty_file_and_an_over_long_line_are_refused(grading_world):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    with pytest.raises(ServiceError) as empty:
        run_import(grading_world, [])
    assert empty.value.details[0]["line"] == 0
    long_line = json.dumps(line(artefact, note="x" * 300_000))
    with pytest.raises(ServiceError) as long:
        run_import(grading_world, [long_line])
    assert (long.value.details[0]["line"], long.value.details[0]["field"]) == (1, "line")
    assert "longer than" in long.value.details[0]["message"]


def test_the_import_is_for_named_adjudicators(grading_world):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    with pytest.raises(ServiceError, match="named adjudicators"):
        run_import(grading_world, [line(artefact)], actor=grading_world.owner)
    assert not Adjudication.objects.exists()


def test_an_import_refuses_a_dependent_field_its_parent_no_longer_asks_naming_the_line(
    grading_world,
):
    artefact = two(grading_world)[0]
    grade_apart(artefact)
    lines = [
        json.loads(raw)
        for raw in b"".join(adjudications_file(session=grading_world.session)).splitlines()
    ]
    for line in lines:
        line["value"] = {"assertive": "N", "supported": "fully"}.get(
            line["field"], line["choices"][0]
        )
    number = 1 + [line["field"] for line in lines].index("supported")
    with pytest.raises(ServiceError) as caught:
        adjudications_import(
            actor=grading_world.adjudicator,
            session=grading_world.session,
            fileobj=io.BytesIO(b"".join(dump_line(line) for line in lines)),
            filename="mine.jsonl",
        )
    assert caught.value.details[0]["line"] == number
    assert "not asked once s2 assertive is 'N'" in caught.value.details[0]["message"]
    assert not Adjudication.objects.exists()
    lines[number - 1]["value"] = None
    result = adjudications_import(
        actor=grading_world.adjudicator,
        session=grading_world.session,
        fileobj=io.BytesIO(b"".join(dump_line(line) for line in lines)),
        filename="mine.jsonl",
    )
    assert (result.adjudicated, result.left_blank) == (4, 1)
    assert session_detail(session=grading_world.session).disputes_pending == 0
