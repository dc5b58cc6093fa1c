"""``enterpriseval oversight_studies_list``: the human-oversight studies of a use case.

As ``GET /api/v1/use-cases/<key>/oversight/`` answers the same user (graders and outsiders
refused): each study's id, status, defect share, items decided and reviewers. ``--format json``
prints the API's JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand


class Command(ApiReadCommand):
    help = "List the oversight studies of a use case: id, name, status, items decided, reviewers."
    url_name = "api-grading-oversight-list"
    who = "a member of the use case who does not grade on it"
    header = ("id", "name", "status", "defect share", "decided/items", "reviewers", "by")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        return f"{len(data)} oversight study(ies) of {options['use_case']}."

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return (
            (
                s["public_id"],
                s["name"],
                s["status"],
                s["defect_share"],
                f"{s['decided']}/{s['items']}",
                s["reviewers"],
                s["created_by"],
            )
            for s in data
        )
