"""``enterpriseval evidence_pack``: write a recorded decision's evidence pack to a zip file."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser

from enterpriseval.errors import ServiceError
from gates.models import Decision
from scorecards.services import evidence_pack_build


class Command(BaseCommand):
    help = (
        "Build the evidence pack of a recorded decision (decision, charter, σ, task set "
        "manifest, grades, judge scores, audit extract and a SHA-256 manifest) and write it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--decision", required=True, type=int, help="Decision id.")
        parser.add_argument("--out", required=True, help="The zip file to write.")
        parser.add_argument(
            "--as", dest="actor", required=True, help="User name of a charter owner or reviewer."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        decision = Decision.objects.filter(pk=options["decision"]).first()
        if decision is None:
            raise CommandError(f"--decision: no decision {options['decision']}")
        actor = get_user_model().objects.filter(username=options["actor"]).first()
        if actor is None:
            raise CommandError(f"--as: no user {options['actor']!r}")
        try:
            data = evidence_pack_build(decision=decision, actor=actor)
        except PermissionDenied as error:
            raise CommandError(f"--as: {error}") from None
        except ServiceError as error:
            raise CommandError(error.message) from None
        out = Path(options["out"])
        try:
            out.write_bytes(data)
        except OSError as error:
            raise CommandError(f"--out: {error}") from None
        self.stdout.write(
            f"{out}: evidence pack of decision {decision.pk} ({len(data)} bytes, "
            f"SHA-256 {hashlib.sha256(data).hexdigest()})"
        )
