"""``enterpriseval audit_log``: a use case's audit entries, newest first, a page at a time.

As ``GET /api/v1/use-cases/<key>/audit/`` answers the same user: its readers are the charter
owner, model owner, reviewer and adjudicator (graders and outsiders are refused); the page
(``--limit``, ``--offset``) and the verification of the whole chain are the API's
(``--format json`` prints its JSON, links on ``ENTERPRISEVAL_SITE_URL``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charters.management.api_reads import ApiReadCommand, page_title


class Command(ApiReadCommand):
    help = (
        "List a use case's audit entries, newest first (sequence, time, actor, action, target, "
        "entry hash), with the verification of the chain."
    )
    url_name = "api-use-case-audit"
    who = "a member of the use case who may read its audit log"
    paged = "entries"
    header = ("seq", "at", "actor", "action", "target", "entry hash")

    def title(self, data: Any, options: Mapping[str, Any]) -> str:
        chain = data["chain"]
        verified = (
            f"chain verified ({chain['entries_checked']} entries)"
            if chain["ok"]
            else f"chain BROKEN at sequence {chain['first_broken_sequence']}: {chain['reason']}"
        )
        what = f"audit entries of {options['use_case']}"
        return f"{page_title(data, options['offset'], what)}, newest first; {verified}."

    def rows(self, data: Any) -> Iterable[Sequence[Any]]:
        return (
            (
                e["sequence"],
                e["created_at"],
                e["actor_username"],
                e["action"],
                f"{e['target_type']}:{e['target_id']}",
                e["entry_hash"],
            )
            for e in data["results"]
        )
