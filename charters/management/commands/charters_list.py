"""``enterpriseval charters_list``: the charter versions of a use case.

As ``GET /api/v1/use-cases/<key>/charters/`` answers the same user (graders are refused until
the use case is unblinded, outsiders always): each version's status, SHA-256, when it was
frozen, by whom it was created and why it was revised. ``--format json`` prints the API's JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand


class Command(ApiReadCommand):
    help = "List the charter versions of a use case: status, SHA-256, frozen at, revision reason."
    url_name = "api-charter-list"
    header = ("version", "status", "SHA-256", "frozen at", "by", "previous", "reason")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        return f"{len(data)} charter version(s) of {options['use_case']}."

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return (
            (
                f"v{c['version']}",
                c["status"] + (" (deviation)" if c["deviation"] else ""),
                c["sha256"] or None,
                c["frozen_at"],
                c["created_by"],
                f"v{c['previous_version']}" if c["previous_version"] else None,
                c["revision_reason"] or None,
            )
            for c in data
        )
