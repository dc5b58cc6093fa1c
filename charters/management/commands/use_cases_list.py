"""``enterpriseval use_cases_list``: the use cases the user holds a role on.

As ``GET /api/v1/use-cases/`` answers the same user (``--format json``: its JSON): key, name,
intensity and stage, the stage left out where the user grades (blinding, SPEC §5.1); the
table adds the roles the user holds on each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand
from charters.models import Membership


class Command(ApiReadCommand):
    help = "List the use cases you hold a role on: key, name, your roles, intensity and stage."
    url_name = "api-use-case-list"
    who = "the user whose use cases are listed"
    scoped = False
    header = ("key", "name", "roles", "intensity", "stage")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        return f"{len(data)} use case(s) of {self.actor.get_username()}."

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        roles: dict[str, list[str]] = {}
        held = Membership.objects.filter(user=self.actor).order_by("role")
        for key, role in held.values_list("use_case__key", "role"):
            roles.setdefault(key, []).append(role)
        return (
            (u["key"], u["name"], ", ".join(roles[u["key"]]), u["intensity"], u.get("stage_label"))
            for u in data
        )
