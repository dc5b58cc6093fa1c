"""``enterpriseval scorecards_list``: the scorecards of a use case.

As ``GET /api/v1/use-cases/<key>/scorecards/`` answers the same user (graders and outsiders
refused): each scorecard's id, decision, state, SHA-256 and sign-off. ``--format json`` prints
the API's JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand


class Command(ApiReadCommand):
    help = "List the scorecards of a use case: id, decision, state, SHA-256, signed off at."
    url_name = "api-scorecard-list"
    who = "a member of the use case who does not grade on it"
    header = ("id", "decision", "state", "SHA-256", "signed off at")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        return f"{len(data)} scorecard(s) of {options['use_case']}."

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return (
            (s["id"], s["decision"], s["state"], s["sha256"] or None, s["signed_off_at"])
            for s in data
        )
