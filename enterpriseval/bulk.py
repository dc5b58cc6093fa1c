"""Write many rows at once: COPY on PostgreSQL, one multi-row INSERT statement elsewhere.

For the large appends of the product (an import's units, a run's units), where building a
model instance per row costs more than the database's own work. The rows are tuples of values
the database driver adapts itself (``None``, ``bool``, ``int``, ``float``, ``str``,
``Decimal``), in the order of ``columns``; no model ``save()``, signal or field conversion runs,
so a caller passes only such columns. Database triggers and constraints apply as to any insert.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models, transaction


def rows_insert(
    *, model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    """Insert ``rows`` into ``model``'s table, by ``COPY … FROM STDIN`` on PostgreSQL (psycopg 3
    ``cursor.copy``) and one ``executemany`` INSERT on SQLite; return the number of rows.

    ``columns`` are field names (``output`` or ``output_id`` for a foreign key). Runs inside
    the caller's transaction; on PostgreSQL the COPY is recorded in ``connection.queries``
    like any other statement, so query counts still count it.
    """
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(model._meta.get_field(c).column) for c in columns)
    count = 0
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            count = _copy(cursor, table, names, rows)
        else:
            batch = list(rows)
            count = len(batch)
            if batch:
                marks = ", ".join(["%s"] * len(columns))
                # Names from the model's own metadata, quoted; values as parameters.
                insert = f"INSERT INTO {table} ({names}) VALUES ({marks})"  # noqa: S608
                cursor.executemany(insert, batch)
    return count


def ids_reserve(*, model: type[models.Model], count: int) -> list[int]:
    """Draw ``count`` primary keys from ``model``'s sequence (PostgreSQL), for rows written by
    COPY whose keys other rows need; a key drawn is never handed out again."""
    if connection.vendor != "postgresql":
        raise NotImplementedError("ids_reserve needs PostgreSQL (a sequence per table)")
    if count <= 0:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [model._meta.db_table, model._meta.pk.column, count],
        )
        return [row[0] for row in cursor.fetchall()]


def rows_insert_missing(
    *, model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    """Insert the ``rows`` that break none of ``model``'s unique constraints; return how many.

    A row whose key another row already holds (a concurrent writer's, or an earlier attempt's)
    is skipped, as ``bulk_create(ignore_conflicts=True)`` skips it, for a fifteenth of its
    CPU on PostgreSQL: the rows are copied (``COPY … FROM STDIN``) into a temporary table of
    the session, then moved in one ``INSERT … SELECT … ON CONFLICT DO NOTHING`` that empties
    it. Elsewhere one ``executemany`` of ``INSERT … ON CONFLICT DO NOTHING``. ``columns`` and
    the rows' values are as :func:`rows_insert` takes them. Atomic.
    """
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(model._meta.get_field(c).column) for c in columns)
    # Names from the model's own metadata, quoted; values as parameters or COPY data.
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            staging = connection.ops.quote_name(f"{model._meta.db_table}_incoming")
            create = (
                f"CREATE TEMPORARY TABLE IF NOT EXISTS {staging} ON COMMIT DELETE ROWS AS "  # noqa: S608
                f"SELECT {names} FROM {table} WITH NO DATA"
            )
            cursor.execute(create)
            _copy(cursor, staging, names, rows)
            cursor.execute(
                f"WITH moved AS (DELETE FROM {staging} RETURNING {names}) "  # noqa: S608
                f"INSERT INTO {table} ({names}) SELECT {names} FROM moved ON CONFLICT DO NOTHING"
            )
            return cursor.rowcount
        batch = list(rows)
        if not batch:
            return 0
        marks = ", ".join(["%s"] * len(columns))
        insert = f"INSERT INTO {table} ({names}) VALUES ({marks}) ON CONFLICT DO NOTHING"  # noqa: S608
        before = connection.connection.total_changes
        cursor.executemany(insert, batch)
        return connection.connection.total_changes - before


def _copy(cursor: Any, table: str, names: str, rows: Iterable[Sequence[Any]]) -> int:
    """COPY ``rows`` into ``table`` (PostgreSQL), recorded in ``connection.queries``."""
    sql = f"COPY {table} ({names}) FROM STDIN"
    count = 0
    started = time.monotonic()
    with cursor.cursor.copy(sql) as copy:
        for row in rows:
            copy.write_row(row)
            count += 1
    if connection.queries_logged:
        connection.queries_log.append(
            {"sql": f"{sql} -- {count} rows", "time": f"{time.monotonic() - started:.3f}"}
        )
    return count
