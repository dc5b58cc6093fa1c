"""``audit_entries_for_use_case``: one use case's history, in order, in one query."""

import pytest
from django.db import transaction

from audit.selectors import audit_entries_for_use_case
from audit.services import audit_record

pytestmark = pytest.mark.django_db


def record_by(actor, count: int, use_case_id: int) -> None:
    with transaction.atomic():
        for n in range(count):
            audit_record(
                actor=actor, action="charter.edit", use_case_id=use_case_id, payload={"n": n}
            )


def test_it_returns_only_the_use_cases_entries_in_sequence_order(alice, record):
    record(2, use_case_id=7)
    record(1, use_case_id=8)
    record(1, use_case_id=7)
    entries = audit_entries_for_use_case(use_case_id=7)
    assert [e.sequence for e in entries] == [1, 2, 4]


@pytest.mark.parametrize("count", [1, 15])
def test_listing_entries_and_their_actors_takes_one_query(
    alice, django_user_model, django_assert_num_queries, count
):
    bob = django_user_model.objects.create_user(username="bob", password="unused-password")
    record_by(alice, count, use_case_id=7)
    record_by(bob, count, use_case_id=7)
    with django_assert_num_queries(1):
        usernames = [e.actor.username for e in audit_entries_for_use_case(use_case_id=7)]
    assert usernames == ["alice"] * count + ["bob"] * count
