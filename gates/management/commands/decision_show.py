"""``enterpriseval decision_show``: one recorded decision, as its page and the API give it.

The same access check as ``GET /api/v1/use-cases/<key>/decisions/<id>/`` (graders refused even
holding another role, outsiders refused), the same selector; the table gives the decision, its
binding metric, each gated metric's estimate, interval and status and the record's SHA-256,
``--format json`` the API's answer (the record, the evidence and the SHA-256 anyone can
recompute from them).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from charters.management.cli import (
    add_actor,
    add_format,
    refusal,
    use_case_as,
    user_named,
    write_json,
)
from gates.api import DecisionDetailOutput
from gates.formatting import format_gate_result, format_structured, format_value
from gates.selectors import decision_get, decision_use_case_for, gate_result_from_dict


class Command(BaseCommand):
    help = (
        "Show one recorded decision: its status, binding metric, each gated metric's estimate, "
        "interval and status, the value estimate and the record's SHA-256."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--use-case", required=True, help="Use-case key.")
        parser.add_argument("--decision", type=int, required=True, help="Decision id.")
        add_actor(parser, "a member of the use case who does not grade on it")
        add_format(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor = user_named(options["actor"])
        use_case = use_case_as(actor, options["use_case"], decision_use_case_for)
        decision = decision_get(use_case=use_case, pk=options["decision"])
        if decision is None:
            raise refusal(f"--decision: no decision {options['decision']} in {use_case.key}")
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
        self.stdout.write(
            format_gate_result(gate_result_from_dict(decision.record["gate"]), title=title)
        )
        self.stdout.write(format_value(decision.record.get("value")))
        structured = format_structured(decision.record)
        if structured:
            self.stdout.write(structured)
