"""``audit_verify``: recompute the chain and name the first broken entry."""

import pytest
from django.db import connection

from audit.models import AuditEntry, entry_hash
from audit.selectors import VerificationResult, audit_verify

pytestmark = pytest.mark.django_db


@pytest.fixture
def execute(triggers_lifted):
    """Return a function that runs SQL on the log with the append-only triggers lifted."""

    def run(sql: str, params: list | None = None) -> None:
        with triggers_lifted(), connection.cursor() as cursor:
            cursor.execute(sql, params)

    return run


def test_an_empty_log_is_intact():
    assert audit_verify() == VerificationResult(ok=True, entries_checked=0)


def test_an_untouched_log_is_intact_and_reports_its_head(record):
    entries = record(5)
    assert audit_verify() == VerificationResult(
        ok=True, entries_checked=5, head_hash=entries[-1].entry_hash
    )


def test_a_changed_payload_is_reported_at_that_entry(execute, record):
    record(5)
    execute("UPDATE audit_auditentry SET payload = %s WHERE sequence = 3", ['{"n": 99}'])
    result = audit_verify()
    assert (result.ok, result.first_broken_sequence, result.entries_checked) == (False, 3, 3)
    assert "contents do not match its hash" in result.reason


@pytest.mark.parametrize(
    ("column", "value"),
    [("actor_username", "mallory"), ("action", "test.forged"), ("use_case_id", 9)],
)
def test_any_changed_hashed_field_is_reported_at_that_entry(execute, record, column, value):
    record(3)
    execute(f"UPDATE audit_auditentry SET {column} = %s WHERE sequence = 2", [value])
    assert audit_verify().first_broken_sequence == 2


def test_a_deleted_middle_entry_is_reported_as_a_gap(execute, record):
    record(5)
    execute("DELETE FROM audit_auditentry WHERE sequence = 3")
    result = audit_verify()
    assert (result.ok, result.first_broken_sequence) == (False, 3)
    assert result.reason == "missing (the log jumps from #2 to #4)"


def test_a_deleted_first_entry_is_reported(execute, record):
    record(2)
    execute("DELETE FROM audit_auditentry WHERE sequence = 1")
    result = audit_verify()
    assert (result.first_broken_sequence, result.reason) == (
        1,
        "missing (the log starts at #2)",
    )


def test_a_rehashed_forgery_is_caught_by_the_next_entrys_link(execute, record):
    record(5)
    forged = AuditEntry.objects.values().get(sequence=3) | {"payload": {"n": 99}}
    execute(
        "UPDATE audit_auditentry SET payload = %s, entry_hash = %s WHERE sequence = 3",
        ['{"n": 99}', entry_hash(forged)],
    )
    result = audit_verify()
    assert (result.ok, result.first_broken_sequence) == (False, 4)
    assert "does not match the hash of entry #3" in result.reason


def test_a_first_entry_that_does_not_start_from_genesis_is_reported(execute, record):
    record(2)
    execute("UPDATE audit_auditentry SET previous_hash = %s WHERE sequence = 1", ["1" * 64])
    result = audit_verify()
    assert (result.first_broken_sequence, result.reason) == (
        1,
        "its previous_hash is not the genesis value (64 zeros)",
    )


def test_removing_the_newest_entries_shows_only_as_a_different_head(execute, record):
    # The chain cannot see its own tail cut off: compare the head with a copy kept elsewhere.
    entries = record(3)
    execute("DELETE FROM audit_auditentry WHERE sequence = 3")
    result = audit_verify()
    assert result.ok
    assert result.head_hash == entries[1].entry_hash != entries[2].entry_hash


def test_verification_streams_the_log_in_one_query(record, django_assert_num_queries):
    record(30)
    with django_assert_num_queries(1):
        assert audit_verify().entries_checked == 30
