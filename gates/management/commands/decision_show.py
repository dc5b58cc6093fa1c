"""``enterpriseval decision_show``: one recorded decision, as its page and the API give it.

The same access check as ``GET /api/v1/use-cases/<key>/decisions/<id>/`` (graders refused even
holding another role, outsiders refused), the same selector; the table gives the decision, its
binding metric, each gated metric's estimate, interval and status and the record's SHA-256,
``--format json`` the API's answer (the record, the evidence and the SHA-256 anyone can
recompute from them).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from charters.management.cli import UseCaseCommand, write_json
from gates.api import DecisionDetailOutput
from gates.management.options import decision_named, write_decision
from gates.selectors import decision_use_case_for


class Command(UseCaseCommand):
    help = (
        "Show one recorded decision: its status, binding metric, each gated metric's estimate, "
        "interval and status, the value estimate and the record's SHA-256."
    )
    who = "a member of the use case who does not grade on it"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--decision", type=int, required=True, help="Decision id.")

    def handle(self, *args: Any, **options: Any) -> None:
        _actor, use_case = self.actor_and_use_case(options, decision_use_case_for)
        decision = decision_named(use_case, options["decision"])
        if options["format"] == "json":
            write_json(
                self.stdout, DecisionDetailOutput(decision, context={"key": use_case.key}).data
            )
            return
        title = (
            f"decision {decision.pk} of {use_case.key}: σ {decision.configuration.name}:"
            f"{decision.configuration.version} run {decision.run_id}, charter "
            f"v{decision.charter.version}, recorded by {decision.created_by.get_username()} at "
            f"{decision.created_at.isoformat()}\nrecord SHA-256 {decision.sha256}"
        )
        write_decision(self.stdout, decision.record, title=title)
