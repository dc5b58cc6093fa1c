"""``enterpriseval runs_list``: the runs of a use case, newest first, a page at a time.

As ``GET /api/v1/use-cases/<key>/runs/`` answers the same user (graders, who must not know
which σ produced what they grade, and outsiders are refused; ``--limit``/``--offset`` page as
the API pages): mode, status, σ, split, progress and cost of each. ``--format json`` prints the
API's JSON, links on ``ENTERPRISEVAL_SITE_URL``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand, page_title


class Command(ApiReadCommand):
    help = "List the runs of a use case, newest first: mode, status, σ, split, items, cost."
    url_name = "api-run-list"
    who = "a member of the use case who does not grade on it"
    paged = "runs"
    header = ("id", "mode", "status", "σ", "split", "done/total", "failed", "cost USD", "at")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        what = f"run(s) of {options['use_case']}"
        return f"{page_title(data, options['offset'], what)}, newest first."

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return (
            (
                r["id"],
                r["mode"],
                r["status"],
                f"{r['configuration']['name']}:{r['configuration']['version']}",
                r["split"],
                f"{r['items_done']}/{r['items_total']}",
                r["items_failed"],
                r["cost_usd"],
                r["created_at"],
            )
            for r in data["results"]
        )
