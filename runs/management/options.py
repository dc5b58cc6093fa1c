"""What the runs commands share: the acting user, NAME:VERSION references and the run named."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from charters.management.cli import REFUSED, refusal
from charters.models import Configuration, Membership, Role, TaskSet, UseCase
from charters.selectors.configurations import configuration_get
from charters.selectors.task_sets import task_set_get
from runs.models import Run
from runs.selectors.runs import run_get

VERSIONED = re.compile(r"^(?P<name>[-a-zA-Z0-9_]{1,80}):v?(?P<version>[0-9]{1,9})\Z")


def add_model_owner(parser: CommandParser) -> None:
    """Add ``--as``/``--actor``: the user acting, by default the use case's only model owner."""
    parser.add_argument(
        "--as",
        "--actor",
        dest="actor",
        help="Username (default: the use case's only model owner).",
    )


def use_case_and_actor(options: Mapping[str, Any], *, doing: str) -> tuple[UseCase, Any]:
    """Return the ``--use-case`` and the user acting on it (:func:`command_actor`).

    An unknown use case exits with status 1 naming ``--use-case``: these commands check
    access in the service, not as the pages do.
    """
    use_case = UseCase.objects.filter(key=options["use_case"]).first()
    if use_case is None:
        raise CommandError(f"--use-case: no use case {options['use_case']!r}")
    return use_case, command_actor(use_case, options["actor"], doing=doing)


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


def configuration_named(
    use_case: UseCase, reference: str, *, returncode: int = REFUSED
) -> Configuration:
    """Return σ ``NAME:VERSION`` of ``use_case``, or exit with ``returncode`` naming the option."""
    name, version = versioned(reference, "--configuration")
    configuration = configuration_get(use_case=use_case, name=name, version=version)
    if configuration is None:
        raise CommandError(
            f"--configuration: no σ {name} v{version} in {use_case.key}", returncode=returncode
        )
    return configuration


def task_set_named(use_case: UseCase, reference: str, *, returncode: int = REFUSED) -> TaskSet:
    """Return task set ``NAME:VERSION`` of ``use_case``, or exit with ``returncode`` naming it."""
    name, version = versioned(reference, "--task-set")
    task_set = task_set_get(use_case=use_case, name=name, version=version)
    if task_set is None:
        raise CommandError(
            f"--task-set: no task set {name} v{version} in {use_case.key}", returncode=returncode
        )
    return task_set


def run_named(use_case: UseCase, run_id: int) -> Run:
    """Return run ``run_id`` of ``use_case``, or refuse naming ``--run``."""
    run = run_get(use_case=use_case, run_id=run_id)
    if run is None:
        raise refusal(f"--run: no run {run_id} in {use_case.key}")
    return run
