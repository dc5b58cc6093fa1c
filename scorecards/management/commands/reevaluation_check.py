"""``enterpriseval reevaluation_check [--today YYYY-MM-DD]``: flag scorecards past review."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from scorecards.reevaluation import review_dates_flag


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--today: {value!r} is not a date (YYYY-MM-DD)") from None


class Command(BaseCommand):
    help = (
        "Mark every final scorecard whose next review date is before today (or --today) "
        '"re-evaluation required", e-mail its owners, and print what was flagged. The Celery '
        "beat schedule runs the same check daily."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--today", type=_date, default=None, help="Check as of this date (YYYY-MM-DD)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        today = options["today"] or timezone.localdate()
        flags = review_dates_flag(today=today)
        for flag in flags:
            scorecard = flag.scorecard
            self.stdout.write(
                f"flagged scorecard {scorecard.pk} of {scorecard.use_case.key}: {flag.reason}"
            )
        if flags:
            self.stdout.write(f"{len(flags)} scorecard(s) now need re-evaluation.")
        else:
            self.stdout.write(
                f"Nothing to flag: no unflagged final scorecard has a next review date before "
                f"{today.isoformat()}."
            )
