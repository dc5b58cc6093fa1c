"""``enterpriseval judgings_list``: the judgings (automated judge passes) of a run.

As ``GET /api/v1/use-cases/<key>/runs/<id>/judgings/`` answers the same user (graders and
outsiders refused): judge, purpose, status and progress of each. ``--format json`` prints the
API's JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand


class Command(ApiReadCommand):
    help = "List the judgings of a run: judge, purpose, status, outputs judged, scores written."
    url_name = "api-run-judgings"
    who = "a member of the use case who does not grade on it"
    target = ("--run", int, "Run id.")
    header = ("id", "judge", "kind", "purpose", "status", "judged/total", "scores", "by")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        return f"{len(data)} judging(s) of run {options['run']} of {options['use_case']}."

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return (
            (
                j["id"],
                f"{j['judge']['name']}:{j['judge']['version']}",
                j["judge"]["kind"],
                j["purpose"],
                j["status"],
                f"{j['outputs_judged']}/{j['outputs_total']}",
                j["scores_written"],
                j["requested_by"],
            )
            for j in data
        )
