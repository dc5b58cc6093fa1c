"""``enterpriseval demo_logins``: print the demo's sign-ins for grading, adjudication and review."""

from __future__ import annotations

import os
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from demo.loaders import PASSWORD_VARIABLE, USE_CASE_KEY

LOGINS = (
    (
        "demo-grader",
        "grader: grade the practice session's open artefacts at /grading/ and review the "
        "practice queue at /oversight/ (no decision rests on them)",
    ),
    (
        "demo-adjudicator",
        "adjudicator: resolve the practice session's disagreements in its adjudication queue",
    ),
    ("demo-reviewer", "second-line reviewer: agreement dashboard, decisions, audit log"),
    ("demo-owner", "charter owner: sessions, oversight studies, charter"),
)


class Command(BaseCommand):
    help = "Print the demo users to sign in as, and where their password comes from."

    def handle(self, *args: Any, **options: Any) -> None:
        users = {
            u.username: u for u in get_user_model().objects.filter(username__startswith="demo-")
        }
        if not users:
            self.stdout.write("No demo users yet: run `make demo` first.")
            return
        self.stdout.write(f"Demo sign-ins on use case {USE_CASE_KEY} (http://127.0.0.1:8000/):")
        unusable = []
        for username, what in LOGINS:
            user = users.get(username)
            if user is None:
                continue
            self.stdout.write(f"  {username:<18} {what}")
            if not user.has_usable_password():
                unusable.append(username)
        if unusable:
            self.stdout.write(
                f"  These have no password yet: run `{PASSWORD_VARIABLE}=<a password> make demo` "
                "(passwords come only from the environment)."
            )
        elif os.environ.get(PASSWORD_VARIABLE):
            self.stdout.write(f"  Password: the value of ${PASSWORD_VARIABLE}.")
        else:
            self.stdout.write(
                f"  Password: the value {PASSWORD_VARIABLE} had when `make demo` last set it."
            )
