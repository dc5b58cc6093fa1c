"""``enterpriseval verify_evidence FILE.zip``: check an evidence pack offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from scorecards.evidence import evidence_verify


class Command(BaseCommand):
    help = (
        "Check an evidence pack against its manifest without a database: exits 0 and lists "
        "the checked members; exits 1 naming the first member that is missing, extra or "
        "altered, or a manifest that does not parse."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The evidence pack (.zip).")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        try:
            data = path.read_bytes()
        except OSError as error:
            self.stderr.write(f"{path}: {error.strerror or error}")
            raise SystemExit(1) from None
        result = evidence_verify(data)
        if not result.ok:
            self.stderr.write(f"{path}: evidence pack BROKEN: {result.reason}")
            raise SystemExit(1)
        for name in result.checked:
            self.stdout.write(f"ok  {name}")
        self.stdout.write(
            f"{path}: evidence pack OK: {len(result.checked)} members match manifest.json"
        )
