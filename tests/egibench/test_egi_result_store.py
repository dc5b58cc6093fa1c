"""Storing EGI results: shape checks naming the key, idempotence, immutability, the audit entry."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from audit.models import AuditEntry
from egibench.models import EgiResult
from egibench.services import egi_result_store, egi_result_store_reporting
from enterpriseval.errors import ServiceError


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user("bench-runner")


def test_it_stores_the_buckets_egi_and_floors_of_a_run(user, measured):
    row = egi_result_store(result=measured(), source="gemini-2.5-pro_quick_x.json", actor=user)
    # By hand: M1 = mean(90, 80, 70, 60, 50, 40, accuracy_all 50, functional 50) = 61.25;
    # M2 = mean(80, 70, 60, 90, finished 90) = 78; M3 = mean(20, 40) = 30;
    # M4 = mean(80, 60, 50, 70, 60) = 64; M5 = mean(90, 80, 100·(1 − 0.1)) = 86.667;
    # M6 = mean(60, 50) = 55.
    assert row.m1 == pytest.approx(61.25)
    assert row.m2 == pytest.approx(78.0)
    assert row.m3 == pytest.approx(30.0)
    assert row.m4 == pytest.approx(64.0)
    assert row.m5 == pytest.approx(260 / 3)
    assert row.m6 == pytest.approx(55.0)
    expected = 0.28 * 61.25 + 0.22 * 78 + 0.16 * 30 + 0.14 * 64 + 0.14 * 260 / 3 + 0.06 * 55
    assert row.egi == pytest.approx(expected)  # 17.15 + 17.16 + 4.8 + 8.96 + 12.133 + 3.3
    assert round(row.egi, 2) == 63.50
    assert not row.partial and row.release_ready
    assert row.floors["M2"] == {"floor": 70.0, "score": pytest.approx(78.0), "status": "pass"}
    assert row.model_key == "gemini-2.5-pro" and row.mode == "quick"
    assert row.run_at == dt.datetime(2026, 11, 1, 10, tzinfo=dt.UTC)
    assert len(row.sha256) == 64 and len(row.routing_sha256) == 64
    assert row.created_by == user and row.source == "gemini-2.5-pro_quick_x.json"


def test_the_same_artifact_twice_is_one_row_and_one_audit_entry(db, measured):
    first = egi_result_store_reporting(result=measured(), source="a.json")
    again = egi_result_store_reporting(result=measured(), source="b.json")
    assert first.created and not again.created
    assert again.result.pk == first.result.pk and again.result.source == "a.json"
    assert EgiResult.objects.count() == 1
    entries = AuditEntry.objects.filter(action="egi.store")
    assert entries.count() == 1
    entry = entries.get()
    assert entry.target_type == "egibench.egiresult" and entry.target_id == str(first.result.pk)
    assert entry.payload["sha256"] == first.result.sha256
    assert entry.payload["model"] == "gemini-2.5-pro"


def test_a_later_run_of_the_same_model_is_a_new_row(db, measured):
    egi_result_store(result=measured(), source="a.json")
    egi_result_store(result=measured(stamp="2026-11-02T10:00:00+00:00"), source="b.json")
    assert EgiResult.objects.filter(model_id="gemini-2.5-pro").count() == 2


def test_the_database_refuses_to_change_a_stored_result(db, measured):
    row = egi_result_store(result=measured(), source="a.json")
    with pytest.raises(IntegrityError), transaction.atomic():
        EgiResult.objects.filter(pk=row.pk).update(egi=99.0)
    row.refresh_from_db()
    assert row.egi != 99.0


def test_a_missing_benchmark_is_stored_partial_with_its_missing_list(db, measured, egi_raw):
    raw = {name: values for name, values in egi_raw.items() if name != "locobench"}
    raw["userbench"] = {}  # M3 loses both its routes: userbench and locobench
    row = egi_result_store(result=measured(raw), source="partial.json")
    assert row.partial and row.m3 is None and row.m6 is None
    assert row.egi is not None
    assert {(m["benchmark"], m["sub_metric"]) for m in row.missing} >= {
        ("userbench", "micro_avg"),
        ("locobench", "code_quality"),
    }


@pytest.mark.parametrize(
    ("change", "names"),
    [
        (lambda a: a.pop("model"), "key 'model'"),
        (lambda a: a.update(mode="slow"), "key 'mode'"),
        (lambda a: a.update(timestamp="2026-11-01T10:00:00"), "key 'timestamp'"),
        (lambda a: a["buckets"].pop("M4"), "key 'buckets.M4'"),
        (lambda a: a["buckets"]["M3"].update(score="high"), "key 'buckets.M3.score'"),
        (lambda a: a["buckets"]["M3"].update(score=130.0), "key 'buckets.M3.score'"),
        (lambda a: a.update(egi=a["egi"] + 1), "key 'egi'"),
        (lambda a: a.update(egi=None), "key 'egi'"),
        (lambda a: a.update(partial=True), "key 'partial'"),
        (lambda a: a["floors"]["M5"].update(status="below"), "key 'floors.M5.status'"),
        (lambda a: a["floors"]["M2"].update(score=12.0), "key 'floors.M2.score'"),
        (lambda a: a.update(release_ready=False), "key 'release_ready'"),
        (lambda a: a["routing"].update(sha256=None), "key 'routing.sha256'"),
        (lambda a: a.update(missing="none"), "key 'missing'"),
        (lambda a: a.update(rank=3), "key 'rank': only a published entry states a rank"),
    ],
)
def test_a_malformed_artifact_is_refused_naming_the_file_and_key(db, measured, change, names):
    broken = measured()
    change(broken)
    with pytest.raises(ServiceError) as error:
        egi_result_store(result=broken, source="run.json")
    assert error.value.message.startswith("run.json: ")
    assert names in error.value.message
    assert not EgiResult.objects.exists()
    assert not AuditEntry.objects.filter(action="egi.store").exists()


def test_a_published_entry_may_leave_egi_and_buckets_missing(db, measured):
    published = measured(mode="published")
    published["egi"] = None
    published["buckets"]["M1"]["score"] = None
    row = egi_result_store(result=published, source="roster.json")
    assert row.egi is None and row.m1 is None and row.mode == "published"


@pytest.mark.parametrize("rank", [0, -1, 2.5, "6", True])
def test_a_stated_rank_must_be_a_whole_number_from_1(db, measured, rank):
    published = measured(mode="published")
    published["rank"] = rank
    with pytest.raises(ServiceError, match="key 'rank': expected a whole number from 1"):
        egi_result_store(result=published, source="roster.json")
    assert not EgiResult.objects.exists()


def test_a_published_entry_stores_its_stated_rank(db, measured):
    published = measured(mode="published")
    published["rank"] = 6
    row = egi_result_store(result=published, source="roster.json")
    assert row.stated_rank == 6
    assert AuditEntry.objects.get(action="egi.store").payload["stated_rank"] == 6
