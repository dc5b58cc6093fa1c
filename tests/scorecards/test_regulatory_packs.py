"""Regulatory mapping packs: shipped packs, validation on load, appendix rows (SPEC §7)."""

from __future__ import annotations

import hashlib
import shutil
import textwrap
from pathlib import Path

import pytest

from scorecards.artefacts import ARTEFACT_KINDS, ArtefactRef
from scorecards.regulatory import (
    DEFAULT_PACK_DIR,
    NO_ARTEFACT,
    PackEntry,
    PackError,
    appendix_rows,
    load_pack,
    load_packs,
    packs_used,
)

SHIPPED = {"eu-ai-act", "iso-iec-42001-42005", "nist-ai-rmf", "pra-ss1-23", "sr-11-7", "sr-26-2"}

VALID = """\
pack: {stem}
title: Test framework
version: "1.0"
issuer: Test issuer
document: Test document, 2026
source_url: https://example.org/framework
notes:
  - Recorded for tests; not legal advice.
entries:
  - clause: C1
    title: First clause
    requirement: Do the first thing.
    artefacts: [charter, decision]
    evidence: The charter and the decision show it.
  - clause: C2
    title: Second clause
    requirement: Do the second thing.
    artefacts: [oversight_study]
    evidence: The oversight study shows it.
"""


def write(directory: Path, stem: str, text: str, suffix: str = ".yaml") -> Path:
    path = directory / f"{stem}{suffix}"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def problems_of(path: Path) -> str:
    with pytest.raises(PackError) as caught:
        load_pack(path)
    return str(caught.value)


# ---------------------------------------------------------------------------------------------
# Shipped packs


def test_the_shipped_packs_load_sorted_by_id_with_a_version_and_a_file_hash():
    packs = load_packs()

    assert [pack.id for pack in packs] == sorted(SHIPPED)
    for pack in packs:
        assert pack.path.parent == DEFAULT_PACK_DIR
        assert pack.sha256 == hashlib.sha256(pack.path.read_bytes()).hexdigest()
        assert pack.version and pack.notes and pack.entries
        assert pack.source_url.startswith("https://")


def test_every_artefact_kind_is_mapped_by_at_least_one_shipped_pack():
    mapped = {kind for pack in load_packs() for entry in pack.entries for kind in entry.artefacts}

    assert mapped == set(ARTEFACT_KINDS)


def test_the_eu_pack_covers_the_articles_the_spec_names_and_records_the_omnibus_dates():
    pack = load_pack(DEFAULT_PACK_DIR / "eu-ai-act.yaml")
    clauses = {entry.clause for entry in pack.entries}

    assert {"Art. 9", "Art. 10", "Art. 12", "Art. 14", "Art. 15", "Art. 72"} <= clauses
    notes = " ".join(pack.notes)
    assert "2 December 2027" in notes and "2 August 2028" in notes
    assert "not legal advice" in notes


def test_the_sr_26_2_pack_records_its_scope_statements_as_notes():
    pack = load_pack(DEFAULT_PACK_DIR / "sr-26-2.yaml")
    notes = " ".join(pack.notes)

    assert "SR 11-7" in notes and "SR 21-8" in notes
    assert "generative AI and agentic AI" in notes
    assert "not legal or supervisory advice" in notes


def test_the_seed_table_10_rows_are_mapped_in_the_packs_that_name_them():
    by_pack = {pack.id: {e.clause: e for e in pack.entries} for pack in load_packs()}

    # Seed 003 Table 10, column "EU AI Act (high-risk)".
    eu = by_pack["eu-ai-act"]
    assert "charter" in eu["Art. 9"].artefacts
    assert {"task_set", "sampling_frame"} <= set(eu["Art. 10"].artefacts)
    assert {"grading_records", "agreement", "judge_calibration"} <= set(eu["Art. 15"].artefacts)
    assert {"decision", "scorecard"} <= set(eu["Art. 14"].artefacts)
    assert "monitoring" in eu["Art. 72"].artefacts
    # Column "ISO/IEC 42001": Cl. 9.3 management review for the gate decision and scorecard.
    assert {"decision", "scorecard"} <= set(
        by_pack["iso-iec-42001-42005"]["42001 Cl. 9.3"].artefacts
    )


# ---------------------------------------------------------------------------------------------
# Validation on load


def test_a_valid_pack_loads_with_its_entries_in_file_order(tmp_path):
    path = write(tmp_path, "test-fw", VALID.format(stem="test-fw"))

    pack = load_pack(path)

    assert (pack.id, pack.title, pack.version) == ("test-fw", "Test framework", "1.0")
    assert pack.notes == ("Recorded for tests; not legal advice.",)
    assert pack.entries == (
        PackEntry(
            "C1",
            "First clause",
            "Do the first thing.",
            ("charter", "decision"),
            "The charter and the decision show it.",
        ),
        PackEntry(
            "C2",
            "Second clause",
            "Do the second thing.",
            ("oversight_study",),
            "The oversight study shows it.",
        ),
    )
    assert pack.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert pack.path == path


