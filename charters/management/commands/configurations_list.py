"""``enterpriseval configurations_list``: the σ versions (configurations) of a use case.

As ``GET /api/v1/use-cases/<key>/configurations/`` answers the same user (graders, who must
not know which σ produced what they grade, and outsiders are refused): name, version, SHA-256
and model of each. ``--format json`` prints the API's JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand


class Command(ApiReadCommand):
    help = "List the σ versions of a use case: name, version, SHA-256, model, uploaded by."
    url_name = "api-configuration-list"
    who = "a member of the use case who does not grade on it"
    header = ("σ", "SHA-256", "model", "by", "at")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        return f"{len(data)} σ version(s) of {options['use_case']}."

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return (
            (
                f"{c['name']}:{c['version']}",
                c["sha256"],
                c["model_ref"],
                c["created_by"],
                c["created_at"],
            )
            for c in data
        )
