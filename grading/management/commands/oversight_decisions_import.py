"""``enterpriseval oversight_decisions_import``: record a reviewer's decisions from a file.

The command-line form of "Accept"/"Reject" on the review page and ``POST
/api/v1/oversight/items/<id>/decision/``, for a whole queue at once (docs/formats.md
"Oversight decisions (JSONL)"): each line is checked as that endpoint checks one decision,
against the items of the ``--as`` reviewer's own queue, and the file is imported all or
nothing — on any bad line nothing is recorded, every error is printed as
``FILE:LINE: FIELD: MESSAGE`` and the command exits with status 2.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.management.cli import (
    add_actor,
    progress_file,
    refusals,
    user_named,
)
from grading.services.oversight import oversight_decisions_import

PASSES = ("checking and recording",)


class Command(BaseCommand):
    help = (
        "Import your oversight decisions (docs/formats.md 'Oversight decisions (JSONL)'), all "
        "or nothing: on any bad line nothing is recorded, every error is printed as "
        "FILE:LINE: FIELD: MESSAGE and the command exits with status 2."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--file", required=True, help="The decisions file (JSONL).")
        add_actor(parser, "the reviewer whose queue the decisions are about")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        path = options["file"]
        with (
            progress_file(path, "--file", stderr=self.stderr, passes=PASSES) as fileobj,
            refusals(source=path, stderr=self.stderr),
        ):
            result = oversight_decisions_import(
                actor=actor,
                fileobj=fileobj,  # type: ignore[arg-type]
                filename=path,
            )
        self.stdout.write(
            f"{path}: {result.lines} line(s): {result.decided} decided, {result.revised} "
            f"revised, {result.unchanged} unchanged, {result.left_blank} left undecided; "
            f"SHA-256 {result.sha256}."
        )
