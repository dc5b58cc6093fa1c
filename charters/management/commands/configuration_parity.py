"""``enterpriseval configuration_parity``: which σ components differ between two versions.

The harness parity of SPEC §9, as ``GET /api/v1/use-cases/<key>/configurations/parity/?a=&b=``
answers the same user (graders and outsiders refused): ``--a`` and ``--b`` are the API's ``a``
and ``b`` (``name:version``); the table gives each component (M, P, Φ, U, Γ, …), whether it
differs and the differing leaves, under the verdict (attributable to the model alone or not).
``--format json`` prints the API's JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.core.management.base import CommandParser

from charters.management.api_reads import ApiReadCommand


class Command(ApiReadCommand):
    help = (
        "Compare two σ versions component by component (SPEC §9): which differ, and whether "
        "a comparison of the two is attributable to the model alone."
    )
    url_name = "api-configuration-parity"
    who = "a member of the use case who does not grade on it"
    queries = {"a": "--a", "b": "--b"}
    header = ("", "component", "differs", "differences (path: a → b)")

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--a", required=True, help="σ A as name:version.")
        parser.add_argument("--b", required=True, help="σ B as name:version.")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        a, b = data["a"], data["b"]
        verdict = "identical" if data["identical"] else data["label"]
        return f"σ {a['name']}:{a['version']} vs {b['name']}:{b['version']}: {verdict}."

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return (
            (
                c["symbol"],
                c["label"],
                "yes" if c["differs"] else "no",
                "; ".join(f"{d['path']}: {d['a']} → {d['b']}" for d in c["differences"]) or None,
            )
            for c in data["components"]
        )
