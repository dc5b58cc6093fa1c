"""``enterpriseval egi_load_roster``: load the seed 000 published roster (idempotent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from egibench.services import (
    PUBLISHED_ROSTER_SOURCE,
    egi_result_store_reporting,
    egi_results_file_read,
)
from enterpriseval.errors import ServiceError

INVALID_INPUT = 2
ROSTER = ("examples", "egi_roster", "seed000_roster.json")


def roster_file() -> Path:
    """Return the bundled roster file of seed 000."""
    return Path(settings.BASE_DIR).joinpath(*ROSTER)


class Command(BaseCommand):
    help = (
        "Load the EGI roster published in seed 000 (EGI-Bench §5–6, values stated in its text) "
        "from examples/egi_roster/. Running it again stores nothing new."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--file", type=Path, help="roster file (default: the bundled one)")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"] or roster_file()
        stored = 0
        try:
            entries = egi_results_file_read(path)
            for where, artifact in entries:
                outcome = egi_result_store_reporting(
                    result=artifact, source=f"{PUBLISHED_ROSTER_SOURCE} ({where})"
                )
                stored += outcome.created
        except ServiceError as error:
            raise CommandError(error.message, returncode=INVALID_INPUT) from None
        self.stdout.write(
            f"EGI roster (seed 000): {len(entries)} models, {stored} stored, "
            f"{len(entries) - stored} already stored."
        )