def test_an_unknown_artefact_kind_is_refused_naming_the_entry_the_item_and_the_line(tmp_path):
    text = VALID.format(stem="sr-11-7").replace("[charter, decision]", "[charter, gradings]")
    path = write(tmp_path, "sr-11-7", text)

    message = problems_of(path)

    assert message.startswith(
        "sr-11-7.yaml: entries[0].artefacts[1]: unknown artefact kind 'gradings' (known: charter, "
    )
    assert message.endswith("audit_log) (line 13)")


def test_a_duplicate_clause_id_is_refused_naming_the_first_entry(tmp_path):
    text = VALID.format(stem="eu-ai-act").replace("clause: C2", "clause: C1")
    path = write(tmp_path, "eu-ai-act", text)

    assert problems_of(path) == (
        "eu-ai-act.yaml: entries[1].clause: duplicate clause id 'C1' (first at entries[0])"
        " (line 15)"
    )


def test_a_missing_key_is_refused_naming_the_entry(tmp_path):
    text = VALID.format(stem="p").replace("    evidence: The oversight study shows it.\n", "")
    path = write(tmp_path, "p", text)

    assert problems_of(path) == "p.yaml: entries[1]: missing key 'evidence' (line 15)"


def test_a_missing_top_level_key_is_refused(tmp_path):
    text = VALID.format(stem="p").replace("issuer: Test issuer\n", "")
    path = write(tmp_path, "p", text)

    assert problems_of(path) == "p.yaml: missing key 'issuer'"


def test_an_unknown_key_is_refused_so_a_misspelt_key_is_not_ignored(tmp_path):
    text = VALID.format(stem="p").replace(
        "artefacts: [oversight_study]", "artifacts: [oversight_study]"
    )
    path = write(tmp_path, "p", text)

    message = problems_of(path)

    assert "p.yaml: entries[1].artifacts: unknown key 'artifacts' (allowed: clause, " in message
    assert "p.yaml: entries[1]: missing key 'artefacts' (line 15)" in message


def test_an_unquoted_version_read_as_a_number_is_refused_with_a_hint(tmp_path):
    text = VALID.format(stem="p").replace('version: "1.0"', "version: 2026.1")
    path = write(tmp_path, "p", text)

    assert problems_of(path) == (
        'p.yaml: version: expected a text, got a number (2026.1) (quote it, e.g. version: "2026.1")'
        " (line 3)"
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "[oversight_study]",
            "[]",
            "p.yaml: entries[1].artefacts: lists no artefact: each clause needs at least one"
            " (line 18)",
        ),
        (
            "[oversight_study]",
            "oversight_study",
            "p.yaml: entries[1].artefacts: expected a list of artefact kinds, got a text"
            " ('oversight_study') (line 18)",
        ),
        (
            "[charter, decision]",
            "[charter, charter]",
            "p.yaml: entries[0].artefacts[1]: artefact kind 'charter' listed twice (first at [0])"
            " (line 13)",
        ),
        (
            "title: Second clause",
            "title: ''",
            "p.yaml: entries[1].title: must not be empty (line 16)",
        ),
        (
            "notes:\n  - Recorded for tests; not legal advice.",
            "notes: Recorded for tests",
            "p.yaml: notes: expected a list of texts, got a text ('Recorded for tests') (line 7)",
        ),
        (
            "source_url: https://example.org/framework",
            "source_url: example.org",
            "p.yaml: source_url: expected an http(s) URL, got 'example.org' (line 6)",
        ),
        (
            "clause: C1",
            "clause: 7",
            "p.yaml: entries[0].clause: expected a text, got a number (7) (line 10)",
        ),
    ],
)
def test_wrong_types_and_empty_values_are_refused_naming_key_and_line(tmp_path, old, new, expected):
    text = VALID.format(stem="p")
    assert old in text
    path = write(tmp_path, "p", text.replace(old, new))

    assert problems_of(path) == expected


def test_entries_must_be_a_non_empty_list(tmp_path):
    text = VALID.format(stem="p").split("entries:")[0] + "entries: []\n"
    path = write(tmp_path, "p", text)

    assert problems_of(path) == (
        "p.yaml: entries: expected a non-empty list of entries, got an empty list (line 9)"
    )


