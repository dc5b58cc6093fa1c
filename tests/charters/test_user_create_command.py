"""``enterpriseval user_create``: an account (password from the environment), with permissions."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError


def create(*args: str) -> str:
    out = io.StringIO()
    call_command("user_create", *args, stdout=out)
    return out.getvalue()


def test_it_creates_a_user_whose_password_comes_from_the_environment(db, monkeypatch):
    monkeypatch.setenv("NEW_PASSWORD", "a-long-Passphrase-42")
    printed = create(
        "--username=olivia",
        "--email=olivia@bank.example",
        "--password-env=NEW_PASSWORD",
        "--permission=charters.add_usecase",
    )
    user = get_user_model().objects.get(username="olivia")
    assert user.check_password("a-long-Passphrase-42") and user.email == "olivia@bank.example"
    assert user.has_perm("charters.add_usecase") and not user.is_staff
    assert printed.strip() == "User olivia created (charters.add_usecase)."


def test_without_a_password_the_account_cannot_log_in(db):
    create("--username=gina")
    user = get_user_model().objects.get(username="gina")
    assert not user.has_usable_password() and not user.has_perm("charters.add_usecase")


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["--username=x", "--password-env=UNSET_VARIABLE_FOR_TEST"], "--password-env: $UNSET"),
        (["--username=x", "--permission=charters.fly"], "--permission: no permission"),
        (["--username=bad name!"], "--username: "),
    ],
)
def test_bad_input_is_refused_naming_the_option_and_creates_nobody(db, args, start):
    with pytest.raises(CommandError) as refused:
        create(*args)
    assert refused.value.returncode == 2 and str(refused.value).startswith(start)
    assert not get_user_model().objects.exists()


def test_a_weak_password_or_a_taken_name_is_refused(db, monkeypatch):
    monkeypatch.setenv("WEAK", "password")
    with pytest.raises(CommandError) as refused:
        create("--username=weak", "--password-env=WEAK")
    assert str(refused.value).startswith("--password-env: ")
    create("--username=taken")
    with pytest.raises(CommandError) as refused:
        create("--username=taken")
    assert str(refused.value) == "--username: a user 'taken' already exists"
