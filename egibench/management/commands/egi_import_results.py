"""``enterpriseval egi_import_results``: store ``egi-bench`` results files in the database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from egibench.services import egi_result_store_reporting, egi_results_file_read
from enterpriseval.errors import ServiceError

INVALID_INPUT = 2


def results_files(paths: list[str]) -> list[Path]:
    """Return the ``.json`` files named, or held directly in the directories named, sorted."""
    found: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            found.extend(sorted(p for p in path.glob("*.json") if p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise CommandError(f"{path}: no such file or directory", returncode=INVALID_INPUT)
    return found


class Command(BaseCommand):
    help = (
        "Store EGI results artifacts (results_aggregated/<model>_<mode>_<timestamp>.json, or a "
        "roster file {'results': [...]}) in the database. Idempotent: an artifact already "
        "stored (same SHA-256) is reported and left as it is."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", help="results files or directories of them")

    def handle(self, *args: Any, **options: Any) -> None:
        files = results_files(options["paths"])
        if not files:
            raise CommandError("no .json results file found", returncode=INVALID_INPUT)
        stored = existing = 0
        try:
            for path in files:
                for where, artifact in egi_results_file_read(path):
                    outcome = egi_result_store_reporting(result=artifact, source=where)
                    row = outcome.result
                    state = "stored" if outcome.created else "already stored"
                    stored += outcome.created
                    existing += not outcome.created
                    egi = "n/a" if row.egi is None else f"{row.egi:.2f}"
                    self.stdout.write(
                        f"{where}: {state}: {row.model_id} ({row.mode}) EGI {egi} {row.sha256[:12]}"
                    )
        except ServiceError as error:
            raise CommandError(error.message, returncode=INVALID_INPUT) from None
        self.stdout.write(f"{stored} stored, {existing} already stored.")
