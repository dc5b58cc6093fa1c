"""``enterpriseval task_sets_list``: the task sets of a use case, a page at a time.

As ``GET /api/v1/use-cases/<key>/task-sets/`` answers the same user (graders refused until
the use case is unblinded, outsiders always; ``--limit``/``--offset`` page as the API pages):
name, version, SHA-256 of the manifest, tasks per split. ``--format json`` prints the API's
JSON, links on ``ENTERPRISEVAL_SITE_URL``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand, page_title


class Command(ApiReadCommand):
    help = "List the task sets of a use case: name, version, SHA-256, tasks per split."
    url_name = "api-task-set-list"
    paged = "task sets"
    header = ("task set", "SHA-256", "tasks", "splits", "by", "at")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        what = f"task set(s) of {options['use_case']}"
        return f"{page_title(data, options['offset'], what)}."

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return (
            (
                f"{t['name']}:{t['version']}",
                t["sha256"],
                t["task_count"],
                ", ".join(f"{split} {n}" for split, n in t["split_counts"].items()),
                t["created_by"],
                t["created_at"],
            )
            for t in data["results"]
        )
