"""``audit_record``: the one writer of the audit log."""

import datetime as dt
import hashlib
import json
import math
from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import AnonymousUser, Group
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from audit.models import GENESIS_HASH, AuditEntry
from audit.selectors import audit_verify
from audit.services import audit_record

pytestmark = pytest.mark.django_db


def hash_by_hand(entry: AuditEntry, payload: dict) -> str:
    document = {
        "sequence": entry.sequence,
        "created_at": entry.created_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00"),
        "actor_username": entry.actor_username,
        "action": entry.action,
        "target_type": entry.target_type,
        "target_id": entry.target_id,
        "use_case_id": entry.use_case_id,
        "payload": payload,
        "previous_hash": entry.previous_hash,
        # Hash version 2: the actor's id and the version itself are hashed too.
        "actor_id": entry.actor_id,
        "hash_version": 2,
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_first_entry_is_number_one_and_links_to_the_genesis_hash(alice):
    entry = audit_record(actor=alice, action="charter.sign")
    assert (entry.sequence, entry.previous_hash) == (1, GENESIS_HASH)


def test_each_entry_links_to_the_hash_of_the_one_before(record):
    first, second, third = record(3)
    assert [e.sequence for e in (first, second, third)] == [1, 2, 3]
    assert second.previous_hash == first.entry_hash
    assert third.previous_hash == second.entry_hash


def test_the_stored_hash_matches_a_hand_computation_with_hashlib_and_json(alice, record):
    record(1)
    group = Group.objects.create(name="Model risk")
    payload = {"note": "signé à Zürich €", "levels": [1, 2.5], "ok": True, "theta": None}
    audit_record(actor=alice, action="charter.sign", target=group, use_case_id=7, payload=payload)

    entry = AuditEntry.objects.get(sequence=2)  # as stored, not as built in memory
    assert entry.entry_hash == hash_by_hand(entry, payload)
    assert entry.target_type == "auth.group"
    assert entry.target_id == str(group.pk)


def test_it_snapshots_the_actors_username(alice):
    entry = audit_record(actor=alice, action="charter.sign")
    alice.username = "alice.renamed"
    alice.save()
    entry.refresh_from_db()
    assert (entry.actor, entry.actor_username) == (alice, "alice")


def test_a_system_event_has_no_actor_and_an_empty_username():
    entry = audit_record(actor=None, action="usecase.reevaluate")
    assert (entry.actor, entry.actor_username) == (None, "")


def test_the_use_case_defaults_to_the_targets_use_case():
    group = Group.objects.create(name="graders")
    group.use_case_id = 42
    entry = audit_record(actor=None, action="grading.assign", target=group)
    assert entry.use_case_id == 42


def test_a_use_case_target_is_its_own_use_case():
    use_case = SimpleNamespace(pk=5, _meta=SimpleNamespace(label_lower="charters.usecase"))
    entry = audit_record(actor=None, action="usecase.unblind", target=use_case)
    assert (entry.target_type, entry.target_id, entry.use_case_id) == ("charters.usecase", "5", 5)


def test_it_refuses_a_use_case_that_disagrees_with_the_targets():
    group = Group.objects.create(name="graders")
    group.use_case_id = 42
    with pytest.raises(ValueError, match=r"use_case_id=7 but target auth\.group .* use case 42"):
        audit_record(actor=None, action="grading.assign", target=group, use_case_id=7)


def test_it_stores_the_payload_in_canonical_form():
    at = dt.datetime(2026, 4, 17, 9, 30, tzinfo=dt.UTC)
    entry = audit_record(
        actor=None,
        action="configuration.freeze",
        payload={"weight": Decimal("0.50"), "at": at, "k": 4.0, "big": 1e16},
    )
    entry.refresh_from_db()
    assert entry.payload == {
        "weight": "0.50",
        "at": "2026-04-17T09:30:00.000000+00:00",
        "k": 4,
        "big": 10_000_000_000_000_000,
    }


def test_values_a_json_store_might_alter_still_verify_after_a_round_trip(record):
    payload = {"z": -0.0, "big": 1.5e300, "tiny": 5e-324, "sum": 0.1 + 0.2, "n": 2**70}
    with transaction.atomic():
        audit_record(actor=None, action="test.event", payload=payload)
    record(1)
    assert audit_verify().ok


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"score": math.nan}, r"'metric\.estimate'\): payload\.score: nan is not a JSON number"),
        ({"when": object()}, r"'metric\.estimate'\): payload\.when: object is not JSON"),
        ({"text": "a\x00b"}, r"'metric\.estimate'\): payload text must not contain NUL"),
    ],
)
def test_it_refuses_a_payload_canonical_json_cannot_hold_naming_the_action(payload, message):
    with pytest.raises(ValueError, match=message):
        audit_record(actor=None, action="metric.estimate", payload=payload)
    assert not AuditEntry.objects.exists()


