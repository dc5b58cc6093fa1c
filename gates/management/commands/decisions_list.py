"""``enterpriseval decisions_list``: the recorded decisions of a use case, newest first.

As the decisions page and ``GET /api/v1/use-cases/<key>/decisions/``: the same access check
(graders refused even holding another role, outsiders refused), the same selector and, with
``--format json``, the API's page: ``count``, ``next``, ``previous`` (links on
``ENTERPRISEVAL_SITE_URL``) and ``results`` (the same serializer), ``--limit`` and ``--offset``
read as the API reads ``limit`` and ``offset``.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser
from django.urls import reverse

from charters.management.cli import UseCaseCommand, page_of, table, write_json
from gates.api import DecisionOutput
from gates.formatting import format_number
from gates.selectors import decision_list, decision_use_case_for


class Command(UseCaseCommand):
    help = (
        "List the recorded decisions of a use case, newest first (status, binding metric, EI, "
        "charter version, σ, run); graders and outsiders are refused as on the page."
    )
    who = "a member of the use case who does not grade on it"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--limit", type=int, help="At most this many decisions (the API's limit; 100 if unset)."
        )
        parser.add_argument("--offset", type=int, help="Skip this many (the API's offset).")

    def handle(self, *args: Any, **options: Any) -> None:
        _actor, use_case = self.actor_and_use_case(options, decision_use_case_for)
        params = {name: options[name] for name in ("limit", "offset") if options[name] is not None}
        paginator, page = page_of(
            decision_list(use_case=use_case),
            reverse("api-decision-list", args=[use_case.key]),
            params,
        )
        data = DecisionOutput(page, many=True, context={"key": use_case.key}).data
        if options["format"] == "json":
            write_json(self.stdout, paginator.get_paginated_response(data).data)
            return
        rows = [
            (
                d["id"],
                d["status"],
                d["binding_metric"] or None,
                format_number(d["ei"]),
                f"v{d['charter_version']}",
                f"{d['configuration']['name']}:{d['configuration']['version']}",
                d["run"],
                d["created_by"],
                d["created_at"],
            )
            for d in data
        ]
        shown = len(rows)
        first = paginator.offset + 1 if shown else 0
        self.stdout.write(
            f"{paginator.count} decision(s) of {use_case.key}"
            + (f"; {first}–{paginator.offset + shown} shown" if shown < paginator.count else "")
            + ", newest first."
        )
        if rows:
            self.stdout.write(
                table(
                    rows,
                    ("id", "status", "binding metric", "EI", "charter", "σ", "run", "by", "at"),
                )
            )
