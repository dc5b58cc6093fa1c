"""``enterpriseval verify_audit``: recompute the audit chain and report the first broken link."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from audit.selectors import audit_verify


class Command(BaseCommand):
    help = (
        "Verify the audit log's hash chain. Exits 0 and prints the head hash if intact; "
        "exits 1 and names the first broken entry otherwise."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        result = audit_verify()
        if not result.ok:
            self.stderr.write(
                f"audit log BROKEN at entry #{result.first_broken_sequence}: {result.reason}"
            )
            raise SystemExit(1)
        noun = "entry" if result.entries_checked == 1 else "entries"
        head = result.head_hash[:12] if result.head_hash else "none: the log is empty"
        self.stdout.write(
            f"audit log OK: {result.entries_checked} {noun}, chain intact (head {head})"
        )
