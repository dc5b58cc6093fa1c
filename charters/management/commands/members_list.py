"""``enterpriseval members_list``: the members of a use case and their roles.

As ``GET /api/v1/use-cases/<key>/members/`` answers the same user: any member may list them;
a grader sees only their own roles (the others' names would tell who else grades, SPEC §5.1);
outsiders are refused. ``--format json`` prints the API's JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand


class Command(ApiReadCommand):
    help = "List the members of a use case with their roles (a grader sees their own only)."
    url_name = "api-membership-list"
    header = ("user", "role", "granted at")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        return f"{len(data)} membership(s) of {options['use_case']}."

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return ((m["username"], m["role"], m["granted_at"]) for m in data)
