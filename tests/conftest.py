"""Suite-wide fixtures and markers, and the personas of permission tests."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.color import no_style
from django.db import connection, transaction

from charters.models import Role, UseCase
from charters.services.use_cases import membership_grant, use_case_create

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


@contextlib.contextmanager
def all_guards_lifted() -> Iterator[None]:
    """Switch off every trigger that refuses changes (SQLite), then restore them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
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
    """Empty every table before a transactional test's flush, on SQLite, guards lifted.

    Django flushes SQLite with DELETE, which the append-only and evidence triggers refuse;
    PostgreSQL flushes with TRUNCATE, which row triggers do not see. Tests in a transaction
    roll back. Django's own flush then finds the tables empty (and re-creates its
    bookkeeping rows).
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
        tables = connection.introspection.django_table_names(
            only_existing=True, include_views=False
        )
        statements = connection.ops.sql_flush(no_style(), tables, allow_cascade=False)
        with transaction.atomic(), all_guards_lifted(), connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)


@pytest.fixture
def triggers_lifted() -> Callable[[], contextlib.AbstractContextManager[None]]:
    """Return :func:`append_only_triggers_lifted`, for tests that tamper with the log."""
    return append_only_triggers_lifted


@dataclass
class Personas:
    """One use case and a user for each role on it, plus an outsider.

    ``grader_adjudicator`` holds the one combination of roles the blinding policy allows
    (docs/security.md): grader and adjudicator on the same use case.
    """

    owner: object
    model_owner: object
    grader: object
    adjudicator: object
    reviewer: object
    outsider: object
    grader_adjudicator: object
    use_case: UseCase

    def by_name(self, name: str) -> object:
        return getattr(self, name)


PERSONA_NAMES = (
    "owner",
    "model_owner",
    "grader",
    "adjudicator",
    "reviewer",
    "outsider",
    "grader_adjudicator",
)


def make_user(username: str):
    return get_user_model().objects.create_user(username=username, password="pw-" + username)


@pytest.fixture
def personas(db) -> Personas:
    users = {name: make_user(name) for name in PERSONA_NAMES}
    # The owner creates use cases, which needs the site permission an administrator grants.
    users["owner"].user_permissions.add(
        Permission.objects.get(content_type__app_label="charters", codename="add_usecase")
    )
    use_case = use_case_create(
        actor=users["owner"],
        key="CREDIT-MEMO-B",
        name="Credit-memo drafting",
        business_outcome="Analysts draft credit-memo sections faster without losing fidelity.",
        value_hypothesis="Drafting time falls by half with no rise in unsupported statements.",
        autonomy=1,
        consequence=3,
    )
    for name, role in (
        ("model_owner", Role.MODEL_OWNER),
        ("grader", Role.GRADER),
        ("adjudicator", Role.ADJUDICATOR),
        ("reviewer", Role.REVIEWER),
        ("grader_adjudicator", Role.GRADER),
        ("grader_adjudicator", Role.ADJUDICATOR),
    ):
        membership_grant(actor=users["owner"], use_case=use_case, user=users[name], role=role)
    return Personas(use_case=use_case, **users)


@pytest.fixture(autouse=True)
def _project_celery_app_current() -> Iterator[None]:
    """Keep the project's Celery app current: a test's own client app must not capture tasks.

    ``shared_task`` sends through Celery's *current* app; a producer app built by an integration
    test would otherwise take over every later ``.delay()`` in that worker process.
    """
    from enterpriseval.celery import app

    app.set_current()
    yield
    app.set_current()
