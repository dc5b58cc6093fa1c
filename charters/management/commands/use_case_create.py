"""``enterpriseval use_case_create``: create a use case; its creator becomes its charter owner.

Creating a use case needs the site-level permission ``charters.add_usecase`` (granted in the
admin), as on the web page and the API. ``--format json`` prints the use case as
``GET /api/v1/use-cases/`` lists it.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.api.use_cases import UseCaseOutput
from charters.management.cli import (
    add_actor,
    add_format,
    refusal,
    refusals,
    user_named,
    write_json,
)
from charters.services.use_cases import use_case_create

PERMISSION = "charters.add_usecase"
OPTIONS = {
    "key": "--key",
    "name": "--name",
    "business_outcome": "--business-outcome",
    "value_hypothesis": "--value-hypothesis",
    "autonomy": "--autonomy",
    "consequence": "--consequence",
}


def level(prefix: str, low: int, high: int) -> Any:
    """Return an argparse type reading ``A1`` / ``1`` style levels from ``low`` to ``high``."""

    def parse(text: str) -> int:
        match = re.fullmatch(rf"{prefix}?([0-9])", text.strip(), flags=re.IGNORECASE)
        if match is None or not low <= int(match[1]) <= high:
            raise ValueError(text)
        return int(match[1])

    parse.__name__ = f"{prefix}{low}..{prefix}{high}"
    return parse


class Command(BaseCommand):
    help = (
        "Create a use case in stage 1 (SPEC §3); the --as user, who needs the permission "
        f"{PERMISSION}, becomes its charter owner."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--key", required=True, help="Short key, e.g. CDE-A.")
        parser.add_argument("--name", required=True, help="Name shown on every page.")
        parser.add_argument("--business-outcome", required=True, help="The business outcome.")
        parser.add_argument("--value-hypothesis", required=True, help="The value hypothesis.")
        parser.add_argument(
            "--autonomy", required=True, type=level("A", 0, 4), help="Autonomy level A0..A4."
        )
        parser.add_argument(
            "--consequence",
            required=True,
            type=level("C", 1, 4),
            help="Consequence level C1..C4.",
        )
        add_actor(parser, f"a user holding the permission {PERMISSION}")
        add_format(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        if not actor.has_perm(PERMISSION):
            raise refusal(
                f"--as: {actor.get_username()} may not create use cases: that needs the "
                f"permission {PERMISSION} (an administrator grants it in the admin)"
            )
        with refusals(OPTIONS):
            use_case = use_case_create(
                actor=actor,
                key=options["key"],
                name=options["name"],
                business_outcome=options["business_outcome"],
                value_hypothesis=options["value_hypothesis"],
                autonomy=options["autonomy"],
                consequence=options["consequence"],
            )
        if options["format"] == "json":
            write_json(self.stdout, UseCaseOutput(use_case).data)
            return
        self.stdout.write(
            f"Use case {use_case.key} created: {use_case.name} "
            f"(A{use_case.autonomy}/C{use_case.consequence} → E{use_case.intensity}); "
            f"{actor.get_username()} is its charter owner."
        )
