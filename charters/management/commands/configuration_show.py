"""``enterpriseval configuration_show``: one σ version with its canonical JSON and SHA-256.

As ``GET /api/v1/use-cases/<key>/configurations/<name>/<version>/`` answers the same user
(graders and outsiders refused), σ given as ``--configuration name:version``: the table gives
σ's SHA-256 and model, then its canonical JSON (what the SHA-256 is of); ``--format json`` the
API's JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.api.configurations import parse_reference
from charters.management.api_reads import ApiReadCommand
from charters.management.cli import refusal
from enterpriseval.errors import ServiceError


class Command(ApiReadCommand):
    help = "Show one σ version: SHA-256, model, uploaded by and its canonical JSON."
    url_name = "api-configuration-detail"
    who = "a member of the use case who does not grade on it"
    target = ("--configuration", str, "σ as name:version.")

    def url_args(self, options: Mapping[str, Any]) -> list[Any]:
        try:
            return list(parse_reference(options["configuration"], "--configuration"))
        except ServiceError as error:
            raise refusal(error.message) from None

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        return (
            f"σ {data['name']}:{data['version']} of {data['use_case']}: {data['model_ref']}, "
            f"uploaded by {data['created_by']} at {data['created_at']} ({data['source_format']})"
            f"\nSHA-256 {data['sha256']}"
        )

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return ()

    def after(self, data: Any) -> str | None:
        return str(data["canonical_json"])
