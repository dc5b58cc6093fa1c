"""The audit admin is read-only: entries are listed and viewed, never added, changed or deleted."""

import pytest
from django.contrib.auth.models import Group, Permission
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audit.models import AuditEntry
from audit.services import audit_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_for(client, admin_user):
    client.force_login(admin_user)
    return client


def test_the_list_shows_sequence_action_target_and_hash_prefix(admin_client_for, alice, record):
    group = Group.objects.create(name="reviewers")
    with transaction.atomic():
        entry = audit_record(actor=alice, action="charter.sign", target=group, use_case_id=3)
    response = admin_client_for.get(reverse("admin:audit_auditentry_changelist"))
    assert response.status_code == 200
    content = response.content.decode()
    for text in ("charter.sign", f"auth.group:{group.pk}", entry.entry_hash[:12], "alice"):
        assert text in content


def test_the_list_filters_by_action(admin_client_for, record):
    record(2)
    url = reverse("admin:audit_auditentry_changelist")
    response = admin_client_for.get(url, {"action": "charter.sign"})
    assert response.status_code == 200
    assert list(response.context["cl"].queryset) == []


def test_an_entry_can_be_viewed_but_the_page_offers_no_save(admin_client_for, record):
    (entry,) = record(1)
    response = admin_client_for.get(reverse("admin:audit_auditentry_change", args=[entry.pk]))
    assert response.status_code == 200
    assert 'name="_save"' not in response.content.decode()


def test_adding_changing_and_deleting_are_forbidden(admin_client_for, record):
    (entry,) = record(1)
    add = reverse("admin:audit_auditentry_add")
    change = reverse("admin:audit_auditentry_change", args=[entry.pk])
    delete = reverse("admin:audit_auditentry_delete", args=[entry.pk])
    assert admin_client_for.get(add).status_code == 403
    assert admin_client_for.post(change, {"action": "test.forged"}).status_code == 403
    assert admin_client_for.post(delete, {"post": "yes"}).status_code == 403
    assert AuditEntry.objects.get().action == "test.event"


def test_the_only_permission_is_view():
    codenames = Permission.objects.filter(content_type__app_label="audit").values_list(
        "codename", flat=True
    )
    assert list(codenames) == ["view_auditentry"]


def test_the_list_takes_the_same_queries_for_few_and_many_entries(admin_client_for, record):
    url = reverse("admin:audit_auditentry_changelist")
    record(2)
    with CaptureQueriesContext(connection) as few:
        admin_client_for.get(url)
    record(40)
    with CaptureQueriesContext(connection) as many:
        admin_client_for.get(url)
    assert len(many) == len(few)
