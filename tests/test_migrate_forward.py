"""A database the previous release's ``make demo`` wrote migrates forward without losing a row.

The fixtures (tests/fixtures/previous_release/) are that release's SQLite file and a dump of
the same demo on PostgreSQL, from when the EGI-Bench app was labelled ``benchmarks``. The test
migrates a copy in a subprocess, as an operator would, on the database the suite runs on
(``make test`` runs the suite once on SQLite and once on PostgreSQL), then compares every
table with what it held before.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "previous_release"
OLD_LABEL, NEW_LABEL = "benchmarks", "egibench"
# Django's bookkeeping: the migrations change these rows on purpose and a later release's new
# models add to them, so the test checks that each old row is still there (relabelled).
BOOKKEEPING = {"django_migrations", "django_content_type", "auth_permission"}
CHECKS = (
    "from django.core.management import call_command; "
    "call_command('verify_audit'); "
    "call_command('migrate', '--check'); "
    "call_command('makemigrations', '--check', '--dry-run')"
)
# What makes a stored EGI result evidence: its artifact, canonical JSON and hash.
EGI_RESULTS = "SELECT id, model_id, sha256, canonical_json, result FROM {table} ORDER BY id"


class Database(Protocol):
    url: str

    def tables(self) -> list[str]: ...

    def columns(self, table: str) -> list[str]: ...

    def rows(self, sql: str) -> list[tuple[Any, ...]]: ...

    def refuses(self, sql: str) -> str:
        """Run ``sql`` and return the database's error message (fail if it is accepted)."""
        ...


class SqliteDatabase:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.url = f"sqlite:///{path}"

    def tables(self) -> list[str]:
        names = self.rows("SELECT name FROM sqlite_master WHERE type = 'table'")
        return sorted(name for (name,) in names if not name.startswith("sqlite_"))

    def columns(self, table: str) -> list[str]:
        return [row[1] for row in self.rows(f'PRAGMA table_info("{table}")')]

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.path) as connection:
            return connection.execute(sql).fetchall()

    def refuses(self, sql: str) -> str:
        connection = sqlite3.connect(self.path)
        try:
            with pytest.raises(sqlite3.DatabaseError) as error:
                connection.execute(sql)
        finally:
            connection.close()
        return str(error.value)


