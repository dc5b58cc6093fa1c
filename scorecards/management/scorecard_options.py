"""What the scorecard commands share: finding the scorecard the options name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import refusal, use_case_as
from charters.models import UseCase
from scorecards.models import Scorecard
from scorecards.selectors import scorecard_get, scorecard_use_case_for


def add_scorecard(parser: CommandParser) -> None:
    """Add ``--use-case`` and ``--scorecard``."""
    parser.add_argument("--use-case", required=True, help="Use-case key.")
    add_scorecard_option(parser)


def add_scorecard_option(parser: CommandParser) -> None:
    """Add ``--scorecard`` (a :class:`~charters.management.cli.UseCaseCommand` adds the rest)."""
    parser.add_argument("--scorecard", type=int, required=True, help="Scorecard id.")


def scorecard_named(use_case: UseCase, pk: int) -> Scorecard:
    """Return scorecard ``pk`` of ``use_case``, or refuse naming ``--scorecard``."""
    scorecard = scorecard_get(use_case=use_case, pk=pk)
    if scorecard is None:
        raise refusal(f"--scorecard: no scorecard {pk} in {use_case.key}")
    return scorecard


def scorecard_as(actor: Any, options: Mapping[str, Any]) -> Scorecard:
    """Return the scorecard the options name, if ``actor`` may read it (as the pages check)."""
    use_case = use_case_as(actor, options["use_case"], scorecard_use_case_for)
    return scorecard_named(use_case, options["scorecard"])
