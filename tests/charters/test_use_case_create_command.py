"""``enterpriseval use_case_create``: a user with charters.add_usecase creates a use case."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry
from charters.models import Membership, Role, UseCase


def create(actor: str, *extra: str, key: str = "CDE-A") -> str:
    out = io.StringIO()
    call_command(
        "use_case_create",
        "--key",
        key,
        "--name",
        "Control design effectiveness",
        "--business-outcome",
        "Testers assess control design faster.",
        "--value-hypothesis",
        "Assessment time halves without missed design gaps.",
        "--autonomy",
        "A2",
        "--consequence",
        "C3",
        "--as",
        actor,
        *extra,
        stdout=out,
    )
    return out.getvalue()


def allow(user) -> None:
    user.user_permissions.add(Permission.objects.get(codename="add_usecase"))


def test_it_creates_the_use_case_with_its_creator_as_charter_owner(personas):
    allow(personas.outsider)
    printed = create("outsider")
    use_case = UseCase.objects.get(key="CDE-A")
    assert (use_case.autonomy, use_case.consequence, use_case.intensity) == (2, 3, 3)
    assert Membership.objects.filter(
        use_case=use_case, user=personas.outsider, role=Role.CHARTER_OWNER
    ).exists()
    entry = AuditEntry.objects.get(action="usecase.create", target_id=str(use_case.pk))
    assert entry.actor_id == personas.outsider.pk
    assert entry.payload["intensity"] == "E3"
    assert "Use case CDE-A created" in printed and "(A2/C3 → E3)" in printed


def test_json_is_the_use_case_as_the_api_lists_it(personas):
    allow(personas.outsider)
    data = json.loads(create("outsider", "--format", "json"))
    assert data["key"] == "CDE-A" and data["intensity"] == "E3" and data["stage"] == 1


def test_a_user_without_the_add_permission_is_refused_and_nothing_is_written(personas):
    # The owner persona holds charters.add_usecase (tests/conftest.py); the model owner not.
    with pytest.raises(CommandError) as refused:
        create("model_owner")
    assert refused.value.returncode == 2
    assert str(refused.value).startswith("--as: model_owner may not create use cases")
    assert "charters.add_usecase" in str(refused.value)
    assert not UseCase.objects.filter(key="CDE-A").exists()


def test_a_taken_key_is_refused_naming_the_option(personas):
    allow(personas.owner)
    with pytest.raises(CommandError) as refused:
        create("owner", key=personas.use_case.key)
    assert refused.value.returncode == 2
    assert str(refused.value) == "--key: a use case with key 'CREDIT-MEMO-B' already exists"
    assert UseCase.objects.count() == 1


def test_a_bad_key_is_refused_by_the_model_validation(personas):
    allow(personas.owner)
    with pytest.raises(CommandError) as refused:
        create("owner", key="-bad key")
    assert refused.value.returncode == 2 and str(refused.value).startswith("--key: ")
    assert not UseCase.objects.filter(key="-bad key").exists()


def test_an_unknown_user_is_refused(db):
    with pytest.raises(CommandError) as refused:
        create("nobody")
    assert refused.value.returncode == 2 and str(refused.value) == "--as: no user 'nobody'"


def test_an_autonomy_out_of_range_is_an_argument_error(personas):
    allow(personas.owner)
    with pytest.raises(CommandError) as refused:
        call_command(
            "use_case_create",
            "--key=X",
            "--name=X",
            "--business-outcome=X",
            "--value-hypothesis=X",
            "--autonomy=A7",
            "--consequence=C1",
            "--as=owner",
        )
    assert "--autonomy" in str(refused.value)
    assert not UseCase.objects.filter(key="X").exists()
