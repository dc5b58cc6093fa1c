"""Audit entries are append-only: the model, its queryset and the database all refuse changes."""

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction

from audit.models import AuditEntry, AuditLogImmutable
from enterpriseval.errors import ImmutableError

pytestmark = pytest.mark.django_db


def test_saving_an_existing_entry_again_is_refused(record):
    (entry,) = record(1)
    entry.payload = {"n": 99}
    with pytest.raises(AuditLogImmutable, match="#1 is append-only"):
        entry.save()
    assert AuditEntry.objects.get().payload == {"n": 0}


def test_deleting_an_entry_is_refused(record):
    (entry,) = record(1)
    with pytest.raises(AuditLogImmutable, match="cannot be deleted"):
        entry.delete()


@pytest.mark.parametrize(
    "change",
    [
        lambda entries: entries.update(action="test.forged"),
        lambda entries: entries.delete(),
        lambda entries: entries.bulk_update(list(entries), ["action"]),
    ],
    ids=["update", "delete", "bulk_update"],
)
def test_the_queryset_refuses_to_change_or_delete_entries(record, change):
    record(2)
    with pytest.raises(AuditLogImmutable, match="append-only"):
        change(AuditEntry.objects.all())
    assert AuditEntry.objects.filter(action="test.event").count() == 2


def test_the_database_refuses_an_orm_update_that_bypasses_the_model(record):
    record(1)
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        action = AuditEntry._meta.get_field("action")
        AuditEntry.objects.filter(sequence=1)._update([(action, None, "test.forged")])
    assert AuditEntry.objects.get().action == "test.event"


def test_the_database_refuses_a_raw_update(record):
    record(1)
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("UPDATE audit_auditentry SET payload = %s", ['{"n": 99}'])
    assert AuditEntry.objects.get().payload == {"n": 0}


def test_the_database_refuses_a_raw_delete(record):
    record(2)
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("DELETE FROM audit_auditentry WHERE sequence = 1")
    assert AuditEntry.objects.count() == 2


def test_the_append_only_triggers_are_installed():
    # Django rebuilds SQLite tables to alter them, dropping their triggers: this catches a
    # later migration of AuditEntry that forgets to re-create them.
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT tgname FROM pg_trigger WHERE tgrelid = 'audit_auditentry'::regclass "
                "AND NOT tgisinternal AND tgenabled = 'O'"
            )
            expected = {"audit_auditentry_append_only"}
        else:
            cursor.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' "
                "AND tbl_name = 'audit_auditentry'"
            )
            expected = {"audit_auditentry_no_update", "audit_auditentry_no_delete"}
        assert {name for (name,) in cursor.fetchall()} == expected


def test_a_second_entry_with_the_same_sequence_is_refused(record):
    (entry,) = record(1)
    fork = AuditEntry(
        sequence=1,
        created_at=entry.created_at,
        action="test.fork",
        payload={},
        previous_hash=entry.previous_hash,
        entry_hash="f" * 64,
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        fork.save()


def test_the_refusal_is_the_projects_immutable_error():
    assert issubclass(AuditLogImmutable, ImmutableError)
    assert AuditLogImmutable("x").as_dict()["code"] == "immutable"
