"""What the runs commands share: the acting user and NAME:VERSION references."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from charters.management.cli import REFUSED
from charters.models import Membership, Role, UseCase

VERSIONED = re.compile(r"^(?P<name>[-a-zA-Z0-9_]{1,80}):v?(?P<version>[0-9]{1,9})\Z")


def command_actor(use_case: UseCase, username: str | None, *, doing: str) -> Any:
    """Return the user named by --actor, or else the use case's only model owner."""
    if username:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"--actor: no user {username!r}")
        return user
    owners = list(
        Membership.objects.filter(use_case=use_case, role=Role.MODEL_OWNER).select_related("user")[
            :2
        ]
    )
    if len(owners) != 1:
        raise CommandError(
            f"--actor: {use_case.key} has {'no' if not owners else 'several'} model "
            f"owner(s); name the user who {doing}"
        )
    return owners[0].user


def versioned(reference: str, option: str) -> tuple[str, int]:
    """Return (name, version) of a NAME:VERSION reference given to ``option``."""
    match = VERSIONED.match(reference)
    if match is None:
        raise CommandError(
            f"{option}: expected NAME:VERSION (e.g. gemini-2-5:1), got {reference!r}",
            returncode=REFUSED,
        )
    return match["name"], int(match["version"])