def test_a_pack_id_that_does_not_match_the_file_name_is_refused(tmp_path):
    path = write(tmp_path, "sr-26-2", VALID.format(stem="sr-11-7"))

    assert problems_of(path) == (
        "sr-26-2.yaml: pack: id 'sr-11-7' does not match the file name (expected 'sr-26-2')"
        " (line 1)"
    )


def test_a_yaml_syntax_error_is_refused_with_its_line(tmp_path):
    text = VALID.format(stem="p").replace(
        "    artefacts: [oversight_study]", "    artefacts: [oversight_study"
    )
    path = write(tmp_path, "p", text)

    message = problems_of(path)

    assert message == (
        "p.yaml: line 19: not valid YAML: while parsing a flow sequence (line 18)"
        " expected ',' or ']', but got ':'"
    )


def test_a_key_given_twice_is_refused_rather_than_silently_overwritten(tmp_path):
    text = VALID.format(stem="p").replace("title: Test framework\n", "title: A\ntitle: B\n")
    path = write(tmp_path, "p", text)

    assert problems_of(path) == "p.yaml: title: duplicate key 'title' (line 3; first at line 2)"


def test_a_file_that_is_not_a_mapping_is_refused(tmp_path):
    path = write(tmp_path, "p", "- just\n- a list\n")

    assert problems_of(path).startswith(
        "p.yaml: the pack must be a mapping with the keys pack, title, version,"
    )


def test_every_problem_of_a_pack_is_listed_not_only_the_first(tmp_path):
    text = (
        VALID.format(stem="p")
        .replace("[charter, decision]", "[gradings]")
        .replace("clause: C2", "clause: C1")
    )
    path = write(tmp_path, "p", text)

    with pytest.raises(PackError) as caught:
        load_pack(path)

    assert [problem.split(":")[1].strip() for problem in caught.value.problems] == [
        "entries[0].artefacts[0]",
        "entries[1].clause",
    ]


# ---------------------------------------------------------------------------------------------
# Folders of packs


def test_a_duplicate_pack_id_across_files_is_refused(tmp_path):
    write(tmp_path, "p", VALID.format(stem="p"))
    write(tmp_path, "p", VALID.format(stem="p"), suffix=".yml")

    with pytest.raises(PackError) as caught:
        load_packs(tmp_path)

    assert str(caught.value) == "p.yml: pack: duplicate pack id 'p' (first in p.yaml)"


def test_a_folder_reports_the_problems_of_every_invalid_pack(tmp_path):
    write(tmp_path, "a", VALID.format(stem="a").replace("clause: C2", "clause: C1"))
    write(tmp_path, "b", VALID.format(stem="x"))
    write(tmp_path, "c", VALID.format(stem="c"))

    with pytest.raises(PackError) as caught:
        load_packs(tmp_path)

    assert [problem.split(":")[0] for problem in caught.value.problems] == ["a.yaml", "b.yaml"]


def test_a_missing_or_empty_folder_is_refused(tmp_path):
    with pytest.raises(PackError, match="not a folder of regulatory packs"):
        load_packs(tmp_path / "absent")
    with pytest.raises(PackError, match="holds no regulatory pack"):
        load_packs(tmp_path)


def test_editor_backups_and_other_files_in_the_folder_are_ignored(tmp_path):
    write(tmp_path, "p", VALID.format(stem="p"))
    write(tmp_path, ".#p", "not: [valid")
    (tmp_path / "README.md").write_text("notes", encoding="utf-8")

    assert [pack.id for pack in load_packs(tmp_path)] == ["p"]


def test_an_edited_copy_of_the_packs_is_picked_up_without_a_code_change(tmp_path):
    copy = tmp_path / "packs"
    shutil.copytree(DEFAULT_PACK_DIR, copy)
    path = copy / "eu-ai-act.yaml"
    text = path.read_text(encoding="utf-8")
    assert 'version: "2026.1"' in text
    path.write_text(
        text.replace('version: "2026.1"', 'version: "2026.2"').replace(
            "entries:\n",
            "entries:\n"
            "  - clause: Art. 4\n"
            "    title: AI literacy\n"
            "    requirement: Staff who operate the system have enough AI literacy.\n"
            "    artefacts: [oversight_study]\n"
            "    evidence: The oversight study shows reviewers' skill at catching defects.\n",
            1,
        ),
        encoding="utf-8",
    )

    before = {pack.id: pack for pack in load_packs()}
    after = {pack.id: pack for pack in load_packs(str(copy))}

    assert after["eu-ai-act"].version == "2026.2"
    assert after["eu-ai-act"].entries[0].clause == "Art. 4"
    assert len(after["eu-ai-act"].entries) == len(before["eu-ai-act"].entries) + 1
    assert after["eu-ai-act"].sha256 != before["eu-ai-act"].sha256
    assert after["sr-11-7"].sha256 == before["sr-11-7"].sha256
    assert before["eu-ai-act"].version == "2026.1"


