"""``enterpriseval sessions_list``: the grading sessions of a use case, a page at a time.

As ``GET /api/v1/use-cases/<key>/grading/sessions/`` answers the same user (outsiders refused;
``--limit``/``--offset`` page as the API pages): each session's id, name, status, design, size
and progress. ``--format json`` prints the API's JSON, links on ``ENTERPRISEVAL_SITE_URL``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand, page_title


class Command(ApiReadCommand):
    help = "List the grading sessions of a use case: id, name, status, design, n, progress."
    url_name = "api-grading-session-list"
    paged = "sessions"
    header = ("id", "name", "status", "design", "mode", "n", "submitted/assignments", "%")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        what = f"grading session(s) of {options['use_case']}"
        return f"{page_title(data, options['offset'], what)}."

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return (
            (
                s["public_id"],
                s["name"],
                s["status"],
                s["design"],
                s["mode"],
                s["sample_size"],
                f"{s['progress']['submitted']}/{s['progress']['assignments']}",
                s["progress"]["percent"],
            )
            for s in data["results"]
        )
