"""``enterpriseval oversight_decisions_export``: write a reviewer's queue as a decisions template.

The command-line form of the reviewer's queue and review pages (``GET
/api/v1/oversight/items/`` and ``…/items/<id>/``): one JSON line per copy of the reviewer's
open studies, blind as the page (docs/formats.md "Oversight decisions (JSONL)"), with
``decision`` and ``elapsed_seconds`` to fill in offline and import with
``oversight_decisions_import``. Only the reviewer's own queue is ever written.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.management.cli import add_actor, user_named, write_lines
from grading.selectors.oversight import oversight_decisions_file


class Command(BaseCommand):
    help = (
        "Write your oversight review queue (open studies) as a decisions template: fill in "
        "decision, flags and elapsed_seconds, then import it with oversight_decisions_import."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", help="File to write (default: standard output).")
        add_actor(parser, "the reviewer whose queue is written")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        lines = oversight_decisions_file(user=actor)
        path = options["output"]
        count = write_lines(
            self.stdout,
            lines,
            path,
            refused=lambda error: f"--output: {path}: {error.strerror or error}",
        )
        if count is not None:
            self.stderr.write(f"{path}: {count} item(s) of {actor.get_username()}'s review queue")
