"""Database guards on signed charters: no ORM update, raw SQL or delete gets past.

The services refuse first with ImmutableError; these tests go around them, as an admin
action or a hand-written query would. UPDATE, INSERT and DELETE are refused on both
databases (see audit/db_guards.py).
"""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from charters.models import Charter, CharterMetric, Deviation, Role, Signature, UnblindingEvent
from charters.services.charters import (
    charter_create,
    charter_revise,
    charter_sign,
    use_case_unblind,
)

FROZEN = "a signed charter is immutable"


@pytest.fixture
def frozen(personas) -> Charter:
    document = {
        "metrics": [
            {
                "id": "hallucination_rate",
                "treatment": "gated",
                "theta_out": 10,
                "theta_in": 5,
                "weight": 1,
                "planned_n": 800,
                "harm_statement": "harm",
            }
        ]
        + [
            {"id": m, "treatment": "informational", "reason": "not material here"}
            for m in (
                "citation_precision_lenient",
                "citation_precision_strict",
                "citation_recall",
                "key_element_capture",
                "irrelevance_rate",
                "net_time_reduction",
                "cost_per_successful_task",
                "guidance_precision",
                "guidance_recall",
                "catch_rate",
                "false_acceptance_rate",
                "review_burden",
            )
        ],
    }
    charter = charter_create(actor=personas.owner, use_case=personas.use_case, document=document)
    for user, role in (
        (personas.owner, Role.CHARTER_OWNER),
        (personas.model_owner, Role.MODEL_OWNER),
        (personas.reviewer, Role.REVIEWER),
    ):
        charter_sign(actor=user, charter=charter, role=role)
    charter.refresh_from_db()
    assert charter.is_frozen
    return charter


def refused(operation, match: str = FROZEN) -> None:
    with pytest.raises(DatabaseError, match=match), transaction.atomic():
        operation()


def test_an_orm_update_of_a_frozen_charter_is_refused(frozen):
    refused(lambda: Charter.objects.filter(pk=frozen.pk).update(nu_max=5))
    frozen.refresh_from_db()
    assert frozen.nu_max == 3


def test_an_orm_update_of_a_frozen_charters_metric_is_refused(frozen):
    refused(lambda: CharterMetric.objects.filter(charter=frozen).update(theta_in=6))
    assert CharterMetric.objects.get(charter=frozen, metric_id="hallucination_rate").theta_in == 5


def test_inserting_a_metric_into_a_frozen_charter_is_refused(frozen):
    refused(
        lambda: CharterMetric.objects.create(
            charter=frozen,
            metric_id="completeness",
            treatment="gated",
            theta_out=50,
            theta_in=60,
            weight=1,
            position=99,
        )
    )
    assert not CharterMetric.objects.filter(metric_id="completeness").exists()


def test_a_raw_sql_update_of_a_frozen_charter_is_refused(frozen):
    def raw_update() -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE charters_charter SET sha256 = %s WHERE id = %s", ["0" * 64, frozen.pk]
            )

    refused(raw_update)
    frozen.refresh_from_db()
    assert frozen.sha256 != "0" * 64


def test_a_signature_cannot_be_rewritten(frozen):
    refused(
        lambda: Signature.objects.filter(charter=frozen).update(content_sha256="0" * 64),
        match="refused",
    )


def test_a_draft_stays_editable_at_the_database_level(personas, frozen):
    revision = charter_revise(actor=personas.owner, charter=frozen, reason="")
    assert Charter.objects.filter(pk=revision.pk).update(nu_max=2.5) == 1
    assert CharterMetric.objects.filter(charter=revision).update(theta_in=4) == 13


def test_deviations_and_unblinding_events_cannot_be_rewritten(personas, frozen):
    use_case_unblind(actor=personas.reviewer, use_case=personas.use_case, reason="committee")
    charter_revise(actor=personas.owner, charter=frozen, reason="why")
    refused(lambda: Deviation.objects.update(reason="another story"), match="refused")
    refused(lambda: UnblindingEvent.objects.update(reason="never happened"), match="refused")


def test_deleting_a_frozen_charters_rows_is_refused_on_every_database(frozen):
    refused(lambda: CharterMetric.objects.filter(charter=frozen).delete())
    refused(
        lambda: Signature.objects.filter(charter=frozen)._raw_delete(connection.alias),
        match="refused",
    )

    def raw_delete() -> None:
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM charters_charter WHERE id = %s", [frozen.pk])

    refused(raw_delete)
    assert Charter.objects.filter(pk=frozen.pk).exists()
    assert CharterMetric.objects.filter(charter=frozen).count() == 13
