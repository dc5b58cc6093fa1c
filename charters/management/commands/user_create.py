"""``enterpriseval user_create``: create a user account, as the admin's "Add user" page does.

Roles on a use case are given with ``member_grant``; this only makes the account (and, with
``--permission``, grants site-level permissions such as ``charters.add_usecase``, which
creating use cases needs). The password is read from the environment variable
``--password-env`` names, never from the command line (it would stay in the shell history);
without it the account has no usable password (it cannot log in to the web app).
"""

from __future__ import annotations

import os
from typing import Any

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from charters.management.cli import refusal


class Command(BaseCommand):
    help = (
        "Create a user (password from an environment variable) and optionally grant "
        "site-level permissions, e.g. --permission charters.add_usecase."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", required=True, help="The new user name.")
        parser.add_argument("--email", default="", help="E-mail address.")
        parser.add_argument(
            "--password-env",
            help="NAME of the environment variable holding the password (never the password).",
        )
        parser.add_argument(
            "--permission",
            action="append",
            default=[],
            metavar="APP.CODENAME",
            help="A site-level permission to grant (repeat), e.g. charters.add_usecase.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model()
        username = options["username"]
        if users.objects.filter(username=username).exists():
            raise refusal(f"--username: a user {username!r} already exists")
        password = None
        if options["password_env"]:
            password = os.environ.get(options["password_env"])
            if not password:
                raise refusal(f"--password-env: ${options['password_env']} is not set or empty")
        permissions = [_permission(label) for label in options["permission"]]
        user = users(username=username, email=options["email"])
        try:
            user.full_clean(exclude=["password"])
        except ValidationError as error:
            field, messages = next(iter(error.message_dict.items()))
            raise refusal(f"--{field}: {' '.join(messages)}") from None
        if password is not None:
            try:
                password_validation.validate_password(password, user)
            except ValidationError as error:
                raise refusal(f"--password-env: {' '.join(error.messages)}") from None
        with transaction.atomic():
            if password is None:
                user.set_unusable_password()
            else:
                user.set_password(password)
            user.save()
            user.user_permissions.add(*permissions)
        granted = ", ".join(options["permission"]) or "no site-level permission"
        self.stdout.write(f"User {username} created ({granted}).")


def _permission(label: str) -> Permission:
    app_label, _, codename = label.partition(".")
    found = Permission.objects.filter(content_type__app_label=app_label, codename=codename).first()
    if found is None:
        raise refusal(f"--permission: no permission {label!r} (expected APP.CODENAME)")
    return found
