"""``enterpriseval adjudications_export``, ``adjudications_import`` and ``adjudication_take``."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from demo.testing.grading import grade_apart
from grading.adjudication_io import dump_line
from grading.models import Adjudication
from grading.selectors.sessions import session_detail


def first(world):
    return world.session.artefacts.order_by("public_id").first()


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_export_fill_and_import(grading_world, tmp_path):
    artefact = first(grading_world)
    grade_apart(artefact)
    exported = tmp_path / "pending.jsonl"
    _out, err = run(
        "adjudications_export",
        "--session",
        grading_world.session.public_id,
        "--output",
        str(exported),
    )
    assert "5 pending field(s)" in err
    lines = [json.loads(raw) for raw in exported.read_text().splitlines()]
    for line in lines:
        line["value"] = line["grader_values"]["Grader 1"]
    filled = tmp_path / "filled.jsonl"
    filled.write_bytes(b"".join(dump_line(line) for line in lines))
    out, _err = run(
        "adjudications_import",
        "--session",
        grading_world.session.public_id,
        str(filled),
        "--as",
        grading_world.adjudicator.username,
    )
    assert "5 final value(s) recorded on 1 artefact(s)" in out
    assert Adjudication.objects.filter(artefact=artefact).count() == 5
    stdout, _ = run("adjudications_export", "--session", grading_world.session.public_id)
    assert stdout == ""


def test_a_bad_file_prints_every_error_with_its_line_and_exits_2(grading_world, tmp_path):
    artefact = first(grading_world)
    grade_apart(artefact)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(
        dump_line(
            {"artefact": artefact.public_id, "unit_key": "s1", "field": "relevant", "value": "N"}
        )
        + dump_line(
            {"artefact": artefact.public_id, "unit_key": "s1", "field": "assertive", "value": "Y"}
        )
    )
    err = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command(
            "adjudications_import",
            "--session",
            grading_world.session.public_id,
            str(bad),
            "--as",
            grading_world.adjudicator.username,
            stderr=err,
        )
    assert raised.value.returncode == 2
    assert f"{bad}:2: field: The graders agree on s1 assertive" in err.getvalue()
    assert not Adjudication.objects.exists()


def test_import_refusals_name_the_option(grading_world, tmp_path):
    session = grading_world.session.public_id
    adjudicator = grading_world.adjudicator.username
    for args, message in (
        (["--session", "nosuch", "x.jsonl", "--as", adjudicator], "--session: no grading session"),
        (["--session", session, "x.jsonl", "--as", "nobody"], "--as: no user"),
        (["--session", session, str(tmp_path / "absent.jsonl"), "--as", adjudicator], "FILE:"),
        (["--session", session, str(tmp_path), "--as", grading_world.owner.username], "FILE:"),
    ):
        with pytest.raises(CommandError, match=message) as raised:
            run("adjudications_import", *args)
        assert raised.value.returncode == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(CommandError, match="named adjudicators"):
        run(
            "adjudications_import",
            "--session",
            session,
            str(empty),
            "--as",
            grading_world.owner.username,
        )


def test_take_a_graders_values_for_fields_or_all(grading_world):
    artefact = first(grading_world)
    grade_apart(artefact)
    base = [
        "adjudication_take",
        "--session",
        grading_world.session.public_id,
        "--artefact",
        artefact.public_id,
        "--as",
        grading_world.adjudicator.username,
    ]
    out, _ = run(*base, "--grader", "2", "--field", "s1.relevant", "--note", "cli")
    assert "1 field(s): s1 relevant = N" in out
    with pytest.raises(CommandError, match="choose s2 assertive first") as raised:
        run(*base, "--grader", "1", "--field", "s2.supported")
    assert raised.value.returncode == 2
    out, _ = run(*base, "--grader", "2")
    assert "s2 assertive = N" in out and "Left pending" not in out
    assert "No longer asked, given the final values: s2 supported." in out
    with pytest.raises(CommandError, match="already adjudicated") as raised:
        run(*base, "--grader", "1", "--field", "s1.relevant")
    assert raised.value.returncode == 2
    with pytest.raises(CommandError, match=r"--field: expected UNIT_KEY\.FIELD"):
        run(*base, "--grader", "1", "--field", "relevant")
    with pytest.raises(CommandError, match="is not asked once s2 assertive is 'N'"):
        run(*base, "--grader", "1", "--field", "s2.supported")
    assert Adjudication.objects.filter(artefact=artefact).count() == 4
    assert session_detail(session=grading_world.session).disputes_pending == 0
