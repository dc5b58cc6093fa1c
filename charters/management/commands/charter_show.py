"""``enterpriseval charter_show``: one charter version, as its page and the API give it.

As ``GET /api/v1/use-cases/<key>/charters/<version>/`` answers the same user (graders are
refused until the use case is unblinded, outsiders always): the table gives the version's
status and SHA-256, its metrics with thresholds and planned n, and each signing role's status;
``--format json`` the API's JSON (the document, signing, deviations and validation).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand
from charters.management.cli import table


class Command(ApiReadCommand):
    help = "Show one charter version: status, SHA-256, metrics with thresholds, signing roles."
    url_name = "api-charter-detail"
    target = ("--charter", int, "Charter version.")
    header = ("metric", "treatment", "direction", "θ_out", "θ_in", "weight", "planned n")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        return (
            f"charter v{data['version']} of {options['use_case']}: {data['status']}"
            + (", latest" if data["latest"] else "")
            + f"\nSHA-256 {data['sha256'] or '— (not frozen)'}"
            + f"\ncontent SHA-256 {data['content_sha256']}"
        )

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return (
            (
                m["id"],
                m["treatment"],
                m["direction"],
                m["theta_out"],
                m["theta_in"],
                m["weight"],
                m["planned_n"],
            )
            for m in data["document"]["metrics"]
        )

    def after(self, data: Any) -> str | None:
        rows = [(s["role"], s["status"], s["user"], s["signed_at"]) for s in data["signing"]]
        return table(rows, ("signing role", "status", "user", "signed at")) if rows else None
