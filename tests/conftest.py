"""Suite-wide fixtures and markers."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest
from django.db import connection, transaction

from audit.models import AuditEntry

TABLE = "audit_auditentry"

DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "live_server"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that touches the database (``-m database`` selects them)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if item.get_closest_marker("django_db") or fixtures & DATABASE_FIXTURES:
            item.add_marker(pytest.mark.database)


@contextlib.contextmanager
def append_only_triggers_lifted(table: str = TABLE) -> Iterator[None]:
    """Switch off the triggers that refuse UPDATE and DELETE on ``table``, then restore them.

    Tests use this to tamper with the log (or a signed charter's rows) as an attacker with
    DDL rights could.
    """
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # ALTER TABLE refuses while deferred foreign-key checks are pending: run them now.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
            try:
                yield
            finally:
                cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
                cursor.execute("SET CONSTRAINTS ALL DEFERRED")
            return
        cursor.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s",
            [table],
        )
        triggers = cursor.fetchall()
        for name, _ in triggers:
            cursor.execute(f'DROP TRIGGER "{name}"')
        try:
            yield
        finally:
            for _, sql in triggers:
                cursor.execute(sql)


@pytest.fixture(autouse=True)
def _audit_rows_removed_before_flush(request: pytest.FixtureRequest) -> Iterator[None]:
    """Empty the audit table before a transactional test's flush, on SQLite.

    Django flushes SQLite with DELETE, which the append-only trigger refuses; PostgreSQL
    flushes with TRUNCATE, which row triggers do not see. Tests in a transaction roll back.
    """
    if "transactional_db" in request.fixturenames:
        # Set the database up first, so this teardown runs before its flush.
        request.getfixturevalue("transactional_db")
    yield
    if "transactional_db" not in request.fixturenames and not request.node.get_closest_marker(
        "django_db"
    ):
        return
    if connection.vendor == "sqlite" and not connection.in_atomic_block:
        with transaction.atomic(), append_only_triggers_lifted():
            AuditEntry.objects.all()._raw_delete(connection.alias)


@pytest.fixture
def triggers_lifted() -> Callable[[], contextlib.AbstractContextManager[None]]:
    """Return :func:`append_only_triggers_lifted`, for tests that tamper with the log."""
    return append_only_triggers_lifted
