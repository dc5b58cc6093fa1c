"""``enterpriseval evidence_pack``: write a decision's or a scorecard's evidence pack to a zip."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser

from enterpriseval.errors import ServiceError
from gates.models import Decision
from scorecards.models import Scorecard
from scorecards.services import evidence_pack_build, scorecard_evidence_pack


class Command(BaseCommand):
    help = (
        "Build the evidence pack of a recorded decision (decision, charter, σ, task set "
        "manifest, grades, judge scores, audit extract and a SHA-256 manifest), or of a "
        "scorecard (the same plus its PDF and content), and write it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--decision", type=int, help="Decision id.")
        which.add_argument("--scorecard", type=int, help="Scorecard id (adds its PDF).")
        parser.add_argument("--out", required=True, help="The zip file to write.")
        parser.add_argument(
            "--as", dest="actor", required=True, help="User name of a charter owner or reviewer."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        actor = get_user_model().objects.filter(username=options["actor"]).first()
        if actor is None:
            raise CommandError(f"--as: no user {options['actor']!r}")
        scorecard = None
        if options["scorecard"] is not None:
            scorecard = Scorecard.objects.filter(pk=options["scorecard"]).first()
            if scorecard is None:
                raise CommandError(f"--scorecard: no scorecard {options['scorecard']}")
            decision = scorecard.decision
        else:
            decision = Decision.objects.filter(pk=options["decision"]).first()
            if decision is None:
                raise CommandError(f"--decision: no decision {options['decision']}")
        try:
            if scorecard is not None:
                data = scorecard_evidence_pack(actor=actor, scorecard=scorecard)
            else:
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
            f"{out}: evidence pack of "
            + (f"scorecard {scorecard.pk}, " if scorecard is not None else "")
            + f"decision {decision.pk} ({len(data)} bytes, "
            f"SHA-256 {hashlib.sha256(data).hexdigest()})"
        )