# ---------------------------------------------------------------------------------------------
# Appendix


def small_pack(tmp_path):
    return load_pack(write(tmp_path, "test-fw", VALID.format(stem="test-fw")))


def test_appendix_rows_give_one_row_per_pack_entry_and_artefact_kind(tmp_path):
    pack = small_pack(tmp_path)
    charter = ArtefactRef("charter", "Charter v3", "/use-cases/7/charter/3/", "a" * 64)
    decision = ArtefactRef("decision", "Gate decision", "/use-cases/7/decisions/2/", "b" * 64)
    oversight = ArtefactRef(
        "oversight_study", "Oversight study", "", "", "no oversight study was run"
    )

    rows = appendix_rows(
        [pack], {"charter": charter, "decision": decision, "oversight_study": oversight}
    )

    # C1 maps charter and decision, C2 maps oversight_study: 2 + 1 rows.
    assert [(row.clause, row.kind) for row in rows] == [
        ("C1", "charter"),
        ("C1", "decision"),
        ("C2", "oversight_study"),
    ]
    first = rows[0]
    assert (first.pack_id, first.pack_version) == ("test-fw", "1.0")
    assert (first.clause_title, first.requirement, first.evidence) == (
        "First clause",
        "Do the first thing.",
        "The charter and the decision show it.",
    )
    assert (first.artefact_title, first.url, first.sha256) == (
        "Charter v3",
        "/use-cases/7/charter/3/",
        "a" * 64,
    )
    assert first.present and first.missing == ""
    assert rows[1].sha256 == "b" * 64
    assert not rows[2].present
    assert (rows[2].url, rows[2].sha256, rows[2].missing) == ("", "", "no oversight study was run")


def test_an_artefact_the_scorecard_lacks_gives_a_missing_row_not_an_error(tmp_path):
    pack = small_pack(tmp_path)

    rows = appendix_rows([pack], {})

    assert len(rows) == 3
    assert all(not row.present and row.missing == NO_ARTEFACT for row in rows)
    assert rows[2].artefact_title == ARTEFACT_KINDS["oversight_study"]


def test_appendix_rows_of_the_shipped_packs_count_every_mapping_once():
    packs = load_packs()
    expected = sum(len(entry.artefacts) for pack in packs for entry in pack.entries)
    refs = {kind: ArtefactRef(kind, kind, f"/a/{kind}/", "0" * 64) for kind in ARTEFACT_KINDS}

    rows = appendix_rows(packs, refs)

    assert len(rows) == expected
    assert all(row.present for row in rows)
    assert [row.pack_id for row in rows] == sorted(row.pack_id for row in rows)


def test_an_artefact_map_under_the_wrong_kind_is_refused(tmp_path):
    charter = ArtefactRef("charter", "Charter", "/c/", "a" * 64)

    with pytest.raises(
        ValueError, match="artefacts\\['decision'\\]: holds an artefact of kind 'charter'"
    ):
        appendix_rows([small_pack(tmp_path)], {"decision": charter})


def test_packs_used_lists_id_title_version_and_file_hash(tmp_path):
    pack = small_pack(tmp_path)

    assert packs_used([pack]) == [
        {"id": "test-fw", "title": "Test framework", "version": "1.0", "sha256": pack.sha256}
    ]


def test_the_mapping_matrix_is_table_10_for_the_scorecards_artefacts():
    from scorecards.artefacts import ArtefactRef
    from scorecards.regulatory import load_packs, mapping_matrix

    packs = load_packs()
    artefacts = {
        "charter": ArtefactRef("charter", "Charter v1", "/c/", "a" * 64),
        "oversight_study": ArtefactRef("oversight_study", "Study", "", "", "no oversight study"),
    }
    rows = {row.kind: row for row in mapping_matrix(packs, artefacts)}
    ids = [pack.id for pack in packs]
    charter = rows["charter"]
    assert (charter.title, charter.url, charter.sha256, charter.missing) == (
        "Charter v1",
        "/c/",
        "a" * 64,
        "",
    )
    assert len(charter.clauses) == len(packs)
    for pack, clauses in zip(packs, charter.clauses, strict=True):
        assert list(clauses) == [e.clause for e in pack.entries if "charter" in e.artefacts]
    assert "Art. 9" in charter.clauses[ids.index("eu-ai-act")]
    assert rows["oversight_study"].missing == "no oversight study"
    assert rows["decision"].missing  # not given: reported missing, never blank
    every_kind = {kind for pack in packs for entry in pack.entries for kind in entry.artefacts}
    assert set(rows) == every_kind
