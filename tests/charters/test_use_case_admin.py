"""An administrator adds a use case in the Django admin for a named charter owner."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from audit.models import AuditEntry
from charters.models import Membership, Role, Stage, StageEvent, UseCase

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    root = get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-1!")
    client.force_login(root)
    return client, root


def test_the_admin_adds_a_use_case_owned_by_the_person_it_names(admin_client):
    client, root = admin_client
    olivia = get_user_model().objects.create_user("olivia", password="pw-olivia-1!")
    response = client.post(
        "/admin/charters/usecase/add/",
        {
            "key": "CTRL-A",
            "name": "Control design effectiveness",
            "business_outcome": "Faster control assessment.",
            "value_hypothesis": "Half the review time.",
            "autonomy": "2",
            "consequence": "3",
            "charter_owner": str(olivia.pk),
            "_save": "Save",
        },
    )
    assert response.status_code == 302
    use_case = UseCase.objects.get(key="CTRL-A")
    assert (use_case.intensity, use_case.stage, use_case.created_by) == (3, Stage.CHARTER, root)
    members = set(Membership.objects.filter(use_case=use_case).values_list("user", "role"))
    assert members == {(olivia.pk, Role.CHARTER_OWNER.value)}
    assert StageEvent.objects.filter(use_case=use_case, stage=Stage.CHARTER).count() == 1
    entry = AuditEntry.objects.get(action="usecase.create")
    assert entry.payload["charter_owner"] == "olivia" and entry.actor_username == "root"
    assert not AuditEntry.objects.filter(action="admin.add").exists()


def test_the_add_form_asks_for_the_charter_owner(admin_client):
    client, _root = admin_client
    page = client.get("/admin/charters/usecase/add/").content.decode()
    assert 'name="charter_owner"' in page
    response = client.post(
        "/admin/charters/usecase/add/",
        {
            "key": "CTRL-A",
            "name": "n",
            "business_outcome": "b",
            "value_hypothesis": "v",
            "autonomy": "2",
            "consequence": "3",
            "_save": "Save",
        },
    )
    assert response.status_code == 200 and not UseCase.objects.exists()
    assert "This field is required" in response.content.decode()


def test_admin_pages_name_the_site_icon(admin_client):
    client, _root = admin_client
    page = client.get("/admin/").content.decode()
    assert 'rel="icon"' in page and "enterpriseval/favicon" in page
