"""``enterpriseval run_show``: one run's status, progress and counts.

As ``GET /api/v1/use-cases/<key>/runs/<id>/`` answers the same user (graders and outsiders
refused): σ and task set with their SHA-256, progress, cost, outputs and units counted.
``--format json`` prints the API's JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand


class Command(ApiReadCommand):
    help = "Show one run: σ, task set, status, progress, cost, outputs and units."
    url_name = "api-run-detail"
    who = "a member of the use case who does not grade on it"
    target = ("--run", int, "Run id.")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        return (
            f"run {data['id']} of {data['use_case']}: {data['mode']}, {data['status']}, "
            f"created by {data['created_by']} at {data['created_at']}"
        )

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        sigma, tasks = data["configuration"], data["task_set"]
        return [
            ("σ", f"{sigma['name']}:{sigma['version']} {sigma['sha256']}"),
            ("task set", f"{tasks['name']}:{tasks['version']} {tasks['manifest_sha256']}"),
            ("split × repeats", f"{data['split']} × {data['repeats']}"),
            ("items done", f"{data['items_done']}/{data['items_total']} ({data['percent']}%)"),
            ("items failed", data["items_failed"]),
            ("cost USD", data["cost_usd"]),
            ("outputs", ", ".join(f"{k} {v}" for k, v in data["outputs"].items())),
            ("units", ", ".join(f"{k} {v}" for k, v in data["units"].items())),
            ("file", f"{data['filename']} {data['sha256']}" if data["filename"] else None),
            ("stop reason", data["stop_reason"] or None),
        ]
