"""The use case's audit log page and endpoint: who may read it, and what it shows."""

from pathlib import Path

import pytest
from django.contrib.admin.sites import site
from django.urls import reverse
from rest_framework.test import APIClient

from audit.models import AuditEntry
from charters.charter_document import document_from_text
from charters.models import Configuration, Role
from charters.services.charters import charter_create, charter_sign
from charters.services.configurations import configuration_upload

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"
READERS = {
    "owner": 200,
    "model_owner": 200,
    "reviewer": 200,
    "adjudicator": 200,
    "grader": 403,
    # Finding 1 of issue 17: a grader's adjudicator role does not open the log to them.
    "grader_adjudicator": 403,
    "outsider": 404,
}


@pytest.mark.parametrize(("name", "expected"), sorted(READERS.items()))
def test_the_audit_page_is_for_accountable_members(client, personas, name, expected):
    client.force_login(personas.by_name(name))
    response = client.get(reverse("use-case-audit", args=["CREDIT-MEMO-B"]))
    assert response.status_code == expected


@pytest.mark.parametrize(("name", "expected"), sorted(READERS.items()))
def test_the_audit_endpoint_is_for_accountable_members(personas, name, expected):
    client = APIClient()
    client.force_authenticate(personas.by_name(name))
    response = client.get("/api/v1/use-cases/CREDIT-MEMO-B/audit/")
    assert response.status_code == expected


def test_the_audit_endpoint_lists_the_use_cases_entries_newest_first_and_the_chain(personas):
    client = APIClient()
    client.force_authenticate(personas.reviewer)
    body = client.get("/api/v1/use-cases/CREDIT-MEMO-B/audit/").json()
    expected = list(
        AuditEntry.objects.filter(use_case_id=personas.use_case.pk)
        .order_by("-sequence")
        .values_list("action", flat=True)
    )
    assert [row["action"] for row in body["results"]] == expected
    assert expected[-1] == "usecase.create"
    assert body["chain"]["ok"] is True
    assert body["chain"]["entries_checked"] == AuditEntry.objects.count()


def test_the_audit_page_shows_the_chain_status_and_entries(client, personas):
    client.force_login(personas.owner)
    html = client.get(reverse("use-case-audit", args=["CREDIT-MEMO-B"])).content.decode()
    assert "chain intact" in html
    assert "usecase.create" in html and "membership.grant" in html


def test_the_audit_page_takes_the_same_queries_for_few_and_many_entries(
    client, personas, django_assert_max_num_queries
):
    client.force_login(personas.owner)
    url = reverse("use-case-audit", args=["CREDIT-MEMO-B"])
    with django_assert_max_num_queries(12):
        client.get(url)


@pytest.mark.django_db
def test_the_admin_cannot_change_a_frozen_configuration(admin_client, personas):
    sigma = (EXAMPLE / "sigma-gemini-2.5.yaml").read_bytes()
    configuration = configuration_upload(
        actor=personas.model_owner, use_case=personas.use_case, name="gemini-2-5", content=sigma
    )
    url = reverse("admin:charters_configuration_change", args=[configuration.pk])
    response = admin_client.post(url, {"name": "changed"})
    assert response.status_code == 403
    assert Configuration.objects.get(pk=configuration.pk).name == "gemini-2-5"
    model_admin = site._registry[Configuration]
    assert not model_admin.has_change_permission(None, configuration)


def test_the_admin_cannot_change_a_signed_charter(admin_client, personas):
    document = document_from_text((EXAMPLE / "charter.yaml").read_text(), fmt="yaml")
    charter = charter_create(actor=personas.owner, use_case=personas.use_case, document=document)
    for user, role in (
        (personas.owner, Role.CHARTER_OWNER),
        (personas.model_owner, Role.MODEL_OWNER),
        (personas.reviewer, Role.REVIEWER),
    ):
        charter_sign(actor=user, charter=charter, role=role)
    charter.refresh_from_db()
    assert charter.is_frozen
    url = reverse("admin:charters_charter_change", args=[charter.pk])
    response = admin_client.post(url, {"nu_max": "5", "confidence": "0.9"})
    assert response.status_code == 403
    charter.refresh_from_db()
    assert charter.nu_max == 3
