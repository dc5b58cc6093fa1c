"""``enterpriseval oversight_decisions_import``: record a reviewer's decisions from a file.

The command-line form of "Accept"/"Reject" on the review page and ``POST
/api/v1/oversight/items/<id>/decision/``, for a whole queue at once (docs/formats.md
"Oversight decisions (JSONL)"): each line is checked as that endpoint checks one decision,
against the items of the ``--as`` reviewer's own queue, and the file is imported all or
nothing — on any bad line nothing is recorded, every error is printed as
``FILE:LINE: FIELD: MESSAGE`` and the command exits with status 2.
"""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.management.cli import (
    ProgressFile,
    add_actor,
    progress_bar,
    refusal,
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
        try:
            fileobj = open(path, "rb")  # noqa: SIM115 -- closed below, after the bar
        except OSError as error:
            raise refusal(f"--file: {path}: {error.strerror or error}") from None
        with fileobj:
            bar = progress_bar(self.stderr, total=os.fstat(fileobj.fileno()).st_size, passes=PASSES)
            try:
                with refusals(source=path, stderr=self.stderr):
                    result = oversight_decisions_import(
                        actor=actor,
                        fileobj=ProgressFile(fileobj, bar, PASSES),  # type: ignore[arg-type]
                        filename=path,
                    )
            finally:
                bar.close()
        self.stdout.write(
            f"{path}: {result.lines} line(s): {result.decided} decided, {result.revised} "
            f"revised, {result.unchanged} unchanged, {result.left_blank} left undecided; "
            f"SHA-256 {result.sha256}."
        )
