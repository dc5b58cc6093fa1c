"""``enterpriseval judge_calibration``: how an automated judge agrees with a session's graders.

As ``GET /api/v1/use-cases/<key>/grading/sessions/<id>/calibration/`` answers the same user
(the charter owner, reviewer and adjudicator; graders and outsiders refused): per judge
criterion, κ, percent agreement, the judge's and the humans' rates and the bias mean(f − h)
with its interval. ``--judge name:version`` is the API's ``judge`` (default: the judge that
scored last). ``--format json`` prints the API's JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.core.management.base import CommandParser

from charters.management.api_reads import ApiReadCommand
from grading.management.commands.agreement import interval


def two(value: float | None) -> str | None:
    """Return ``value`` with two decimals (``None``, printed —, where it is undefined)."""
    return None if value is None else f"{value:.2f}"


class Command(ApiReadCommand):
    help = "Show a judge's calibration against a session's human grades: κ and bias per criterion."
    url_name = "api-grading-calibration"
    who = "the charter owner, a reviewer or an adjudicator of the use case"
    target = ("--session", str, "Grading session id.")
    queries = {"judge": "--judge"}
    header = ("criterion", "units", "κ", "agreement %", "judge rate", "human rate", "bias [CI]")

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--judge", help="Judge as name:version (default: the latest).")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        judges = ", ".join(j["ref"] for j in data["judges"]) or "none"
        return (
            f"calibration of judge {data['judge'] or '—'} on session {data['session']} "
            f"({data['confidence']:.0%} intervals): {data['artefacts_complete']}/"
            f"{data['artefacts_total']} artefacts complete; judges: {judges}."
        )

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return (
            (
                r["criterion"],
                r["n_units"],
                *(two(r[name]) for name in ("kappa", "percent_agreement", "judge_rate")),
                two(r["human_rate"]),
                interval(r["bias"], r["bias_lo"], r["bias_hi"], two(r["bias"])),
            )
            for r in data["rows"]
        )
