"""``enterpriseval oversight_decisions_export``: write a reviewer's queue as a decisions template.

The command-line form of the reviewer's queue and review pages (``GET
/api/v1/oversight/items/`` and ``…/items/<id>/``): one JSON line per copy of the reviewer's
open studies, blind as the page (docs/formats.md "Oversight decisions (JSONL)"), with
``decision`` and ``elapsed_seconds`` to fill in offline and import with
``oversight_decisions_import``. Only the reviewer's own queue is ever written.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.management.cli import add_actor, refusal, user_named
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
        if not options["output"]:
            out = getattr(self.stdout, "_out", sys.stdout)
            for line in lines:
                out.write(line.decode("utf-8"))
            return
        try:
            with open(options["output"], "wb") as target:
                count = sum(target.write(line) > 0 for line in lines)
        except OSError as error:
            raise refusal(f"--output: {options['output']}: {error.strerror or error}") from None
        self.stderr.write(
            f"{options['output']}: {count} item(s) of {actor.get_username()}'s review queue"
        )
