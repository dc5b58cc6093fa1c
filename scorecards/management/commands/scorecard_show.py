"""``enterpriseval scorecard_show``: one scorecard, as its GRC export.

As ``GET /api/v1/use-cases/<key>/scorecards/<id>/`` answers the same user (graders and
outsiders refused): the table gives its state, SHA-256, sign-off, re-evaluation flags and the
fields still missing; ``--format json`` the API's JSON (the export, docs/scorecard-export.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand


class Command(ApiReadCommand):
    help = "Show one scorecard: state, SHA-256, sign-off, re-evaluation flags, missing fields."
    url_name = "api-scorecard-detail"
    who = "a member of the use case who does not grade on it"
    target = ("--scorecard", int, "Scorecard id.")
    header = ("open", "detail")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        signed = (
            f"signed off by {data['signed_off_by']} at {data['signed_off_at']}"
            if data["signed_off_by"]
            else "not signed off"
        )
        return (
            f"scorecard {data['id']} of {data['use_case']}: {data['state']}, {signed}"
            f"\nSHA-256 {data['sha256'] or '—'}"
        )

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return [
            *(("re-evaluation", f"{f['kind']}: {f['reason']}") for f in data["reevaluation"]),
            *(("missing", ": ".join(str(v) for v in m.values())) for m in data["missing"]),
        ]