class PostgresDatabase:
    def __init__(self, name: str, params: dict[str, Any]) -> None:
        self.name = name
        self.params = params
        user, password = quote(params["user"]), quote(params["password"] or "")
        login = f"{user}:{password}" if password else user
        self.url = f"postgres://{login}@{params['host']}:{params['port']}/{name}"

    def _connect(self) -> Any:
        import psycopg

        return psycopg.connect(dbname=self.name, autocommit=True, **self.params)

    def tables(self) -> list[str]:
        names = self.rows("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return sorted(name for (name,) in names)

    def columns(self, table: str) -> list[str]:
        names = self.rows(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' "
            f"AND table_name = '{table}' ORDER BY ordinal_position"
        )
        return [name for (name,) in names]

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with self._connect() as connection:
            return connection.execute(sql).fetchall()

    def refuses(self, sql: str) -> str:
        import psycopg

        with self._connect() as connection, pytest.raises(psycopg.DatabaseError) as error:
            connection.execute(sql)
        return str(error.value)


def _postgres_params() -> dict[str, Any]:
    configured = settings.DATABASES["default"]
    return {
        "host": configured.get("HOST") or "127.0.0.1",
        "port": int(configured.get("PORT") or 5432),
        "user": configured.get("USER") or "postgres",
        "password": configured.get("PASSWORD") or None,
    }


@pytest.fixture
def previous_release(tmp_path: Path) -> Iterator[Database]:
    """Return a fresh copy of the previous release's demo database on the suite's vendor.

    On PostgreSQL the copy is a database of its own, dropped afterwards; an unreachable
    server fails the test rather than skipping it.
    """
    engine = settings.DATABASES["default"]["ENGINE"]
    if engine == "django.db.backends.sqlite3":
        path = tmp_path / "previous.sqlite3"
        with gzip.open(FIXTURES / "prev.sqlite3.gz") as source, path.open("wb") as target:
            shutil.copyfileobj(source, target)
        yield SqliteDatabase(path)
        return
    assert engine == "django.db.backends.postgresql", f"no previous-release fixture for {engine}"
    import psycopg

    params = _postgres_params()
    name = f"ev_previous_release_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        psql = [
            "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1",
            "-h", params["host"], "-p", str(params["port"]), "-U", params["user"], "-d", name,
        ]  # fmt: skip
        env = {**os.environ, **({"PGPASSWORD": params["password"]} if params["password"] else {})}
        loaded = subprocess.run(
            psql,
            input=gzip.decompress((FIXTURES / "prev.pg.sql.gz").read_bytes()),
            capture_output=True,
            env=env,
            timeout=120,
        )
        assert loaded.returncode == 0, loaded.stderr.decode()
        yield PostgresDatabase(name, params)
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True, **params) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def manage(database: Database, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run ``manage.py`` of this checkout against ``database`` in a subprocess."""
    env = {
        **os.environ,
        "DATABASE_URL": database.url,
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
    }
    return subprocess.run(
        [sys.executable, "manage.py", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _renamed(table: str) -> str:
    prefix = f"{OLD_LABEL}_"
    return NEW_LABEL + "_" + table.removeprefix(prefix) if table.startswith(prefix) else table


def _content(database: Database, table: str, columns: list[str]) -> Counter[str]:
    selected = ", ".join(f'"{column}"' for column in columns)
    return Counter(repr(row) for row in database.rows(f'SELECT {selected} FROM "{table}"'))


def test_a_demo_database_of_the_previous_release_migrates_forward_without_losing_a_row(
    previous_release: Database,
) -> None:
    db = previous_release
    before = {table: db.columns(table) for table in db.tables()}
    assert f"{OLD_LABEL}_egiresult" in before, "the fixture is not of the previous release"
    content = {table: _content(db, table, columns) for table, columns in before.items()}
    old_migrations = set(db.rows("SELECT app, name FROM django_migrations"))
    old_types = dict(db.rows("SELECT id, app_label || '.' || model FROM django_content_type"))
    old_results = db.rows(EGI_RESULTS.format(table=f"{OLD_LABEL}_egiresult"))
    assert len(old_results) == 12

    migrated = manage(db, "migrate", "--noinput")
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr

    tables = set(db.tables())
    for table, columns in before.items():
        new = _renamed(table)
        assert new in tables, f"{table} is gone (expected it as {new})"
        if table not in BOOKKEEPING:
            assert _content(db, new, columns) == content[table], f"{table} → {new} changed"
    kept = _content(db, "auth_permission", before["auth_permission"])
    assert not content["auth_permission"] - kept, "permissions were lost"
    assert not {t for t in tables if t.startswith(f"{OLD_LABEL}_")}

    assert db.rows(EGI_RESULTS.format(table="egibench_egiresult")) == old_results

    migrations = set(db.rows("SELECT app, name FROM django_migrations"))
    assert not {row for row in migrations if row[0] == OLD_LABEL}
    assert {row for row in old_migrations if row[0] != OLD_LABEL} <= migrations
    assert {(NEW_LABEL, "0001_initial"), (NEW_LABEL, "0003_benchmarks_label")} <= migrations

    types = dict(db.rows("SELECT id, app_label || '.' || model FROM django_content_type"))
    moved = {
        pk: label.replace(f"{OLD_LABEL}.", f"{NEW_LABEL}.", 1) for pk, label in old_types.items()
    }
    assert moved.items() <= types.items()  # same ids: permissions and admin log stay attached
    assert f"{NEW_LABEL}.egiresult" in moved.values()

    refused = db.refuses("UPDATE egibench_egiresult SET source = 'changed' WHERE id = 1")
    assert "a stored EGI result is immutable" in refused
    if isinstance(db, PostgresDatabase):
        assert "immutable" in db.refuses("DELETE FROM egibench_egiresult WHERE id = 1")
    triggers = (
        db.rows("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        if isinstance(db, PostgresDatabase)
        else db.rows("SELECT name FROM sqlite_master WHERE type = 'trigger'")
    )
    assert ("egibench_egiresult_immutable",) in triggers
    assert not [name for (name,) in triggers if name.startswith(f"{OLD_LABEL}_")]

    # One process for the three checks: each start of Django costs seconds.
    checks = manage(db, "shell", "-c", CHECKS)
    assert checks.returncode == 0, checks.stdout + checks.stderr
    assert "chain intact" in checks.stdout and "No changes detected" in checks.stdout
