"""Concurrent writers queue on the chain lock instead of forking the chain (PostgreSQL)."""

import threading

import pytest
from django.db import connection, transaction

from audit.models import AuditEntry
from audit.selectors import audit_verify
from audit.services import audit_record

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="SQLite admits one writer at a time; the unique sequence refuses a fork there",
    ),
]
TIMEOUT = 10


def in_thread(work, errors: list) -> threading.Thread:
    def run():
        try:
            work()
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_second_writer_waits_for_the_first_to_commit_then_chains_after_it():
    first_appended, release = threading.Event(), threading.Event()
    entries: dict[str, AuditEntry] = {}
    errors: list[Exception] = []

    def first():
        with transaction.atomic():
            entries["first"] = audit_record(actor=None, action="test.first")
            first_appended.set()
            release.wait(TIMEOUT)

    def second():
        with transaction.atomic():
            entries["second"] = audit_record(actor=None, action="test.second")

    first_thread = in_thread(first, errors)
    assert first_appended.wait(TIMEOUT)
    second_thread = in_thread(second, errors)
    second_thread.join(0.3)
    assert second_thread.is_alive(), "the second writer should wait for the chain lock"
    release.set()
    first_thread.join(TIMEOUT)
    second_thread.join(TIMEOUT)

    assert errors == []
    assert entries["second"].sequence == 2
    assert entries["second"].previous_hash == entries["first"].entry_hash


def test_many_concurrent_writers_leave_one_contiguous_chain():
    writers, appends = 6, 5
    start = threading.Barrier(writers)
    errors: list[Exception] = []

    def write():
        start.wait(TIMEOUT)
        for n in range(appends):
            with transaction.atomic():
                audit_record(actor=None, action="test.event", payload={"n": n})

    threads = [in_thread(write, errors) for _ in range(writers)]
    for thread in threads:
        thread.join(TIMEOUT)

    assert errors == []
    assert audit_verify().entries_checked == writers * appends
    assert audit_verify().ok