def test_it_refuses_a_payload_that_is_not_a_dict():
    with pytest.raises(ValueError, match="payload must be a dict"):
        audit_record(actor=None, action="metric.estimate", payload=[1, 2])  # type: ignore[arg-type]


@pytest.mark.parametrize("action", ["Charter.Sign", "sign", "charter.", "charter sign", ""])
def test_it_refuses_an_action_that_is_not_dotted_lower_case(action):
    with pytest.raises(ValueError, match="action must be dotted lower-case"):
        audit_record(actor=None, action=action)


def test_it_refuses_an_unsaved_target():
    with pytest.raises(ValueError, match=r"target auth\.group is unsaved"):
        audit_record(actor=None, action="group.create", target=Group(name="new"))


def test_it_refuses_an_anonymous_actor():
    with pytest.raises(ValueError, match="actor must be a saved user or None"):
        audit_record(actor=AnonymousUser(), action="charter.sign")


@pytest.mark.parametrize("use_case_id", [0, -1, "7", True])
def test_it_refuses_a_use_case_id_that_is_not_a_positive_integer(use_case_id):
    with pytest.raises(ValueError, match="use_case_id must be a positive integer"):
        audit_record(actor=None, action="charter.sign", use_case_id=use_case_id)


def test_the_entry_rolls_back_with_the_callers_transaction(record):
    record(1)
    with pytest.raises(RuntimeError, match="caller failed"), transaction.atomic():
        audit_record(actor=None, action="charter.sign")
        raise RuntimeError("caller failed")
    assert list(AuditEntry.objects.values_list("sequence", flat=True)) == [1]
    assert audit_record(actor=None, action="charter.sign").sequence == 2


def test_an_append_costs_the_same_few_queries_however_long_the_log(record):
    # Savepoint, chain lock (PostgreSQL only), read the head, insert, release.
    with CaptureQueriesContext(connection) as first:
        audit_record(actor=None, action="charter.sign")
    record(20)
    with CaptureQueriesContext(connection) as later:
        audit_record(actor=None, action="charter.sign")
    assert len(later) == len(first) <= 5


@pytest.mark.django_db(transaction=True)
def test_it_refuses_to_run_outside_a_transaction():
    with pytest.raises(RuntimeError, match="must run inside the caller's transaction"):
        audit_record(actor=None, action="charter.sign")


@pytest.mark.django_db(transaction=True)
def test_a_committed_entry_survives_and_a_rolled_back_one_leaves_no_trace():
    with transaction.atomic():
        audit_record(actor=None, action="charter.sign")
    with pytest.raises(RuntimeError), transaction.atomic():
        audit_record(actor=None, action="charter.sign")
        raise RuntimeError("caller failed")
    with transaction.atomic():
        audit_record(actor=None, action="charter.sign")
    assert list(AuditEntry.objects.values_list("sequence", flat=True)) == [1, 2]
    assert audit_verify().ok
