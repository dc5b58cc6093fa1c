"""``enterpriseval scorecard_pdf``: write a scorecard's PDF, as the scorecard page serves it.

A final scorecard's PDF is the one kept at sign-off (unless a re-evaluation notice must show);
a draft's is rendered now. Links in it point at ENTERPRISEVAL_SITE_URL.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser

from charters.management.cli import UseCaseCommand, refusal, user_named
from scorecards.management.scorecard_options import add_scorecard_option, scorecard_as
from scorecards.services import scorecard_pdf_bytes


class Command(UseCaseCommand):
    help = "Write a scorecard's PDF to a file."
    who = "a member of the use case who does not grade on it"
    formats = False

    def add_options(self, parser: CommandParser) -> None:
        add_scorecard_option(parser)
        parser.add_argument("--out", required=True, help="The PDF file to write.")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        scorecard = scorecard_as(actor, options)
        pdf = scorecard_pdf_bytes(
            scorecard=scorecard, base_url=settings.ENTERPRISEVAL_SITE_URL.rstrip("/")
        )
        out = Path(options["out"])
        try:
            out.write_bytes(pdf)
        except OSError as error:
            raise refusal(f"--out: {out}: {error.strerror or error}") from None
        self.stdout.write(
            f"{out}: scorecard {scorecard.pk} of {scorecard.use_case.key} "
            f"({'final' if scorecard.sha256 and scorecard.signed_off_at else 'draft'}), "
            f"{len(pdf)} bytes, SHA-256 {hashlib.sha256(pdf).hexdigest()}."
        )
