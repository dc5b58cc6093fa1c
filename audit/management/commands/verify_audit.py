"""``enterpriseval verify_audit``: recompute the audit chain, re-derive the evidence it covers,
and (``--against PACK.zip``) check the log against the head an evidence pack anchored."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit.selectors import (
    VerificationResult,
    audit_verify,
    audit_verify_against,
    audit_verify_evidence,
)

MANIFEST = "manifest.json"
AUDIT_MEMBER = "audit.jsonl"
# An anchor and an extract are small; a larger member is not a pack this command reads.
MAX_MEMBER_BYTES = 64 * 1024 * 1024


class Command(BaseCommand):
    help = (
        "Verify the audit log: its hash chain, the evidence its entries hashed (σ, charters, "
        "decisions, grades, scorecards) and, with --against PACK.zip, the head the evidence "
        "pack anchored. Exits 0 and prints the head hash if all hold; exits 1 and names the "
        "first broken entry otherwise."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--against",
            metavar="PACK.zip",
            type=Path,
            help="an evidence pack whose manifest anchors the log (audit_head)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        anchor = _pack_anchor(options["against"]) if options["against"] else None
        result = audit_verify()
        self._fail_unless(result, "audit log BROKEN")
        evidence = audit_verify_evidence()
        self._fail_unless(evidence, "audit log does not match the evidence")
        if anchor is not None:
            head, entries = anchor
            against = audit_verify_against(anchor=head, entries=entries)
            self._fail_unless(against, f"audit log does not reach {options['against']}")
        noun = "entry" if result.entries_checked == 1 else "entries"
        head_hash = result.head_hash[:12] if result.head_hash else "none: the log is empty"
        line = (
            f"audit log OK: {result.entries_checked} {noun}, chain intact (head {head_hash}); "
            f"{evidence.entries_checked} evidence hashes re-derived"
        )
        if anchor is not None:
            line += f"; reaches the pack's anchor #{anchor[0]['sequence']}"
        self.stdout.write(line)

    def _fail_unless(self, result: VerificationResult, what: str) -> None:
        if not result.ok:
            where = (
                f" at entry #{result.first_broken_sequence}"
                if result.first_broken_sequence is not None
                else ""
            )
            self.stderr.write(f"{what}{where}: {result.reason}")
            raise SystemExit(1)


def _pack_anchor(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return the pack's anchored head and its audit extract; CommandError naming the fault."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as error:
        raise CommandError(f"{path}: not a readable zip file: {error}") from None
    with archive:
        try:
            manifest = json.loads(_member(archive, path, MANIFEST))
        except ValueError as error:
            raise CommandError(f"{path}: {MANIFEST}: not JSON: {error}") from None
        head = manifest.get("audit_head") if isinstance(manifest, dict) else None
        if (
            not isinstance(head, dict)
            or not isinstance(head.get("sequence"), int)
            or not isinstance(head.get("entry_hash"), str)
        ):
            raise CommandError(
                f"{path}: {MANIFEST}: field audit_head: expected {{sequence, entry_hash}} (a "
                "pack built before the head was anchored has none)"
            )
        entries = []
        text = _member(archive, path, AUDIT_MEMBER).decode("utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError as error:
                raise CommandError(f"{path}: {AUDIT_MEMBER} line {number}: {error}") from None
            if (
                not isinstance(entry, dict)
                or not isinstance(entry.get("sequence"), int)
                or not isinstance(entry.get("entry_hash"), str)
            ):
                raise CommandError(
                    f"{path}: {AUDIT_MEMBER} line {number}: expected sequence and entry_hash"
                )
            entries.append(entry)
    return head, entries


def _member(archive: zipfile.ZipFile, path: Path, name: str) -> bytes:
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise CommandError(f"{path}: no {name} in the pack") from None
    if info.file_size > MAX_MEMBER_BYTES:
        raise CommandError(
            f"{path}: {name}: {info.file_size:,} bytes, over the {MAX_MEMBER_BYTES:,} this reads"
        )
    return archive.read(name)
