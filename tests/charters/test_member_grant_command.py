"""``enterpriseval member_grant`` and ``member_revoke``: charter owners manage roles."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry
from charters.models import Membership, Role


def member(command: str, user: str, role: str, actor: str, key: str = "CREDIT-MEMO-B") -> str:
    out = io.StringIO()
    call_command(
        command, "--use-case", key, "--user", user, "--role", role, "--as", actor, stdout=out
    )
    return out.getvalue()


def test_grant_gives_the_role_and_records_it(personas):
    printed = member("member_grant", "outsider", "adjudicator", "owner")
    assert Membership.objects.filter(
        use_case=personas.use_case, user=personas.outsider, role=Role.ADJUDICATOR
    ).exists()
    entry = AuditEntry.objects.filter(action="membership.grant").latest("pk")
    assert entry.payload == {"user": "outsider", "role": "adjudicator"}
    assert entry.actor_id == personas.owner.pk
    assert printed.strip() == "outsider is Adjudicator on CREDIT-MEMO-B."


def test_revoke_takes_the_role_away_and_records_it(personas):
    printed = member("member_revoke", "reviewer", "reviewer", "owner")
    assert not Membership.objects.filter(user=personas.reviewer, role=Role.REVIEWER).exists()
    entry = AuditEntry.objects.filter(action="membership.revoke").latest("pk")
    assert entry.payload == {"user": "reviewer", "role": "reviewer"}
    assert "no longer" in printed


@pytest.mark.parametrize("command", ["member_grant", "member_revoke"])
@pytest.mark.parametrize("actor", ["model_owner", "grader", "adjudicator", "reviewer"])
def test_members_who_do_not_own_the_charter_are_refused(personas, command, actor):
    before = Membership.objects.count()
    with pytest.raises(CommandError) as refused:
        member(command, "reviewer", "reviewer", actor)
    assert refused.value.returncode == 2
    assert str(refused.value).startswith("--as: This needs one of these roles on CREDIT-MEMO-B")
    assert Membership.objects.count() == before


def test_an_outsider_is_refused_naming_the_option(personas):
    with pytest.raises(CommandError) as refused:
        member("member_grant", "outsider", "grader", "outsider")
    assert refused.value.returncode == 2
    assert str(refused.value) == "--as: outsider holds no role on CREDIT-MEMO-B"


def test_a_grader_cannot_also_be_a_reviewer(personas):
    with pytest.raises(CommandError) as refused:
        member("member_grant", "grader", "reviewer", "owner")
    assert refused.value.returncode == 2
    assert str(refused.value).startswith(
        "--role: grader: a grader cannot also be second-line reviewer / risk committee"
    )
    assert not Membership.objects.filter(user=personas.grader, role=Role.REVIEWER).exists()


def test_the_last_charter_owner_cannot_be_revoked(personas):
    with pytest.raises(CommandError) as refused:
        member("member_revoke", "owner", "charter_owner", "owner")
    assert str(refused.value) == "--role: a use case needs at least one charter owner"
    assert Membership.objects.filter(user=personas.owner, role=Role.CHARTER_OWNER).exists()


def test_revoking_a_role_not_held_is_refused(personas):
    with pytest.raises(CommandError) as refused:
        member("member_revoke", "outsider", "grader", "owner")
    assert str(refused.value) == "--user: outsider is not Grader on CREDIT-MEMO-B"


def test_unknown_users_and_use_cases_are_refused(personas):
    get_user_model().objects.create_user(username="someone")
    with pytest.raises(CommandError) as refused:
        member("member_grant", "ghost", "grader", "owner")
    assert str(refused.value) == "--user: no user 'ghost'"
    with pytest.raises(CommandError) as refused:
        member("member_grant", "someone", "grader", "owner", key="NOPE")
    assert str(refused.value) == "--use-case: no use case 'NOPE'"
